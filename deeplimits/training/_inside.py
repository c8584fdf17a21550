"""The inside residual stack with a hand-written backward pass (docs/training.md, "Speed"):

    h_{k+1} = h_k + delta_k sigma(h_k W_k^T + b_k),    k = 0..L-1,

with ``delta`` one scale per configuration (shared by the layers) or one per layer and
configuration (Cohen, Cont, Rossier & Xu, ICML 2021), for the activations whose derivative
is a function of their output (``tanh``, ``relu``, ``identity``).

A layer of this model touches a few hundred numbers, so its cost is the number of operations
launched, not arithmetic (one to a few microseconds each on a CPU). The pass launches as few
as it can:

* the forward pass runs two operations per layer. Each layer keeps ``y_k = [h_k, t_k, 1]``
  (``t_k = sigma(z_k)``; the ones carry the bias); one product ``y_{k-1} P_k = [h_k, z_k]`` with

      P_k = [[I, W_k^T], [delta_{k-1} I, delta_{k-1} W_k^T], [0, b_k]]

  (built for every layer at once) gives the residual sum and the pre-activation together, then
  the activation runs in place on ``z_k`` (``y_{-1} = [h_0, 0, 1]``; ``h_L`` one sum more). The
  states are stored as columns (``P_k^T y_{k-1}^T``, each ``(2d + 1, batch)``), so that ``z_k`` is one
  contiguous block: the activation runs twice as fast there as on a strided view;
* the backward pass, from ``G = dl/dh_L`` down, two per layer: ``u_k = sigma'(z_k) * G`` (with
  ``sigma'(z_k)``, a function of ``t_k``, computed for every layer at once before the sweep) and
  ``G <- G + u_k (delta_k W_k)``, keeping ``u_k`` and ``G``; then, for all layers at once (one
  batched product over the ``L x C`` layers and configurations, two reductions),

      [dl/dW_k, ., dl/db_k] = delta_k u_k^T y_k,   dl/ddelta_k = sum G_{k+1} * t_k;

* with one configuration on the CPU the layers are two-dimensional products; the loops run in
  inference mode (no autograd bookkeeping per operation: the gradients are this pass's own).

Autograd would record about six nodes per layer. The buffers are one block taken from the
module's :class:`~._stack.Workspace` and given back after the backward pass.
"""

from __future__ import annotations

import torch

from ..blocks.residual import Inside
from ._stack import FUSED_ACTIVATIONS, Workspace

__all__ = ["inside_stack", "INSIDE_BUFFERS"]

#: the ``(L, C, batch, d)`` buffers a training step keeps: y_k = [h_k, t_k] (two, and a column
#: of ones), u_k and G_{k+1} (the block declares them, for the memory models)
INSIDE_BUFFERS = Inside.buffers

_ACTIVATE = {"tanh": torch.Tensor.tanh_, "relu": torch.Tensor.relu_, "identity": lambda t: t}


def _slope(T: torch.Tensor, kind: str, out: torch.Tensor) -> torch.Tensor:
    """``sigma'(z)`` from ``t = sigma(z)`` for every layer at once, written into ``out``."""
    if kind == "tanh":
        return torch.addcmul(T.new_ones(()), T, T, value=-1.0, out=out)  # 1 - t^2, one pass
    if kind == "relu":
        return torch.sign(T, out=out)  # t >= 0: 1 where z > 0, else 0
    return out.fill_(1.0)


def _two_d(C: int, device) -> bool:
    """One configuration on the CPU: 2-d products."""
    return C == 1 and torch.device(device).type == "cpu"


def _layers(t: torch.Tensor, flat: bool) -> list:
    """The ``L`` per-layer views of ``t`` ``(L, C, ...)``, 2-d when ``flat`` (``C = 1``)."""
    return list((t[:, 0] if flat else t).unbind(0))


def _products(W, b, delta, ws, flat: bool):
    """``P_k^T`` ``(L, C, 2d, e)`` (``e = 2d + 1`` with a bias, else ``2d``; module docstring) and
    its per-layer views: ``[h_k; z_k] = P_k^T y_{k-1}`` for the states stored as columns."""
    L, C, d = W.shape[0], W.shape[1], W.shape[-1]
    shape = (L, C, 2 * d, 2 * d + (b is not None))
    P = W.new_empty(shape) if ws is None else ws.scratch("P", W, shape)
    prev = delta.new_zeros((L, C))  # delta_{k-1}, 0 before the first layer (it multiplies t_{-1} = 0)
    prev[1:] = delta.view(-1, C)[:L - 1] if delta.dim() == 2 else delta
    prev = prev.view(L, C, 1, 1)
    eye = torch.eye(d, dtype=W.dtype, device=W.device)
    P[..., :d, :d].copy_(eye)
    torch.mul(eye, prev, out=P[..., :d, d:2 * d])
    P[..., d:, :d].copy_(W)
    torch.mul(W, prev, out=P[..., d:, d:2 * d])
    if b is not None:
        P[..., :d, 2 * d].zero_()
        P[..., d:, 2 * d].copy_(b)
    return P, (_layers(P, flat) if ws is None else ws.views("P", P, lambda p: _layers(p, flat)))


