"""The Itô SDE limit of res-1 networks with Brownian (i.i.d. Gaussian) weights, solved with torchsde."""

from __future__ import annotations

import math

import torch
import torchsde
from torchsde._brownian import BaseBrownian

from .. import _validate as V_
from ..errors import ParameterError
from ..paths import BrownianSample, DriverSample, PathSample
from ..networks import ResNet
from .base import Limit, grid as _grid


class GridBrownian(BaseBrownian):
    """A torchsde Brownian motion whose values on the grid ``k / resolution`` are those of a
    :class:`~deeplimits.paths.PathSample` (flattened to ``(draws, prod(shape))``).

    Only grid times are valid, which is all a fixed-step solver with ``dt = 1/resolution``
    on dyadic times ever asks for (dyadic times are exact in binary floating point).
    It holds the whole path, ``(resolution + 1) * draws * prod(shape)`` numbers: use it for
    checks against torchsde; the convergence engine streams the increments instead.
    """

    __slots__ = ("_path", "_n")

    def __init__(self, sample: PathSample, *more: PathSample):
        # several samples (the weights of one block): their entries side by side, in order
        paths = [s.path(sample.resolution) for s in (sample, *more)]
        self._path = torch.cat([p.reshape(p.shape[0], sample.draws, -1) for p in paths], dim=-1)
        self._n = sample.resolution

    def _index(self, t) -> int:
        x = float(t) * self._n
        k = round(x)
        if abs(x - k) > 1e-6 or not 0 <= k <= self._n:
            raise ParameterError("t", f"GridBrownian queried at t={float(t)!r}, off the grid k/{self._n}")
        return k

    def __call__(self, ta, tb=None, return_U=False, return_A=False):
        if return_U or return_A:
            raise ParameterError("method", "GridBrownian has no space-time Levy area; use method='euler'")
        if tb is None:
            return self._path[self._index(ta)]
        return self._path[self._index(tb)] - self._path[self._index(ta)]

    def __repr__(self):
        return f"GridBrownian(resolution={self._n}, shape={tuple(self.shape)})"

    @property
    def dtype(self):
        """The dtype of the path."""
        return self._path.dtype

    @property
    def device(self):
        """The device of the path."""
        return self._path.device

    @property
    def shape(self):
        """The shape of one value of the path, ``(draws, prod(shape))``."""
        return self._path.shape[1:]

    @property
    def levy_area_approximation(self):
        """``"none"``: torchsde's schemes that need Lévy areas are refused."""
        return "none"



class _SDE(torch.nn.Module):
    noise_type = "general"
    sde_type = "ito"

    def __init__(self, block, shape, shapes: dict):
        super().__init__()
        self.block, self.shape, self.shapes = block, shape, shapes  # shape = (draws, inputs, width)
        self.sizes = [math.prod(s) for s in shapes.values()]

    def f(self, t, y):
        return torch.zeros_like(y)

    def g_prod(self, t, y, v):
        """``g(y, dX)``: the residual is linear in the increments ``v`` (the weights side by side)."""
        n, m, d = self.shape
        parts = {name: x.reshape(n, *shape) for (name, shape), x in zip(self.shapes.items(), v.split(self.sizes, -1))}
        return self.block.residual(y.view(n, m, d), **parts).reshape(n, m * d)


class SDELimit(Limit):
    """Itô SDE ``dH_t = d^{-1/2} dB_t sigma(H_t)``, the limit of res-1 with Brownian weights
    at ``beta = 1/2`` (strong rate ``L^{-1/2}``); with ``arch`` a block linear in every weight
    (:class:`~deeplimits.blocks.Block`), ``dH_t = g(H_t, dX_t)``.

    Solved with ``torchsde.sdeint`` (Euler–Maruyama, general noise) on the finest grid
    ``1 / resolution`` of the sample's Brownian path; with increments only no scheme beats
    rate 1/2, so the same scheme on a much finer grid is the reference.
    """

    reference_method = "Euler–Maruyama on the grid 1/{steps} of the same Brownian path"

    def __init__(self, activation=None, *, arch="res-1"):
        self.field = ResNet(arch, activation, beta=0.5)
        """The residual map at ``beta = 1/2`` (a :class:`~deeplimits.networks.ResNet`)."""
        missing = [n for n in self.field.block.weights if n not in self.field.block.linear]
        if missing:
            raise ParameterError("arch", f"arch {self.field.arch!r} must be linear in every weight for an Itô limit, "
                                         f"not in {', '.join(missing)}")
        why = self.field.block.linearity()
        if why is not None:
            raise ParameterError("arch", f"arch {self.field.arch!r} has no Itô limit of this form: {why}")
        self.activation = self.field.activation
        """The activation ``sigma``."""

    def scheme(self) -> ResNet:
        """The Euler–Maruyama scheme as a network: ``step(H, 1, n, V=dX)`` is one EM step
        with the Brownian increment ``dX`` (identical to torchsde's Euler step)."""
        return ResNet(self.field.block, beta=0.5)

    def solve(self, h0: torch.Tensor, V: BrownianSample, depth: int, *, steps: int | None = None) -> torch.Tensor:
        """Solve on ``k / depth`` with ``steps`` Euler–Maruyama steps (default: the sample's
        resolution; a multiple of ``depth`` dividing the resolution)."""
        return self._solve(h0, {"V": V}, depth, steps)

    def _solve(self, h0, weights: dict, depth, steps=None):
        h0 = V_.states("h0", h0)
        n, m, d = h0.shape
        block = self.field.block
        for name in block.weights:
            s = weights.get(name)
            DriverSample.expect(name, s, "brownian")
            shape = block.weight_shape(name, d)
            if s.shape != shape or s.draws != n:
                raise ParameterError(name, f"{name} must be a sample of shape {shape} with {n} draws, got {s.shape} "
                                           f"with {s.draws}")
            if s.dtype != h0.dtype:
                raise ParameterError("h0", f"h0 must have dtype {s.dtype} to match the weights, got {h0.dtype}")
        samples = [weights[name] for name in block.weights]
        res = samples[0].resolution
        depth = V_.divides("depth", depth, res)
        steps = res if steps is None else V_.divides("steps", steps, res)
        if steps % depth:
            raise ParameterError("steps", f"steps must be a multiple of depth = {depth}, got {steps}")
        sde = _SDE(block, (n, m, d), {name: block.weight_shape(name, d) for name in block.weights})
        ts = _grid(depth, h0.dtype, h0.device)
        ys = torchsde.sdeint(sde, h0.reshape(n, m * d), ts, bm=GridBrownian(*samples), method="euler",
                             dt=1.0 / steps)
        return ys.reshape(depth + 1, n, m, d)

    def solve_sample(self, h0, weights, depth):
        return self._solve(h0, dict(weights), depth)

    def reference_step(self, weights, steps):
        scheme = self.scheme()
        return lambda H, parts: scheme.step(H, 1.0, steps, **parts)

