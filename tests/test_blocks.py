"""Residual maps as values (issue 41, "a Block protocol"): the built-in blocks against their
closed forms and autograd, and blocks of one's own registered from this file that get the sde
and ode regimes, a paired limit, a convergence verdict and a trainable network."""

import math

import pytest
import torch

import deeplimits as dl
from deeplimits.blocks import Block, block_class, make_block, register_block, registered_blocks, unregister_block
from deeplimits.errors import ParameterError
from deeplimits.networks import ARCHITECTURES, ResNet
from deeplimits.training import ResidualNetwork
from deeplimits.training.modules import activation_count, is_fused, parameter_count


class Normed(Block):
    """``g(h, V) = V sigma(h) / sqrt(1 + |h|^2 / d)``: not elementwise, linear in ``V``."""

    name = "normed"
    weights = ("V",)
    linear = ("V",)

    def residual(self, h, *, pre=None, V):
        s = self.activation(h) / torch.sqrt(1 + (h * h).mean(-1, keepdim=True))
        return s @ V.transpose(-1, -2)


class TwoNoises(Block):
    """``g(h; V, U) = V tanh(h) + U sin(h)``: two Brownian matrices, an Itô SDE with two noises."""

    name = "two-noises"
    weights = ("V", "U")
    linear = ("V", "U")

    def residual(self, h, *, pre=None, V, U):
        return self.activation(h) @ V.transpose(-1, -2) + torch.sin(h) @ U.transpose(-1, -2)


class Gated(Block):
    """``g(h; V, W) = V (sigma(h) * sigmoid(W h))``: not linear in ``W`` (no Itô limit)."""

    name = "gated"
    weights = ("V", "W")
    linear = ("V",)

    def residual(self, h, *, pre=None, V, W):
        return (self.activation(h) * torch.sigmoid(h @ W.transpose(-1, -2))) @ V.transpose(-1, -2)


