"""No weight verdict without evidence, and the verdict as a calibrated test (issue 37, item 5;
docs/weights.md, "How often the verdict is wrong"): two or three depths, depths spanning less
than a factor of 4, or exponent intervals wider than MAX_WIDTH give 'insufficient evidence'
naming what is missing; sparse needs a growing count ruled out by its interval; on seeded
families of known hypothesis (deeplimits.diagnostics.calibration) no verdict names a wrong one."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from deeplimits.cli import main
from deeplimits.diagnostics import hypothesis, scaling_exponents, weigh_evidence, weight_diagnostics
from deeplimits.diagnostics.calibration import KINDS, calibrate, family_seed, known_family
from deeplimits.diagnostics.verdict import INSUFFICIENT, MAX_WIDTH, MIN_DEPTHS, MIN_SPAN, VERDICTS
from deeplimits.studies.scaling.presets import SHORT_CPU_DEPTHS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NEED = f"(a verdict needs at least {MIN_DEPTHS} spanning a factor of {MIN_SPAN:g})"


def _verdict(kind, depths, seed=0, **kw):
    _, tensors = known_family(kind, depths, seed=family_seed(kind, seed), **kw)
    return scaling_exponents([weight_diagnostics(A) for A in tensors])


def test_the_rule_is_stated_by_its_constants():
    assert (MIN_DEPTHS, MIN_SPAN, MAX_WIDTH) == (4, 4.0, 0.5)
    assert VERDICTS[-1] == INSUFFICIENT == "insufficient evidence"


@pytest.mark.parametrize("kind", ["smooth", "rough", "sparse"])
@pytest.mark.parametrize("depths", [(64, 128), (32, 64, 128), (64, 80, 100, 128)])
def test_two_or_three_depths_or_a_short_span_are_insufficient_evidence(kind, depths):
    """Every family of known hypothesis (the old rule said smooth, rough or sparse here)."""
    fit = _verdict(kind, depths)
    assert fit.hypothesis == INSUFFICIENT, fit.report()
    if len(depths) < MIN_DEPTHS:
        assert fit.reason == f"{len(depths)} depths {NEED}"
    else:
        assert fit.reason == f"4 depths spanning a factor of 2, 64 to 128 {NEED}"
    assert fit.report().endswith(f"no verdict, insufficient evidence: {fit.reason}")


def test_exponents_whose_intervals_are_wider_than_the_bound_are_insufficient_evidence():
    """Three O(1) layers among small ones, each depth's weights scaled by a factor between 1/2
    and 2 (the scatter of trained networks, here large): the count of layers holding the weight
    is constant, but the norms scatter: their exponents' intervals are about 1.2 wide."""
    depths = (16, 32, 64, 128, 256)
    _, tensors = known_family("sparse", depths, seed=family_seed("sparse", 3))
    fit = scaling_exponents([weight_diagnostics(A * f) for A, f in zip(tensors, (1.0, 2.0, 0.5, 1.8, 0.6))])
    assert fit.hypothesis == INSUFFICIENT, fit.report()
    assert fit.reason.startswith("the intervals of the cumulative-sum exponent (2), the max-norm exponent (2), ")
    assert fit.reason.endswith(f"the root-sum-of-squares exponent (2) are wider than {MAX_WIDTH:g}")
    assert fit.exponents["layers_90"]["ci"] == [0.0, 0.0]  # an exact fit has an interval, 0 wide
    # unscaled, the same family is sparse
    assert scaling_exponents([weight_diagnostics(A) for A in tensors]).hypothesis == "sparse"


def _exponents(**values):
    """Exponents with the interval (lo, hi) given, or 0.1 wide around a number."""
    def one(v):
        lo, hi = (v - 0.05, v + 0.05) if isinstance(v, float) else v
        return {"value": (lo + hi) / 2, "ci": [lo, hi]}
    return {k: one(v) for k, v in values.items()}


