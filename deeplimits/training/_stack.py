"""The res-1 residual stack with a hand-written backward pass (docs/training.md, "Speed").

    h_{k+1} = h_k + alpha (sigma(h_k) V_{k+1}^T + b_{k+1}),    k = 0..L-1,

for the activations whose derivative is a function of their output (``tanh``: ``1 - t^2``,
``relu``: ``1{t > 0}``, ``identity``: 1). Autograd would record about ten nodes per layer and
keep ``h_k`` as well as ``sigma(h_k)``; here the forward pass keeps only ``T_k = sigma(h_k)``
(one ``(L, C, batch, d)`` buffer) and the backward pass is, from ``G = dl/dh_L`` down,

    dl/dV_{k+1} = alpha G^T T_k,   dl/db_{k+1} = alpha sum_batch G,   G <- G + alpha sigma'(h_k) * (G V_{k+1}),

three batched products and two elementwise operations per layer. The layer gradients are
written into one ``(L, C, d, d)`` tensor (never a full-size gradient per layer).

``tanh`` is evaluated as ``2 sigmoid(2h) - 1``: the same function (float32 difference below
2.4e-7, the float32 spacing at 1), and on CPU about four times faster than ``torch.tanh``
(benchmarks/RESULTS.md).
"""

from __future__ import annotations

import torch

__all__ = ["FUSED_ACTIVATIONS", "res1_stack", "Workspace"]

from ..blocks.residual import FUSED_ACTIVATIONS  # noqa: E402 - the activations the fused passes run


def _sigma(h: torch.Tensor, kind: str, out: torch.Tensor | None = None) -> torch.Tensor:
    if kind == "tanh":
        t = torch.sigmoid(h * 2.0, out=out)
        return t.mul_(2.0).sub_(1.0)
    if kind == "relu":
        return torch.clamp_min(h, 0.0, out=out)
    return h.clone() if out is None else out.copy_(h)


def _forward(h, V, b, alpha: float, kind: str, T: torch.Tensor | None = None) -> torch.Tensor:
    """``h_L`` from ``h_0``; with ``T`` ``(L, C, batch, d)`` the activations are kept in it."""
    for k, Vk in enumerate(V.unbind(0)):
        t = _sigma(h, kind, None if T is None else T[k])
        if b is not None:
            h = torch.add(h, b[k].unsqueeze(-2), alpha=alpha)
        h = torch.baddbmm(h, t, Vk.transpose(-1, -2), alpha=alpha)
    return h


class Workspace:
    """Activation buffers kept between training steps. A fresh ``(L, C, batch, d)`` buffer
    costs a page fault per 4 KiB on first touch (on CPU as much as the activation itself);
    a buffer is taken by a forward pass and given back by its backward pass, so a second
    forward before the first backward gets a new one (never a buffer still in use)."""

    def __init__(self):
        self._free: dict = {}
        self._grads: dict = {}
        self._views: dict = {}
        self._scratch: dict = {}

    def take(self, like: torch.Tensor, depth: int) -> torch.Tensor:
        key = ((depth,) + tuple(like.shape), like.dtype, like.device)
        buf = self._free.pop(key, None)
        return like.new_empty(key[0]) if buf is None else buf

    def give(self, buf: torch.Tensor) -> None:
        self._free = {(tuple(buf.shape), buf.dtype, buf.device): buf}  # keep the latest shape only

    def take_grad(self, like: torch.Tensor, shape=None) -> torch.Tensor:
        """A gradient buffer of ``shape`` (default ``like``'s) with ``like``'s dtype and device:
        one recycled by :meth:`recycle`, else new. The workspace drops its reference, so
        autograd can make it the parameter's ``.grad`` without a copy."""
        shape = tuple(like.shape if shape is None else shape)
        buf = self._grads.pop((shape, like.dtype, like.device), None)
        return like.new_empty(shape) if buf is None else buf

    def recycle(self, grad: torch.Tensor) -> None:
        """Keep a gradient the optimiser is clearing (``zero_grad``) for the next backward pass."""
        self._grads[(tuple(grad.shape), grad.dtype, grad.device)] = grad

    def scratch(self, name: str, like: torch.Tensor, shape) -> torch.Tensor:
        """The buffer kept under ``name`` with ``shape`` and ``like``'s dtype and device (new
        when the shape changes): for what one pass writes and reads before it returns."""
        key = (tuple(shape), like.dtype, like.device)
        found = self._scratch.get(name)
        if found is None or found[0] != key:
            found = self._scratch[name] = (key, like.new_empty(key[0]))
        return found[1]

    def views(self, name: str, t: torch.Tensor, make):
        """``make(t)`` (per-layer views of ``t``), made once and kept while ``t`` keeps its
        storage, shape and strides: a view costs a microsecond, a step takes thousands."""
        key = (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device)
        found = self._views.get(name)
        if found is None or found[0] != key:
            found = self._views[name] = (key, make(t))
        return found[1]


class _Res1Stack(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h0, V, b, alpha, kind, workspace):
        T = h0.new_empty((V.shape[0],) + tuple(h0.shape)) if workspace is None else workspace.take(h0, V.shape[0])
        h = _forward(h0, V, b, alpha, kind, T)
        ctx.save_for_backward(T, V)
        ctx.alpha, ctx.kind, ctx.has_bias, ctx.workspace = alpha, kind, b is not None, workspace
        return h

    @staticmethod
    def backward(ctx, G):
        T, V = ctx.saved_tensors
        alpha, kind = ctx.alpha, ctx.kind
        L = V.shape[0]
        ws = ctx.workspace
        gV = torch.empty_like(V) if ws is None else ws.take_grad(V)
        gb = None
        if ctx.has_bias:
            shape = V.shape[:2] + (V.shape[-2],)
            gb = V.new_empty(shape) if ws is None else ws.take_grad(V, shape)
        G = G.contiguous()
        for k in range(L - 1, -1, -1):
            Tk = T[k]
            torch.bmm(G.transpose(-1, -2), Tk, out=gV[k])
            if gb is not None:
                torch.sum(G, dim=-2, out=gb[k])
            u = torch.bmm(G, V[k])
            if kind == "tanh":
                u = torch.ops.aten.tanh_backward(u, Tk)
            elif kind == "relu":  # u * 1{T_k > 0} in one pass (masked_fill_ is ten times slower on CPU)
                u = torch.ops.aten.threshold_backward(u, Tk, 0.0)
            G = torch.add(G, u, alpha=alpha)
        gV.mul_(alpha)
        if gb is not None:
            gb.mul_(alpha)
        if ctx.workspace is not None:
            ctx.workspace.give(T)
        return G, gV, gb, None, None, None


def res1_stack(h0: torch.Tensor, V: torch.Tensor, b: torch.Tensor | None, alpha: float, kind: str,
               workspace: Workspace | None = None) -> torch.Tensor:
    """``h_L`` of the res-1 stack: ``h0`` ``(C, batch, d)``, ``V`` ``(L, C, d, d)``, ``b``
    ``(L, C, d)`` or ``None``, activation ``kind`` in :data:`FUSED_ACTIVATIONS`. Differentiable
    in ``h0``, ``V``, ``b`` with the backward pass above; without gradients the activations
    are not kept (memory independent of depth). ``workspace`` reuses the activation buffer
    of the previous step."""
    needs_grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (h0, V, b))
    if not needs_grad:
        return _forward(h0, V, b, alpha, kind)
    return _Res1Stack.apply(h0, V, b, alpha, kind, workspace)
