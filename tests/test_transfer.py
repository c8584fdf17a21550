"""The learning-rate transfer study (issue 43, docs/transfer.md): the optimum's fit and the
verdict on synthetic loss tables whose optimum moves by a known exponent, the batched grid
against one configuration at a time, a whole small study through the command line, and, on real
training (slow), a setting where it must say ``transfers`` and settings where it must not."""

import json
import math

import numpy as np
import pytest
import torch

from deeplimits.cli import main
from deeplimits.studies import transfer as T
from deeplimits.studies.transfer import fit as F
from deeplimits.studies.transfer.presets import PRESETS, predicted_exponent, settings

DEPTHS = [4, 8, 16, 32, 64]
LRS = list(range(-6, 7))


def synthetic_tables(slope, *, seeds=6, noise=0.05, x0=0.3, curvature=0.15, seed=0):
    """Per depth, log losses ``(rates, seeds)``: a parabola in log2 rate whose vertex moves as
    ``x0 + slope log2 L``, plus seeded noise per seed and rate."""
    rng = np.random.default_rng(seed)
    x = np.asarray(LRS, dtype=float)
    out = []
    for L in DEPTHS:
        centre = x0 + slope * math.log2(L / DEPTHS[0])
        base = math.log(0.8) + curvature * (x - centre) ** 2
        out.append(base[:, None] + noise * rng.standard_normal((len(x), seeds)))
    return out


def test_predictions_and_settings():
    assert predicted_exponent(0.5, "sgd") == 0.0 and predicted_exponent(1.0, "sgd") == 1.0
    assert predicted_exponent(0.5, "adam") == -0.5 and predicted_exponent(1.0, "adam") == 0.0
    # where the prediction is 0 the variant not rescaled is the same runs: not repeated
    assert settings([0.5, 1.0], ["sgd"]) == [(0.5, "sgd", "rescaled"), (1.0, "sgd", "rescaled"),
                                             (1.0, "sgd", "not-rescaled")]


def test_vertex_and_blown_up_losses():
    y = np.array([3.0, 1.0, 0.5, 1.0, 3.0])
    assert F.vertex(y) == (2.0, 0.5, False)
    i, _, edge = F.vertex(np.array([3.0, 2.0, 1.0, 0.5]))
    assert edge and i == 3.0
    i, _, _ = F.vertex(np.array([2.0, 1.0, 0.0, 0.5, 3.0]))
    assert 2.0 < i < 2.5  # pulled toward the lower neighbour
    logs = F.log_losses([[1.0, None], [0.5, 0.25]], initial=[2.0, 2.0])
    assert logs[0, 1] == pytest.approx(math.log(2.0))  # blown up: the untrained loss (larger than every finite)


@pytest.mark.parametrize("slope,expected", [(0.0, F.TRANSFERS), (1.0, F.MOVES), (-0.75, F.MOVES)])
def test_verdict_on_a_known_movement(slope, expected):
    tables = synthetic_tables(slope)
    fit = F.fit_optima(DEPTHS, LRS, tables)
    assert fit["slope"] == pytest.approx(slope, abs=0.1)
    assert F.verdict(fit, DEPTHS)[0] == expected


def test_an_optimum_off_the_grid_is_not_a_transfer():
    fit = F.fit_optima(DEPTHS, LRS, synthetic_tables(0.0, x0=6.5))  # every optimum beyond the largest rate
    assert all(fit["edge"]) and F.verdict(fit, DEPTHS)[0] == F.INSUFFICIENT


def test_noisy_seeds_give_insufficient_evidence():
    fit = F.fit_optima(DEPTHS, LRS, synthetic_tables(0.0, seeds=3, noise=0.6, curvature=0.02))
    assert F.verdict(fit, DEPTHS)[0] != F.TRANSFERS


@pytest.mark.slow
def test_the_batched_grid_matches_one_configuration_at_a_time():
    """Config (rate i, seed j) of the batched grid follows the run of that rate and seed alone
    (close, not bitwise: batched products round differently)."""
    from deeplimits.studies.transfer.coords import tiled
    from deeplimits.studies.transfer.study import _data, _initial_net
    from deeplimits.training import train

    data = _data({"dtype": "float64", "seed": 0, "samples": 48})
    net0 = _initial_net(6, 4, 10, data, 1.0, 2, torch.Generator().manual_seed(1))
    rates = [0.5, 1.0]
    big = tiled(net0, len(rates))
    res = train(big, data, optimizer="sgd", lr=[r for r in rates for _ in range(2)], epochs=2, batch_size=16,
                loss="cross_entropy", lr_decay_halfway=False, seed=3)
    for i, r in enumerate(rates):
        for j in range(2):
            one = tiled(net0.config(j), 1)
            alone = train(one, data, optimizer="sgd", lr=[r], epochs=2, batch_size=16, loss="cross_entropy",
                          lr_decay_halfway=False, seed=3)
            assert res.records[i * 2 + j]["train_loss"] == pytest.approx(alone.records[0]["train_loss"], rel=1e-9)


