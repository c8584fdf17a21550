"""The limit beside the transfer (issue 43 item 3, docs/transfer.md "The limit beside it"): the
depth family of a transferred setting trained with the trained-limit machinery. A beta = 1 family
read off one smooth path converges to a common limit while a family of a different smooth
function at each depth does not and i.i.d. weights read off a Brownian path have no limit of the
weights; the limit tasks ride in the run store (resumed, rebuilt) and in the report; bad input
is refused before any work."""

import json

import pytest
import torch

from deeplimits.cli import main
from deeplimits.diagnostics.trained_pair import INSUFFICIENT
from deeplimits.errors import ParameterError
from deeplimits.paths import driver_from_spec
from deeplimits.runs import RunStore
from deeplimits.studies import transfer as T
from deeplimits.studies.plan import results_from_store
from deeplimits.studies.trained_limit.result import summarise_case
from deeplimits.studies.trained_limit.study import train_depth_family
from deeplimits.studies.transfer import limit as LM
from deeplimits.studies.transfer.memory import limit_bytes
from deeplimits.studies.transfer.study import _data
from deeplimits.training.family import depth_lr, family_head, family_member, family_sample

DEPTHS = [4, 8, 16, 32]
VERDICTS = ("common limit", "states converge, weights do not", "no common limit", INSUFFICIENT)


def _family(beta=1.0, **change):
    """A family of :data:`LM.FAMILIES` at width 4, the rate scaled by L (SGD at beta = 1) or not."""
    return {**LM.FAMILIES[beta], "lr_exponent": 2 * beta - 1, "width": 4, **change}


def _summary(family, seeds=4):
    """The family trained on 64 digits (2 epochs of 2 mini-batches) against depth 64, summarised."""
    from deeplimits._random import single_threaded_torch

    data = _data({"dtype": "float64", "seed": 0, "samples": 64})
    with single_threaded_torch():
        out = train_depth_family(family, data, depths=DEPTHS, reference=64, seeds=seeds, epochs=2, lr=0.5,
                                 optimizer="sgd", batch_size=32, seed=1)
    return summarise_case("t", family, out["records"], DEPTHS, 64)


def test_the_ode_family_converges_and_families_without_a_limit_do_not():
    ode = _summary(_family())
    assert ode["verdict"] == "common limit", ode["missing"]
    assert ode["weight_distance"]["verdict"][0] == "zero"  # one smooth path: the same weights before training
    assert ode["state_distance"]["rate"][-1] > 0.75 and ode["weight_distance"]["rate"][-1] > 0.75
    trained = ode["state_distance"]["mean"][-1]
    assert all(a > b for a, b in zip(trained, trained[1:]))  # shrinks with depth
    control = _summary(_family(coupled=False))  # a different smooth function at each depth: no common limit
    assert control["verdict"] != "common limit"
    assert control["weight_distance"]["verdict"][-1] == "no common limit"
    still = _summary(_family(lr_exponent=-4.0))  # the family's own rate rule: lr L^-4, the weights barely move
    assert all(a < 1e-2 * b for a, b in zip(still["weight_distance"]["mean"][-1], ode["weight_distance"]["mean"][-1]))
    brownian = _summary(_family(0.5))  # i.i.d. weights read off one Brownian path: no limit of the weights
    assert brownian["weight_distance"]["verdict"][-1] == "no common limit"
    assert brownian["verdict"] in ("states converge, weights do not", INSUFFICIENT)


def test_a_family_head_is_fixed_and_shared():
    g = torch.Generator().manual_seed(0)
    head = family_head(64, 4, 10, 2, g, torch.float64)
    assert head["A"].shape == (2, 64, 4) and head["B"].shape == (2, 4, 10)
    samples = family_sample("res-1", 4, driver_from_spec({"driver": "smooth"}), 2, 16, g, torch.float64)
    for L in (4, 8):
        net = family_member("res-1", L, 4, samples, beta=1.0, activation="tanh", dtype=torch.float64, head=head)
        torch.testing.assert_close(net.A, head["A"], rtol=1e-12, atol=1e-12)  # the shared head, within rounding
        torch.testing.assert_close(net.B, head["B"], rtol=1e-12, atol=1e-12)
        assert not net.A.requires_grad and not net.B.requires_grad and net.V.requires_grad
    assert depth_lr(0.5, 16, 0.5, "adam", exponent=-0.5) == pytest.approx(0.125)
    assert depth_lr(0.5, 16, 1.0, "sgd") == pytest.approx(8.0)  # the trained-limit rule without an exponent


def _plan(**kw):
    return T.plan_transfer(**{"depths": [2, 4, 8, 16], "lrs": [-1, 1], "seeds": 3, "width": 2, "samples": 16,
                              "epochs": 1, "batch_size": 16, "betas": [0.0, 0.5, 1.0], "optimizers": ["adam"],
                              "limit": 32, **kw})


