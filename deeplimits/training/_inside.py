"""The inside residual stack with a hand-written backward pass (docs/training.md, "Speed"):

    h_{k+1} = h_k + delta_k sigma(h_k W_k^T + b_k),    k = 0..L-1,

with ``delta`` one scale per configuration (shared by the layers) or one per layer and
configuration (Cohen, Cont, Rossier & Xu, ICML 2021), for the activations whose derivative
is a function of their output (``tanh``, ``relu``, ``identity``). The forward pass keeps
``h_k`` and ``t_k = sigma(z_k)`` (three operations per layer: ``baddbmm``, the activation,
``addcmul``); the backward pass runs, from ``G = dl/dh_L`` down, two operations per layer,

    u_k = sigma'(z_k) * G,    G <- G + u_k (delta_k W_k),

keeping ``u_k`` and ``G``; then, for all layers at once (one batched product over the
``L x C`` layers and configurations, two reductions),

    dl/dW_k = delta_k u_k^T h_k,   dl/db_k = delta_k sum_batch u_k,   dl/ddelta_k = sum G_{k+1} * t_k.

Autograd would record about six nodes per layer. The four ``(L, C, batch, d)`` buffers are
one block taken from the module's :class:`~._stack.Workspace` and given back after the
backward pass.
"""

from __future__ import annotations

import torch

from ._stack import FUSED_ACTIVATIONS, Workspace

__all__ = ["inside_stack", "INSIDE_BUFFERS"]

#: the ``(L, C, batch, d)`` buffers a training step keeps: h_k, t_k, u_k and G_{k+1}
INSIDE_BUFFERS = 4

_tanh_backward = torch.ops.aten.tanh_backward.grad_input
_threshold_backward = torch.ops.aten.threshold_backward.grad_input


def _sigma(z: torch.Tensor, kind: str, out: torch.Tensor | None = None) -> torch.Tensor:
    if kind == "tanh":
        return torch.tanh(z, out=out) if out is not None else torch.tanh(z)
    if kind == "relu":
        return torch.clamp_min(z, 0.0, out=out) if out is not None else torch.clamp_min(z, 0.0)
    return z if out is None else out.copy_(z)


def _deltas(delta: torch.Tensor, L: int):
    """``delta`` ``(C,)`` or ``(L, C)`` as ``L`` views of shape ``(C, 1, 1)``."""
    if delta.dim() == 1:
        return [delta.view(-1, 1, 1)] * L
    return delta.view(L, -1, 1, 1).unbind(0)


def _forward(h, W, b, delta, kind: str, ws: Workspace | None = None, H=None, T=None) -> torch.Tensor:
    """``h_L`` from ``h_0``; with ``H``, ``T`` (lists of ``L`` views ``(C, batch, d)``) the
    states ``h_k`` and the activations ``t_k`` are kept in them."""
    L = W.shape[0]
    W, b, delta = (None if t is None else t.detach() for t in (W, b, delta))  # views autograd does not track
    Wt = _layers(ws, "Wt", W, lambda w: w.transpose(-1, -2).unbind(0))
    bs = [None] * L if b is None else _layers(ws, "b", b, lambda v: v.unsqueeze(-2).unbind(0))
    ds = _layers(ws, "delta", delta, lambda v: _deltas(v, L))
    if H is not None:
        H[0].copy_(h)
    for k in range(L):
        z = torch.bmm(h, Wt[k]) if bs[k] is None else torch.baddbmm(bs[k], h, Wt[k])
        t = _sigma(z, kind, None if T is None else T[k])
        h = torch.addcmul(h, t, ds[k], out=H[k + 1] if H is not None and k + 1 < L else None)
    return h


def _layers(ws, name, t, make):
    return make(t) if ws is None else ws.views(name, t, make)


def _derivative(G, Tk, kind: str, out: torch.Tensor) -> torch.Tensor:
    """``sigma'(z_k) * G`` from ``t_k = sigma(z_k)``, written into ``out``."""
    if kind == "tanh":
        return _tanh_backward(G, Tk, grad_input=out)
    if kind == "relu":
        return _threshold_backward(G, Tk, 0.0, grad_input=out)
    return out.copy_(G)


def _block(h0, L: int, ws):
    """The four buffers ``(L, C, batch, d)`` as one block, and the per-layer views of each."""
    block = h0.new_empty((INSIDE_BUFFERS * L,) + tuple(h0.shape)) if ws is None else ws.take(h0, INSIDE_BUFFERS * L)
    return block, _block_views(block, L, ws)


def _block_views(block, L: int, ws):
    """``[H, T, U, Gs]``: the per-layer views ``(C, batch, d)`` of each buffer of ``block``."""
    def split(blk):
        return [part.unbind(0) for part in blk.view(INSIDE_BUFFERS, L, *blk.shape[1:]).unbind(0)]
    return split(block) if ws is None else ws.views("block", block, split)


class _InsideStack(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h0, W, b, delta, kind, workspace):
        L = W.shape[0]
        block, (H, T, _, _) = _block(h0, L, workspace)
        h = _forward(h0, W, b, delta, kind, workspace, H, T)
        ctx.save_for_backward(W, delta)
        ctx.block, ctx.kind, ctx.has_bias, ctx.workspace = block, kind, b is not None, workspace
        return h

    @staticmethod
    def backward(ctx, G):
        W, delta = ctx.saved_tensors
        L, C = W.shape[0], W.shape[1]
        ws = ctx.workspace
        _, T, U, Gs = _block_views(ctx.block, L, ws)
        dW = torch.mul(delta.view(-1, C, 1, 1), W, out=None if ws is None else ws.take_grad(W))
        dWs = dW.unbind(0) if ws is None else ws.views("dW", dW, lambda v: v.unbind(0))
        Gs[L - 1].copy_(G)
        for k in range(L - 1, -1, -1):
            u = _derivative(Gs[k], T[k], ctx.kind, U[k])
            G = torch.baddbmm(Gs[k], u, dWs[k], out=Gs[k - 1] if k > 0 else None)
        if ws is not None:
            ws.recycle(dW)
        return (G,) + _parameter_grads(ctx, W, delta) + (None, None)


def _parameter_grads(ctx, W, delta):
    """``dl/dW``, ``dl/db``, ``dl/ddelta`` for every layer at once; the block goes back to the workspace."""
    L, C, d = W.shape[0], W.shape[1], W.shape[-1]
    ws = ctx.workspace
    H, T, U, Gs = ctx.block.view(INSIDE_BUFFERS, L, C, -1, d).unbind(0)
    gW = torch.empty_like(W) if ws is None else ws.take_grad(W)
    LC = L * C
    torch.bmm(U.reshape(LC, -1, d).transpose(1, 2), H.reshape(LC, -1, d), out=gW.view(LC, d, d))
    scale = delta.view(-1, C, 1)  # (1 or L, C, 1)
    gW.mul_(scale.unsqueeze(-1))
    gb = None
    if ctx.has_bias:
        gb = W.new_empty((L, C, d)) if ws is None else ws.take_grad(W, (L, C, d))
        torch.sum(U, dim=-2, out=gb).mul_(scale)
    gd = torch.einsum("lcbi,lcbi->lc", Gs, T)
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
        return _forward(h0, W, b, delta, kind)
    return _InsideStack.apply(h0, W, b, delta, kind, workspace)
