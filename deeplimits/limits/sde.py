"""The Itô SDE limit of res-1 networks with Brownian (i.i.d. Gaussian) weights, solved with torchsde."""

from __future__ import annotations


import torch
import torchsde
from torchsde._brownian import BaseBrownian

from .. import _validate as V_
from .._names import DEFAULT_ACTIVATION
from ..activations import activation as _activation
from ..paths import BrownianSample, DriverSample, PathSample
from ..networks import ResNet
from .base import Limit, grid as _grid


class GridBrownian(BaseBrownian):
    """A torchsde Brownian motion whose values on the grid ``k / resolution`` are those of a
    :class:`~deeplimits.drivers.PathSample` (flattened to ``(draws, prod(shape))``).

    Only grid times are valid, which is all a fixed-step solver with ``dt = 1/resolution``
    on dyadic times ever asks for (dyadic times are exact in binary floating point).
    It holds the whole path, ``(resolution + 1) * draws * prod(shape)`` numbers: use it for
    checks against torchsde; the convergence engine streams the increments instead.
    """

    __slots__ = ("_path", "_n")

    def __init__(self, sample: PathSample):
        path = sample.path(sample.resolution)
        self._path = path.reshape(path.shape[0], sample.draws, -1)
        self._n = sample.resolution

    def _index(self, t) -> int:
        x = float(t) * self._n
        k = round(x)
        if abs(x - k) > 1e-6 or not 0 <= k <= self._n:
            raise ValueError(f"GridBrownian queried at t={float(t)!r}, off the grid k/{self._n}")
        return k

    def __call__(self, ta, tb=None, return_U=False, return_A=False):
        if return_U or return_A:
            raise ValueError("GridBrownian has no space-time Levy area; use method='euler'")
        if tb is None:
            return self._path[self._index(ta)]
        return self._path[self._index(tb)] - self._path[self._index(ta)]

    def __repr__(self):
        return f"GridBrownian(resolution={self._n}, shape={tuple(self.shape)})"

    @property
    def dtype(self):
        return self._path.dtype

    @property
    def device(self):
        return self._path.device

    @property
    def shape(self):
        return self._path.shape[1:]

    @property
    def levy_area_approximation(self):
        return "none"



class _SDE(torch.nn.Module):
    noise_type = "general"
    sde_type = "ito"

    def __init__(self, sigma, shape):
        super().__init__()
        self.sigma, self.shape = sigma, shape  # shape = (draws, inputs, width)

    def f(self, t, y):
        return torch.zeros_like(y)

    def g_prod(self, t, y, v):
        n, m, d = self.shape
        return (self.sigma(y.view(n, m, d)) @ v.view(n, d, d).transpose(-1, -2)).reshape(n, m * d)


class SDELimit(Limit):
    """Itô SDE ``dH_t = d^{-1/2} dB_t sigma(H_t)``, the limit of res-1 with Brownian weights
    at ``beta = 1/2`` (strong rate ``L^{-1/2}``).

    Solved with ``torchsde.sdeint`` (Euler–Maruyama, general noise) on the finest grid
    ``1 / resolution`` of the sample's Brownian path; with increments only no scheme beats
    rate 1/2, so the same scheme on a much finer grid is the reference.
    """

    reference_method = "Euler–Maruyama on the grid 1/{steps} of the same Brownian path"

    def __init__(self, activation=None):
        self.activation = _activation(DEFAULT_ACTIVATION if activation is None else activation)

    def scheme(self) -> ResNet:
        """The Euler–Maruyama scheme as a network: ``step(H, 1, n, V=dX)`` is one EM step
        with the Brownian increment ``dX`` (identical to torchsde's Euler step)."""
        return ResNet("res-1", self.activation, beta=0.5)

    def solve(self, h0: torch.Tensor, V: BrownianSample, depth: int, *, steps: int | None = None) -> torch.Tensor:
        """Solve on ``k / depth`` with ``steps`` Euler–Maruyama steps (default: the sample's
        resolution; a multiple of ``depth`` dividing the resolution)."""
        DriverSample.expect("V", V, "brownian")
        h0 = V_.states("h0", h0)
        depth = V_.divides("depth", depth, V.resolution)
        n, m, d = h0.shape
        if V.shape != (d, d) or V.draws != n:
            raise ValueError(f"V must be a sample of shape ({d}, {d}) with {n} draws, got {V.shape} with {V.draws}")
        if V.dtype != h0.dtype:
            raise ValueError(f"h0 must have dtype {V.dtype} to match the weights, got {h0.dtype}")
        steps = V.resolution if steps is None else V_.divides("steps", steps, V.resolution)
        if steps % depth:
            raise ValueError(f"steps must be a multiple of depth = {depth}, got {steps}")
        sde = _SDE(self.activation, (n, m, d))
        ts = _grid(depth, h0.dtype, h0.device)
        ys = torchsde.sdeint(sde, h0.reshape(n, m * d), ts, bm=GridBrownian(V), method="euler",
                             dt=1.0 / steps)
        return ys.reshape(depth + 1, n, m, d)

    def solve_sample(self, h0, weights, depth):
        return self.solve(h0, weights["V"], depth)

    def reference_step(self, weights, steps):
        scheme = self.scheme()
        return lambda H, parts: scheme.step(H, 1.0, steps, V=parts["V"])

