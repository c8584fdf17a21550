"""The modified Euler scheme of a Young equation ``dX = f(t, X) dt + g(t, X) dB^H``, ``H > 1/2``
(Hu, Liu & Nualart, Ann. Appl. Probab. 2016)."""

from __future__ import annotations

from typing import Callable

import torch

from .. import _validate as V_
from ..orders import StrongOrder
from ..regimes.resnet import modified_euler_remainder, modified_euler_terms
from .base import Scheme
from .sde import derivatives_along
from ..errors import ParameterError

__all__ = ["ModifiedEuler"]


class ModifiedEuler(Scheme):
    """``x + f dt + g dB + 1/2 sum_j (L^j g^j)(x) dt^(2H)``, ``L^j = sum_i g_ij d/dx_i``: the Euler
    step plus the mean of its second-order term (the components of ``B^H`` independent, of unit
    variance, so ``E (dB_j)^2 = dt^(2H)``); ``L^j g`` is ``derivative(t, x)`` when given, else by
    automatic differentiation (:func:`~deeplimits.schemes.sde.derivatives_along`). Strong order ``2H - 1/2`` for ``H < 3/4``,
    ``L^-1 sqrt(log L)`` at ``3/4``, 1 above (the expansion of docs/mathematics.md)."""

    name = "modified-euler"
    """The scheme's name (in reports)."""

    def __init__(self, diffusion: Callable, hurst: float, drift: Callable | None = None,
                 derivative: Callable | None = None):
        if not callable(diffusion):
            raise ParameterError("diffusion", f"diffusion must be a callable diffusion(t, x) -> (batch, d, m), got {diffusion!r}")
        for name, f in (("drift", drift), ("derivative", derivative)):
            if f is not None and not callable(f):
                raise ParameterError(name, f"{name} must be a callable {name}(t, x) or None, got {f!r}")
        self.hurst = V_.hurst(hurst, above_half=True)
        """The Hurst index of the fractional Brownian driver, in (1/2, 1)."""
        self.diffusion, self.drift, self.derivative = diffusion, drift, derivative
        self.order = StrongOrder.of(modified_euler_terms(self.hurst), "H in (1/2, 1)",
                                    "modified Euler scheme (Hu, Liu & Nualart 2016)",
                                    modified_euler_remainder(self.hurst))
        """Its declared order: the modified Euler expansion of docs/mathematics.md."""

    def step(self, h, increment, t, dt):
        g = self.diffusion(t, h)
        lg = derivatives_along(self.diffusion, t, h, g) if self.derivative is None else self.derivative(t, h)
        mean = 0.5 * torch.diagonal(lg, dim1=0, dim2=-1).sum(-1) * dt ** (2 * self.hurst)  # sum_j L^j g^j
        f = 0.0 if self.drift is None else self.drift(t, h) * dt
        return h + f + torch.einsum("bdm,bm->bd", g, increment) + mean
