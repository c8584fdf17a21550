"""The Euler error of ONE trained network against the ODE of its own smoothed weights
(docs/trained-limit.md, "Three cases side by side"; Cohen, Cont, Rossier & Xu, ICML 2021).

A trained ``inside`` network ``h_{k+1} = h_k + delta_{k+1} sigma(W_{k+1} h_k + b_{k+1})`` (or any
network of a block scaled by a trained ``delta``, ``h + delta_{k+1} g(h_k, w_{k+1})``) is the
Euler scheme, with step ``1/L``, of ``dH/dt = L delta(t) g(H, w(t))``. Here that ODE
is built from the network's OWN weights read off their trend (:func:`trend_split`, kernel
``bandwidth``), linearly interpolated between the layers ``t_k = k/L``, and solved with
torchdiffeq (dopri5); :func:`own_ode_error` returns ``max_k ||H(k/L) - h_k||`` on given inputs.

What it measures: how far one network is from the Euler scheme of the ODE of its own smoothed
weights (a self-consistency error at one depth, set largely by the smoothing: with a wide
kernel it measures the roughness the kernel removes, without smoothing only the Euler error of
an ODE through the weights). What it does not: nothing is compared across depths, so its decay
with ``L`` does not show that the trained networks approach ONE limit; a family with a different
smooth function at every depth (no common limit) also makes it fall. The limit of a trained
family is measured by :mod:`deeplimits.studies.trained_limit` against a reference depth."""

from __future__ import annotations

import torch

from .. import _resources as R_
from .. import _validate as V_
from .trend import _bandwidth, _module, _split, trend_bytes

__all__ = ["own_ode_error", "own_ode_error_bytes"]


def own_ode_error_bytes(depth: int, configs: int, inputs: int, width: int, item: int, bandwidth: float = 0.05) -> int:
    """Peak bytes of :func:`own_ode_error` of an ``inside`` network on ``inputs`` inputs,
    from the sizes alone: the hidden states ``(L + 1, C, n, d)`` kept as a list and stacked, the
    ODE's solution at the same times and their difference (four such tensors), and the trends of
    ``W``, ``b`` and ``delta`` (:func:`~deeplimits.diagnostics.trend_bytes`)."""
    states = (depth + 1) * configs * inputs * width
    trends = 0 if depth < 3 else sum(trend_bytes((depth, configs, *s), item, bandwidth)
                                     for s in ((width, width), (width,), ()))
    return item * 4 * states + trends


@torch.no_grad()
def own_ode_error(module, x: torch.Tensor, *, bandwidth: float = 0.05, rtol: float = 1e-7,
                  atol: float = 1e-9) -> torch.Tensor:
    """``E_x max_k ||H(k/L) - h_k||`` per configuration ``(C,)`` of a trained ``inside``
    :class:`~deeplimits.training.ResidualNetwork` (depth >= 3) on the inputs ``x`` ``(n, d_in)``
    (``n >= 1``, finite, the module's dtype and device): ``h_k`` the network's hidden states,
    ``H`` the ODE of the network's own smoothed weights (the module docstring says what this
    measures and what it does not): the trend of ``W``, ``b`` and ``delta`` at ``bandwidth`` in
    (0, 1), the kernel's standard deviation as a share of the depth;
    the solver's tolerances ``rtol > 0``, ``atol >= 0``. Refused (``ResourceError``) before any
    work when the states and the solution (:func:`own_ode_error_bytes`) cannot fit in memory."""
    import torchdiffeq

    _module(module, scaled=True)
    V_.inputs("x", x, module.in_features, module.A)
    bandwidth = _bandwidth(bandwidth)
    rtol = V_.real("rtol", rtol, low=0.0, low_open=True)
    atol = V_.real("atol", atol, low=0.0)
    L = module.depth
    h = module.embed(x)  # (C, n, d)
    R_.require_memory(own_ode_error_bytes(L, module.configs, h.shape[1], module.width, h.element_size(), bandwidth),
                      f"for the own-ODE error of depth={L}, width={module.width}, {module.configs} configurations on "
                      f"{h.shape[1]} inputs", ("x", "module"), device=h.device)
    weights = {k: w for k, w in module.residual_weights().items() if k != "delta"}  # the block's, (L, C, ...)
    delta = module.delta.detach()
    delta = delta.expand(L, -1) if delta.dim() == 1 else delta  # (L, C)
    g = module.block.residual
    states = [h]
    for k in range(L):  # the network itself (float64 copy of its arithmetic)
        h = h + delta[k].view(-1, 1, 1) * g(h, **{n: w[k] for n, w in weights.items()})
        states.append(h)
    states = torch.stack(states)  # (L + 1, C, n, d)
    trends = {n: _split(w, bandwidth)[0] for n, w in weights.items()}
    td, _ = _split(delta, bandwidth)

    def at(t, A):  # layer k acts on [k/L, (k+1)/L): interpolate between layer midpoints
        s = (t * L - 0.5).clamp(0, L - 1)
        k0 = int(s.floor().clamp(max=L - 2).item()) if L > 1 else 0
        w = s - k0
        return A[k0] * (1 - w) + A[min(k0 + 1, L - 1)] * w

    def rhs(t, H):
        return L * at(t, td).view(-1, 1, 1) * g(H, **{n: at(t, w) for n, w in trends.items()})

    ts = torch.arange(L + 1, dtype=h.dtype, device=h.device) / L
    H = torchdiffeq.odeint(rhs, states[0], ts, method="dopri5", rtol=rtol, atol=atol)
    return (H - states).norm(dim=-1).amax(0).mean(-1)  # max over k, mean over inputs: (C,)
