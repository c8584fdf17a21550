"""The theory at initialisation beside its measurements (docs/theory.md): each bound on its own
exact small case, the growth laws, the phase-diagram slopes, and the bias-free inside model."""

import math

import numpy as np
import pytest
import torch

from deeplimits.blocks import make_block
from deeplimits.studies.propagation.memory import weight_layout

import deeplimits as dl
from deeplimits.cli import main
from deeplimits.studies.propagation import core as P
from deeplimits.studies.propagation import study as S
from deeplimits.studies.propagation.presets import STABILITY_PRESETS
from deeplimits.studies import theory as T
from deeplimits.studies.fits import bootstrap_fit


# -- the formulas ------------------------------------------------------------------------

def test_high_probability_bounds_published_values():
    """beta = 1/2, L = 1000, d = 100, delta = 1/4: sqrt(exp(3/8 - sqrt(0.44))) = 0.8657 and
    sqrt(exp(1 + sqrt(0.2))) = 2.0619 (the values of the issue, to 4 digits)."""
    lo, hi = T.high_probability_bounds(0.5, 1000, 100, 0.25)
    assert round(math.sqrt(lo), 4) == 0.8657 and round(math.sqrt(hi), 4) == 2.0619
    # L a^2 = L^(1 - 2 beta) = 1 at beta = 1/2 whatever the depth; at beta = 1 it is 1/L
    assert T.high_probability_bounds(0.5, 10, 100, 0.25) == pytest.approx((lo, hi), rel=1e-14)
    lo1, hi1 = T.high_probability_bounds(1.0, 100, 64, 0.5)
    assert lo1 == pytest.approx(math.exp(3 / 800 - math.sqrt(11 / 100 / 32)), rel=1e-14)
    assert hi1 == pytest.approx(math.exp(1 / 100 + math.sqrt(5 / 100 / 32)), rel=1e-14)
    assert T.high_probability_bounds(0.0, 2000, 40, 0.25)[1] == math.inf  # beyond the largest double


def test_quantile_bound_and_limits():
    assert T.quantile_bound(0.5, 1000, 0.25) == pytest.approx(8.0)  # L a^2 = 1
    assert T.quantile_bound(1.0, 100, 0.1) == pytest.approx(2 * 0.01 / 0.1)
    assert T.quantile_bound(0.25, 100, 0.25) is None  # L a^2 = 10 > 1: not stated
    lo, hi = T.CRITICAL_LIMITS
    assert lo == pytest.approx(math.sqrt(math.e) - 1, rel=1e-15) and hi == pytest.approx(math.e - 1, rel=1e-15)
    # (1 + 1/(2L))^L - 1 and (1 + 1/L)^L - 1 increase to their limits, within 1/L
    for L in (10, 1000, 10 ** 6):
        b = T.theory_bounds(0.5, L)
        assert b[0] < lo < b[0] + 1 / L and b[1] < hi < b[1] + 2 / L


@pytest.mark.parametrize("call", [lambda: T.quantile_bound(0.5, 10, 1.0), lambda: T.quantile_bound(0.5, 10, 0),
                                  lambda: T.high_probability_bounds(0.5, 10, 0, 0.25),
                                  lambda: T.high_probability_bounds(-1, 10, 4, 0.25)])
def test_bounds_refuse_bad_arguments(call):
    with pytest.raises(ValueError, match="delta|width|beta"):
        call()


def test_conditions_say_what_does_not_hold():
    iid, smooth = dl.make_driver("uniform"), dl.make_driver("smooth")
    assert T.high_probability_unmet("res-3", iid, 100, 0.5, 1000) == {"lower": [], "upper": []}
    unmet = T.high_probability_unmet("res-3", iid, 40, 0.5, 10 ** 5)
    assert unmet["upper"] == [] and unmet["lower"] == ["d = 40 >= 64"]
    unmet = T.high_probability_unmet("res-1", smooth, 100, 0.5, 1000)
    assert len(unmet["upper"]) == 2 and "res-3" in unmet["upper"][0] and "i.i.d." in unmet["upper"][1]


def test_regularity_slopes_and_growth_exponents():
    iid, smooth, frac = dl.make_driver("gaussian"), dl.make_driver("smooth"), dl.make_driver("fractional", 0.8)
    assert [T.predicted_slope(iid, b) for b in (0.25, 0.5, 1.0)] == [None, None, -0.5]
    assert T.predicted_slope(smooth, 2.0) == -1.0 and T.predicted_slope(smooth, 1.0) is None
    assert T.predicted_slope(frac, 1.0) == pytest.approx(-0.2)
    assert T.growth_exponent(smooth, 0.5) == 0.5 and T.growth_exponent(iid, 0.25) == 0.5
    assert T.growth_exponent(smooth, 1.0) is None and T.growth_exponent(frac, 0.3) is None


