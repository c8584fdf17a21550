"""The finite networks of the shapes study, trained as the protocol defines them (docs/shapes.md;
Chaintron, Chizat & Maass 2026), many at once and streamed over the layers.

A batch holds ``B`` networks of one depth ``L``, each its own hidden width ``M_b`` and embedding
size ``D_b`` (a slot: a cell of the grid and a seed), zero-padded to the largest: ``U``, ``V`` are
``(B, L, D, M)`` tensors whose padded rows and columns are zero and stay zero under training (a
zero column of ``U`` gives a zero pre-activation, ``sigma(0) = 0``, hence zero gradients). Per slot

* ``h_0 = W_e x``, ``p_l = U_l^T h_l / D``, ``h_{l+1} = h_l + c V_l sigma(p_l)``, ``f = W_u^T h_L / D``
  with ``c = alpha/(L M)`` (residual ``'LM'``; ``'sqrtL'``, built to say no: ``alpha`` replaced by
  ``alpha sqrt(L)`` here and in the rate below, the branch scale ``alpha/(sqrt(L) M)``);
* the loss ``|f - y|^2 / 2``; back-signals ``B = D dloss/dh``: ``B_L = W_u (f - y)``,
  ``q_l = sigma'(p_l) * V_l^T B_{l+1} / D``, ``B_l = B_{l+1} + c U_l q_l``;
* one step of full-batch gradient descent with the per-matrix multipliers ``D`` (their ``eta_u =
  eta_v = D``): ``U_l -= (lr/alpha) h_l q_l^T``, ``V_l -= (lr/alpha) B_{l+1} sigma(p_l)^T``, done
  layer by layer during the backward pass, in place (the step's memory is the parameters' and the
  ``(L + 1) x D`` states).

The network is recorded before each step (``K`` records: after ``0 .. K - 1`` steps): its outputs and,
against a target path ``T_l`` (the limit's, or a reference network's), the hidden-state error
``max_l (1/D) sum_d |h_{l,d} - T_{l,d}|``.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import torch

from ...errors import ParameterError

__all__ = ["ACTIVATIONS", "draw_weights", "train_shapes", "exact_targets", "reference_targets"]


def _dtanh(p: torch.Tensor) -> torch.Tensor:
    return 1.0 - torch.tanh(p) ** 2


ACTIVATIONS: dict[str, tuple[Callable | None, Callable | None]] = {"identity": (None, None),
                                                                   "tanh": (torch.tanh, _dtanh)}
"""``name -> (sigma, sigma')``; ``None``: the identity (and its derivative 1), applied as no operation."""


def draw_weights(depth: int, widths: Sequence[int], dims: Sequence[int], seeds: Sequence[int],
                 dtype: torch.dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    """``U``, ``V`` ``(B, depth, max D, max M)``: slot ``b``'s first ``dims[b]`` rows and ``widths[b]``
    columns N(0, ``dims[b]``), its ``(depth, D, M)`` block of ``U`` drawn by
    :func:`deeplimits._random.normal` from ``mix_seed(seeds[b], 0)`` and of ``V`` from
    ``mix_seed(seeds[b], 1)`` (the same numbers whatever the batch), the padding zero. The numbers
    are drawn on the CPU whatever ``device`` (copied there), so a run is the same on every device;
    on the CPU an unpadded slot is drawn in place (no copy: the memory is the parameters')."""
    from ..._random import _on_cpu, mix_seed, normal

    B, Dx, Mx = len(widths), max(dims), max(widths)
    U = torch.empty(B, depth, Dx, Mx, dtype=dtype, device=device)
    V = torch.empty_like(U)
    for b, (M, D, seed) in enumerate(zip(widths, dims, seeds)):
        for i, W in enumerate((U, V)):
            if (M, D) == (Mx, Dx) and _on_cpu(device):
                normal((depth, D, M), mix_seed(seed, i), dtype, out=W[b])
            else:
                W[b].zero_()
                W[b, :, :D, :M] = normal((depth, D, M), mix_seed(seed, i), dtype)
            W[b].mul_(math.sqrt(D))
    return U, V


def _forward(U, V, hs, ps, scale, inv_dims, act):
    """One forward pass: ``hs[0]`` given, ``hs[1:]`` and the pre-activations ``ps`` written in place."""
    for layer in range(U.shape[1]):
        p = ps[layer]
        torch.bmm(hs[layer].unsqueeze(1), U[:, layer], out=p.unsqueeze(1))
        p.mul_(inv_dims)
        a = (p if act is None else act(p)) * scale
        # V a as a^T V^T: the transposed product runs about twice as fast on the CPU
        torch.baddbmm(hs[layer].unsqueeze(1), a.unsqueeze(1), V[:, layer].transpose(1, 2),
                      out=hs[layer + 1].unsqueeze(1))


def _backward_step(U, V, hs, ps, back, scale, inv_dims, act, dact, rate):
    """The backward pass from ``back`` (``B_L``, overwritten) with the gradient step of every layer, in place."""
    other = torch.empty_like(back)
    for layer in reversed(range(U.shape[1])):
        p, u, v = ps[layer], U[:, layer], V[:, layer]
        q = torch.bmm(back.unsqueeze(1), v).mul_(inv_dims.unsqueeze(1))
        if dact is not None:
            q.mul_(dact(p).unsqueeze(1))
        torch.baddbmm(back.unsqueeze(1), q * scale.unsqueeze(1), u.transpose(1, 2), out=other.unsqueeze(1))
        u.addcmul_(hs[layer].unsqueeze(2), q, value=-rate)  # the rank-one steps, in place
        v.addcmul_(back.unsqueeze(2), (p if act is None else act(p)).unsqueeze(1), value=-rate)
        back, other = other, back


def _slots(widths, dims, embeddings, seeds) -> tuple[list[int], list[int]]:
    widths, dims = [int(m) for m in widths], [int(d) for d in dims]
    if not widths or len(widths) != len(dims) or len(seeds) != len(widths):
        raise ParameterError("widths", f"widths, dims and seeds must be one per slot, got {len(widths)}, "
                                       f"{len(dims)} and {len(seeds)}")
    if embeddings.shape[:2] != (len(widths), max(dims)):
        raise ParameterError("embeddings", f"embeddings must be (slots, max dims, n) = ({len(widths)}, {max(dims)}, "
                                           f"n), got {tuple(embeddings.shape)}")
    return widths, dims


def train_shapes(depth: int, widths: Sequence[int], dims: Sequence[int], embeddings: torch.Tensor,
                 seeds: Sequence[int], *, protocol, activation: str = "identity",
                 residual: str = "LM", targets: Callable | None = None, keep_states: bool = False) -> dict:
    """Train the batch (module docstring) for ``protocol.steps - 1`` steps, recording it before each.

    ``embeddings`` ``(B, max D, d_in + d_out)``: slot ``b``'s ``W_e`` then ``W_u`` in its first
    ``dims[b]`` rows (zero below), on the device and in the dtype the networks take; ``seeds``:
    one per slot (:func:`draw_weights`); ``targets(k)`` (or ``None``): the target paths at step ``k``,
    ``(L + 1, B, max D)``, zero beyond each slot's ``D``. Returns ``outputs`` ``(K, B, d_out)``,
    ``hidden`` ``(K, B)`` (the hidden-state error; NaN without targets, or where the slot blew up)
    and, with ``keep_states``, ``states`` ``(K, L + 1, B, max D)``."""
    widths, dims = _slots(widths, dims, embeddings, seeds)
    act, dact = ACTIVATIONS[activation]
    dtype, device, K = embeddings.dtype, embeddings.device, protocol.steps
    din = len(protocol.x)
    x = torch.tensor(protocol.x, dtype=dtype, device=device)
    y = torch.tensor(protocol.y, dtype=dtype, device=device)
    U, V = draw_weights(depth, widths, dims, seeds, dtype, device)
    inv_dims = 1.0 / torch.tensor(dims, dtype=dtype, device=device).unsqueeze(1)
    alpha = protocol.alpha * (math.sqrt(depth) if residual == "sqrtL" else 1.0)
    scale = (alpha / (depth * torch.tensor(widths, dtype=dtype, device=device)))[:, None]
    rate = protocol.lr / alpha
    w_e, w_u = embeddings[..., :din], embeddings[..., din:]
    hs = torch.empty(depth + 1, *embeddings.shape[:2], dtype=dtype, device=device)
    ps = torch.empty(depth, len(widths), max(widths), dtype=dtype, device=device)
    outputs = torch.empty(K, len(widths), len(protocol.y), dtype=dtype, device=device)
    hidden = torch.full((K, len(widths)), math.nan, dtype=dtype, device=device)
    states = torch.empty(K, *hs.shape, dtype=dtype, device=device) if keep_states else None
    for k in range(K):
        torch.matmul(w_e, x, out=hs[0])
        _forward(U, V, hs, ps, scale, inv_dims, act)
        outputs[k] = torch.einsum("bd,bdo->bo", hs[-1], w_u) * inv_dims
        if targets is not None:
            hidden[k] = (hs - targets(k)).abs_().sum(-1).mul_(inv_dims.squeeze(1)).amax(0)
        if keep_states:
            states[k] = hs
        if k < K - 1:
            back = torch.bmm(w_u, (outputs[k] - y).unsqueeze(2)).squeeze(2)
            _backward_step(U, V, hs, ps, back, scale, inv_dims, act, dact, rate)
    out = {"outputs": outputs, "hidden": hidden}
    if keep_states:
        out["states"] = states
    return out


def exact_targets(limit, depth: int, embeddings: torch.Tensor) -> Callable:
    """``k -> (L + 1, B, max D)``: the exact limit's paths (a
    :class:`~deeplimits.studies.shapes.limit.LinearLimit`) at ``s = l/L`` for the embedding rows
    ``embeddings`` ``(B, max D, n)`` (zero rows give zero targets), where they live."""
    coef = torch.as_tensor(limit.coefficients([l / depth for l in range(depth + 1)]), dtype=embeddings.dtype,
                           device=embeddings.device)

    def at(k: int) -> torch.Tensor:
        return torch.einsum("ln,bdn->lbd", coef[k], embeddings)

    return at


def reference_targets(states: torch.Tensor, slot_run: Sequence[int], dims: Sequence[int], depth: int) -> Callable:
    """``k -> (L + 1, B, max D)``: a reference network's states ``(K, R + 1, runs, D_ref)`` read at
    ``s = l/L`` (linear between its layers, as the authors read their limit's), slot ``b`` taking run
    ``slot_run[b]``'s first ``dims[b]`` coordinates (zero beyond)."""
    R, Dx = states.shape[1] - 1, max(dims)
    pos = torch.arange(depth + 1, dtype=torch.float64) * R / depth
    lo = pos.floor().long().clamp_(max=R - 1)
    w = (pos - lo).to(states.dtype).to(states.device)[:, None, None]
    runs = torch.as_tensor(list(slot_run), device=states.device)
    mask = torch.arange(Dx, device=states.device)[None, :] < torch.as_tensor(list(dims), device=states.device)[:, None]

    def at(k: int) -> torch.Tensor:
        s = states[k][:, runs, :Dx]
        t = (1 - w) * s[lo.to(states.device)] + w * s[(lo + 1).to(states.device)]
        return t * mask.to(t.dtype)

    return at
