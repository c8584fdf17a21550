"""Pairs and limits checked against exact facts (docs/mathematics.md): the network is the scheme of its
limit, the reference solvers converge to closed-form solutions, and the errors decay."""

import math

import numpy as np
import pytest
import torch

import deeplimits as dl


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def slope(depths, errors):
    """Rate r of error ~ depth^-r by least squares on log-log."""
    return -np.polyfit(np.log(depths), np.log(errors), 1)[0]


# ------------------------------------------------------------------------------- SDE

@pytest.mark.parametrize("activation", ["tanh", "sin"])
def test_sde_network_is_the_euler_maruyama_step_of_the_torchsde_sde(activation):
    p = dl.pair("sde", width=5, activation=activation)
    s = p.sample(6, inputs=2, resolution=128, generator=gen(1))
    for depth in (128, 32):
        # torchsde Euler–Maruyama with dt = 1/depth on the sample's Brownian path
        em = p.limit.solve(s.h0, s.weights["V"], depth, steps=depth)
        net = p.network.forward(s.h0, s.weights["V"].weights(depth)).states
        torch.testing.assert_close(net, em, rtol=0, atol=1e-12)
    sol = p.solve(s, 128)  # depth = resolution: network and reference coincide
    assert sol.strong_error().max().item() < 1e-12


def test_torchsde_solve_converges_to_the_exact_geometric_brownian_motion():
    # d = 1, sigma = identity: dH = H dB, H_t = H_0 exp(B_t - t/2)
    draws = 400
    s = dl.IIDDriver().sample((1, 1), draws=draws, resolution=1024, generator=gen(2))
    h0 = torch.ones(draws, 1, 1, dtype=torch.float64)
    B = s.path(64)[:, :, 0, 0]  # (65, draws)
    exact = torch.exp(B - torch.linspace(0, 1, 65, dtype=torch.float64)[:, None] / 2)
    lim = dl.SDELimit("identity")
    steps = [64, 128, 256, 512, 1024]
    errs = []
    for n in steps:
        H = lim.solve(h0, s, 64, steps=n)[:, :, 0, 0]
        errs.append((H - exact).abs().amax(0).mean().item())
    assert all(b < a for a, b in zip(errs, errs[1:]))
    # Euler–Maruyama strong order 1/2; 400 draws on one coupled path give a slope to +-0.1
    assert abs(slope(steps, errs) - 0.5) < 0.1
    assert errs[-1] < 0.05


# ------------------------------------------------------------------------------- ODE

def test_ode_reference_matches_exp_V_for_constant_weights():
    g = gen(3)
    d, n = 4, 3
    Vc = torch.randn(n, d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    h0 = torch.randn(n, 2, d, generator=g, dtype=torch.float64)
    lim = dl.ODELimit("res-1", "identity")
    exact = h0 @ torch.linalg.matrix_exp(Vc).transpose(-1, -2)
    torch.testing.assert_close(lim.solve(h0, lambda t: Vc, 8)[-1], exact, rtol=0, atol=1e-8)
    torch.testing.assert_close(lim.picard(h0, lambda t: Vc, 8)[-1], exact, rtol=0, atol=1e-10)
    # and the network (Euler) converges to it at rate 1
    errs = [(dl.ResNet("res-1", "identity", beta=1.0).forward(h0, Vc.expand(L, n, d, d)).states[-1] - exact)
            .norm(dim=-1).mean().item() for L in (16, 32, 64, 128)]
    assert abs(slope([16, 32, 64, 128], errs) - 1) < 0.05


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["res-1", "res-2"])
def test_ode_reference_agrees_with_picard_iteration(arch):
    p = dl.pair("ode", width=4, arch=arch)
    s = p.sample(4, inputs=2, generator=gen(4))
    W = s.weights.get("W")
    ref = p.limit.solve(s.h0, s.weights["V"], 32, W=W)
    pic = p.limit.picard(s.h0, s.weights["V"], 32, W=W)
    torch.testing.assert_close(ref, pic, rtol=0, atol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["res-1", "res-2", "res-3"])
def test_ode_pair_converges_at_rate_one(arch):
    p = dl.pair("ode", width=6, arch=arch)
    assert p.theory_rate == 1.0 and p.beta == 1.0
    s = p.sample(8, generator=gen(5))
    depths = [16, 32, 64, 128]
    errs = [sol.strong_error().mean().item() for sol in p.solve_depths(s, depths)]
    assert abs(slope(depths, errs) - 1.0) < 0.1
    # the shared limit is the limit solved on each grid
    torch.testing.assert_close(p.solve(s, 16).limit, p.solve_depths(s, [16, 128])[0].limit, rtol=0, atol=1e-6)


