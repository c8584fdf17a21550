"""Fractional Brownian weights: exact fGn by circulant embedding (Davies & Harte 1987)."""

from __future__ import annotations

import functools
import math
from typing import Callable, Iterator, Sequence

import numpy as np
import torch

from .. import _random
from .. import _resources as R
from .. import _validate as V
from ..errors import ParameterError
from ..options import DRIVER_OPTIONS
from .base import _BLOCK_ELEMENTS, Driver, PathSample, _pow2_floor, pair_sums
from .registry import register_driver


def fgn_autocovariance(n: int, hurst: float) -> np.ndarray:
    """``gamma(0..n-1)`` of unit-variance fGn: ``(|k+1|^2H - 2|k|^2H + |k-1|^2H) / 2``."""
    k = np.arange(n, dtype=np.float64)
    h2 = 2.0 * hurst
    return 0.5 * (np.abs(k + 1) ** h2 - 2.0 * np.abs(k) ** h2 + np.abs(k - 1) ** h2)


@functools.lru_cache(maxsize=64)
def _circulant_sqrt_eigenvalues(n: int, hurst: float) -> torch.Tensor:
    """``sqrt(lambda / (2n))`` for the size-2n circulant embedding of gamma(0..n), float64.

    The eigenvalues are non-negative for every H in (0, 1) (Craigmile 2003); the clamp only
    removes rounding noise of order 1e-16.
    """
    g = fgn_autocovariance(n + 1, hurst)
    row = np.concatenate([g, g[-2:0:-1]])  # gamma(0..n), gamma(n-1..1): length 2n
    lam = np.fft.fft(row).real
    if lam.min() < -1e-8 * lam.max():  # pragma: no cover - a theorem says this cannot happen
        raise RuntimeError(f"circulant embedding failed for n={n}, hurst={hurst}")
    return torch.from_numpy(np.sqrt(np.clip(lam, 0.0, None) / (2 * n)))


def fgn(n: int, hurst: float, size: Sequence[int] | int = (), *,
        generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64, device=None) -> torch.Tensor:
    """Exact unit-variance fractional Gaussian noise.

    Circulant embedding (Davies & Harte 1987; Dietrich & Newsam 1997): with ``lambda`` the
    eigenvalues of the size-``2n`` circulant built from ``gamma(0..n)``, the complex FFT of
    ``sqrt(lambda / 2n)`` times complex white noise has real and imaginary parts that are two
    independent fGn paths, so one FFT yields two paths (flattened path ``i`` and path
    ``i + ceil(P / 2)`` of the ``P`` requested share one FFT). Exact for every H in (0, 1).

    Args:
        n: number of points of each path (``>= 1``).
        hurst: Hurst index H in (0, 1); H = 1/2 gives i.i.d. N(0, 1).
        size: batch shape; the result has shape ``(*size, n)``.
        generator: a seeded :class:`torch.Generator` for reproducibility.
        dtype: ``torch.float32`` or ``torch.float64``; eigenvalues are always float64.
        device: where the noise is drawn and the FFT computed (default the CPU; see
            :mod:`deeplimits._random` for the numbers on another device).

    Returns:
        Tensor of shape ``(*size, n)`` with ``Cov(X_i, X_j) = gamma(|i - j|)``.

    Raises:
        ResourceError: before any allocation, when the peak memory (the ``n`` numbers of each
            path, ``120 n`` bytes of eigenvalues and the noise of a 2 MiB sub-batch of pairs on the
            CPU in float64, ``7 n`` numbers per path elsewhere: :func:`~deeplimits._resources.fgn_bytes`)
            exceeds the machine's.
    """
    n = V.integer("n", n)
    hurst = V.hurst(hurst)
    size = V.size(size)
    dtype = V.dtype(dtype)
    V.generator(generator)
    device = V.device("device", device, dtype)
    paths = math.prod(size)
    item = torch.empty((), dtype=dtype).element_size()
    R.require_memory(R.fgn_bytes(n, paths, item, sub_batched=_sub_batched(dtype, device)), f"for fgn of {paths} paths of n={n} points", ("n", "size"),
                     device=device)
    out = _fgn_fill(_random.empty((paths, n), dtype, device), hurst, _random.seed_from(generator))
    return out.reshape(*size, n)


