"""Test equations for :func:`~deeplimits.strong_order` (docs/schemes.md), with their exact
solutions where they have one:

* :func:`linear_sde`: the scalar linear Itô SDE ``dX = a X dt + b X dW``,
  ``X_t = x0 exp((a - b^2/2) t + b W_t)`` (Stratonovich: ``dX = a X dt + b X o dW``,
  ``X_t = x0 exp(a t + b W_t)``);
* :func:`regime_noise`: the noise of the ``sde`` regime, ``dH^i = sum_j s sigma(H^j) dB^{ij}``
  (``s = d^-1/2``): ``d^2`` channels, not commutative;
* :func:`linear_young`: the scalar linear Young equation ``dX = b X dB^H``, ``X_t = x0 exp(b B^H_t)``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import torch

__all__ = ["Problem", "linear_sde", "regime_noise", "linear_young"]


@dataclasses.dataclass(frozen=True)
class Problem:
    """An equation ``dX = drift dt + diffusion dW``: ``drift(t, x)`` (or ``None``), ``diffusion(t, x)
    -> (batch, d, m)``, ``derivative(t, x)``: ``L^j g^k`` as ``(m, batch, d, m)`` (or ``None``),
    ``exact(x0, W_t, t)`` (or ``None``), the dimensions ``d`` and ``m`` and the noise structure."""

    drift: Callable | None
    diffusion: Callable
    derivative: Callable | None
    exact: Callable | None
    d: int
    m: int
    noise: str


def linear_sde(a: float = 0.1, b: float = 0.5, *, stratonovich: bool = False) -> Problem:
    """``dX = a X dt + b X dW`` (``o dW`` when ``stratonovich``), scalar, with its exact solution."""
    shift = a if stratonovich else a - b * b / 2
    return Problem(lambda t, x: a * x, lambda t, x: b * x[..., None], lambda t, x: (b * b * x)[None, ..., None],
                   lambda x0, w, t: x0 * torch.exp(shift * t + b * w), 1, 1, "diagonal")


def regime_noise(width: int, activation: Callable = torch.tanh, derivative: Callable | None = None) -> Problem:
    """The ``sde`` regime's equation ``dH^i = sum_j s sigma(H^j) dB^{ij}``, ``s = d^-1/2``, as a
    diffusion on ``d^2`` channels ``(i, j)``; ``derivative`` is ``sigma'`` (default: that of tanh).
    ``L^{(a,b)} g^{(c,e)} = s^2 sigma(H^b) sigma'(H^a) 1{e = a} e_c`` in closed form."""
    d, s = width, width ** -0.5
    dsig = derivative or (lambda x: 1 - torch.tanh(x) ** 2)
    eye = torch.eye(d, dtype=torch.float64)

    def g(t, x):
        return s * (eye.to(x)[None, :, :, None] * activation(x)[:, None, None, :]).reshape(len(x), d, d * d)

    def lg(t, x):  # [(a, b), batch, c, (c', e)] = s^2 sigma(x_b) sigma'(x_a) 1{e = a} 1{c = c'}
        sig, dsg = activation(x), dsig(x)
        coef = s * s * sig[:, None, :] * dsg[:, :, None]  # (batch, a, b)
        out = coef[:, :, :, None, None, None] * eye.to(x)[None, None, None, :, :, None] * \
            eye.to(x)[None, :, None, None, None, :]  # (batch, a, b, c, c', e)
        return out.reshape(len(x), d * d, d, d * d).movedim(1, 0)

    return Problem(None, g, lg, None, d, d * d, "general")


def linear_young(b: float = 1.0) -> Problem:
    """``dX = b X dB^H``, scalar, with its exact solution ``x0 exp(b B^H_t)`` (Young chain rule)."""
    return Problem(None, lambda t, x: b * x[..., None], lambda t, x: (b * b * x)[None, ..., None],
                   lambda x0, w, t: x0 * torch.exp(b * w), 1, 1, "diagonal")
