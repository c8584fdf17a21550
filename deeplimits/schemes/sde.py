"""Textbook one-step schemes of ``dX = f(t, X) dt + g(t, X) dW`` (Kloeden & Platen, Numerical
Solution of Stochastic Differential Equations, 1992, §10.2, §10.3, §11.1), each declaring its
strong order and error expansion for the noise it is told (docs/mathematics.md, "Error
expansions and the verdict"): a fluctuation (a central limit theorem for the scheme's error)
leads, the next order follows.
"""

from __future__ import annotations

from typing import Callable

import torch

from ..orders import StrongOrder, Term
from .base import Scheme, noise_kind
from ..errors import ParameterError

__all__ = ["EulerMaruyama", "Milstein", "Heun", "derivatives_along"]


def derivatives_along(diffusion: Callable, t, h, g=None):
    """``(L^j g)(h)`` for every channel ``j``, ``L^j = sum_i g_ij d/dx_i``: the derivative of
    ``diffusion(t, .)`` along its own columns, by forward-mode automatic differentiation, shape
    ``(m, batch, d, m)`` (``[j, b, :, k]`` is ``L^j g^k`` at ``h[b]``)."""
    g = diffusion(t, h) if g is None else g

    def along(v):
        return torch.func.jvp(lambda x: diffusion(t, x), (h,), (v,))[1]

    return torch.func.vmap(along)(g.movedim(-1, 0))


def _order(rate: float, note: str) -> StrongOrder:
    """A scheme's declared expansion ``a L^-r + b L^-(r+1/2) + c L^-(r+1)``: at order 1/2 the
    leading error is Kurtz & Protter's martingale (a ``fluctuation`` against a finer grid of the
    scheme itself); at order 1 it mixes a martingale, the drift's ``int (W_s - W_k/L) ds`` and a
    coherent bias (``mixed``), as do the next terms. Three terms: with two, Milstein and Heun on the
    linear SDE are told ``disagrees`` about 4% of the time at 512 draws (docs/schemes.md, the
    calibration table)."""
    return StrongOrder(rate, "f, g smooth with bounded derivatives", note,
                       kind="fluctuation" if rate == 0.5 else "mixed", next_terms=(Term(rate + 0.5), Term(rate + 1.0)))


class _SDEScheme(Scheme):
    """A scheme built from ``drift(t, x) -> (batch, d)`` (``None``: no drift) and
    ``diffusion(t, x) -> (batch, d, m)``; ``noise`` (:data:`~deeplimits.schemes.NOISES`) sets the
    declared order."""

    #: noise -> (rate, note)
    orders: dict = {}

    def __init__(self, drift: Callable | None, diffusion: Callable, *, noise: str = "general",
                 derivative: Callable | None = None):
        for name, f in (("drift", drift), ("derivative", derivative)):
            if f is not None and not callable(f):
                raise ParameterError(name, f"{name} must be a callable {name}(t, x) or None, got {f!r}")
        if not callable(diffusion):
            raise ParameterError("diffusion", f"diffusion must be a callable diffusion(t, x) -> (batch, d, m), got {diffusion!r}")
        self.drift, self.diffusion, self.noise = drift, diffusion, noise_kind(noise)
        self.derivative = derivative
        self.order = _order(*self.orders[self.noise])

    def f(self, t, x):
        return torch.zeros_like(x) if self.drift is None else self.drift(t, x)

    def g_dw(self, t, x, dw):
        return torch.einsum("bdm,bm->bd", self.diffusion(t, x), dw)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(noise={self.noise!r}, order {self.order.expansion_text})"


class EulerMaruyama(_SDEScheme):
    """``x + f dt + g dW``: strong order 1/2 (1 with additive noise)."""

    name = "euler-maruyama"
    """The scheme's name (in reports)."""
    orders = {**dict.fromkeys(("general", "commutative", "diagonal"),
                              (0.5, "Euler–Maruyama: strong order 1/2 (Kurtz & Protter 1991: L^1/2 e_L converges "
                                    "in law to a mixed Gaussian)")),
              "additive": (1.0, "Euler–Maruyama with additive noise: strong order 1")}
    """Noise structure -> ``(strong order, note)``: the order it declares."""

    def step(self, h, increment, t, dt):
        return h + self.f(t, h) * dt + self.g_dw(t, h, increment)


class Milstein(_SDEScheme):
    """Itô Milstein without Lévy area: ``x + f dt + g dW + 1/2 sum_jk (L^j g^k)(dW_j dW_k - delta_jk dt)``
    with ``L^j = sum_i g_ij d/dx_i``: ``derivative(t, x)`` when given (shape ``(m, batch, d, m)``),
    else by forward-mode automatic differentiation (:func:`derivatives_along`): strong order 1 for
    commutative noise, 1/2 for general noise (the Lévy areas it leaves out)."""

    name = "milstein"
    """The scheme's name (in reports)."""
    orders = {"general": (0.5, "Milstein without Lévy area on non-commutative noise: strong order 1/2 (the "
                               "missing Lévy areas)"),
              **dict.fromkeys(("commutative", "diagonal", "additive"),
                              (1.0, "Milstein on commutative noise: strong order 1"))}
    """Noise structure -> ``(strong order, note)``: the order it declares."""

    def step(self, h, increment, t, dt):
        g = self.diffusion(t, h)
        lg = derivatives_along(self.diffusion, t, h, g) if self.derivative is None else self.derivative(t, h)
        eye = torch.eye(increment.shape[-1], dtype=h.dtype, device=h.device)
        m = increment[:, :, None] * increment[:, None, :] - dt * eye  # (batch, j, k)
        corr = 0.5 * torch.einsum("jbdk,bjk->bd", lg, m)
        return h + self.f(t, h) * dt + torch.einsum("bdm,bm->bd", g, increment) + corr


class Heun(_SDEScheme):
    """The Stratonovich Heun scheme: a predictor ``x~ = x + f dt + g dW``, then
    ``x + (f(x) + f(x~)) dt / 2 + (g(x) + g(x~)) dW / 2``: strong order 1 for commutative noise,
    1/2 for general noise."""

    name = "heun"
    """The scheme's name (in reports)."""
    orders = {"general": (0.5, "Heun (Stratonovich) on non-commutative noise: strong order 1/2"),
              **dict.fromkeys(("commutative", "diagonal", "additive"),
                              (1.0, "Heun (Stratonovich) on commutative noise: strong order 1"))}
    """Noise structure -> ``(strong order, note)``: the order it declares."""

    def step(self, h, increment, t, dt):
        f0, gw0 = self.f(t, h), self.g_dw(t, h, increment)
        pred = h + f0 * dt + gw0
        return h + 0.5 * (f0 + self.f(t + dt, pred)) * dt + 0.5 * (gw0 + self.g_dw(t + dt, pred, increment))