def test_bootstrap_fit_recovers_exact_laws():
    """Noise-free data: the fit returns the law's parameters and a degenerate interval."""
    L = np.array([10.0, 40.0, 160.0, 640.0])
    slope, intercept, ci = bootstrap_fit(np.log(L), np.tile(3.0 * L ** -0.7, (5, 1)), np.median)
    assert slope == pytest.approx(-0.7, abs=1e-12) and intercept == pytest.approx(math.log(3.0), abs=1e-12)
    assert ci == pytest.approx((-0.7, -0.7), abs=1e-12)
    lam, c, _ = bootstrap_fit(L ** 0.5, np.tile(np.exp(-1.0 + 0.4 * L ** 0.5), (5, 1)), np.median)
    assert lam == pytest.approx(0.4, abs=1e-12) and c == pytest.approx(-1.0, abs=1e-10)


# -- exact small cases: res-1, identity, Rademacher weights, d = 1 ----------------------------
# h_L = h_0 prod_k (1 + a eps_k) exactly, so ||h_L|| / ||h_0|| = (1 + a)^m (1 - a)^(L - m) with
# m ~ Binomial(L, 1/2), and the same for ||p_0|| / ||p_L|| (p_k = (1 + a eps_k) p_{k+1}).

def _binomial_case(depth, beta, draws=4000, seed=0):
    res = dl.stability("res-1", "rademacher", activation="identity", width=1, n_in=1, depths=[depth], betas=[beta],
                       draws=draws, seed=seed, dtype=torch.float64)
    a = depth ** -beta
    m = np.arange(depth + 1)
    prob = np.array([math.comb(depth, k) for k in m], dtype=float) / 2.0 ** depth
    norm = (1 + a) ** m * (1 - a) ** (depth - m)
    return res.records[0], norm, prob


def test_norm_ratio_quartiles_are_the_exact_binomial_quantiles():
    """L = 8: the CDF of m is 0.145, 0.363, 0.637, 0.855 at m = 2..5, far (> 15 standard errors
    of an empirical CDF over 4000 draws) from 1/4, 1/2, 3/4, so the empirical quartiles are
    exactly the norms at m = 3, 4, 5."""
    rec, norm, _ = _binomial_case(8, 0.5)
    for key in ("norm_ratio_h", "norm_ratio_p"):
        q = rec[key]
        np.testing.assert_allclose([q["q25"], q["median"], q["q75"]], norm[[3, 4, 5]], rtol=1e-12)


def test_quantile_bound_against_the_exact_distribution():
    """At beta = 1/2 (L a^2 = 1) the record's quantiles of r^2 are those of the exact law of
    (prod (1 + a eps) - 1)^2 within the Monte Carlo error of an empirical CDF (4 standard
    errors), and every exact quantile lies under the bound 2 L a^2 / delta."""
    rec, norm, prob = _binomial_case(16, 0.5)
    r2 = (norm - 1) ** 2
    q = rec["quantiles"]
    assert q["bound"] == pytest.approx([2.0 / (1 - u) for u in q["levels"]])
    n = 4000
    for u, emp_h, emp_p, bound in zip(q["levels"], q["r_h_sq"], q["r_p_sq"], q["bound"]):
        tol = 4 * math.sqrt(u * (1 - u) / n)
        for emp in (emp_h, emp_p):
            assert prob[r2 <= emp * (1 + 1e-12)].sum() >= u - tol and prob[r2 < emp * (1 - 1e-12)].sum() <= u + tol
        exact_tail = prob[r2 > bound].sum()  # the theorem on the exact law: P(r^2 > bound) <= delta
        assert exact_tail <= 1 - u, (u, exact_tail)
    assert rec["hp_unmet"]["upper"] and rec["hp_unmet"]["lower"]  # res-1 at d = 1: not the proposition's network


