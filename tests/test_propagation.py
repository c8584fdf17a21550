"""Signal propagation at initialisation (docs/propagation.md): regimes, theory bounds, overflow."""

import json
import math

import numpy as np
import pytest
import torch

from deeplimits.studies.propagation.memory import weight_layout

import deeplimits as dl
from deeplimits.studies import theory
from deeplimits import stability
from deeplimits.studies.propagation.core import CAP
from deeplimits.studies.theory import theory_bounds


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


# -- the shared pass --------------------------------------------------------------------

from deeplimits.networks import ResNet  # noqa: E402
from deeplimits import make_driver  # noqa: E402
from deeplimits.studies.propagation import core as P  # noqa: E402
from deeplimits.studies.propagation import study as S  # noqa: E402
from deeplimits.studies import results_from_store  # noqa: E402


@pytest.mark.parametrize("arch", ["res-1", "res-2", "res-3", "inside"])
@pytest.mark.parametrize("driver", [dl.IIDDriver("uniform"), dl.FractionalDriver(0.7)])
def test_shared_pass_equals_one_network_per_depth_and_beta(arch, driver):
    """Prefix columns by depth and betas as columns give exactly the networks of ResNet.forward
    (whose p_k are checked against autograd in test_networks)."""
    net = ResNet(arch, "tanh" if arch != "res-3" else None, beta=0.0)
    g = torch.Generator().manual_seed(0)
    depths, betas = [13, 5, 20], [0.3, 1.0]
    samples, h0, B, top = P._draw(weight_layout(net.block, 6), driver, 6, 5, depths, 3, 2, g, torch.float64)
    layers = P._layers(samples, top, 20)
    hL, p0, pL, far = P._propagate(net, h0, B, layers, depths, betas)
    names = net.weight_names  # declared by the block
    for j, L in enumerate(depths):
        w = {nm: torch.stack([lay[nm] for lay in layers[:L]]) for nm in names}
        for i, beta in enumerate(betas):
            tr = ResNet(arch, net.activation, beta=beta).forward(h0, **w, readout=B, depth=L)
            scale = tr.gradients[-1].norm(dim=-1, keepdim=True)  # the pass runs from p_L / ||p_L||
            torch.testing.assert_close(hL[:, j, i], tr.states[-1], rtol=1e-12, atol=1e-12)
            torch.testing.assert_close(p0[:, j, i] * scale, tr.gradients[0], rtol=1e-12, atol=1e-12)
            torch.testing.assert_close(pL[:, j, i] * scale, tr.gradients[-1], rtol=1e-12, atol=1e-12)
            dev = (tr.states[:-1] - h0).norm(dim=-1).amax(0)  # max over k < L of ||h_k - h_0||
            torch.testing.assert_close(far[:, j, i], dev, rtol=1e-12, atol=1e-12)


def test_ratios_are_the_definitions():
    """r_h, r_p, ||h_L||/||h_0|| and ||p_0||/||p_L|| of a task, per (draw, input), recomputed
    from ResNet.forward on the same draws."""
    spec = S.plan_stability("res-2", activation="tanh", width=5, n_in=4, depths=[7, 12], betas=[0.5], draws=3,
                            inputs=2, dtype=torch.float64)
    out = S.stability_task({**spec.to_dict(), "draws": 3}, seed=11)
    net = ResNet("res-2", "tanh", beta=0.0)
    samples, h0, B, top = P._draw(weight_layout(net.block, 5), make_driver("uniform"), 5, 4, [7, 12], 3, 2,
                                  torch.Generator().manual_seed(11), torch.float64)
    for j, L in enumerate([7, 12]):
        w = {nm: samples[nm].weights(top)[:L] for nm in ("V", "W")}
        tr = ResNet("res-2", "tanh", beta=0.5).forward(h0, **w, readout=B, depth=L)
        hL, p0, pL = tr.states[-1], tr.gradients[0], tr.gradients[-1]
        want = {"r_h": (hL - h0).norm(dim=-1) / h0.norm(dim=-1), "norm_h": hL.norm(dim=-1) / h0.norm(dim=-1),
                "r_h_max": (tr.states - h0).norm(dim=-1).amax(0) / h0.norm(dim=-1),
                "r_p": (p0 - pL).norm(dim=-1) / pL.norm(dim=-1), "norm_p": p0.norm(dim=-1) / pL.norm(dim=-1)}
        for k, v in want.items():
            np.testing.assert_allclose(np.asarray(out[k])[:, j, 0, :], v.numpy(), rtol=1e-10)