def test_sparse_needs_a_growing_count_ruled_out_by_its_interval():
    """layers_90's exponent 0.2 with an interval reaching 0.4: a growing count is not ruled out,
    so not sparse (the old rule read the estimate, 0.2 <= 0.3, and said sparse); reaching 0.25,
    sparse. An interval wider than the bound, or none, is insufficient evidence."""
    depths = [16, 32, 64, 128]
    sparse = dict(beta=1.0, increment_norm=-1.0, scaled_increments=0.0, rss=0.0, max_norm=0.0)
    verdict, reason = hypothesis(_exponents(**sparse, layers_90=(0.0, 0.4)), depths=depths)
    assert verdict == "neither" and "Hypothesis 3 (sparse) not shown: step 6 layers holding 90% L^0.20 " \
                                    "(<= L^0.40) (a growing count is not ruled out)" in reason, reason
    assert hypothesis(_exponents(**sparse, layers_90=(0.15, 0.25)), depths=depths)[0] == "sparse"
    verdict, reason = hypothesis(_exponents(**sparse, layers_90=(-0.5, 0.25)), depths=depths)
    assert verdict == INSUFFICIENT and reason == "the interval of the layers_90 exponent is 0.75 wide (at most 0.5)"
    bare = {**_exponents(**sparse), "layers_90": {"value": 0.0, "ci": [math.nan, math.nan]}}
    verdict, reason = hypothesis(bare, depths=depths)
    assert verdict == INSUFFICIENT and reason.startswith("the layers_90 exponent has no interval"), reason
    assert hypothesis(_exponents(**sparse, layers_90=(0.15, 0.25)))[1] == f"the depths are not given {NEED}"


def test_a_few_layers_that_carry_the_weight_are_not_a_noise_path():
    """The evidence of a few large layers that grow a little with depth (max norm L^0.2, so not
    sparse) among small white ones: steps 3 to 5 agree with Hypothesis 2, but the count of
    layers holding the weight is constant (L^0 [0, 0]), where any function of depth, smooth or
    rough, spreads it over a fixed fraction of the layers: not rough (the old rule said rough)."""
    e = _exponents(beta=0.9, increment_norm=0.0, scaled_increments=0.9, rss=0.1, max_norm=0.2, noise_qv=0.25,
                   layers_90=(0.0, 0.0))
    verdict, reason = hypothesis(e, depths=SHORT_CPU_DEPTHS, noise_hurst=0.35, noise_fraction=0.96)
    agrees = {i["name"]: i["agrees"] for i in weigh_evidence(e, noise_hurst=0.35, noise_fraction=0.96)}
    assert [agrees[k] for k in ("scaled increments", "noise part", "root sum of squares")] == ["H2"] * 3
    assert verdict == "neither" and "step 6 layers holding 90% L^0.00 (<= L^0.00)" in reason, reason


def test_a_rough_family_spread_over_the_layers_never_reads_sparse():
    """Hypothesis 2 (a trend L^-0.8 A(k/L) plus Brownian increments) at the scaling study's depths:
    the squared norm is spread over a fixed fraction of the layers (layers_90 ~ L^1), so the
    reason says Hypothesis 3 is not shown, and nothing agrees with it (the old reason listed
    steps 3 and 5, which Hypothesis 2 predicts too, as agreeing with Hypothesis 3)."""
    for seed in range(5):
        fit = _verdict("rough", SHORT_CPU_DEPTHS, seed)
        assert fit.hypothesis in ("rough", "neither") and fit.exponents["layers_90"]["ci"][0] > 0.9, fit.report()
        assert "agrees with Hypothesis 3" not in fit.reason and "Hypothesis 3 (sparse) not shown" in fit.reason


@pytest.mark.slow
def test_no_family_of_known_hypothesis_gets_a_wrong_one():
    """40 seeded families of each kind at the scaling study's depths (10 to 137, width 10): no
    wrong hypothesis, most get the right one; the families built to say no get none; at three
    depths every family is insufficient evidence (the old rule named a wrong hypothesis there)."""
    counts = calibrate(40, SHORT_CPU_DEPTHS)
    for kind in KINDS:
        wrong = {v: n for v, n in counts[kind].items() if v in ("smooth", "rough", "sparse") and v != kind and n}
        assert not wrong, (kind, counts[kind])
    assert counts["smooth"]["smooth"] >= 28 and counts["rough"]["rough"] >= 36 and counts["sparse"]["sparse"] == 40
    assert counts["none"]["neither"] == 40
    few = calibrate(10, (16, 32, 64), kinds=("smooth", "rough"))
    assert all(c[INSUFFICIENT] == 10 for c in few.values()), few


