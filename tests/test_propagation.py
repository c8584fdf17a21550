"""Signal propagation at initialisation (SPEC §4): regimes, theory bounds, overflow."""

import math

import numpy as np
import pytest
import torch

import deeplimits as dl
from deeplimits.propagation import CAP, stability, theory_bounds


def test_theory_bounds_formula():
    lo, hi = theory_bounds(0.5, 4)
    assert lo == pytest.approx((1 + 1 / 8) ** 4 - 1) and hi == pytest.approx((1 + 1 / 4) ** 4 - 1)


def test_iid_regimes_at_depth_1000():
    res = stability("res-3", width=20, n_in=16, depths=[1000], betas=[0.25, 0.5, 1.0], draws=20, seed=1)
    regimes = {r["beta"]: r["regime"] for r in res.records}
    assert regimes == {0.25: "explosion", 0.5: "non-trivial", 1.0: "identity"}


@pytest.mark.parametrize("arch", ["res-1", "res-2", "res-3"])
def test_mean_squares_inside_the_theory_bounds(arch):
    # leaky ReLU of slope 1/sqrt(2) (the assumptions of the bounds); beta = 1/2, L = 64: r^2 has a coefficient of variation near 1, so with 400 draws the
    # standard error of its mean is about 5%; the bands allow three of them (15%)
    res = stability(arch, driver=dl.IIDDriver("uniform"), activation=None if arch == "res-3" else "leaky_relu",
                    width=16, n_in=16, depths=[64], betas=[0.5], draws=400, seed=2, dtype=torch.float64)
    rec = res.records[0]
    lo, hi = rec["theory_lower"], rec["theory_upper"]
    for name in ("r_h", "r_p"):
        m = rec[name]["mean_sq"]
        assert 0.85 * lo <= m <= 1.15 * hi, (arch, name, lo, m, hi)


def test_overflow_is_explosion_not_a_crash():
    res = stability("res-1", driver=dl.IIDDriver("gaussian"), activation="identity", width=8, n_in=8,
                    depths=[256], betas=[0.0], draws=6, seed=3)
    rec = res.records[0]
    assert rec["exploded"] > 0 and rec["regime"] == "explosion"
    assert all(math.isfinite(v) and v <= CAP ** 2 for s in ("r_h", "r_p") for v in rec[s].values())


def test_record_fields():
    res = stability("res-2", width=4, n_in=4, depths=[8, 16], betas=[0.5, 1.0], draws=3)
    assert len(res.records) == 4
    for rec in res.records:
        for key in ("beta", "depth", "driver", "r_h", "r_p", "exploded", "theory_lower", "theory_upper", "regime"):
            assert key in rec
        assert set(rec["r_h"]) == {"mean", "median", "q25", "q75", "mean_sq"}


def test_smooth_weights_are_critical_at_beta_one():
    res = stability("res-3", driver=dl.SmoothDriver(), width=20, n_in=16, depths=[1000], betas=[0.5, 1.0, 2.0],
                    draws=20, seed=1)
    regimes = {r["beta"]: r["regime"] for r in res.records}
    assert regimes == {0.5: "explosion", 1.0: "non-trivial", 2.0: "identity"}


def test_inside_model_runs_without_theory_bounds():
    # i.i.d. terms: r_h ~ L^(1/2 - beta) sqrt(E tanh(N(0, 2))^2) ~ 0.7 L^(1/2 - beta): 0.02 at beta = 1, L = 1000
    res = stability("inside", activation="tanh", width=10, n_in=8, depths=[1000], betas=[0.5, 1.0], draws=5)
    assert all(r["theory_lower"] is None and r["theory_upper"] is None for r in res.records)
    assert [r["regime"] for r in res.records] == ["non-trivial", "identity"]
