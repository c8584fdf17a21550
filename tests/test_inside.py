"""The inside model ``h_{k+1} = h_k + L^-alpha sigma(A_k h_k + b_k)`` and its limits (docs/mathematics.md,
the inside-SDE and inside-ODE regimes): the activation's requirements read by automatic
differentiation, the limits checked against exact facts, and the strong rates at reduced size."""

import math

import numpy as np
import pytest
import torch

import deeplimits as dl
INSIDE_REGIMES = ("inside-sde", "inside-ode")


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def slope(depths, errors):
    return -np.polyfit(np.log(depths), np.log(errors), 1)[0]


# ------------------------------------------------------------------------- activations

@pytest.mark.parametrize("activation,expected", [
    ("tanh", (0, 1, 0, -2)), ("sin", (0, 1, 0, -1)), ("identity", (0, 1, 0, 0)),
    ("softplus0", (0, 1, 1, 0)),  # log((1 + e^2x) / 2) = x + log cosh x
    ("sigmoid", (0.5, 0.25, 0, -0.125)),
    (lambda x: x + 0.3 * x ** 2 - x ** 3 / 7, (0, 1, 0.6, -6 / 7)),
])
def test_taylor_coefficients_by_autograd_match_closed_forms(activation, expected):
    assert dl.activation(activation).taylor_at_zero(3) == pytest.approx(expected, abs=1e-12)


def test_pairs_read_sigma_derivatives_at_zero():
    p = dl.pair("inside-ode", width=2, beta=0.5, activation=lambda x: x + 0.3 * x ** 2 - x ** 3 / 7)
    assert p.derivatives[:2] == pytest.approx((0.6, -6 / 7), abs=1e-12)
    assert dl.pair("inside-sde", width=2, activation="tanh").limit.sigma2 == 0.0
    assert dl.pair("inside-sde", width=2).limit.sigma2 == pytest.approx(1.0)  # softplus0 by default


@pytest.mark.parametrize("regime", INSIDE_REGIMES)
@pytest.mark.parametrize("activation,needle", [
    ("relu", r"C\^3 at 0 .*'relu' is not: sigma' jumps from 0 to 1"),  # torch says relu'(0) = 0: not the point
    ("leaky_relu", r"C\^3 at 0 .*sigma' jumps from 0.707107 to 1"),  # sigma'(0) = 1 by convention, but a kink
    (lambda x: x + x ** 2 * x.abs(), r"sigma''' jumps from -6 to 6"),  # C^2, not C^3
    ("sigmoid", r"sigma\(0\) = 0 and sigma'\(0\) = 1 .* got sigma\(0\) = 0.5 and sigma'\(0\) = 0.25 for 'sigmoid'"),
    (lambda x: 2 * torch.tanh(x), r"sigma'\(0\) = 2"),
])
def test_inside_regimes_refuse_activations_that_are_not_c3_normalised(regime, activation, needle):
    with pytest.raises(ValueError, match=needle) as err:
        dl.pair(regime, width=2, activation=activation, **({"beta": 0.5} if regime == "inside-ode" else {}))
    assert str(err.value).startswith("activation must") and f"for regime '{regime}'" in str(err.value)


# ---------------------------------------------------------------------- declared rates

def test_declared_theory_rates():
    assert dl.pair("inside-sde", width=2).theory_rate == 0.5
    assert dl.pair("inside-sde", width=2, beta=1.0).theory_rate == 0.5
    assert dl.pair("inside-sde", width=2, beta=1.2).theory_rate == pytest.approx(0.2)  # L^(1-beta) drift bias
    assert dl.pair("inside-sde", width=2, beta=3.0).theory_rate == 0.5
    ablation = dl.pair("inside-sde", width=2, ito_correction=False)
    assert ablation.theory_rate == 0.0 and "not the limit" in ablation.rate_note
    # with sigma''(0) = 0 there is nothing to drop
    assert dl.pair("inside-sde", width=2, activation="tanh", ito_correction=False).theory_rate == 0.5
    for beta in (0.3, 0.7):
        assert dl.pair("inside-ode", width=2, beta=beta).theory_rate == pytest.approx(beta)  # sigma''(0) = 1
        assert dl.pair("inside-ode", width=2, beta=beta, activation="tanh").theory_rate == pytest.approx(min(1, 2 * beta))
        assert dl.pair("inside-ode", width=2, beta=beta, activation="identity").theory_rate == 1.0  # plain Euler
    p = dl.pair("inside-ode", width=2, alpha=0.25)
    assert (p.alpha, p.beta) == (0.25, 0.75) and p.network.beta == 0.25