def test_a_smooth_but_rough_looking_trend_is_not_read_as_a_noise_path():
    """Hypothesis 1 with a fixed fBm path of index 1/4 at beta 1/2: its noise part is rough
    (Hurst index 0.4) and of finite quadratic variation, like Hypothesis 2's, and its scaled
    increments decay like L^-0.19, within 0.2 of a noise path's L^0 (fitting both): the old rule
    said rough; rough now needs step 3 for Hypothesis 2 alone."""
    _, tensors = known_family("smooth", (20, 30, 45, 80), seed=family_seed("smooth", 143, 500000))
    fit = scaling_exponents([weight_diagnostics(A) for A in tensors])
    assert {i["name"]: i["agrees"] for i in fit.evidence}["scaled increments"] == "both", fit.report()
    assert fit.hypothesis not in ("rough", "sparse"), fit.report()


@pytest.mark.slow
def test_cli_weights_on_saved_tensors(tmp_path, capsys, monkeypatch):
    """``deeplimits weights`` on .npy files: two and three depths say insufficient evidence (text
    and JSON), four spanning a factor of 8 give the verdict."""
    monkeypatch.chdir(tmp_path)  # the run directory (runs/weights-<hash>) is made there
    paths = {}
    _, tensors = known_family("smooth", (16, 32, 64, 128), seed=family_seed("smooth", 1))
    for A in tensors:
        paths[len(A)] = str(tmp_path / f"L{len(A)}.npy")
        np.save(paths[len(A)], A.numpy())
    for depths in ((16, 32), (16, 32, 64)):
        assert main(["weights", *[paths[L] for L in depths], "--json", str(tmp_path / "w.json")]) == 0
        text = capsys.readouterr().out
        assert f"no verdict, insufficient evidence: {len(depths)} depths {NEED}" in text and "supports" not in text
        h = json.loads((tmp_path / "w.json").read_text())["hypothesis"]["A"]
        assert h["supports"] == INSUFFICIENT and h["reason"] == f"{len(depths)} depths {NEED}"
    assert main(["weights", *paths.values()]) == 0
    assert "supports: smooth (Hypothesis 1" in capsys.readouterr().out
    out = subprocess.run([sys.executable, "-m", "deeplimits", "weights", paths[16], paths[32], paths[64]],
                         capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0 and f"no verdict, insufficient evidence: 3 depths {NEED}" in out.stdout, out.stderr


def test_bad_depths_are_refused_in_one_line():
    e = _exponents(beta=0.3, increment_norm=-1.3, rss=0.2)
    for bad in ("16,32", [16, -1], [16, float("nan")], 7):
        with pytest.raises(ValueError, match=r"^depths must be a list of depths > 0 or None, got .*$"):
            hypothesis(e, depths=bad)


@pytest.mark.parametrize("kw, match", [
    (dict(kind="smoth"), "^kind must be one of 'smooth', 'rough', 'sparse', 'none'; got 'smoth'$"),
    (dict(depths=[2, 4, 8]), r"^depths must be at least 3 layers, got \[2, 4, 8\]$"),
    (dict(depths=[16, 8]), r"^depths must be strictly increasing, got \[16, 8\]$"),
    (dict(seed=-1), "^seed must be an integer >= 0, got -1$"),
    (dict(width=0), "^width must be an integer >= 1, got 0$"),
    (dict(scatter=-0.1), r"^scatter must lie in \[0.0, inf\], got -0.1$"),
])
def test_bad_families_are_refused_in_one_line(kw, match):
    args = {"kind": "smooth", "depths": [8, 16], "seed": 0, **kw}
    with pytest.raises(ValueError, match=match):
        known_family(args.pop("kind"), args.pop("depths"), **args)
    if "kind" not in kw:
        with pytest.raises(ValueError, match=match):
            calibrate(1, **{"depths": [8, 16], **kw})
    with pytest.raises(ValueError, match="^count must be an integer >= 1, got 0$"):
        calibrate(0, [8, 16])