@pytest.mark.slow
def test_the_limit_rides_in_the_store_and_the_report(tmp_path, monkeypatch):
    plan = _plan()
    assert LM.limit_settings(plan) == [(0.5, "adam"), (1.0, "adam")]  # beta = 0 has no limit to test
    assert T.TransferPlan.from_dict(plan.to_dict()) == plan and "limit" not in _plan(limit=None).to_dict()
    bare = _plan(limit=None)
    assert plan.estimate().tasks == bare.estimate().tasks + 2 and plan.seconds() > bare.seconds()
    assert plan.task_bytes() >= limit_bytes(plan) > 0
    with RunStore(str(tmp_path), plan.to_dict()) as store:
        first = plan.run(store=store)
        assert {"transfer/beta-0.5/adam/limit", "transfer/beta-1/adam/limit"} <= set(store.results())
    for beta in (0.5, 1.0):
        row = first.setting(beta, "adam")
        assert row["limit"]["reference"] == 32 and row["limit"]["rate"] == row["optimum"][0]
        assert row["limit"]["exponent"] == row["exponent"] == (-0.5 if beta == 0.5 else 0.0)  # Adam: L^(beta - 1)
        assert row["limit"]["family"]["verdict"] in VERDICTS
        assert len(row["limit"]["family"]["epochs"]) == 2  # before training and after its one epoch
    assert "limit" not in first.setting(0.0, "adam")
    assert first.report().count("the limit beside it") == 2
    (tmp_path / "figures").mkdir()
    drawn = first.figures(str(tmp_path / "figures"))
    assert [p.rsplit("/", 1)[1] for p in drawn] == ["transfer.png", "optimum.png", "coordinates.png", "limit.png"]
    assert all((tmp_path / "figures" / n).stat().st_size > 0 for n in ("limit.png",))
    with pytest.raises(ParameterError, match="no limit families"):
        LM.plot_limit(type(first)(first.spec, [first.setting(0.0, "adam")], 0.0))

    def refuse(*a, **k):
        raise AssertionError("a stored limit task ran again")

    monkeypatch.setattr(LM, "train_limit", refuse)
    with RunStore(str(tmp_path), plan.to_dict()) as store:
        again = plan.run(store=store)
        rebuilt = results_from_store(store)[0]
    for r in (again, rebuilt):
        assert json.dumps(r.settings, sort_keys=True) == json.dumps(first.settings, sort_keys=True)


@pytest.mark.parametrize("kw,text", [
    (dict(limit=0), "limit must be an integer"),
    (dict(limit=16), "limit must be an integer"),  # not deeper than the deepest depth
    (dict(limit=24, betas=[1.0]), "limit must be a multiple of every depth"),
    (dict(limit=48), "limit must be a power of two"),  # beta = 1/2 reads a Brownian path
    (dict(limit=1.5), "limit"),
    (dict(limit=32, betas=[0.0, 2.0]), "limit needs a beta with a limit to test"),
])
def test_bad_limits_are_refused(kw, text):
    with pytest.raises(ParameterError, match=text):
        _plan(**kw)
    _plan(limit=48, betas=[1.0])  # a smooth path reads any multiple of the depths


@pytest.mark.parametrize("change,text", [
    (dict(driver=None), "case must be one of"),
    (dict(lr_exponent=9.0), "lr_exponent"),
    (dict(width=0), "width"),
    (dict(driver="nosuch"), "driver"),
])
def test_bad_families_are_refused(change, text):
    family = {k: v for k, v in _family(**change).items() if v is not None}
    data = _data({"dtype": "float64", "seed": 0, "samples": 16})
    with pytest.raises(ParameterError, match=text):
        train_depth_family(family, data, depths=DEPTHS, reference=64, seeds=2, epochs=1, lr=0.5)
    with pytest.raises(ParameterError, match="exponent"):
        depth_lr(0.5, 8, 1.0, "sgd", exponent=float("nan"))


@pytest.mark.slow
def test_the_limit_through_the_command_line(tmp_path, capsys):
    argv = ["transfer", "--preset", "quick", "--depths", "2,4,8,16", "--lrs=-1,1", "--seeds", "3", "--width", "2",
            "--samples", "16", "--epochs", "1", "--batch-size", "16", "--betas", "1", "--optimizer", "adam",
            "--limit", "32", "--out", str(tmp_path / "run"), "--json", str(tmp_path / "r.json"), "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "the limit beside it" in out and "reference depth 32" in out
    payload = json.loads((tmp_path / "r.json").read_text())
    assert payload["plan"]["limit"] == 32 and payload["settings"][0]["limit"]["family"]["verdict"] in VERDICTS


def test_progress_counts_the_limit_tasks_once(tmp_path):
    plan = _plan(betas=[1.0])
    calls = []
    with RunStore(str(tmp_path), plan.to_dict()) as store:
        assert plan.stored_units(store) == 0
        plan.run(calls.append, store=store)
        assert sum(calls) == len(plan.tasks()) + 1 and plan.stored_units(store) == sum(calls)
    again = []
    with RunStore(str(tmp_path), plan.to_dict()) as store:
        plan.run(again.append, store=store)
    assert again == []