def _last(y: torch.Tensor, delta: torch.Tensor, d: int, out: torch.Tensor) -> torch.Tensor:
    """``h_L = h_{L-1} + delta_{L-1} t_{L-1}`` from ``y_{L-1}`` ``(C, e, B)`` into ``out`` ``(C, B, d)``."""
    scale = (delta if delta.dim() == 1 else delta[-1]).view(-1, 1, 1)
    torch.addcmul(y[..., :d, :], y[..., d:2 * d, :], scale, out=out.transpose(-1, -2))
    return out


def _sweep(first, Xs, Ys, Zs, Ps, kind: str, flat: bool) -> None:
    """The forward loop: ``[h_k; z_k] = P_k^T y_{k-1}`` into ``Ys[k]`` (the first ``2d`` rows of
    ``y_k`` ``(e, B)``, whole in ``Xs[k]``), ``t_k = sigma(z_k)`` in place (``Zs[k]``: its ``z``
    rows, one contiguous block); ``first`` is ``y_{-1}``."""
    act, mm = _ACTIVATE[kind], (torch.mm if flat else torch.bmm)
    with torch.inference_mode():
        for x, p, y, z in zip([first] + Xs[:-1], Ps, Ys, Zs):
            mm(p, x, out=y)
            act(z)


def _first(h0, e: int, flat: bool):
    """``y_{-1} = [h_0; 0; 1]`` ``(C, e, B)`` (2-d when ``flat``)."""
    C, B, d = h0.shape
    y = h0.new_zeros((C, e, B))
    y[..., :d, :].copy_(h0.transpose(-1, -2))
    y[..., 2 * d:, :].fill_(1.0)
    return y[0] if flat else y


def _layout(block, L: int, C: int, B: int, d: int, e: int, flat: bool):
    """The block as ``Y (L, C, e, B)``, ``U``, ``Gs`` ``(L, C, d, B)`` (states as columns, so the
    rows of ``z_k`` are one contiguous block) and per-layer views: ``[Y, U, Gs, Xs (whole), Ys (the
    first 2d rows), Zs (the z rows), Us, Gss]``."""
    n = L * C * B
    Y = block[: n * e].view(L, C, e, B)
    U, Gs = block[n * e:].view(2, L, C, d, B).unbind(0)
    return [Y, U, Gs, _layers(Y, flat), _layers(Y[..., :2 * d, :], flat), _layers(Y[..., d:2 * d, :], flat),
            _layers(U, flat), _layers(Gs, flat)]


def _views(block, L: int, C: int, B: int, d: int, e: int, flat: bool, ws):
    """:func:`_layout` of ``block``, kept by ``ws`` while the block is the same."""
    make = lambda blk: _layout(blk, L, C, B, d, e, flat)  # noqa: E731
    return make(block) if ws is None else ws.views("block", block, make)


def _forward_no_grad(h0, W, b, delta, kind: str) -> torch.Tensor:
    """``h_L`` without keeping anything (memory independent of depth): two states in turn."""
    L, (C, B, d) = W.shape[0], h0.shape
    flat = _two_d(C, h0.device)
    e = 2 * d + (b is not None)
    _, Ps = _products(W.detach(), None if b is None else b.detach(), delta.detach(), None, flat)
    two = h0.new_empty((2, C, e, B))
    two[..., 2 * d:, :].fill_(1.0)
    Xs, Ys, Zs = (_layers(v, flat) for v in (two, two[..., :2 * d, :], two[..., d:2 * d, :]))
    _sweep(_first(h0, e, flat), *([v[k % 2] for k in range(L)] for v in (Xs, Ys, Zs)), Ps, kind, flat)
    return _last(two[(L - 1) % 2], delta.detach(), d, h0.new_empty(h0.shape))


