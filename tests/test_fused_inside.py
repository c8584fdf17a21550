"""The fused inside stack (issue 27, part 7): ``h + delta_k sigma(W_k h + b_k)`` with a
hand-written backward pass, against autograd through the layers in float64 (1e-10 relative),
through a ResidualNetwork whose configurations are seeds and learning rates, with its
workspace reused across steps."""

import pytest
import torch

from deeplimits.training import BatchedAdam, ResidualNetwork
from deeplimits.training._inside import inside_stack
from deeplimits.training._stack import Workspace

F64 = torch.float64


def gen(seed):
    return torch.Generator().manual_seed(seed)


def _reference(h, W, b, delta, kind):
    sigma = {"tanh": torch.tanh, "relu": torch.relu, "identity": lambda z: z}[kind]
    for k in range(W.shape[0]):
        z = h @ W[k].transpose(-1, -2) + (0 if b is None else b[k].unsqueeze(-2))
        h = h + (delta if delta.dim() == 1 else delta[k]).view(-1, 1, 1) * sigma(z)
    return h


@pytest.mark.parametrize("kind", ["tanh", "relu", "identity"])
@pytest.mark.parametrize("per_layer", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("C", [1, 3])  # one configuration: 2-d products and Python scales (training/_inside.py)
def test_fused_inside_stack_matches_autograd(kind, per_layer, bias, C):
    L, B, d = 11, 5, 4
    g = gen(40)
    h0 = torch.randn(C, B, d, generator=g, dtype=F64, requires_grad=True)
    W = torch.randn(L, C, d, d, generator=g, dtype=F64, requires_grad=True)
    b = torch.randn(L, C, d, generator=g, dtype=F64, requires_grad=True) if bias else None
    delta = torch.randn((L, C) if per_layer else (C,), generator=g, dtype=F64, requires_grad=True)
    inputs = [t for t in (h0, W, b, delta) if t is not None]
    ref = _reference(h0, W, b, delta, kind)
    w = torch.randn(C, B, d, generator=g, dtype=F64)
    want = torch.autograd.grad((ref * w).sum(), inputs)
    ws = Workspace()
    for _ in range(2):  # the second step reuses the workspace's buffers and views
        got = inside_stack(h0, W, b, delta, kind, ws)
        torch.testing.assert_close(got, ref, rtol=1e-12, atol=1e-12)
        have = torch.autograd.grad((got * w).sum(), inputs)
        for x, y in zip(have, want):
            torch.testing.assert_close(x, y, rtol=1e-10, atol=1e-12)
    with torch.no_grad():  # nothing kept: the plain loop, the same values
        torch.testing.assert_close(inside_stack(h0, W, b, delta, kind, ws), ref, rtol=1e-12, atol=1e-12)


def test_network_trains_seeds_and_rates_as_one_by_one():
    """Four configurations (two seeds x two learning rates) trained at once with the fused pass
    follow the trajectories of the four trained one at a time through autograd (float64)."""
    L, d = 9, 3
    x, y = torch.randn(16, d, generator=gen(41), dtype=F64), torch.randn(16, d, generator=gen(42), dtype=F64)
    batched = ResidualNetwork("inside", L, d, d, d, configs=4, bias=True, delta="per-layer", dtype=F64)
    assert batched.fused
    with torch.no_grad():
        for c in range(4):
            batched.W[:, c].copy_(torch.randn(L, d, d, generator=gen(50 + c // 2), dtype=F64) * 0.3)
    rates = [1e-2, 3e-2, 1e-2, 3e-2]
    singles = [batched.config(c) for c in range(4)]
    opt = BatchedAdam(batched, lr=rates)
    opts = [torch.optim.Adam(s.parameters(), lr=r) for s, r in zip(singles, rates)]
    for _ in range(3):
        opt.zero_grad()
        ((batched(x) - y) ** 2).mean((1, 2)).sum().backward()
        opt.step()
        for s, o in zip(singles, opts):
            o.zero_grad()
            h = s.embed(x)
            out = s.readout(_reference(h, s.W, s.b, s.delta, "tanh"))
            ((out - y) ** 2).mean().backward()
            o.step()
    for c, s in enumerate(singles):
        torch.testing.assert_close(batched.W.detach()[:, c], s.W.detach()[:, 0], rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(batched.delta.detach()[:, c], s.delta.detach()[:, 0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("arch", ["res-1", "res-2", "inside"])
@pytest.mark.parametrize("activation", ["tanh", "relu", "identity", "sin"])
def test_one_definition_of_fused_for_networks_and_memory_models(arch, activation, monkeypatch):
    """Issue 41: the network and the memory model ask the same question; an ``inside`` plan
    counts the fused stack's buffers, not the autograd activations it never keeps."""
    from deeplimits.studies.training import memory as M
    from deeplimits.studies import plan_training
    from deeplimits.training import modules
    from deeplimits.training.modules import is_fused

    net = ResidualNetwork(arch, 4, 3, 3, 3, activation=activation, bias=arch == "inside")
    want = arch in ("res-1", "inside") and activation != "sin"
    assert net.fused is is_fused(arch, activation) is is_fused(arch, net.activation) is want
    plan = plan_training("synthetic", arch=arch, activation=activation, depth=8, width=5, epochs=1, lrs=[0.01], seeds=1)
    asked = []
    count = modules.activation_count
    monkeypatch.setattr(modules, "activation_count", lambda a, fused, *rest: asked.append((a, fused)) or count(a, fused, *rest))
    M.training_bytes(plan, 2)
    assert asked == [(arch, want)]