def test_smooth_depths_are_read_on_their_own_grids():
    """Smooth weights are not nested: the depth-10 network reads V(k/10) whatever other depths
    are in the grid (a nested reading would take V(k/100) for its first 10 layers)."""
    kw = dict(driver="smooth", width=6, n_in=4, betas=[1.0], draws=5, seed=3)
    alone = stability("res-3", depths=[10], **kw).records[0]
    shared = [r for r in stability("res-3", depths=[10, 100], **kw).records if r["depth"] == 10][0]
    assert alone == shared


def test_statistics_pool_every_input():
    """With several inputs per draw, E r_h^2 is still the exact (1 + a^2/2)^L - 1 of res-3: the
    statistics pool every (draw, input) instead of averaging a draw's inputs first (Jensen
    would bias mean_sq low by about 8% here)."""
    spec = S.plan_stability("res-3", width=8, n_in=8, depths=[50], betas=[0.5], draws=1500, inputs=4,
                            dtype=torch.float64)
    out = S.stability_task({**spec.to_dict(), "draws": 1500}, seed=4)
    rec = spec.summarise(spec.tasks(), [out]).records[0]
    r2 = np.asarray(out["r_h"]).reshape(1500, 4) ** 2
    se = r2.mean(1).std() / math.sqrt(1500)  # inputs of a draw are correlated: the draw is the unit
    assert rec["r_h"]["mean_sq"] == pytest.approx(r2.mean())
    assert abs(rec["r_h"]["mean_sq"] - theory_bounds(0.5, 50)[0]) < 3.5 * se


def test_bounds_apply_where_the_assumptions_hold():
    iid, smooth = dl.IIDDriver("uniform"), dl.SmoothDriver()
    assert theory.bounds_apply("res-3", "relu", iid) and theory.bounds_apply("res-2", "relu", iid)
    assert not theory.bounds_apply("res-1", "relu", iid)  # no inner symmetric weight
    assert theory.bounds_apply("res-1", "identity", iid) and theory.bounds_apply("res-1", "leaky_relu", iid)
    assert not theory.bounds_apply("res-1", "leaky_relu:0.5", iid) and not theory.bounds_apply("res-2", "tanh", iid)
    assert not theory.bounds_apply("res-3", "relu", smooth) and not theory.bounds_apply("inside", "identity", iid)


def test_theory_bounds_beyond_double_range():
    assert theory.theory_bounds(0.0, 1100)[1] == math.inf and theory.theory_bounds(0.0, 2100) == (math.inf, math.inf)
    res = stability("res-1", activation="identity", width=2, n_in=2, depths=[1100], betas=[0.0], draws=1)
    assert res.records[0]["theory_upper"] is None and res.records[0]["regime"] == "explosion"


def test_exact_second_moments():
    """Martingale identities (V independent of the past, mean zero): E ||h_L||^2 / ||h_0||^2 =
    (1 + a^2/2)^L for res-3 (E ReLU(Wh)_i^2 = E (Wh)_i^2 / 2) and (1 + a^2)^L for res-1 with the
    identity, a = L^-beta; and E r_h^2 is that minus 1 (the cross term has mean zero): the
    lower and the upper theory bounds exactly. Checked within 3.5 standard errors."""
    for arch, act, which in (("res-3", None, 0), ("res-1", "identity", 1)):
        spec = S.plan_stability(arch, activation=act, width=8, n_in=8, depths=[50], betas=[0.5], draws=4000,
                                dtype=torch.float64)
        out = S.stability_task({**spec.to_dict(), "draws": 4000}, seed=5)
        exact = theory_bounds(0.5, 50)[which]
        for x, target in ((np.asarray(out["norm_h"]) ** 2, 1 + exact), (np.asarray(out["r_h"]) ** 2, exact)):
            x = x.ravel()
            assert abs(x.mean() - target) < 3.5 * x.std() / math.sqrt(len(x)), (arch, x.mean(), target)


@pytest.mark.slow
def test_criticality_distribution_is_log_normal():
    """At beta = 1/2 the log of ||h_L||/||h_0|| is asymptotically Gaussian (the limit SDE's
    log-norm is a Brownian motion with drift): the normality test does not reject, and the
    fitted mean is close to log E ||h_L||^2/||h_0||^2 / 2 - sigma^2 (log-normal moments)."""
    res = stability("res-3", width=20, n_in=16, depths=[200], betas=[0.5], draws=800, seed=2, histograms=True)
    rec = res.records[0]
    for key in ("lognormal_h", "lognormal_p"):
        fit = rec[key]
        assert fit["n"] == 800 and fit["pvalue"] > 0.01, (key, fit)
    fit = rec["lognormal_h"]
    m2 = theory_bounds(0.5, 200)[0] + 1  # E ||h_L||^2/||h_0||^2 = exp(2 mu + 2 sigma^2)
    se = fit["sigma"] / math.sqrt(fit["n"])
    assert abs(fit["mu"] - (math.log(m2) / 2 - fit["sigma"] ** 2)) < 3 * se, (fit, m2)
    assert len(res.samples) == 1 and len(res.samples[0]["norm_h"]) == 800