class _InsideStack(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h0, W, b, delta, kind, workspace):
        L, (C, B, d) = W.shape[0], h0.shape
        flat = _two_d(C, h0.device)
        e = 2 * d + (b is not None)
        size = L * C * B * (e + 2 * d)
        block = h0.new_empty(size) if workspace is None else workspace.take(h0[0, 0, 0], size)
        Y, _, _, Xs, Ys, Zs, _, _ = _views(block, L, C, B, d, e, flat, workspace)
        if b is not None:
            Y[..., 2 * d, :].fill_(1.0)
        _, Ps = _products(W.detach(), None if b is None else b.detach(), delta.detach(), workspace, flat)
        _sweep(_first(h0, e, flat), Xs, Ys, Zs, Ps, kind, flat)
        out = _last(Y[L - 1], delta.detach(), d, h0.new_empty(h0.shape))
        ctx.save_for_backward(W, delta)
        ctx.block, ctx.kind, ctx.e, ctx.workspace, ctx.flat = block, kind, e, workspace, flat
        return out

    @staticmethod
    def backward(ctx, G):
        W, delta = ctx.saved_tensors
        L, (C, B, d) = W.shape[0], G.shape
        ws, flat = ctx.workspace, ctx.flat
        Y, U, Gs, _, _, _, Us, Gss = _views(ctx.block, L, C, B, d, ctx.e, flat, ws)
        T = Y[..., d:2 * d, :]
        _slope(T, ctx.kind, U)
        dW = torch.mul(delta.detach().view(-1, C, 1, 1), W.detach().transpose(-1, -2),  # (delta_k W_k)^T
                       out=None if ws is None else ws.scratch("dW", W, tuple(W.shape)))
        dWs = _layers(dW, flat) if ws is None else ws.views("dW", dW, lambda v: _layers(v, flat))
        G0 = G.new_empty((C, d, B))  # G as columns
        Gs[L - 1].copy_(G.transpose(-1, -2))
        nxt = [G0[0] if flat else G0] + Gss[:L - 1]  # G_k, written by layer k
        addmm, mul = (torch.addmm if flat else torch.baddbmm), torch.mul
        with torch.inference_mode():
            for g, u, w, gn in zip(reversed(Gss), reversed(Us), reversed(dWs), reversed(nxt)):
                addmm(g, w, mul(g, u, out=u), out=gn)
        return (G0.transpose(-1, -2),) + _parameter_grads(ctx, W, delta, Y, T, U, Gs) + (None, None)


def _parameter_grads(ctx, W, delta, Y, T, U, Gs):
    """``dl/dW``, ``dl/db``, ``dl/ddelta`` for every layer at once; the block goes back to the workspace."""
    L, C, d = W.shape[0], W.shape[1], W.shape[-1]
    ws = ctx.workspace
    LC, e = L * C, Y.shape[-2]
    R = torch.bmm(U.reshape(LC, d, -1), Y.reshape(LC, e, -1).transpose(1, 2)).view(L, C, d, e)  # u^T [h, t, 1]
    scale = delta.detach().view(-1, C, 1)  # (1 or L, C, 1)
    gW = torch.mul(R[..., :d], scale.unsqueeze(-1), out=torch.empty_like(W) if ws is None else ws.take_grad(W))
    gb = None
    if e > 2 * d:
        gb = torch.mul(R[..., 2 * d], scale, out=W.new_empty((L, C, d)) if ws is None else ws.take_grad(W, (L, C, d)))
    gd = torch.mul(Gs, T, out=U).sum((2, 3))  # U is free once R is made
    if delta.dim() == 1:
        gd = gd.sum(0)
    if ws is not None:
        ws.give(ctx.block)
    ctx.block = None
    return gW, gb, gd


def inside_stack(h0: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None, delta: torch.Tensor, kind: str,
                 workspace: Workspace | None = None) -> torch.Tensor:
    """``h_L`` of the inside stack: ``h0`` ``(C, batch, d)``, ``W`` ``(L, C, d, d)``, ``b``
    ``(L, C, d)`` or ``None``, ``delta`` ``(C,)`` or ``(L, C)``, activation ``kind`` in
    :data:`~._stack.FUSED_ACTIVATIONS`. Differentiable in ``h0``, ``W``, ``b`` and ``delta``
    with the backward pass above; without gradients nothing is kept (memory independent of
    depth). ``workspace`` reuses the buffers of the previous step."""
    assert kind in FUSED_ACTIVATIONS
    needs_grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (h0, W, b, delta))
    if not needs_grad:
        return _forward_no_grad(h0, W, b, delta, kind)
    return _InsideStack.apply(h0.contiguous(), W, b, delta, kind, workspace)