# ------------------------------------------------------------------------------- fBm

@pytest.mark.parametrize("hurst", [0.6, 0.75, 0.9])
def test_fbm_scalar_linear_network_converges_to_the_young_solution(hurst):
    # d = 1, sigma = identity: the Young equation dH = H dB^H has H_1 = H_0 exp(B^H_1)
    p = dl.pair("fbm", width=1, activation="identity", hurst=hurst)
    assert p.theory_rate == pytest.approx(2 * hurst - 1)
    s = p.sample(300, resolution=1024, generator=gen(6))
    exact = s.h0[:, 0, 0] * torch.exp(s.weights["V"].path(1)[-1, :, 0, 0])
    depths = [16, 32, 64, 128, 256]
    sols = p.solve_depths(s, depths)
    errs = [(sol.network[-1, :, 0, 0] - exact).abs().mean().item() for sol in sols]
    sol = sols[-1]
    assert all(b < a for a, b in zip(errs, errs[1:]))
    assert abs(slope(depths, errs) - (2 * hurst - 1)) < 0.15
    # the modified-Euler reference on the finest grid is much closer to the exact solution
    ref = sol.limit[-1, :, 0, 0]
    assert (ref - exact).abs().mean().item() < errs[-1] / 4


def test_fbm_corrected_network_converges_faster():
    p = dl.pair("fbm", width=1, activation="identity", hurst=0.75, corrected=True)
    assert p.theory_rate == pytest.approx(1.0)
    s = p.sample(300, resolution=1024, generator=gen(7))
    exact = s.h0[:, 0, 0] * torch.exp(s.weights["V"].path(1)[-1, :, 0, 0])
    depths = [16, 32, 64, 128, 256]
    errs = [(sol.network[-1, :, 0, 0] - exact).abs().mean().item() for sol in p.solve_depths(s, depths)]
    assert abs(slope(depths, errs) - 1.0) < 0.15


def test_fbm_pair_in_width_errors_decrease():
    p = dl.pair("fbm", width=6, hurst=0.75)
    assert "asymptotic" in p.rate_note
    s = p.sample(8, resolution=1024, generator=gen(8))
    errs = [sol.strong_error().mean().item() for sol in p.solve_depths(s, [16, 64, 256])]
    assert errs[0] > errs[1] > errs[2]


def test_pair_solution_shapes_and_errors():
    p = dl.pair("sde", width=3)
    s = p.sample(5, inputs=4, resolution=64, generator=gen(9))
    sol = p.solve(s, 16)
    assert sol.network.shape == sol.limit.shape == (17, 5, 4, 3)
    assert sol.times[0] == 0 and sol.times[-1] == 1 and len(sol.times) == 17
    assert sol.strong_error().shape == (5, 4)
    assert (sol.strong_error() >= sol.terminal_error()).all()
    torch.testing.assert_close(sol.network[0], s.h0)
    torch.testing.assert_close(sol.limit[0], s.h0)


@pytest.mark.parametrize("hurst", [0.6, 0.75, 0.9])
def test_declared_theory_rates(hurst):
    assert dl.pair("sde", width=2).theory_rate == 0.5
    assert dl.pair("ode", width=2, arch="res-3").theory_rate == 1.0
    assert dl.pair("fbm", width=2, hurst=hurst).theory_rate == pytest.approx(2 * hurst - 1)
    assert dl.pair("fbm", width=2, hurst=hurst, corrected=True).theory_rate == pytest.approx(min(1, 2 * hurst - 0.5))


def test_young_limit_honours_the_weight_scale():
    # d = 1, identity, X = s B^H: the Young solution is H_0 exp(s B^H_1)
    s = 0.3
    V = dl.FractionalDriver(0.8).sample((1, 1), draws=200, resolution=2048, generator=gen(10), scale=s)
    h0 = torch.ones(200, 1, dtype=torch.float64)
    H1 = dl.YoungLimit("identity", 0.8).solve(h0, V, 1)[-1, :, 0, 0]
    exact = torch.exp(V.path(1)[-1, :, 0, 0])  # the path is already scaled by s
    assert (H1 - exact).abs().mean().item() < 1e-4
