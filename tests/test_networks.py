"""Residual networks: forward recursion, streamed weights, backward gradients p_k."""

import math

import pytest
import torch

import deeplimits as dl
from deeplimits import networks


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def weights_for(arch, depth, n, d, g):
    w = {}
    if arch != "inside":
        w["V"] = torch.randn(depth, n, d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    if arch != "res-1":
        w["W"] = torch.randn(depth, n, d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    if arch == "inside":
        w["b"] = torch.randn(depth, n, d, generator=g, dtype=torch.float64)
    return w


def test_scalar_linear_network_is_a_product():
    # d = 1, sigma = identity: h_L = h_0 prod_k (1 + L^-beta V_k)
    g = gen(1)
    L, beta = 20, 0.7
    V = torch.randn(L, 3, 1, 1, generator=g, dtype=torch.float64)
    h0 = torch.randn(3, 1, generator=g, dtype=torch.float64)
    tr = dl.ResNet("res-1", "identity", beta).forward(h0, V)
    expected = h0 * torch.prod(1 + L ** -beta * V[:, :, 0, 0], dim=0).unsqueeze(-1)
    torch.testing.assert_close(tr.states[-1], expected)
    assert tr.states.shape == (L + 1, 3, 1) and tr.depth == L


def test_constant_weights_linear_network_is_a_matrix_power():
    g = gen(2)
    d, L = 4, 32
    A = torch.randn(2, d, d, generator=g, dtype=torch.float64) / 2
    h0 = torch.randn(2, 5, d, generator=g, dtype=torch.float64)
    tr = dl.ResNet("res-1", "identity", beta=1.0).forward(h0, A.expand(L, 2, d, d))
    M = torch.linalg.matrix_power(torch.eye(d, dtype=torch.float64) + A / L, L)
    torch.testing.assert_close(tr.states[-1], h0 @ M.transpose(-1, -2))


@pytest.mark.parametrize("arch", networks.ARCHITECTURES)
def test_one_layer_matches_the_spec_formula(arch):
    g = gen(3)
    n, d = 2, 3
    w = weights_for(arch, 1, n, d, g)
    h0 = torch.randn(n, d, generator=g, dtype=torch.float64)
    act = "relu" if arch == "res-3" else "tanh"
    h1 = dl.ResNet(arch, act, beta=0.5).forward(h0, **w).states[1]
    for i in range(n):
        V = w.get("V", [None])[0]
        W = w.get("W", [None])[0]
        if arch == "res-1":
            r = V[i] @ torch.tanh(h0[i])
        elif arch == "res-2":
            r = V[i] @ torch.tanh(W[i] @ h0[i])
        elif arch == "res-3":
            r = V[i] @ torch.relu(W[i] @ h0[i])
        else:
            r = torch.tanh(W[i] @ h0[i] + w["b"][0, i])
        torch.testing.assert_close(h1[i], h0[i] + r)  # L = 1: alpha = 1


@pytest.mark.parametrize("arch", networks.ARCHITECTURES)
def test_streamed_weights_give_the_same_trajectory(arch):
    g = gen(4)
    L, n, d = 12, 3, 4
    w = weights_for(arch, L, n, d, g)
    h0 = torch.randn(n, 2, d, generator=g, dtype=torch.float64)
    net = dl.ResNet(arch, beta=0.5)
    full = net.forward(h0, **w).states
    streamed = net.forward(h0, **{k: iter(v.split(5)) for k, v in w.items()}, depth=L).states
    # the same per-layer arithmetic, but reached through different code (slices of a stack,
    # chunks of an iterator): compared to float64 round-off, not bitwise (BLAS may pick other
    # kernels for other strides on another CPU)
    torch.testing.assert_close(streamed, full, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(torch.stack(list(net.iterate(h0, **w))), full, rtol=1e-12, atol=1e-12)


ACTS = ["tanh", "leaky_relu", "sin", lambda x: x + torch.tanh(x) ** 3]
CASES = [(a, f) for a in ("res-1", "res-2", "inside") for f in ACTS] + [("res-3", None)]


@pytest.mark.parametrize("arch,act", CASES)
def test_backward_recursion_equals_autograd(arch, act):
    g = gen(5)
    L, n, m, d, n_out = 9, 2, 3, 4, 1
    w = weights_for(arch, L, n, d, g)
    h0 = torch.randn(n, m, d, generator=g, dtype=torch.float64)
    B = torch.randn(n_out, d, generator=g, dtype=torch.float64)
    y = torch.randn(n, m, n_out, generator=g, dtype=torch.float64)
    net = dl.ResNet(arch, act, beta=0.3)
    tr = net.forward(h0, **w, readout=B, target=y)
    # autograd through the whole network: dl/dh_k for every k
    states = [h0.clone().requires_grad_(True)]
    alpha = L ** -0.3
    for k in range(L):
        hk = states[-1]
        if k > 0:
            hk.retain_grad()
        states.append(net.step(hk, alpha, L, *(w[x][k] if x in w else None for x in ("V", "W", "b"))))
    states[-1].retain_grad()
    loss = 0.5 * ((states[-1] @ B.T - y) ** 2).sum()
    loss.backward()
    auto = torch.stack([s.grad for s in states])
    torch.testing.assert_close(tr.gradients, auto)


def test_modified_euler_backward_equals_autograd():
    g = gen(6)
    L, n, d = 8, 2, 3
    V = torch.randn(L, n, d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    h0 = torch.randn(n, 1, d, generator=g, dtype=torch.float64, requires_grad=True)
    net = dl.ModifiedEulerResNet("sin", hurst=0.7)
    B = torch.randn(1, d, generator=g, dtype=torch.float64)
    tr = net.forward(h0.detach(), V, readout=B)
    h = h0
    for k in range(L):
        h = net.step(h, L ** -0.7, L, V[k])
    (grad,) = torch.autograd.grad(0.5 * ((h @ B.T) ** 2).sum(), h0)
    torch.testing.assert_close(tr.gradients[0], grad)


def test_modified_euler_adds_the_young_correction():
    # one step, d = 1, identity: h_1 = h_0 (1 + a V + a^2 / 2)
    V = torch.tensor([[[[0.3]]]], dtype=torch.float64)
    h0 = torch.tensor([[2.0]], dtype=torch.float64)
    for L, H in ((1, 0.7), (1, 0.9)):
        h1 = dl.ModifiedEulerResNet("identity", hurst=H).forward(h0, V).states[-1]
        torch.testing.assert_close(h1, h0 * (1 + 0.3 + 0.5))


def test_activation_derivatives():
    x = torch.linspace(-2, 2, 41, dtype=torch.float64)
    for name in ("tanh", "sin", "sigmoid", "identity", "leaky_relu:0.8"):
        a = dl.activation(name)
        auto = dl.activation(a.fn)  # callable: derivative by autograd
        torch.testing.assert_close(a.derivative(x), auto.derivative(x))
    assert dl.activation("tanh").taylor_at_zero(3) == pytest.approx((0, 1, 0, -2))
    assert dl.activation("sin").taylor_at_zero(3) == pytest.approx((0, 1, 0, -1))


def test_modified_euler_correction_in_width_and_depth():
    # d = 3, L = 4, identity: h_1 = h_0 + L^-H V h_0 + (1 / 2d) L^-2H h_0
    g = gen(7)
    d, L, H = 3, 4, 0.8
    V = torch.randn(L, 2, d, d, generator=g, dtype=torch.float64)
    h0 = torch.randn(2, d, generator=g, dtype=torch.float64)
    h1 = dl.ModifiedEulerResNet("identity", hurst=H).forward(h0, V).states[1]
    expected = h0 + L ** -H * (h0.unsqueeze(-2) @ V[0].transpose(-1, -2)).squeeze(-2) + L ** (-2 * H) / (2 * d) * h0
    torch.testing.assert_close(h1, expected)