@pytest.mark.slow
def test_high_probability_bounds_hold_at_the_proposition_size():
    """res-3, i.i.d. uniform weights, d = 64, L = 200, beta = 1/2: P(ratio >= lower) and
    P(ratio <= upper) are at least 3/4, so the measured q25 and q75 (600 draws) lie inside. The
    lower bound is not proved at this size: alpha^2 = 1/200 is above 2 / ((sqrt(C) + 16) d) =
    0.0019 (it holds from L = 522 on at d = 64), and the record says so with its numbers."""
    res = dl.stability("res-3", width=64, n_in=16, depths=[200], betas=[0.5], draws=600, seed=4)
    rec = res.records[0]
    assert rec["hp_unmet"]["upper"] == [] and len(rec["hp_unmet"]["lower"]) == 2
    assert rec["hp_unmet"]["lower"][0].startswith("alpha^2 = 0.005 <= 2 / ((sqrt(C) + 16 s^4) d) = 0.001916")
    assert rec["hp_constants"]["s"] == 1.0 and rec["hp_constants"]["C"] >= rec["hp_constants"]["C_estimate"]
    assert rec["hp_lower"] < rec["norm_ratio_h"]["q25"] and rec["norm_ratio_h"]["q75"] < rec["hp_upper"]
    assert rec["hp_lower"] == pytest.approx(math.sqrt(T.high_probability_bounds(0.5, 200, 64, 0.25)[0]))
    assert rec["limit_lower"] == T.CRITICAL_LIMITS[0] and rec["limit_upper"] == T.CRITICAL_LIMITS[1]
    assert "with probability >= 0.75 each" in res.report() and "e^(1/2) - 1" in res.report()


def test_delta_is_part_of_the_plan_only_when_not_the_default():
    assert "delta" not in S.plan_stability(width=4, n_in=4, depths=[4], betas=[0.5], draws=2).to_dict()
    spec = S.plan_stability(width=4, n_in=4, depths=[4], betas=[0.5], draws=2, delta=0.1).to_dict()
    assert spec["delta"] == 0.1 and all("delta" not in t.params for t in S.StabilityPlan.from_dict(spec).tasks())
    with pytest.raises(ValueError, match=r"delta must lie in \(0.0, 1.0\)"):
        S.plan_stability(width=4, n_in=4, depths=[4], betas=[0.5], draws=2, delta=1.0)


# -- growth laws ---------------------------------------------------------------------------

def test_smooth_slope_and_growth_law():
    """Smooth weights: at beta = 2 the slope of log r_h on log L is 1 - beta = -1 (the Riemann
    sum L^-beta sum_k V(k/L) g ~ L^(1-beta) int V g), within 0.1; at beta = 1/2 the largest
    deviation grows like exp(lambda L^(1/2)) with lambda > 0, and the maximum over layers is
    at least the last layer's deviation in every draw."""
    res = dl.stability("res-3", "smooth", width=12, n_in=8, depths=[10, 50, 200, 800], betas=[0.5, 2.0], draws=12,
                       seed=1)
    fits = {f["beta"]: f for f in res.fits}
    assert fits[2.0]["slope_predicted"] == -1.0 and abs(fits[2.0]["slope"] + 1) < 0.1, fits[2.0]
    assert fits[2.0]["slope_ci"][0] <= fits[2.0]["slope"] <= fits[2.0]["slope_ci"][1]
    assert fits[0.5]["growth_exponent"] == 0.5 and fits[0.5]["growth_lambda"] > 0.1, fits[0.5]
    for r in res.records:  # the max is accumulated in float32 (relative rounding ~1e-7): a 1e-5 margin
        for q in ("median", "q25"):
            assert r["r_h_max"][q] >= r["r_h"][q] * (1 - 1e-5)
    assert "lambda = " in res.report() and "slope of median r_h" in res.report()


def test_iid_slope_is_one_half_minus_beta():
    """res-1 with the identity and Gaussian weights at beta = 1: r_h ~ L^-beta ||sum_k V_k h_0||
    ~ L^(1/2 - beta), slope -1/2 (within 0.08 over depths 16..1024, 200 draws)."""
    res = dl.stability("res-1", "gaussian", activation="identity", width=8, n_in=8, depths=[16, 64, 256, 1024],
                       betas=[1.0], draws=200, seed=2)
    f = res.fits[0]
    assert f["slope_predicted"] == -0.5 and abs(f["slope"] + 0.5) < 0.08, f


# -- the phase diagram ---------------------------------------------------------------------

def test_phase_slopes_and_beta_star_of_r_p():
    """Per cell, the slope is (log10 r_h(L) - log10 r_h(L/10)) / 1; on the identity side it is
    max(H, 1/2) - beta within 0.1 on average per row; beta* of r_p is the crossing of its row."""
    hursts, betas = [0.3, 0.8], np.linspace(0.2, 1.2, 11).tolist()
    res = dl.phase_diagram(hursts, betas, width=20, depth=500, draws=4, inputs=5, seed=0)
    for i in range(2):
        for j, b in enumerate(betas):
            if res.exploded[i][j] == 0:
                want = (res.log10_rh[i][j] - res.log10_rh_short[i][j]) / math.log10(500 / 50)
                assert res.slope_h[i][j] == pytest.approx(want)
            assert res.predicted_slope[i][j] == pytest.approx(max(hursts[i], 0.5) - b)
        assert res.beta_star_p[i] == T.critical_beta(betas, res.log10_rp[i])
    gaps = res.slope_gaps()
    assert all(abs(g) < 0.1 for g in gaps), gaps
    assert "beta* (r_p)" in res.report()


