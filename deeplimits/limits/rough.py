"""The rough differential equation limit of res-1 networks with fractional weights, 1/3 < H < 1/2
(docs/mathematics.md, "Rough weights").

``dH_t = dX_t sigma(H_t)``, ``X = B^H / sqrt(d)`` a matrix of independent fractional Brownian
motions, understood as a rough differential equation (the geometric rough path of the fBm, the
limit of its piecewise-linear approximations; Coutin & Qian 2002). Its reference solution is

* exact for ``d = 1`` and ``sigma`` the identity or ``tanh`` (Doss 1977; Sussmann 1978: in one
  dimension the solution is a function of the driving path, ``H_t = phi(H_0, X_t)`` with
  ``d phi / dx = sigma(phi)``): ``H_0 exp(X_t)`` and ``asinh(sinh(H_0) exp(X_t))``;
* otherwise the corrected (Liu-Tindel) network on the finest grid of the same fBm path, strong
  rate ``N^(1/2-2H)`` (Liu & Tindel, Ann. Appl. Probab. 2019).
"""

from __future__ import annotations

import math

import torch

from .. import _validate as V_
from .._names import DEFAULT_ACTIVATION
from ..activations import activation as _activation
from ..errors import ParameterError
from ..networks import ModifiedEulerResNet
from ..options import ROUGH_HURST
from ..paths import DriverSample, FractionalSample
from .base import Limit

__all__ = ["RoughLimit", "EXACT"]


def _identity(h0, x):
    return h0 * torch.exp(x)


def _tanh(h0, x):
    return torch.asinh(torch.sinh(h0) * torch.exp(x))


#: the activations whose scalar equation ``dH = sigma(H) dx`` has a closed-form flow ``phi(H_0, x)``
EXACT = {"identity": _identity, "tanh": _tanh}


class RoughLimit(Limit):
    """The rough equation ``dH_t = d^{-1/2} dB^H_t sigma(H_t)``, ``1/3 < H < 1/2``, the limit of the
    corrected res-1 network at ``beta = H`` (strong rate ``L^(1/2-2H)``).

    Args:
        activation: ``sigma`` (default ``tanh``).
        hurst: the Hurst index, in (1/3, 1/2).
        width: the width ``d``; with ``d = 1`` and ``sigma`` in :data:`EXACT` the solution is read
            in closed form (:attr:`exact`), otherwise it is the corrected scheme on the finest grid.
    """

    def __init__(self, activation=None, hurst: float = 0.4, width: int | None = None):
        self.hurst = V_.hurst(hurst, spec=ROUGH_HURST)
        """The Hurst index ``H`` of the fBm driver, in (1/3, 1/2)."""
        self.activation = _activation(DEFAULT_ACTIVATION if activation is None else activation)
        """The activation ``sigma``."""
        self.width = None if width is None else V_.integer("width", width)
        """The width the limit is solved at (``None``: any, by the scheme)."""
        flow = EXACT.get(self.activation.name) if self.width == 1 else None
        self.exact = flow
        """The closed-form flow ``phi(H_0, X_t)`` (``d = 1``, identity or tanh), else ``None``."""
        r = 2 * self.hurst - 0.5
        self.refinement = 2 if flow is not None else 1 << math.ceil(math.log2(4 ** (1 / r) - 1e-9))
        """The least ratio of the reference's grid to the deepest depth: ``(N / L)^-(2H-1/2) <= 1/4``, so
        that the reference's own error stays below a third of the deepest depth's (measured: the next
        term makes the ratio of the errors about 1.1 times the ratio of the leading terms); 2 for the
        exact flow."""
        self.refinement_reason = (f"at H = {self.hurst:g} its own error, about (N / L)^-(2H-1/2) of the deepest "
                                  "depth's, must stay below a third of it: coarser, the verdict has no power")
        self.reference_method = ("the exact solution (Doss-Sussmann) at the grid points of the same fBm path"
                                 if flow is not None else
                                 "the corrected (Liu-Tindel) scheme on the grid 1/{steps} of the same fBm path")

    def scheme(self, scale: float | None = None) -> ModifiedEulerResNet:
        """The corrected scheme as a network; ``step(H, 1, n, V=dX)`` is one step of size ``1/n``
        with the increment ``dX`` of the scaled fBm path."""
        return ModifiedEulerResNet(self.activation, self.hurst, scale=scale)

    def solve(self, h0, V: FractionalSample, depth: int) -> torch.Tensor:
        """The limit on ``k / depth`` from the fractional sample ``V``, ``(depth + 1, draws, inputs,
        width)``: the exact flow of the path, or the corrected scheme on its finest grid."""
        DriverSample.expect("V", V, "fractional")
        if abs(V.hurst - self.hurst) > 1e-12:
            raise ParameterError("V", f"V has Hurst index {V.hurst}, the limit expects hurst={self.hurst}")
        h0 = V_.states("h0", h0)
        depth = V_.divides("depth", depth, V.resolution)
        if self.exact is not None and h0.shape[-1] == 1:
            return self.exact(h0.unsqueeze(0), V.path(depth))  # the path (depth + 1, draws, 1, 1) broadcasts
        every = V.resolution // depth
        states = self.scheme(V.scale).iterate(h0, V.iter_weights(V.resolution), depth=V.resolution)
        return torch.stack([h for k, h in enumerate(states) if k % every == 0])

    def solve_sample(self, h0, weights, depth):
        return self.solve(h0, weights["V"], depth)

    def reference_step(self, weights, steps):
        """One step of size ``1 / steps``: of the corrected scheme, or (exact) the flow of the path
        summed so far from the first state it is given (the engine starts it at ``h_0``)."""
        if self.exact is None:
            scheme = self.scheme(weights["V"].scale)
            return lambda H, parts: scheme.step(H, 1.0, steps, V=parts["V"])
        flow, start, path = self.exact, [], []

        def exact(H, parts):
            dx = parts["V"].reshape(H.shape[0], 1, 1)
            if not start:
                start.append(H)
                path.append(torch.zeros_like(H))
            path[0] = path[0] + dx
            return flow(start[0], path[0])

        return exact