def test_lognormal_fit_rejects_what_is_not_log_normal():
    from deeplimits.studies.propagation.stability_theory import lognormal_fit

    rng = np.random.default_rng(0)
    assert lognormal_fit(np.exp(rng.normal(0.3, 0.2, 2000)))["pvalue"] > 0.01
    assert lognormal_fit(rng.uniform(0.5, 1.5, 2000))["pvalue"] < 1e-6
    assert lognormal_fit(np.ones(10)) is None  # fewer than 20 values


# -- phase diagram -------------------------------------------------------------------------

def test_critical_beta_interpolates_the_first_downward_crossing():
    assert theory.critical_beta([0.0, 0.5, 1.0], [2.0, 1.0, -1.0]) == pytest.approx(0.75)
    assert theory.critical_beta([0.0, 0.5, 1.0], [30.0, 30.0, 1.0]) is None
    assert theory.critical_beta([0.0, 0.5, 1.0], [0.0, -1.0, -2.0]) is None


@pytest.mark.slow
def test_phase_diagram_critical_scaling():
    """beta*(H) against max(H, 1/2) at the published width and depth (d = 40, L = 1000).

    The two estimates of beta*: (a) the scaling one, where r_h stops depending on the depth
    (L = 100 vs 1000 on the same weights), is within 0.1 of max(H, 1/2) for every H; (b) the
    published one, where the mean log10 r_h crosses 0, carries the offset log10(c)/log10(L)
    of r_h ~ c L^(H - beta) (c about 1/sqrt(2 pi) for res-3 when H > 1/2: -0.13), so it is
    within 0.1 for H <= 1/2 and within 0.1 of H - 0.1 above. The Monte Carlo error of a
    crossing is about 0.01 (mean log10 r_h has a standard error near 0.03 over 80 draws x
    inputs and a slope of log10 L = 3 in beta)."""
    hursts = [0.3, 0.5, 0.75, 0.9]
    res = dl.phase_diagram(hursts, np.linspace(0.2, 1.1, 19).tolist(), width=40, depth=1000, draws=8, inputs=10,
                           seed=0)
    for h, b, bs in zip(hursts, res.beta_star, res.beta_star_scaling):
        target = max(h, 0.5)
        assert abs(bs - target) <= 0.1, (h, bs)
        assert abs(b - (target if h <= 0.5 else target - 0.1)) <= 0.1, (h, b)
    assert res.short_depth == 100 and np.shape(res.log10_rh) == (4, 19) == np.shape(res.log10_rp)


def test_phase_overflow_is_capped_not_nan():
    res = dl.phase_diagram([0.8], [0.0, 1.0], width=8, depth=400, draws=2, inputs=2, seed=1)
    assert res.exploded[0][0] == 4 and res.log10_rh[0][0] == pytest.approx(30.0)
    assert res.exploded[0][1] == 0 and res.log10_rh[0][1] < 0
    assert all(math.isfinite(v) for row in res.log10_rp for v in row)


def test_results_round_trip_through_json():
    st = stability("res-2", width=4, n_in=4, depths=[8], betas=[0.5], draws=30, histograms=True)
    assert dl.StabilityResult.from_dict(json.loads(st.to_json())) == st
    ph = dl.phase_diagram([0.6], [0.5, 1.0], width=4, depth=30, draws=2, inputs=2)
    assert dl.PhaseResult.from_dict(json.loads(ph.to_json())) == ph


def test_run_store_resumes_without_recomputing(tmp_path):
    from deeplimits.runs import RunStore

    spec = S.plan_stability("res-3", width=6, n_in=4, depths=[10, 20], betas=[0.5], draws=12, chunk=4)
    store = RunStore(str(tmp_path), spec.to_dict())
    first = S.run_stability(spec, store=store)
    calls = []
    again = S.run_stability(spec.to_dict(), progress=calls.append, store=RunStore(str(tmp_path), spec.to_dict()))
    assert again.records == first.records and calls == []  # progress counts work done by this call: none
    [stored] = results_from_store(RunStore(str(tmp_path), create=False))
    assert stored.records == first.records