# ------------------------------------------------------------------------- exact facts

def test_one_step_of_the_limit_scheme_is_the_formula():
    g = gen(1)
    n, m, d, N = 3, 2, 4, 64
    H = torch.randn(n, m, d, generator=g, dtype=torch.float64)
    dA, db = (torch.randn(n, d, d, generator=g, dtype=torch.float64) / 8, torch.randn(n, d, generator=g, dtype=torch.float64) / 8)
    A, b = torch.randn(n, d, d, generator=g, dtype=torch.float64), torch.randn(n, d, generator=g, dtype=torch.float64)
    sa, sb = 0.3, 0.7
    for ito in (True, False):
        lim = dl.InsideSDELimit("softplus0", sa, sb, drift=True, ito_correction=ito)
        got = lim.scheme().step(H, 1.0, N, W=dA, b=db, W_drift=A, b_drift=b)
        qv = sa ** 2 * (H ** 2).sum(-1, keepdim=True) + sb ** 2
        want = (H + torch.einsum("nij,nmj->nmi", dA, H) + db[:, None] + (0.5 * qv * ito) / N
                + (torch.einsum("nij,nmj->nmi", A, H) + b[:, None]) / N)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("regime,kw", [("inside-sde", {"beta": 1.0}), ("inside-ode", {"beta": 0.3})])
def test_network_layer_is_sigma_of_the_assembled_weights(regime, kw):
    p = dl.pair(regime, width=3, **kw)
    s = p.sample(2, resolution=64 if p.rough else None, generator=gen(2))
    L = 16
    net = p.solve(s, L).network
    w = s.weights
    k = 5  # layer k + 1 reads the right end (k + 1) / L
    A, b = (L ** -p.beta * w[n].weights(L)[k] for n in (("W", "b") if regime == "inside-ode" else ("W_drift", "b_drift")))
    if regime == "inside-sde":  # plus the Brownian increments N(0, s^2 / L)
        A, b = A + w["W"].increments(L)[k], b + w["b"].increments(L)[k]
    h = net[k]
    want = h + L ** -p.alpha * dl.activation("softplus0")(h @ A.transpose(-1, -2) + b[:, None])
    torch.testing.assert_close(net[k + 1], want, rtol=0, atol=1e-13)
    assert w["W"].scale == 0.25 and w["b"].scale == 1.0  # the default entry scales sa, sb


@pytest.mark.slow
def test_scalar_limit_is_the_closed_form_riccati_solution_and_the_ablation_is_gbm():
    # d = 1, s_b = 0: dH = s_A H dW + (c/2) s_A^2 H^2 dt with c = sigma''(0) = 1 (softplus0) has
    # H_t = H_0 E_t / (1 - a H_0 int_0^t E_s ds), E_t = exp(s_A W_t - s_A^2 t / 2), a = c s_A^2 / 2;
    # without the Itô correction it is the geometric Brownian motion H_0 E_t.
    sa, N, draws = 0.5, 1 << 14, 200
    p = dl.pair("inside-sde", width=1, sa=sa, sb=0.0)
    assert set(p.drivers) == {"W"}
    s = p.sample(draws, resolution=N, generator=gen(3))
    X = s.weights["W"].path(N)[:, :, 0, 0]  # s_A W on the finest grid, (N + 1, draws)
    t = torch.linspace(0, 1, N + 1, dtype=torch.float64)[:, None]
    E = torch.exp(X - sa ** 2 * t / 2)
    integral = ((E[1:] + E[:-1]) / 2).sum(0) / N  # trapezoid, error O(1/N)
    h0 = s.h0[:, 0, 0]
    riccati = h0 * E[-1] / (1 - 0.5 * sa ** 2 * h0 * integral)
    gbm = h0 * E[-1]
    err = {}
    for steps in (256, 1024, 4096):
        H1 = p.limit.solve(s.h0, 1, W=s.weights["W"], steps=steps)[-1, :, 0, 0]
        err[steps] = (H1 - riccati).abs().mean().item()
    assert err[256] > err[1024] > err[4096]
    assert abs(slope(list(err), list(err.values())) - 0.5) < 0.15  # Euler–Maruyama, multiplicative noise
    assert err[4096] < 0.005 < 0.05 < (riccati - gbm).abs().mean().item()
    ablated = dl.pair("inside-sde", width=1, sa=sa, sb=0.0, ito_correction=False)
    H1 = ablated.limit.solve(s.h0, 1, W=s.weights["W"], steps=4096)[-1, :, 0, 0]
    assert (H1 - gbm).abs().mean().item() < 0.005
    # and the network (no Itô term anywhere in it) follows the corrected equation, not the GBM
    h_L = p.solve(s, 1024).network[-1, :, 0, 0]
    assert (h_L - riccati).abs().mean().item() < (h_L - gbm).abs().mean().item() / 5