@pytest.mark.slow
def test_a_small_study_through_the_command_line(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["transfer", "--preset", "quick", "--depths", "2,4,8", "--lrs=-1,1", "--seeds", "2", "--width", "2",
            "--samples", "16", "--epochs", "1", "--batch-size", "16", "--betas", "1", "--optimizer", "sgd",
            "--out", str(out), "--json", str(tmp_path / "r.json"), "--quiet"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "beta 1, sgd, rescaled (p = 1; predicted 1)" in text and "coordinate check" in text
    payload = json.loads((tmp_path / "r.json").read_text())
    assert [s["variant"] for s in payload["settings"]] == ["rescaled", "not-rescaled"]
    assert payload["settings"][0]["verdict"] in (F.TRANSFERS, F.MOVES, F.INSUFFICIENT)
    assert (out / "transfer.png").exists() and (out / "coordinates.png").exists()
    plan = T.plan_transfer(depths=[2, 4, 8], lrs=[-1, 1], seeds=2, width=2, samples=16, epochs=1, batch_size=16,
                           betas=[1.0], optimizers=["sgd"])
    assert plan.task_bytes() > 0 and plan.seconds() > 0 and T.TransferPlan.from_dict(plan.to_dict()) == plan


@pytest.mark.slow
def test_a_run_resumes_from_its_store(tmp_path):
    """Every (beta, optimizer, depth) grid is a task of the run store: a second run trains
    nothing and gives the same result."""
    from deeplimits.runs import RunStore

    plan = T.plan_transfer(depths=[2, 4, 8], lrs=[-1, 1], seeds=2, width=2, samples=16, epochs=1, batch_size=16,
                           betas=[0.5], optimizers=["sgd", "adam"])
    assert [t.key for t in plan.tasks()][:2] == ["transfer/beta-0.5/sgd/L-00002", "transfer/beta-0.5/sgd/L-00004"]
    with RunStore(str(tmp_path), plan.to_dict()) as store:
        first = plan.run(store=store)
    calls = []
    with RunStore(str(tmp_path), plan.to_dict()) as store:
        again = plan.run(calls.append, store=store)
    assert calls == [] and again.settings == first.settings


def _quick(**kw):
    return T.plan_transfer(**{**PRESETS["quick"], **kw}).run()


@pytest.mark.slow
def test_adam_at_beta_one_transfers():
    """Adam at beta = 1: the rate needs no depth factor (CompleteP); the optimum stays put."""
    r = _quick(betas=[1.0], optimizers=["adam"], seeds=4)
    s = r.setting(1.0, "adam")
    assert s["verdict"] == F.TRANSFERS, s["why"]
    assert s["coords"]["h_L"]["reading"] == "flat"


@pytest.mark.slow
def test_settings_built_to_fail_do_not_transfer():
    """beta = 0 (no power of L keeps training stable) and SGD at beta = 1 without the factor L."""
    r = _quick(betas=[0.0, 1.0], optimizers=["sgd"], seeds=4)
    assert r.setting(0.0, "sgd")["verdict"] != F.TRANSFERS
    assert r.setting(0.0, "sgd", "not-rescaled")["verdict"] == F.MOVES
    assert r.setting(1.0, "sgd", "not-rescaled")["verdict"] != F.TRANSFERS
    assert r.setting(1.0, "sgd", "not-rescaled")["coords"]["h_L"]["reading"] == "shrinks"  # too small a rate


@pytest.mark.slow
def test_the_optimums_horizons_end_on_the_verdicts_own_fit():
    """The optimum's exponent after each epoch (issue 52: how Adam's optimum moves with training) is read
    from the training loss after that epoch on the whole training set, so the last horizon is the
    verdict's own fit: one interval for one number of steps, not the running mean of an epoch's
    mini-batches beside the loss after training (two intervals that differed, docs/transfer.md)."""
    plan = T.plan_transfer(depths=[2, 4, 8], lrs=[-4, 2], seeds=3, width=2, samples=32, epochs=3, batch_size=16,
                           betas=[0.5], optimizers=["adam"])
    r = plan.run().settings[0]
    assert [h["epoch"] for h in r["horizons"]] == [1, 2, 3], r["horizons"]
    last = r["horizons"][-1]
    np.testing.assert_allclose([last["slope"], *last["slope_ci"]], [r["slope"], *r["slope_ci"]], rtol=1e-9, atol=1e-12)
    assert last["rate_exponent"] == pytest.approx(r["rate_exponent"], abs=1e-12)
    assert len({h["slope"] for h in r["horizons"]}) > 1  # the optimum is read anew at each horizon