# -- the published inside model: no bias --------------------------------------------------------

def test_inside_presets_are_bias_free_and_the_bias_an_option():
    spec = S.plan_stability(**{**STABILITY_PRESETS["iid-inside"], "draws": 2, "width": 4}).to_dict()
    assert spec["bias"] is False and [n for n, _ in weight_layout(make_block("inside"), 4, False)] == ["W"]
    assert S.plan_stability("inside", width=4, depths=[4], draws=2, bias=True).to_dict()["bias"] is True
    assert "bias" not in S.plan_stability("res-3", width=4, depths=[4], draws=2).to_dict()
    with pytest.raises(ValueError, match="bias applies only to a block with optional weights"):
        S.plan_stability("res-3", width=4, depths=[4], draws=2, bias=True)
    with pytest.raises(ValueError, match="bias applies only to a block with optional weights"):
        dl.plan_phase([0.5], [0.5], arch="res-1", bias=True)


def test_bias_free_inside_is_h_plus_alpha_sigma_of_w_h():
    """The task's ratios equal ResNet('inside').forward with W only (b = None), on the same
    draws: the published model."""
    spec = S.plan_stability("inside", activation="tanh", width=5, n_in=4, depths=[9], betas=[0.5], draws=3,
                            dtype=torch.float64)
    out = S.stability_task({**spec.to_dict(), "draws": 3}, seed=7)
    samples, h0, B, top = P._draw([("W", (5, 5))], dl.make_driver("uniform"), 5, 4, [9], 3, 1,
                                  torch.Generator().manual_seed(7), torch.float64)
    tr = dl.ResNet("inside", "tanh", beta=0.5).forward(h0, W=samples["W"].weights(top)[:9], readout=B, depth=9)
    want = (tr.states[-1] - h0).norm(dim=-1) / h0.norm(dim=-1)
    np.testing.assert_allclose(np.asarray(out["r_h"])[:, 0, 0, :], want.numpy(), rtol=1e-10)


def test_a_spec_without_bias_keeps_the_bias_it_was_run_with():
    """Specs stored before the option existed drew b for inside: they still do."""
    spec = S.plan_stability("inside", width=4, n_in=4, depths=[6], betas=[0.5], draws=2, bias=True).to_dict()
    legacy = {k: v for k, v in spec.items() if k != "bias"}
    assert S.StabilityPlan.from_dict(legacy).bias is None
    a = S.stability_task({**legacy, "draws": 2}, seed=3)
    b = S.stability_task({**spec, "draws": 2}, seed=3)
    assert a == b


@pytest.mark.slow
def test_cli_reports_bounds_and_refuses_bad_delta(tmp_path, capsys):
    out = tmp_path / "c.json"
    argv = ["stability", "--preset", "criticality", "--width", "64", "--depths", "100", "--draws", "60", "--out",
            str(tmp_path / "run"), "--quiet", "--json", str(out), "--figures"]
    assert main(argv) == 0
    import json

    rec = json.loads(out.read_text())["records"][0]
    for key in ("norm_ratio_h", "norm_ratio_p"):
        assert {"q25", "median", "q75"} <= set(rec[key])
    assert rec["hp_lower"] == pytest.approx(math.sqrt(T.high_probability_bounds(0.5, 100, 64, 0.25)[0]))
    assert (tmp_path / "run" / "theory.png").exists()
    capsys.readouterr()
    assert main(["stability", "--delta", "1.5", "--out", str(tmp_path / "x")]) == 2
    assert "delta must lie in (0.0, 1.0)" in capsys.readouterr().err


def test_fits_drop_exploded_depths_and_the_max_does_not_overflow_in_float32():
    """Smooth weights at beta = 0.1 explode at the larger depths: those depths are not fitted;
    and a float32 run whose ratios pass 1.8e19 (squares beyond float32) keeps r_h_max finite
    wherever r_h is (the deviation's norm is taken in float64)."""
    res = dl.stability("res-3", "smooth", width=8, n_in=4, depths=[100, 200, 400, 800], betas=[0.1], draws=4, seed=0)
    capped = [r["depth"] for r in res.records if r["r_h"]["q75"] >= 1e30]  # r_h itself overflowed
    assert capped == [400, 800], capped
    assert res.fits[0]["depths"] == [100, 200] and res.fits[0]["growth_depths"] == [100, 200]
    for r in res.records:
        if r["depth"] not in capped:  # at L = 200, r_h ~ 5e27: its square overflows float32
            assert r["r_h_max"]["median"] < 1e30 and r["r_h_max"]["median"] >= r["r_h"]["median"] * (1 - 1e-5)