def test_inside_ode_limit_exact_for_constant_weights_and_picard_agrees():
    g = gen(4)
    d, n = 3, 2
    A = torch.randn(n, d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    b = torch.randn(n, d, generator=g, dtype=torch.float64)
    h0 = torch.randn(n, 2, d, generator=g, dtype=torch.float64)
    lim = dl.InsideODELimit()
    eA = torch.linalg.matrix_exp(A)
    exact = h0 @ eA.transpose(-1, -2) + torch.linalg.solve(A, ((eA - torch.eye(d)) @ b[..., None]))[..., 0][:, None]
    torch.testing.assert_close(lim.solve(h0, lambda t: A, 4, b=lambda t: b)[-1], exact, rtol=0, atol=1e-8)
    p = dl.pair("inside-ode", width=4, beta=0.5)
    s = p.sample(3, inputs=2, generator=gen(5))
    ref = p.solve_limit(s, s.h0, 32)
    pic = p.limit.picard(s.h0, s.weights["W"], 32, b=s.weights["b"])
    torch.testing.assert_close(ref, pic, rtol=0, atol=1e-7)


@pytest.mark.slow
def test_drift_part_enters_the_limit_at_beta_one_and_vanishes_beyond():
    p1, p2 = dl.pair("inside-sde", width=3, beta=1.0), dl.pair("inside-sde", width=3, beta=2.0)
    assert p1.limit.drift and not p2.limit.drift and set(p2.drivers) == {"W", "b", "W_drift", "b_drift"}
    s = p1.sample(32, resolution=2048, generator=gen(6))
    depths = [8, 32, 128]
    for p in (p1, p2):
        errs = [sol.strong_error().mean().item() for sol in p.solve_depths(s, depths)]
        assert errs[0] > errs[1] > errs[2], (p, errs)
    # at beta = 1 the network does not converge to the limit without the drift
    no_drift = dl.InsideSDELimit(sa=p1.sa, sb=p1.sb).solve(s.h0, 128, W=s.weights["W"], b=s.weights["b"])
    net = p1.solve(s, 128)
    assert (net.network - no_drift).norm(dim=-1).amax(0).mean() > 3 * net.strong_error().mean()


# ------------------------------------------------------------------------------- rates
# Seeded runs. Each asserts the 95% bootstrap interval over draws is narrow (half-width
# <= 0.05 with these draw counts), so the tolerance of 0.1 is at least two half-widths: a
# failure is a wrong rate, not Monte Carlo noise.

def check_rate(res, target, tol=0.1):
    lo, hi = res.rate_ci
    assert (hi - lo) / 2 <= 0.05, res.rate_ci
    assert abs(res.rate - target) < tol, (res.rate, res.rate_ci, target)


SDE = dict(width=4, depths=[16, 32, 64, 128, 256], draws=128, reference=4096)


@pytest.mark.slow
def test_inside_sde_rate_is_one_half_and_without_ito_correction_the_error_plateaus():
    res = dl.strong_convergence("inside-sde", **SDE)
    check_rate(res, 0.5)
    assert res.nonfinite == 0
    ablation = dl.strong_convergence("inside-sde", ito_correction=False, **SDE)
    lo, hi = ablation.rate_ci
    assert ablation.rate < 0.1 and hi < 0.1, (ablation.rate, ablation.rate_ci)
    assert ablation.error[-1] > 5 * res.error[-1]
    assert "no-Itô" in ablation.label and "without the Itô correction" in ablation.report() and ablation.verdict == "agrees"


@pytest.mark.parametrize("activation,beta,rate", [("softplus0", 0.3, 0.3), ("softplus0", 0.7, 0.7),
                                                  ("tanh", 0.3, 0.6)])
@pytest.mark.slow
def test_inside_ode_rates(activation, beta, rate):
    res = dl.strong_convergence("inside-ode", width=4, beta=beta, activation=activation,
                                depths=[8, 16, 32, 64, 128, 256, 512], draws=32 if activation != "tanh" else 64)
    assert res.theory_rate == pytest.approx(rate)
    check_rate(res, rate)


def test_inside_results_carry_their_parameters_and_old_results_still_load():
    res = dl.strong_convergence("inside-ode", width=2, alpha=0.6, depths=[4, 8], draws=3, sa=0.5, sb=0.0)
    d = res.to_dict()
    assert (d["alpha"], d["beta"], d["sa"], d["sb"], d["ito_correction"]) == (pytest.approx(0.6), pytest.approx(0.4),
                                                                               0.5, 0.0, True)
    assert dl.ConvergenceResult.from_dict(d) == res
    assert "beta=0.4" in res.label and "sb=0" in res.label and "alpha=0.6" in res.report()
    old = {k: v for k, v in dl.strong_convergence("sde", width=2, depths=[4, 8], draws=3, reference=32).to_dict().items()
           if k not in ("alpha", "beta", "sa", "sb", "ito_correction")}
    assert dl.ConvergenceResult.from_dict(old).beta is None
    # plans: the new fields are in the spec of the inside regimes only, and older specs load
    plan = dl.plan_convergence("inside-sde", beta=1.0, ito_correction=False, depths=[4, 8], draws=2, reference=32)
    spec = plan.to_dict()
    assert (spec["beta"], spec["sa"], spec["sb"], spec["ito_correction"]) == (1.0, 0.25, 1.0, False)
    assert dl.ConvergencePlan.from_dict(spec) == plan and plan.name == "inside-sde-beta1-no-ito"
    sde = dl.plan_convergence("sde", depths=[4, 8], draws=2, reference=32).to_dict()
    assert "beta" not in sde and dl.ConvergencePlan.from_dict(sde).ito_correction is True


# ------------------------------------------ the inside-ODE with a Brownian part (Hypothesis 2)

def test_a_brownian_part_in_the_weights_declares_rate_min_alpha_and_enters_each_layer():
    """Cohen et al., ICML 2021, Thm 4.4 under Hypothesis 2: A_k = L^-beta A(k/L) + (X_{(k+1)/L} - X_{k/L})
    with X = noise sa B (and the same for b_k); the declared order is min(alpha, the order without it)."""
    for act, beta, without in (("tanh", 0.7, 1.0), ("softplus0", 0.6, 0.6), ("tanh", 0.3, 0.6)):
        p = dl.pair("inside-ode", width=2, beta=beta, activation=act, noise=0.5)
        assert p.theory_rate == pytest.approx(min(1 - beta, without)), (act, beta)
        assert dl.pair("inside-ode", width=2, beta=beta, activation=act).theory_rate == pytest.approx(without)
    p = dl.pair("inside-ode", width=3, beta=0.6, noise=0.5)
    assert set(p.drivers) == {"W", "b", "W_noise", "b_noise"} and "noise=0.5" in repr(p)
    s = p.sample(2, generator=gen(3))
    L, k = 16, 5
    net = p.solve(s, L).network
    w = s.weights
    A = L ** -p.beta * w["W"].weights(L)[k] + w["W_noise"].increments(L)[k]
    b = L ** -p.beta * w["b"].weights(L)[k] + w["b_noise"].increments(L)[k]
    assert w["W_noise"].scale == pytest.approx(0.5 * 0.25) and w["b_noise"].scale == pytest.approx(0.5)
    want = net[k] + L ** -p.alpha * dl.activation("softplus0")(net[k] @ A.transpose(-1, -2) + b[:, None])
    torch.testing.assert_close(net[k + 1], want, rtol=0, atol=1e-13)
    with pytest.raises(dl.ParameterError, match="noise"):
        dl.pair("inside-ode", width=2, beta=0.5, noise=-1.0)


@pytest.mark.parametrize("activation,beta", [("tanh", 0.7), ("softplus0", 0.6)])
@pytest.mark.slow
def test_inside_ode_with_a_brownian_part_converges_to_the_same_ode_at_rate_alpha(activation, beta):
    """The network with the Brownian part converges to the linear ODE of its smooth part alone (the
    reference ignores the part), at the rate alpha = 1 - beta: 0.26 [0.25, 0.27] for tanh at beta =
    0.7 (1.00 without the part), 0.41 [0.40, 0.42] for softplus0 at beta = 0.6 (0.62 without), 32
    draws, depths 8..512 (bootstrap intervals of half-width about 0.01, so the 0.1 of check_rate
    is about ten of them, and a rate of 1 or 0.6, the order without the part, fails it)."""
    res = dl.strong_convergence("inside-ode", width=4, beta=beta, activation=activation, noise=1.0,
                                depths=[8, 16, 32, 64, 128, 256, 512], draws=32)
    assert res.theory_rate == pytest.approx(1 - beta)
    check_rate(res, 1 - beta)
    assert res.error[-1] < res.error[0] / 2  # it converges (2.9-fold at rate 0.26): the same ODE
