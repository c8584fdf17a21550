"""The released code's ReLU settings and statistics (issue 37, item 6; docs/weights.md, "The
released code's ReLU settings"): Cohen et al.'s instadeepai/scaling-resnets, ``run_experiment``'s
defaults as ``--preset released-relu``, its xavier initialisation as ``--init-method xavier``,
and what its ReLU figures fit (``plots_fully_connected.py``) beside the paper's steps."""

import json
import math

import pytest
import torch

from deeplimits.cli import main
from deeplimits.diagnostics import weight_diagnostics
from deeplimits.diagnostics.scaling import RELEASED_FACTORS, released_statistics
from deeplimits.studies import SCALING_PRESETS, plan_scaling
from deeplimits.studies.scaling import ScalingPlan

DEPTHS = [16, 32, 64, 128, 256]


def _released_depths(min_depth=3, max_depth=1000, base=1.2):
    """``get_depths`` of the released ``scaling_experiments.py``, transcribed."""
    import numpy as np

    x = 1 + int(np.log(max_depth) / np.log(base))
    return np.unique([d for d in [int(np.floor(base ** n)) for n in range(x)] if d >= min_depth]).tolist()


def test_the_preset_is_the_released_run_experiment_with_relu_and_one_delta_per_layer():
    plan = plan_scaling(**SCALING_PRESETS["released-relu"])
    assert list(plan.depths) == _released_depths() and plan.depths[0] == 3 and plan.depths[-1] == 850
    assert (plan.activation, plan.delta, plan.delta_init) == ("relu", "per-layer", "normal")  # delta_type 'multi'
    assert (plan.optimizer, plan.lr, plan.batch_size, plan.max_epochs) == ("sgd", (5e-3,), 50, 200)
    assert (plan.loss, plan.stop_loss) == ("mse", 1e-2)  # torch.nn.MSELoss() below epsilon = 1e-2
    assert plan.data_sizes()[:2] == (1024, 256)  # train_size, test_size
    assert (plan.init_method, plan.init_scale, plan.bias_init) == ("xavier", 1e-4, "normal")
    assert (plan.stop_rule, plan.batches, plan.inputs, plan.angle_start) == ("running", "collapsed", "sphere", 0)
    deep = plan_scaling(**SCALING_PRESETS["released-relu-9100"])
    assert deep.depths[-1] == 9100 and deep.depths[:len(plan.depths)] == plan.depths
    assert {k: v for k, v in deep.to_dict().items() if k != "depths"} == \
        {k: v for k, v in plan.to_dict().items() if k != "depths"}
    from deeplimits.studies.scaling.report import protocol_line

    line = protocol_line(plan.protocol())
    assert "sgd at lr 0.005" in line and "the first batch of 50" in line and "<= 0.01" in line
    assert "W_0 ~ 0.0001/d N(0, 1)" in line and "b_0 ~ 0.0001/sqrt d N(0, 1)" in line
    assert plan.protocol()["init_method"] == "xavier" and ScalingPlan.from_dict(plan.to_dict()) == plan
    # a spec written before the option reads back as what it ran: the 1/L of xavier-depth
    old = {k: v for k, v in plan_scaling(depths=[4, 8]).to_dict().items() if k != "init_method"}
    assert ScalingPlan.from_dict(old).init_method == "xavier-depth"
    assert "W_0 ~ 0.01/(L d) N(0, 1)" in protocol_line({k: v for k, v in plan_scaling(depths=[4, 8]).protocol().items()
                                                         if k != "init_method"})


def test_xavier_draws_the_weights_without_the_depth():
    """``init_method='xavier'`` (``init_values``): ``A ~ N(0, (s/d)^2)``, ``b ~ N(0, (s/sqrt d)^2)``;
    ``'xavier-depth'`` divides both by ``L``. 40000 and 4000 entries: their sample standard
    deviations are within 1% and 3.5% (about 3 standard errors) of the law's."""
    from deeplimits.studies.scaling.task import _data, _network

    plan = plan_scaling(**{**SCALING_PRESETS["released-relu"], "depths": [8, 400], "samples": 160})
    params = {**plan.to_dict(), "depth": 400}
    data = _data(params, torch.float64, "cpu")
    s, d = 1e-4, 10
    for method, per in (("xavier", 1), ("xavier-depth", 400)):
        net = _network({**params, "init_method": method}, data, 1, 7, torch.float64, "cpu")
        assert abs(float(net.W.detach().std()) / (s / (per * d)) - 1) < 0.01
        assert abs(float(net.b.detach().std()) / (s / (per * d ** 0.5)) - 1) < 0.035
    delta = net.delta.detach()[:, 0] * 400  # delta_k ~ N(0, 1/L^2): the preset's per-layer draw
    assert abs(float(delta.std()) - 1) < 0.12


