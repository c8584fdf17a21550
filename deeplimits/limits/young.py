"""The Young equation limit of res-1 networks with fractional weights (H > 1/2)."""

from __future__ import annotations


import torch

from .. import _validate as V_
from .._names import DEFAULT_ACTIVATION
from ..activations import activation as _activation
from ..paths import DriverSample, FractionalSample
from ..networks import ModifiedEulerResNet
from .base import Limit


class YoungLimit(Limit):
    """Young equation ``dH_t = d^{-1/2} dB^H_t sigma(H_t)`` (H > 1/2), the limit of res-1 with
    fractional weights at ``beta = H`` (the network's strong rate is ``L^{1-2H}``).

    Solved by the modified Euler scheme (Hu, Liu & Nualart 2016; strong rate ``L^{1/2-2H}``
    for H < 3/4, about ``L^{-1}`` above) on the finest grid of the same fBm path.
    """

    reference_method = "modified Euler scheme on the grid 1/{steps} of the same fBm path"

    def __init__(self, activation=None, hurst: float = 0.75):
        self.hurst = V_.hurst(hurst, above_half=True)
        self.activation = _activation(DEFAULT_ACTIVATION if activation is None else activation)

    def scheme(self, scale: float | None = None) -> ModifiedEulerResNet:
        """The modified Euler scheme as a network; ``step(H, 1, n, V=dX)`` is one step of
        size ``1/n`` with the increment ``dX`` of the scaled fBm path."""
        return ModifiedEulerResNet(self.activation, self.hurst, scale=scale)

    def solve(self, h0, V: FractionalSample, depth: int) -> torch.Tensor:
        DriverSample.expect("V", V, "fractional")
        if abs(V.hurst - self.hurst) > 1e-12:
            raise ValueError(f"V has Hurst index {V.hurst}, the limit expects hurst={self.hurst}")
        h0 = V_.states("h0", h0)
        depth = V_.divides("depth", depth, V.resolution)
        every = V.resolution // depth
        out = [h for k, h in enumerate(self.scheme(V.scale).iterate(h0, V.iter_weights(V.resolution),
                                                                    depth=V.resolution))
               if k % every == 0]
        return torch.stack(out)

    def solve_sample(self, h0, weights, depth):
        return self.solve(h0, weights["V"], depth)

    def reference_step(self, weights, steps):
        scheme = self.scheme(weights["V"].scale)
        return lambda H, parts: scheme.step(H, 1.0, steps, V=parts["V"])

