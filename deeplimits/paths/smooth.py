"""Smooth weights: a stationary RBF Gaussian process, evaluable at any time."""

from __future__ import annotations

import functools
import math
from typing import Iterator

import numpy as np
import torch

from .. import _random
from .. import _validate as V
from ..errors import ParameterError
from ..options import DRIVER_OPTIONS, LENGTH_SCALE
from .base import _BLOCK_ELEMENTS, Driver, DriverSample
from .registry import register_driver


def rbf_kernel(s, t, length_scale: float | None = None):
    """``exp(-(s - t)^2 / (2 l^2))`` (``l`` by default :data:`~deeplimits.options.LENGTH_SCALE`'s)."""
    length_scale = LENGTH_SCALE.default if length_scale is None else length_scale
    return torch.exp(-((torch.as_tensor(s) - torch.as_tensor(t)) ** 2) / (2 * length_scale ** 2))


@functools.lru_cache(maxsize=32)
def _rbf_quadrature(length_scale: float, tol: float = 1e-12) -> tuple[torch.Tensor, torch.Tensor, float]:
    """Frequencies and weights with ``sum_m w_m cos(omega_m tau) = exp(-tau^2 / 2l^2)`` for
    ``|tau| <= 1.5`` (times in [-0.25, 1.25]: the depth interval with a solver's margin).

    Trapezoid rule on the Gaussian spectral density of the RBF kernel (Bochner) with spacing
    ``2 pi / (1.5 + 9 l)``: by Poisson summation its error is the kernel's aliases at distance
    ``>= 9 l`` plus the density's tail beyond ``9 / l``, both below ``1e-17``. The process
    ``sum_m sqrt(w_m) (a_m cos(omega_m t) + b_m sin(omega_m t))`` with i.i.d. standard normal
    ``a, b`` is exactly Gaussian and stationary, evaluable at any t, with a covariance that
    matches the kernel to ``tol`` (the returned error, measured).
    """
    span = 1.5
    delta = 2 * math.pi / (span + 9 * length_scale)
    omega = np.arange(int(math.ceil(9 / (length_scale * delta))) + 1) * delta
    density = length_scale / math.sqrt(2 * math.pi) * np.exp(-0.5 * (omega * length_scale) ** 2)
    w = delta * density * np.where(omega > 0, 2.0, 1.0)  # +-omega folded into one node
    tau = np.linspace(0.0, span, 6001)
    err = float(np.abs(np.cos(np.outer(tau, omega)) @ w - np.exp(-tau ** 2 / (2 * length_scale ** 2))).max())
    if err >= tol:  # pragma: no cover - the bound above guarantees it for admitted length scales
        raise RuntimeError(f"spectral quadrature of the RBF kernel failed for length_scale={length_scale}")
    return torch.from_numpy(omega), torch.from_numpy(np.sqrt(w)), err


# ----------------------------------------------------------------------------------------
# Samples
# ----------------------------------------------------------------------------------------

class SmoothSample(DriverSample):
    """Stationary RBF Gaussian process weights ``V(t)``, evaluable at any t in [0, 1].

    ``weights(L)`` reads ``V(k / L)``, ``k = 1..L`` (right points, docs/mathematics.md, "Drivers").
    """

    regularity = 1.0
    kind = "smooth"

    def __init__(self, shape, draws, dtype, scale, length_scale: float, coefficients: torch.Tensor):
        super().__init__(shape, draws, dtype, scale, coefficients.device)
        self.length_scale = length_scale
        """The RBF kernel's length scale."""
        omega, _, self.kernel_error = _rbf_quadrature(length_scale)
        self._omega = omega.to(device=self.device, dtype=dtype)
        self._coef = coefficients  # (2M, draws * prod(shape)), already times sqrt(w) * scale

    def at(self, t) -> torch.Tensor:
        """``V(t)`` for a scalar ``t`` (shape ``(draws, *shape)``) or a 1-d tensor of times
        (shape ``(len(t), draws, *shape)``)."""
        tt = torch.as_tensor(t, dtype=self.dtype, device=self.device)
        if not bool(((tt >= -0.25) & (tt <= 1.25)).all()):  # NaN fails too
            raise ParameterError("t", f"t must lie in [-0.25, 1.25] (the depth interval [0, 1] with the margin an "
                                      f"adaptive solver may step into), got {t!r}")
        scalar = tt.dim() == 0
        ph = tt.reshape(-1, 1) * self._omega
        out = torch.cat([torch.cos(ph), torch.sin(ph)], dim=1) @ self._coef
        out = out.reshape(-1, self.draws, *self.shape)
        return out[0] if scalar else out

    def iter_weights(self, depth: int) -> Iterator[torch.Tensor]:
        depth = V.integer("depth", depth)
        c = self._chunk_layers(1)
        for k0 in range(0, depth, c):
            k = torch.arange(k0 + 1, min(depth, k0 + c) + 1, dtype=torch.float64)  # exact times, then moved
            yield self.at((k / depth).to(device=self.device, dtype=self.dtype))


# ----------------------------------------------------------------------------------------
# Drivers
# ----------------------------------------------------------------------------------------

@register_driver
class SmoothDriver(Driver):
    """Stationary Gaussian process weights with RBF kernel of length scale ``length_scale``
    (declared by :data:`deeplimits.options.LENGTH_SCALE`: its range, and its default when ``None``)."""

    name = "smooth"
    options = DRIVER_OPTIONS["smooth"]
    regularity = 1.0
    nested = False
    growth_law = True

    def __init__(self, length_scale: float | None = None):
        self.length_scale = V.option(LENGTH_SCALE, length_scale)
        """The RBF kernel's length scale."""

    def sample_bytes(self, shape, draws: int = 1, resolution: int | None = None,
                     dtype: torch.dtype = torch.float64, device=None) -> int:
        """The spectral coefficients (``2M`` per entry, drawn then scaled: ``4M`` numbers) and a
        streamed chunk of values (:meth:`SmoothSample.iter_weights`)."""
        entries = draws * math.prod(shape)
        m = _rbf_quadrature(self.length_scale)[0].numel()
        return dtype.itemsize * (4 * m * entries + 2 * max(_BLOCK_ELEMENTS, entries))

    def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
        omega, sqrt_w, _ = _rbf_quadrature(self.length_scale)
        m = omega.numel()
        z = _random.randn((2 * m, draws * math.prod(shape)), generator, dtype, device)
        coef = z * (torch.cat([sqrt_w, sqrt_w]).to(device=device, dtype=dtype) * scale).unsqueeze(1)
        return SmoothSample(shape, draws, dtype, scale, self.length_scale, coef)

    def modes(self) -> int:
        """``2M``: the spectral coefficients per weight entry (:func:`_rbf_quadrature`)."""
        return 2 * len(_rbf_quadrature(self.length_scale)[0])

    def held_bytes(self, entries, layers: int, item: int) -> int:
        """The spectral coefficients and one depth's ``layers`` values at a time."""
        return item * sum(entries) * (self.modes() + layers)

    def sweep_bytes(self, entries: int, reference: int, depths: int, item: int, device=None) -> int:
        """The spectral coefficients (``2M`` per entry) and values at a chunk of times."""
        return item * (entries * self.modes() + 2 * max(_BLOCK_ELEMENTS, entries))