def test_bad_init_method_is_refused_in_one_line(capsys):
    with pytest.raises(ValueError, match="init_method must be one of"):
        plan_scaling(init_method="he")
    for argv in (["scaling", "--init-method", "he"], ["scaling", "--preset", "released-relu", "--init-scale", "-1"],
                 ["scaling", "--preset", "released-9100"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert main(["scaling", "--init-method", "he"]) == 2 and "--init-method" in capsys.readouterr().err


def _family(make, depths=DEPTHS):
    return [weight_diagnostics(make(L), name="|delta| W") for L in depths]


def _alternating(L, beta=0.3):
    """``A_k = L^-beta (-1)^k M``, ``||M|| = 1``: max norm ``L^-beta``, increments ``2 L^-beta``,
    root sum of squares ``L^(1/2 - beta)``, exactly."""
    M = torch.eye(3, dtype=torch.float64) / 3 ** 0.5
    signs = torch.tensor([(-1.0) ** k for k in range(L)], dtype=torch.float64)
    return L ** -beta * signs.view(-1, 1, 1) * M


def _smooth(L, beta=0.8):
    """``A_k = L^-beta (cos(2 pi k/L) M + sin(2 pi k/L) N)``, ``M``, ``N`` orthonormal: max norm
    ``L^-beta`` exactly, increments ``2 sin(pi/L) L^-beta`` (``2 pi L^-(1 + beta)`` to a relative
    ``pi^2 / (6 L^2)``), root sum of squares ``L^(1/2 - beta)``."""
    M, N = torch.zeros(2, 3, 3, dtype=torch.float64)
    M[0, 0], N[1, 2] = 1.0, 1.0
    t = 2 * math.pi * torch.arange(L, dtype=torch.float64) / L
    return L ** -beta * (torch.cos(t).view(-1, 1, 1) * M + torch.sin(t).view(-1, 1, 1) * N)


def test_the_released_statistics_give_the_known_exponents():
    """Minus the slope of the max norm of ``|delta| A`` (the figure's "beta"), the slope of the
    increments times ``L^factor`` and of the root sum of squares, on two families of known
    exponents: a noise of size ``L^-0.3`` (increments ``L^-0.3``: times ``L^0.5``, ``L^0.2``) and
    a smooth trend of size ``L^-0.8`` (increments ``L^-1.8``: times ``L^0.5``, ``L^-1.3``)."""
    noise = released_statistics(_family(_alternating), RELEASED_FACTORS["synthetic"])
    assert noise["max_norm"]["value"] == pytest.approx(0.3, abs=1e-9)
    assert noise["increments"]["value"] == pytest.approx(0.2, abs=1e-9) and noise["increments"]["factor"] == 0.5
    assert noise["rss"]["value"] == pytest.approx(0.2, abs=1e-9)
    assert released_statistics(_family(_alternating), RELEASED_FACTORS["digits"])["increments"]["value"] == \
        pytest.approx(0.1, abs=1e-9)
    trend = released_statistics(_family(_smooth), 0.5)
    assert trend["max_norm"]["value"] == pytest.approx(0.8, abs=1e-9)
    # 2 sin(pi/L) is 2 pi/L less a relative pi^2/(6 L^2), 0.6% at L = 16: 0.002 off the slope
    assert trend["increments"]["value"] == pytest.approx(-1.3, abs=3e-3)
    assert trend["rss"]["value"] == pytest.approx(-0.3, abs=1e-9)
    lo, hi = trend["max_norm"]["ci"]
    assert lo == pytest.approx(0.8, abs=1e-9) and hi == pytest.approx(0.8, abs=1e-9)  # an exact power: no width
    # the statistics do not read the scale weight_diagnostics may put on the increments
    scaled = [weight_diagnostics(_smooth(L), beta=0.7) for L in DEPTHS]
    assert released_statistics(scaled, 0.5)["increments"]["value"] == pytest.approx(trend["increments"]["value"])


@pytest.mark.parametrize("family,factor,match", [
    ([1.0, 2.0], 0.5, "family must hold WeightDiagnostics"),
    ("family", 0.5, "family must be"),
    (None, math.nan, "factor"),
    (None, "half", "factor"),
])
def test_bad_released_statistics_input(family, factor, match):
    family = _family(_alternating, [8, 16]) if family is None else family
    with pytest.raises(ValueError, match=match):
        released_statistics(family, factor)
    with pytest.raises(ValueError, match="at least two distinct depths"):
        released_statistics(_family(_alternating, [8, 8]), 0.5)


def test_the_scaling_result_carries_the_released_statistics_beside_the_papers():
    """``family_exponents`` of records whose ``|delta_k| W_k`` is the noise family above: the
    released code's numbers (max norm 0.3, increments times ``L^0.5`` ``L^0.2``, ``L^0.1`` on
    digits, root sum of squares ``L^0.2``) beside the cumulative-sum alpha + beta."""
    from deeplimits.studies.scaling.result import family_exponents

    def record(L):
        eff = weight_diagnostics(_alternating(L), name="|delta| W").to_dict()
        return {"depth": L, "seed": 0, "lr": 0.1, "delta": 1.0 / L, "W": eff, "effective": eff, "trend_ratio": 1.0,
                "ode_distance": 1.0 / L, "finite": True}

    records = [record(L) for L in DEPTHS]
    synthetic, digits = family_exponents(records), family_exponents(records, "digits")
    e = synthetic["exponents"]
    assert e["alpha+beta_max"]["value"] == pytest.approx(0.3, abs=1e-9)
    assert e["released_increments"]["value"] == pytest.approx(0.2, abs=1e-9)
    assert digits["exponents"]["released_increments"]["value"] == pytest.approx(0.1, abs=1e-9)
    assert e["released_rss"]["value"] == pytest.approx(0.2, abs=1e-9)
    assert "alpha+beta" in e and e["alpha+beta"]["value"] != e["alpha+beta_max"]["value"]  # the paper's, beside


@pytest.mark.slow
def test_the_preset_runs_at_a_tiny_size_and_reports_both_readings(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["scaling", "--preset", "released-relu", "--depths", "3,4,5", "--samples", "160", "--max-epochs", "2",
            "--out", str(out), "--quiet", "--json", "-"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    d = json.loads(captured.out)
    e = d["families"][0]["exponents"]
    assert {"alpha", "beta", "beta_max", "alpha+beta", "alpha+beta_max", "released_increments", "released_rss"} <= set(e)
    assert e["released_increments"]["factor"] == 0.5 and d["protocol"]["init_method"] == "xavier"
    assert d["published"]["alpha+beta_max"] == 0.8 and len(d["records"]) == 3
    report = captured.err
    assert "released_increments" in report and "times L^0.5 before the fit" in report
    assert "W_0 ~ 0.0001/d N(0, 1)" in report and "patience" in report
    assert all(r["epochs"] <= 2 for r in d["records"])


@pytest.mark.slow
def test_the_released_ablation_changes_one_of_its_knobs_at_a_time(tmp_path, capsys):
    """From the released settings, ``--ablation`` runs :data:`RELEASED_ABLATION`: each variant
    differs from the released settings in its own options only; every row carries the released
    code's statistics. The per-layer table holds the released settings as two rows."""
    from deeplimits.studies.scaling.ablation import PER_LAYER_ABLATION, RELEASED_ABLATION, ablation_plans

    base = {**SCALING_PRESETS["released-relu"], "depths": [3, 4], "samples": 110, "max_epochs": 1}
    plans = ablation_plans(**base)
    protocol = plans[0][3].to_dict()
    for (_, knob, _, p), (_, _, change) in zip(plans, [a for a in RELEASED_ABLATION if a[2] is not None]):
        differ = {k for k, v in p.to_dict().items() if protocol[k] != v}
        assert differ == {k for k, v in change.items() if protocol[k] != v}, knob
    released = [r for r in PER_LAYER_ABLATION if r[0] == "released code"]
    assert len(released) == 2 and released[0][2] == {k: v for k, v in SCALING_PRESETS["released-relu"].items()
                                                     if k != "depths"}
    argv = ["scaling", "--preset", "released-relu", "--depths", "3,4", "--samples", "110", "--max-epochs", "1",
            "--ablation", "--out", str(tmp_path), "--quiet", "--json", "-"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["knob"] for r in rows] == [a[0] for a in RELEASED_ABLATION]
    assert all("alpha+beta_max" in r and "released_increments" in r for r in rows)