@functools.lru_cache(maxsize=16)
def _eigenvalues_on(n: int, hurst: float, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """:func:`_circulant_sqrt_eigenvalues` on ``device`` in ``dtype``, copied there once per
    ``(n, hurst, device, dtype)``, not once per sample."""
    return _circulant_sqrt_eigenvalues(n, hurst).to(device=device, dtype=dtype)


def _sub_batched(dtype: torch.dtype, device) -> bool:
    """Is the fGn drawn a sub-batch of pairs at a time (the CPU in float64: by sub-streams)?"""
    return _random._on_cpu(device) and dtype == torch.float64


def _fgn_fill(out: torch.Tensor, hurst: float, seed: int, *, time_major: bool = False) -> torch.Tensor:
    """``out`` ``(paths, n)`` (or ``(n, paths)``, ``time_major``) <- the fGn :func:`fgn` draws from
    ``seed``: the same normals (:func:`~deeplimits._random.normal_rows`, drawn a sub-batch of pairs at
    a time on the CPU in float64), multiplied in place and transformed into one reused buffer; the
    real parts are paths ``0 .. pairs - 1``, the imaginary parts the next ones."""
    n, paths = out.shape if time_major else out.shape[::-1]
    dtype, device = out.dtype, out.device
    sqrt_lam = _eigenvalues_on(n, float(hurst), device, dtype)
    pairs = (paths + 1) // 2
    shape, bp = (pairs, 2 * n, 2), R.fgn_batch_pairs(n, pairs, _sub_batched(dtype, device))
    noise = _random.empty((bp, 2 * n, 2), dtype, device)
    y = torch.view_as_complex(_random.empty((bp, 2 * n, 2), dtype, device))
    for p0 in range(0, pairs, bp):
        b = min(bp, pairs - p0)
        z = _random.normal_rows(shape, seed, dtype, (p0, p0 + b), device, out=noise[:b])
        z = torch.view_as_complex(z).mul_(sqrt_lam)  # complex white noise, independent N(0, 1) parts
        f = torch.fft.fft(z, dim=-1, out=y[:b])[:, :n]
        imag = min(b, paths - pairs - p0)  # the imaginary parts that are paths
        if time_major:
            out[:, p0:p0 + b].copy_(f.real.T)
            if imag > 0:
                out[:, pairs + p0:pairs + p0 + imag].copy_(f.imag[:imag].T)
        else:
            out[p0:p0 + b].copy_(f.real)
            if imag > 0:
                out[pairs + p0:pairs + p0 + imag].copy_(f.imag[:imag])
    return out


# ----------------------------------------------------------------------------------------
# RBF Gaussian process by spectral quadrature
class FractionalSample(PathSample):
    """Scaled fractional Brownian motion ``scale * B^H`` stored as fGn on the finest grid."""

    kind = "fractional"

    def __init__(self, shape, draws, dtype, scale, resolution, hurst: float, noise: torch.Tensor):
        super().__init__(shape, draws, dtype, scale, resolution, noise.device)
        self.regularity = hurst
        self._noise = noise  # (resolution, draws, *shape), unit variance

    def iter_increments(self, depth: int, *, transform: Callable | None = None, reuse: bool = False,
                        most: int | None = None) -> Iterator:
        depth = V.divides("depth", depth, self.resolution)
        r = self.resolution // depth
        transform = transform or (lambda x: x)
        c = _pow2_floor(min(self._chunk_layers(r), most or depth))  # powers of two: aligned to every depth
        unit = self.scale * self.resolution ** (-self.regularity)
        buf = self._noise.new_empty((min(c, depth), *self._noise.shape[1:])) if reuse else None
        for k0 in range(0, depth, c):
            k1 = min(depth, k0 + c)
            x = pair_sums(self._noise[k0 * r:k1 * r], r)
            yield transform(x * unit if buf is None else torch.mul(x, unit, out=buf[:k1 - k0]))


@register_driver
class FractionalDriver(Driver):
    """Increments of independent fractional Brownian motions with Hurst index ``hurst``.

    ``V^(L)_k = L^H (B^H_{k/L} - B^H_{(k-1)/L}) * scale``: unit-variance fGn along depth.
    """

    name = "fractional"
    options = DRIVER_OPTIONS["fractional"]
    needs_resolution = True
    stores_path = True
    held_copies = 4

    def __init__(self, hurst: float):
        self.hurst = self.regularity = V.hurst(hurst)
        """The Hurst index ``H`` in (0, 1)."""

    def sample_bytes(self, shape, draws: int = 1, resolution: int | None = None,
                     dtype: torch.dtype = torch.float64, device=None) -> int:
        """The fGn of every path on the finest grid, written with the grid axis first into the
        tensor the sample keeps, at its peak (:func:`~deeplimits._resources.fgn_bytes`)."""
        if resolution is None:
            raise ParameterError("resolution", "resolution must be given (a power of two) for the fractional driver")
        paths, item = draws * math.prod(shape), dtype.itemsize
        return R.fgn_bytes(resolution, paths, item, sub_batched=_sub_batched(dtype, device))

    def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
        paths = draws * math.prod(shape)  # the fGn of fgn(resolution, hurst, (draws, *shape)), time-major
        noise = _fgn_fill(_random.empty((resolution, paths), dtype, device), self.hurst, _random.seed_from(generator),
                          time_major=True)
        noise = noise.view(resolution, draws, *shape)
        return FractionalSample(shape, draws, dtype, scale, resolution, self.hurst, noise)

    def held_bytes(self, entries, layers: int, item: int) -> int:
        """Every layer held with its fGn and its scaled copy (2x), or the last tensor drawn at its
        peak inside :func:`fgn` beside the others (:func:`~deeplimits._resources.fgn_bytes`)."""
        return max(sum(entries[:-1]) * layers * item + R.fgn_bytes(layers, entries[-1], item),
                   2 * sum(entries) * layers * item)

    def sweep_bytes(self, entries: int, reference: int, depths: int, item: int, device=None) -> int:
        """The fGn of every entry on the finest grid at its peak (:func:`~deeplimits._resources.fgn_bytes`,
        on ``device``), then the sweep's chunk of scaled increments and its tree of pairwise sums
        (each at most half the finest grid and at most a block of ``_BLOCK_ELEMENTS`` numbers, or
        one layer) and one accumulated increment per depth."""
        sub = _sub_batched(torch.float64 if item == 8 else torch.float32, device)
        return (R.fgn_bytes(reference, entries, item, sub_batched=sub)
                + item * (2 * min(reference // 2 * entries, max(_BLOCK_ELEMENTS, entries)) + depths * entries))
