"""deeplimits.training: the batched residual module, the driver initialisers, the batched optimisers."""

import math

import numpy as np
import pytest
import torch

import deeplimits as dl
from deeplimits.paths import fgn_autocovariance, rbf_kernel
from deeplimits.training import (BatchedAdam, BatchedSGD, ResidualNetwork, fractional_, iid_, init_from_driver,
                                 smooth_)

F64 = torch.float64


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def linears(depth, out_f=32, in_f=32, dtype=F64):
    return [torch.nn.Linear(in_f, out_f, bias=False, dtype=dtype) for _ in range(depth)]


# -- the module ---------------------------------------------------------------------------------

@pytest.mark.parametrize("arch,delta", [("res-1", None), ("res-2", None), ("res-3", None),
                                        ("inside", "shared"), ("inside", "per-layer")])
def test_hidden_state_matches_resnet(arch, delta):
    L, C, d = 12, 3, 5  # L not a power of two: the path drivers read the first 12 of 16 layers
    inside = arch == "inside"
    m = ResidualNetwork(arch, L, d, 2, 1, configs=C, beta=0.5, bias=inside, delta=delta, dtype=F64)
    init_from_driver(m, dl.make_driver("fractional", hurst=0.7), generator=gen(1))
    w = m.residual_weights()
    h0 = torch.randn(C, 4, d, generator=gen(2), dtype=F64)
    # inside: delta = 1/L is the ResNet scaling with beta = 1
    net = dl.ResNet(arch, None, 1.0 if inside else 0.5)
    ref = net.forward(h0, V=w.get("V"), W=w.get("W"), b=w.get("b")).states[-1]
    torch.testing.assert_close(m.propagate(h0), ref, rtol=1e-12, atol=1e-12)


def test_res1_bias_outside_the_activation():
    L, C, d = 4, 2, 3
    m = ResidualNetwork("res-1", L, d, 2, 1, configs=C, bias=True, beta=0.3, dtype=F64)
    with torch.no_grad():
        m.b.normal_(generator=gen(3))
    h = h0 = torch.randn(C, 5, d, generator=gen(4), dtype=F64)
    for k in range(L):
        h = h + L ** -0.3 * (torch.tanh(h) @ m.V[k].detach().transpose(-1, -2) + m.b[k].detach().unsqueeze(-2))
    torch.testing.assert_close(m.propagate(h0), h, rtol=1e-12, atol=1e-12)