@pytest.fixture(scope="module", autouse=True)
def registered():
    """The three blocks registered (and removed after), float64 by default (restored after)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    for cls in (Normed, TwoNoises, Gated):
        register_block(cls)
    yield
    for cls in (Normed, TwoNoises, Gated):
        unregister_block(cls.name)
    torch.set_default_dtype(before)


def _weights(block, n, d, g):
    return {name: torch.randn(n, *block.weight_shape(name, d), generator=g) / math.sqrt(d) for name in block.weights}


def test_the_built_in_blocks_are_registered_first_in_order():
    assert registered_blocks()[:4] == ARCHITECTURES
    assert [block_class(a).weights for a in ARCHITECTURES] == [("V",), ("V", "W"), ("V", "W"), ("W", "b")]


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_the_built_in_residuals_are_their_closed_forms(arch):
    g = torch.Generator().manual_seed(1)
    block = make_block(arch, None if arch == "res-3" else "tanh")
    h = torch.randn(3, 2, 5, generator=g)
    w = _weights(block, 3, 5, g)
    s = block.activation
    T = lambda M: M.transpose(-1, -2)  # noqa: E731
    want = {"res-1": lambda: s(h) @ T(w["V"]), "res-2": lambda: s(h @ T(w["W"])) @ T(w["V"]),
            "res-3": lambda: torch.relu(h @ T(w["W"])) @ T(w["V"]),
            "inside": lambda: s(h @ T(w["W"]) + w["b"].unsqueeze(-2))}[arch]()
    torch.testing.assert_close(block.residual(h, **w), want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(block.step(h, 0.3, **w), h + 0.3 * want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("arch", ARCHITECTURES + ("normed", "two-noises", "gated"))
def test_every_vjp_is_autograds(arch):
    """The closed-form Jacobians of the built-in blocks and the default of a user's block
    (:meth:`Block.residual_vjp` by autograd) against ``torch.func.vjp`` of the residual."""
    g = torch.Generator().manual_seed(2)
    block = make_block(arch)
    h, p = torch.randn(3, 2, 4, generator=g), torch.randn(3, 2, 4, generator=g)
    w = _weights(block, 3, 4, g)
    _, vjp = torch.func.vjp(lambda x: block.residual(x, **w), h)
    torch.testing.assert_close(block.residual_vjp(h, p, **w), vjp(p)[0], rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(block.step_vjp(h, p, 0.5, **w), p + 0.5 * vjp(p)[0], rtol=1e-10, atol=1e-12)
    pre = block.preactivation(h, **w)
    if pre is not None:  # a kept preactivation gives the same numbers
        torch.testing.assert_close(block.residual(h, pre=pre, **w), block.residual(h, **w), rtol=1e-12, atol=1e-14)


def test_a_user_block_runs_in_the_network_with_its_gradients():
    g = torch.Generator().manual_seed(3)
    net = ResNet("two-noises", "tanh", beta=0.5)
    h0 = torch.randn(4, 1, 3, generator=g)
    V, U = torch.randn(6, 4, 3, 3, generator=g), torch.randn(6, 4, 3, 3, generator=g)
    B = torch.randn(2, 3, generator=g)
    traj = net(h0, V=V, U=U, readout=B)
    x = h0.clone().requires_grad_(True)
    h = x
    for k in range(6):
        h = h + 6 ** -0.5 * (torch.tanh(h) @ V[k].transpose(-1, -2) + torch.sin(h) @ U[k].transpose(-1, -2))
    torch.testing.assert_close(traj.states[-1], h.detach(), rtol=1e-12, atol=1e-12)
    (grad,) = torch.autograd.grad(((h @ B.T) ** 2).sum() / 2, x)
    torch.testing.assert_close(traj.gradients[0], grad, rtol=1e-10, atol=1e-12)
    chunks = [V[:2], V[2:]], [U[:4], U[4:]]  # streamed in chunks: the same states
    streamed = torch.stack(list(net.iterate(h0, V=chunks[0], U=chunks[1], depth=6)))
    torch.testing.assert_close(streamed, traj.states, rtol=1e-12, atol=1e-14)


def test_the_sde_limit_of_a_user_block_is_euler_maruyama_at_the_finest_grid():
    """At depth = resolution the network IS the Euler–Maruyama scheme on the sample's finest grid
    (torchsde's, with the two Brownian matrices side by side): the error is rounding."""
    p = dl.pair("sde", width=3, arch="two-noises")
    sample = p.sample(8, resolution=64, generator=torch.Generator().manual_seed(4))
    fine, coarse = p.solve_depths(sample, [64, 8])
    assert float(fine.strong_error().max()) < 1e-12
    assert float(coarse.strong_error().mean()) > 1e-3  # a real error at a coarser depth
    step = p.reference_step(sample, 64)  # the one-pass engine's reference: the same scheme
    H = sample.h0
    for parts in zip(*(s.iter_increments(64) for s in sample.weights.values())):
        for layer in zip(*parts):
            H = step(H, dict(zip(sample.weights, layer)))
    torch.testing.assert_close(H, fine.limit[-1], rtol=1e-12, atol=1e-12)


def test_a_block_not_linear_in_every_weight_has_no_ito_limit():
    with pytest.raises(ParameterError, match=r"arch 'gated' does not fit regime 'sde': .*not declared linear in W"):
        dl.pair("sde", width=3, arch="gated")
    with pytest.raises(ParameterError, match="arch must be 'res-1' for regime 'fbm'"):
        dl.pair("fbm", width=3, arch="res-2", hurst=0.7)
    assert dl.pair("ode", width=3, arch="gated").network.arch == "gated"  # any block has an ODE limit


def test_the_ode_limit_of_a_user_block_converges_at_rate_one():
    p = dl.pair("ode", width=3, arch="gated")
    sample = p.sample(8, generator=torch.Generator().manual_seed(5))
    errs = [float(s.strong_error().mean()) for s in p.solve_depths(sample, [16, 32, 64])]
    for a, b in zip(errs, errs[1:]):  # right-point Euler of a smooth ODE: ratio 2 up to O(1/L)
        assert 1.8 < a / b < 2.2


@pytest.mark.slow
def test_a_user_block_gets_a_calibrated_sde_verdict():
    # at 256 draws its exponent's 95% interval, [0.382, 0.565], is wider than the margin (insufficient
    # evidence, "about 722 draws would decide it"); docs/convergence.md shows this run
    r = dl.strong_convergence("sde", arch="normed", width=4, depths=[8, 16, 32, 64, 128], draws=1024, seed=1)
    assert r.verdict == "agrees", r.report()
    assert r.arch == "normed"


def test_a_block_instance_is_a_network_and_a_pair():
    blk = Normed("sin")
    assert ResNet(blk).activation.name == "sin"
    assert dl.pair("sde", width=2, arch=blk).network.block is blk
    with pytest.raises(ParameterError, match="activation must be omitted when arch is a Block"):
        ResNet(blk, "tanh")


def test_registration_refuses_bad_declarations():
    class Bad(Block):
        name = "bad"
        weights = ("V",)
        linear = ("U",)

        def residual(self, h, *, pre=None, V):
            return h

    with pytest.raises(ParameterError, match=r"Bad.linear names \['U'\], not among its weights"):
        register_block(Bad)
    Bad.linear, Bad.weights = (), ["V"]
    with pytest.raises(ParameterError, match="weights must be a non-empty tuple of distinct names"):
        register_block(Bad)
    Bad.weights, Bad.name = ("V",), "res-1"
    with pytest.raises(ParameterError, match="block 'res-1' is already registered"):
        register_block(Bad)
    with pytest.raises(ParameterError, match="register_block takes a Block subclass"):
        register_block(int)
    with pytest.raises(ParameterError, match="arch must be one of 'res-1'"):
        ResNet("no-such-block")


def test_a_user_block_trains_and_is_counted():
    torch.manual_seed(0)
    net = ResidualNetwork("two-noises", 5, 4, 3, 2, configs=2, dtype=torch.float64)
    n = sum(p.numel() for p in net.parameters())
    assert n == parameter_count("two-noises", 5, 4, 3, 2, configs=2)
    assert not net.fused and not is_fused("two-noises", "tanh")
    assert activation_count("two-noises", False, 5, 4, 16) == 5 * 8 * 16 * 4
    x = torch.randn(16, 3)
    loss = (net(x) ** 2).sum()
    loss.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in net.parameters())
    assert net.residual_names() == ("V", "U")


def test_the_fused_declaration_is_the_blocks():
    assert make_block("res-1", "tanh").fused() and make_block("inside", "relu").fused()
    assert not make_block("res-2", "tanh").fused() and not make_block("res-1", "sin").fused()
    assert block_class("res-1").kept_numbers(4, 16, True) == 64
    assert block_class("inside").kept_numbers(4, 16, True) == 16 * (4 * 4 + 1) + 2 * 4 * 9