def test_shapes_defaults_and_config_copy():
    m = ResidualNetwork("inside", 6, 4, 3, 2, configs=3, bias=True, delta="per-layer", dtype=F64)
    shapes = {n: tuple(p.shape) for n, p in m.named_parameters()}
    assert shapes == {"A": (3, 3, 4), "W": (6, 3, 4, 4), "b": (6, 3, 4), "delta": (6, 3), "B": (3, 4, 2)}
    assert torch.all(m.delta == 1 / 6) and torch.all(m.b == 0)
    assert set(m.residual_weights()) == {"W", "b", "delta"}
    x = torch.randn(7, 3, generator=gen(5), dtype=F64)
    out = m(x)
    assert out.shape == (3, 7, 2)
    for c in range(3):
        torch.testing.assert_close(m.config(c)(x)[0], out[c], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("arch,delta", [("res-2", None), ("inside", "per-layer")])
def test_layers_are_unbound_once(arch, delta):
    # V[k] in the loop would put one SelectBackward per layer in the graph (O(L^2) backward);
    # sin: an activation the fused stacks do not take, so the layers go through autograd
    m = ResidualNetwork(arch, 16, 3, 2, 1, configs=2, bias=True, delta=delta, activation="sin")
    out = m(torch.randn(4, 2))
    names, seen, todo = set(), set(), [out.grad_fn]
    while todo:
        f = todo.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        names.add(type(f).__name__)
        todo.extend(g for g, _ in f.next_functions)
    assert "UnbindBackward0" in names
    assert not names & {"SelectBackward0", "IndexBackward0", "SliceBackward0"}


def test_load_sample_and_init_laws_of_drivers():
    m = ResidualNetwork("res-2", 6, 4, 2, 1, configs=3, dtype=F64)
    for name in ("gaussian", "uniform", "rademacher", "smooth"):
        init_from_driver(m, dl.make_driver(name), generator=gen(6))
    s = dl.make_driver("smooth").sample((4, 4), draws=3, generator=gen(7), dtype=F64)
    m.load_sample({"V": s})
    torch.testing.assert_close(m.V.detach(), s.weights(6), rtol=0, atol=0)
    a = init_from_driver(ResidualNetwork("res-1", 8, 4, 2, 1, configs=2), dl.make_driver("gaussian"), generator=gen(8))
    b = init_from_driver(ResidualNetwork("res-1", 8, 4, 2, 1, configs=2), dl.make_driver("gaussian"), generator=gen(8))
    # the same seed through the same code path: the same weights (to rounding), and two configurations differ
    torch.testing.assert_close(a.V, b.V, rtol=1e-6, atol=1e-7)
    assert not torch.allclose(a.V[:, 0], a.V[:, 1])


@pytest.mark.parametrize("kwargs,match", [
    (dict(arch="res-4"), "arch must be one of"),
    (dict(delta="shared"), "delta applies only to a block scaled by a trained delta"),
    (dict(arch="inside", delta="global"), "delta must be one of"),
    (dict(arch="res-3", activation="tanh"), "activation must be 'relu'"),
    (dict(configs=0), "configs must be an integer >= 1"),
    (dict(bias=1), "bias must be True or False"),
])
def test_module_bad_input(kwargs, match):
    args = dict(arch="res-1", depth=4, width=3, in_features=2, out_features=1) | kwargs
    with pytest.raises(ValueError, match=match):
        ResidualNetwork(**args)


def test_forward_bad_input():
    m = ResidualNetwork("res-1", 4, 3, 2, 1, configs=2)
    for x in (torch.zeros(5, 3), torch.zeros(3, 5, 2), torch.zeros(5)):
        with pytest.raises(ValueError, match=r"x must have shape \(batch, 2\) or \(2, batch, 2\)"):
            m(x)
    assert m(torch.zeros(2, 5, 2)).shape == (2, 5, 1)


def test_load_sample_bad_input():
    m = ResidualNetwork("res-1", 4, 3, 2, 1, configs=2, dtype=F64)
    s = dl.make_driver("smooth").sample((3, 3), draws=3, dtype=F64)
    with pytest.raises(ValueError, match=r"samples\['V'\] must have draws = 2"):
        m.load_sample({"V": s})
    with pytest.raises(ValueError, match="samples key must be one of 'V'"):
        m.load_sample({"W": s})
    with pytest.raises(ValueError, match="driver must be a deeplimits Driver"):
        init_from_driver(m, "gaussian")


# -- the nn.init-style initialisers ---------------------------------------------------------------
# The entries of one layer are independent; along depth an entry is a stationary Gaussian sequence
# with correlation matrix R (identity for i.i.d.). For m entries of L layers, the mean of w^2 / s^2
# has standard error sqrt(kappa * sum_jk R_jk^2) / (L sqrt(m)), kappa = Var(w^2) / s^4 (2 for a
# Gaussian, 4/5 uniform, 0 Rademacher). The tests allow 5 standard errors (two-sided p ~ 6e-7).

def _corr(law, L):
    k = np.abs(np.subtract.outer(np.arange(L), np.arange(L)))
    if law == "fractional":
        return fgn_autocovariance(L, 0.7)[k]
    if law == "smooth":
        return rbf_kernel(torch.tensor(k / L), 0.0, 0.1).numpy()
    return np.eye(L)


@pytest.mark.parametrize("law,init,kappa,scale", [
    ("gaussian", lambda ls, g, s: iid_(ls, "gaussian", g, s), 2.0, None),
    ("uniform", lambda ls, g, s: iid_(ls, "uniform", g, s), 0.8, 0.3),
    ("rademacher", lambda ls, g, s: iid_(ls, "rademacher", g, s), 0.0, None),
    ("fractional", lambda ls, g, s: fractional_(ls, 0.7, g, s), 2.0, 0.3),
    ("smooth", lambda ls, g, s: smooth_(ls, 0.1, g, s), 2.0, None),
])
def test_entry_variance(law, init, kappa, scale):
    L, out_f, in_f = 1024, 32, 32
    layers = init(linears(L, out_f, in_f), gen(10), scale)
    s = in_f ** -0.5 if scale is None else scale
    w = torch.stack([lin.weight.detach() for lin in layers]) / s
    se = math.sqrt(kappa * (_corr(law, L) ** 2).sum()) / (L * math.sqrt(out_f * in_f))
    # + 1e-6: the Rademacher sample rounds +-scale through float32 (paths/brownian.py, IIDSample)
    assert abs(w.pow(2).mean().item() - 1.0) <= 5 * se + 1e-6


def _hurst_by_groups(x, groups):
    """Discrete-variation estimates of H of the paths ``x`` (depth, entries), pooled in ``groups``."""
    d1 = (x[1:] - x[:-1]).pow(2).reshape(x.shape[0] - 1, groups, -1).mean(dim=(0, 2))
    d2 = (x[2:] - x[:-2]).pow(2).reshape(x.shape[0] - 2, groups, -1).mean(dim=(0, 2))
    pooled = 0.5 * math.log2(d2.mean().item() / d1.mean().item())
    return pooled, 0.5 * torch.log2(d2 / d1)


@pytest.mark.parametrize("hurst", [0.3, 0.7, 0.9])
def test_fractional_hurst_index(hurst):
    # E (X_{k+2} - X_k)^2 = 2^(2H) E (X_{k+1} - X_k)^2 for fBm X: the estimator is H up to noise.
    # Its standard error is measured from 32 independent groups of 8 entries (entries are
    # independent paths); allow 5 of them, and require that error to be small (< 0.015)
    L = 1024
    layers = fractional_(linears(L, 16, 16), hurst, gen(11))
    x = torch.stack([lin.weight.detach().reshape(-1) for lin in layers]).cumsum(0)
    est, per_group = _hurst_by_groups(x, 32)
    se = per_group.std().item() / math.sqrt(32)
    assert se < 0.015
    assert abs(est - hurst) < 5 * se


@pytest.mark.parametrize("law", ["gaussian", "uniform", "rademacher"])
def test_iid_layers_uncorrelated(law):
    # pooled lag-1 correlation of N = (L - 1) m independent pairs: standard error 1/sqrt(N), 5 allowed
    L = 512
    w = torch.stack([lin.weight.detach().reshape(-1) for lin in iid_(linears(L, 16, 16), law, gen(12))])
    r = ((w[1:] * w[:-1]).sum() / w[:-1].pow(2).sum()).item()
    assert abs(r) < 5 / math.sqrt((L - 1) * w.shape[1])


def test_initialisers_are_seeded_and_fill_in_place():
    a, b = fractional_(linears(8, 3, 4), 0.6, gen(13)), fractional_(linears(8, 3, 4), 0.6, gen(13))
    for x, y in zip(a, b):  # same seed, same code path: the same weights (to rounding)
        torch.testing.assert_close(x.weight, y.weight, rtol=1e-9, atol=1e-12)
    ls = linears(5, 3, 4, dtype=torch.float32)
    assert smooth_(ls, generator=gen(14))[0] is ls[0] and ls[0].weight.dtype == torch.float32


@pytest.mark.parametrize("call,match", [
    (lambda: iid_([]), "layers must be a non-empty list"),
    (lambda: iid_([torch.nn.Linear(3, 4), torch.nn.Linear(4, 4)]), "layers must all have one weight shape"),
    (lambda: iid_([torch.nn.Conv1d(3, 4, 1)]), "layers must all be torch.nn.Linear"),
    (lambda: iid_(linears(2), law="cauchy"), "law must be one of"),
    (lambda: iid_(linears(2), scale=0.0), "scale must lie in"),
    (lambda: fractional_(linears(2), hurst=0.0), "hurst must lie in"),
    (lambda: fractional_(linears(2), hurst=1.5), "hurst must lie in"),
    (lambda: smooth_(linears(2), length_scale=0.01), "length_scale must lie in"),
    (lambda: iid_(linears(2), generator=1), "generator must be a torch.Generator"),
])
def test_initialiser_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# -- the batched optimisers ---------------------------------------------------------------------

def _data():
    return torch.randn(16, 3, generator=gen(20), dtype=F64), torch.randn(16, 2, generator=gen(21), dtype=F64)


def _losses(model, x, y):
    return (model(x) - y).pow(2).mean(dim=(1, 2))  # one mean loss per config


@pytest.mark.parametrize("activation", ["tanh", "relu", "identity"])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_res1_stack_matches_autograd(activation, bias):
    # the hand-written backward of training/_stack.py against autograd through ResNet's layers
    # (float64: the two differ by rounding only, 1e-10 relative is ~1e5 ulps of slack)
    from deeplimits.training._stack import res1_stack
    L, C, B, d = 12, 3, 5, 4
    g = gen(31)
    h0 = torch.randn(C, B, d, generator=g, dtype=F64, requires_grad=True)
    V = torch.randn(L, C, d, d, generator=g, dtype=F64, requires_grad=True)
    b = torch.randn(L, C, d, generator=g, dtype=F64, requires_grad=True) if bias else None
    alpha, net = L ** -0.7, dl.ResNet("res-1", activation, 0.7)
    ref = h0
    for k in range(L):
        ref = ref + alpha * (net.residual(ref, V=V[k]) + (b[k].unsqueeze(1) if bias else 0))
    got = res1_stack(h0, V, b, alpha, activation)
    torch.testing.assert_close(got, ref, rtol=1e-12, atol=1e-12)
    w = torch.randn(C, B, d, generator=g, dtype=F64)
    inputs = [h0, V] + ([b] if bias else [])
    want = torch.autograd.grad((ref * w).sum(), inputs)
    have = torch.autograd.grad((res1_stack(h0, V, b, alpha, activation) * w).sum(), inputs)
    for x, y in zip(have, want):
        torch.testing.assert_close(x, y, rtol=1e-10, atol=1e-12)
    with torch.no_grad():  # no activations kept: the plain loop, the same values
        torch.testing.assert_close(res1_stack(h0, V, b, alpha, activation), ref, rtol=1e-12, atol=1e-12)


def test_module_uses_the_fused_stack_for_named_activations():
    def graph(m):
        names, todo = set(), [m(torch.randn(4, 2)).grad_fn]
        while todo:
            f = todo.pop()
            if f is not None:
                names.add(type(f).__name__)
                todo.extend(g for g, _ in f.next_functions)
        return names

    assert "_Res1StackBackward" in graph(ResidualNetwork("res-1", 8, 3, 2, 1, configs=2, bias=True))
    assert "_Res1StackBackward" in graph(ResidualNetwork("res-1", 8, 3, 2, 1, activation="relu"))
    assert "_Res1StackBackward" not in graph(ResidualNetwork("res-1", 8, 3, 2, 1, activation="sin"))
    # the inside model's stack (training/_inside.py; tests/test_fused_inside.py)
    assert "_InsideStackBackward" in graph(ResidualNetwork("inside", 8, 3, 2, 1, configs=2, bias=True))
    assert "_InsideStackBackward" in graph(ResidualNetwork("inside", 8, 3, 2, 1, activation="relu", delta="per-layer"))
    assert "_InsideStackBackward" not in graph(ResidualNetwork("inside", 8, 3, 2, 1, activation="sin"))


def _train_batched(model, opt, steps):
    x, y = _data()
    for _ in range(steps):
        opt.zero_grad()
        loss = _losses(model, x, y)
        loss.sum().backward()  # the sum over configs: each config's gradient is its own loss's
        if isinstance(opt, (BatchedAdam, BatchedSGD)):
            opt.observe(loss)  # the per-config losses for the finite mask (step has torch's signature)
        opt.step()


@pytest.mark.parametrize("arch,delta,opt", [
    ("res-2", None, "adam"), ("inside", "per-layer", "adam"), ("res-1", None, "sgd"), ("inside", "shared", "sgd"),
    ("res-1", None, "adam"),
])
def test_batched_equals_separate(arch, delta, opt):
    lrs = [1e-3, 1e-2, 5e-2]
    m = ResidualNetwork(arch, 8, 4, 3, 2, configs=3, bias=True, delta=delta, dtype=F64)
    init_from_driver(m, dl.make_driver("fractional", hurst=0.7), generator=gen(22))
    singles = [m.config(c) for c in range(3)]
    if opt == "adam":
        kw = dict(betas=(0.8, 0.99), weight_decay=1e-2)
        batched, make = BatchedAdam(m, torch.tensor(lrs, dtype=F64), **kw), lambda p, lr: torch.optim.Adam(p, lr, **kw)
    else:
        kw = dict(momentum=0.9, nesterov=True, weight_decay=1e-2)
        batched, make = BatchedSGD(m, lrs, **kw), lambda p, lr: torch.optim.SGD(p, lr, **kw)
    _train_batched(m, batched, 5)
    for c, (single, lr) in enumerate(zip(singles, lrs)):
        _train_batched(single, make(single.parameters(), lr), 5)
        want = single.config(0)
        got = m.config(c)
        for (name, p), (_, q) in zip(got.named_parameters(), want.named_parameters()):
            torch.testing.assert_close(p, q, rtol=1e-10, atol=1e-12, msg=lambda s, c=c, n=name: f"config {c}, {n}: {s}")


def test_nonfinite_config_is_frozen():
    m = ResidualNetwork("res-2", 6, 4, 3, 2, configs=3, dtype=F64)
    opt = BatchedAdam(m, lr=1e-2)
    x, y = _data()
    before = {n: p.detach().clone() for n, p in m.named_parameters()}
    for _ in range(3):
        opt.zero_grad()
        loss = _losses(m, x, y) * torch.tensor([1.0, float("nan"), 1.0], dtype=F64)
        loss.sum().backward()
        opt.observe(loss)
        opt.step()
    assert opt.finite.tolist() == [True, False, True]
    axes = {n: a for (n, _), a in zip(m.named_parameters(), m.config_axes().values())}
    for n, p in m.named_parameters():
        old, new = before[n].movedim(axes[n], 0), p.detach().movedim(axes[n], 0)
        # the skipped configuration is not updated; the others move by about lr (far above 1e-12)
        assert torch.allclose(new[1], old[1], rtol=0, atol=1e-12)
        assert not torch.allclose(new[0], old[0], rtol=0, atol=1e-12) and not torch.allclose(new[2], old[2], rtol=0, atol=1e-12)
    assert opt.state[m.V]["step"].tolist() == [3.0, 0.0, 3.0]
    again = BatchedAdam(m, lr=1e-2)
    again.load_state_dict(opt.state_dict())
    assert again.finite.tolist() == [True, False, True]
    torch.testing.assert_close(again.state[m.V]["exp_avg"], opt.state[m.V]["exp_avg"], rtol=0, atol=0)


@pytest.mark.parametrize("call,match", [
    (lambda m: BatchedAdam(m, lr=[0.1, 0.2]), "lr must be a number or have one value per config"),
    (lambda m: BatchedAdam(m, lr=-1.0), "lr must be finite and > 0"),
    (lambda m: BatchedAdam({}), "params must be a non-empty dict"),
    (lambda m: BatchedSGD({m.V: 4}), "config axis must be an integer in"),
    (lambda m: BatchedSGD({m.V: 1, m.A: 1}), "same number of configs"),
    (lambda m: BatchedSGD(m, nesterov=True), "nesterov requires momentum"),
    (lambda m: BatchedAdam(m).observe(torch.zeros(2)), r"loss must have shape \(3,\)"),
])
def test_optimiser_bad_input(call, match):
    m = ResidualNetwork("res-1", 4, 3, 2, 1, configs=3, dtype=F64)
    with pytest.raises(ValueError, match=match):
        call(m)


def test_frozen_input_and_output_layers_are_not_optimised():
    m = ResidualNetwork("inside", 6, 3, 3, 3, configs=2, dtype=F64)
    m.A.requires_grad_(False)
    m.B.requires_grad_(False)
    A0 = m.A.detach().clone()
    opt = BatchedAdam(m, lr=1e-2)
    assert m.A not in opt.state and len(opt.param_groups) == 2  # W and delta
    x = torch.randn(5, 3, dtype=F64)
    opt.zero_grad()
    m(x).pow(2).mean(dim=(1, 2)).sum().backward()
    opt.step()
    assert torch.allclose(m.A, A0, rtol=0, atol=1e-12) and not m.config(1).A.requires_grad  # frozen: not updated
