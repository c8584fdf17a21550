"""Weight laws as functions of depth ("drivers"), SPEC §2.

A :class:`Driver` is a law of one random path on [0, 1] per weight entry. Its
:meth:`Driver.sample` draws a batch of independent paths (a :class:`DriverSample`), from which
the weights of a network of ANY depth are read. Networks of different depths read off one
sample are coupled: that coupling is what makes a strong (pathwise) error measurable.

Weights are returned with shape ``(depth, draws, *shape)`` and normalised so that
``weights / scale`` has unit-variance entries whatever the depth; ``scale`` defaults to
``1 / sqrt(shape[-1])`` (fan-in) for matrices and 1 for vectors (SPEC §1).

Drivers declare their ``regularity``: 1/2 for i.i.d. (Brownian) weights, H for fractional
ones and 1 for smooth ones. For path drivers the depth-``L`` weights are
``L**regularity * (X_{k/L} - X_{(k-1)/L})`` for the scaled path ``X``.
"""

from __future__ import annotations

import abc
import functools
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator, Sequence

import numpy as np
import torch

from . import _resources as R
from . import _rng
from . import _validate as V

__all__ = [
    "fgn", "fgn_autocovariance", "Driver", "IIDDriver", "FractionalDriver", "SmoothDriver",
    "DriverSample", "PathSample", "BrownianSample", "FractionalSample", "IIDSample",
    "SmoothSample", "rbf_kernel",
]

_BLOCK_ELEMENTS = 1 << 22  # elements of one lazily generated block of Brownian increments


# ----------------------------------------------------------------------------------------
# Fractional Gaussian noise (circulant embedding, Davies & Harte 1987)
# ----------------------------------------------------------------------------------------

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
        generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64) -> torch.Tensor:
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

    Returns:
        Tensor of shape ``(*size, n)`` with ``Cov(X_i, X_j) = gamma(|i - j|)``.

    Raises:
        ResourceError: before any allocation, when the peak memory (about ``7 n`` numbers per
            path and ``120 n`` bytes of eigenvalues, :func:`~deeplimits._resources.fgn_bytes`)
            exceeds the machine's.
    """
    n = V.integer("n", n)
    hurst = V.hurst(hurst)
    size = V.size(size)
    dtype = V.dtype(dtype)
    V.generator(generator)
    paths = math.prod(size)
    item = torch.empty((), dtype=dtype).element_size()
    R.require_memory(R.fgn_bytes(n, paths, item), f"for fgn of {paths} paths of n={n} points", ("n", "size"))
    sqrt_lam = _circulant_sqrt_eigenvalues(n, float(hurst)).to(dtype)
    pairs = (paths + 1) // 2
    noise = _rng.normal((pairs, 2 * n, 2), _rng.seed_from(generator), dtype)
    z = torch.view_as_complex(noise) * sqrt_lam  # complex white noise, independent N(0, 1) parts
    y = torch.fft.fft(z, dim=-1)[:, :n]
    out = torch.cat([y.real, y.imag], dim=0) if paths > 1 else y.real
    return out[:paths].reshape(*size, n)


# ----------------------------------------------------------------------------------------
# RBF Gaussian process by spectral quadrature
# ----------------------------------------------------------------------------------------

def rbf_kernel(s, t, length_scale: float = 0.1):
    """``exp(-(s - t)^2 / (2 l^2))``."""
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

def pair_sums(x: torch.Tensor, r: int) -> torch.Tensor:
    """Sums of ``r`` (a power of two) consecutive slices along dim 0, by pairwise halving
    (strided adds are several times faster than a reduction over a short axis)."""
    while r > 1:
        x = x[0::2] + x[1::2]
        r //= 2
    return x


class DriverSample(abc.ABC):
    """A batch of ``draws`` independent weight paths, one per entry of a tensor of ``shape``."""

    regularity: float

    def __init__(self, shape: tuple[int, ...], draws: int, dtype: torch.dtype, scale: float):
        self.shape, self.draws, self.dtype, self.scale = shape, draws, dtype, scale

    @abc.abstractmethod
    def iter_weights(self, depth: int) -> Iterator[torch.Tensor]:
        """The depth-``depth`` weights as chunks ``(c, draws, *shape)`` of consecutive layers."""

    def weights(self, depth: int) -> torch.Tensor:
        """The weights ``(depth, draws, *shape)`` of the network of depth ``depth``."""
        return torch.cat(list(self.iter_weights(depth)), dim=0)

    def _chunk_layers(self, per_layer: int) -> int:
        return max(1, _BLOCK_ELEMENTS // max(1, per_layer * self.draws * math.prod(self.shape)))


class PathSample(DriverSample):
    """A sample of a rough path ``X`` (Brownian or fractional) on the grid ``k / resolution``.

    Any depth dividing ``resolution`` is available, and its increments are exact sums of the
    finest ones, so all those depths are coupled.
    """

    def __init__(self, shape, draws, dtype, scale, resolution: int):
        super().__init__(shape, draws, dtype, scale)
        self.resolution = resolution

    @abc.abstractmethod
    def iter_increments(self, depth: int, *, transform: Callable | None = None) -> Iterator:
        """Increments ``X_{k/L} - X_{(k-1)/L}`` (scaled) in chunks ``(c, draws, *shape)`` of
        ``c`` (a power of two) consecutive layers, aligned to every coarser dyadic grid.

        ``transform``, when given, is applied to each chunk before it is yielded (for the
        Brownian sample, on the background thread that draws the chunks).
        """

    def increments(self, depth: int) -> torch.Tensor:
        return torch.cat(list(self.iter_increments(depth)), dim=0)

    def iter_weights(self, depth: int) -> Iterator[torch.Tensor]:
        norm = float(depth) ** self.regularity
        for inc in self.iter_increments(depth):
            yield inc * norm

    def path(self, depth: int) -> torch.Tensor:
        """``X_{k/L}`` for ``k = 0..L`` (``X_0 = 0``), shape ``(depth + 1, draws, *shape)``."""
        inc = self.increments(depth)
        return torch.cat([torch.zeros_like(inc[:1]), inc.cumsum(0)], dim=0)


class BrownianSample(PathSample):
    """Scaled Brownian motion ``scale * B`` generated lazily in fixed blocks of fine steps.

    The finest increments are produced block by block from counter-derived seeds, so they
    can be streamed any number of times without being stored: memory stays constant in the
    resolution.
    """

    regularity = 0.5

    def __init__(self, shape, draws, dtype, scale, resolution, seed: int):
        super().__init__(shape, draws, dtype, scale, resolution)
        self.seed = seed
        self.block = min(resolution, _pow2_floor(self._chunk_layers(1)))

    def _block(self, j: int) -> torch.Tensor:
        x = _rng.normal((self.block, self.draws, *self.shape), V.mix_seed(self.seed, j), self.dtype)
        return x.mul_(self.scale / math.sqrt(self.resolution))

    def iter_increments(self, depth: int, *, transform: Callable | None = None) -> Iterator:
        depth = V.divides("depth", depth, self.resolution)
        r = self.resolution // depth  # fine steps per layer
        nblocks = self.resolution // self.block
        transform = transform or (lambda x: x)
        if r <= self.block:
            def chunk(j):
                return transform(pair_sums(self._block(j), r))

            with ThreadPoolExecutor(1, thread_name_prefix="deeplimits-prefetch") as ex:
                nxt = ex.submit(chunk, 0)  # draw chunk j + 1 while chunk j is consumed
                for j in range(nblocks):
                    x = nxt.result()
                    if j + 1 < nblocks:
                        nxt = ex.submit(chunk, j + 1)
                    yield x
        else:
            per = r // self.block
            for k in range(depth):
                acc = self._block(k * per).sum(0)
                for j in range(k * per + 1, (k + 1) * per):
                    acc += self._block(j).sum(0)
                yield transform(acc.unsqueeze(0))


class FractionalSample(PathSample):
    """Scaled fractional Brownian motion ``scale * B^H`` stored as fGn on the finest grid."""

    def __init__(self, shape, draws, dtype, scale, resolution, hurst: float, noise: torch.Tensor):
        super().__init__(shape, draws, dtype, scale, resolution)
        self.regularity = hurst
        self._noise = noise  # (resolution, draws, *shape), unit variance

    def iter_increments(self, depth: int, *, transform: Callable | None = None) -> Iterator:
        depth = V.divides("depth", depth, self.resolution)
        r = self.resolution // depth
        transform = transform or (lambda x: x)
        c = _pow2_floor(self._chunk_layers(r))  # powers of two keep chunks aligned to every depth
        unit = self.scale * self.resolution ** (-self.regularity)
        for k0 in range(0, depth, c):
            k1 = min(depth, k0 + c)
            yield transform(pair_sums(self._noise[k0 * r:k1 * r], r) * unit)


class IIDSample(DriverSample):
    """i.i.d. uniform or Rademacher weights: no path, fresh draws for each depth.

    These laws have no Brownian coupling across depths (only the Gaussian law does), so the
    weights at depth ``L`` are drawn from a stream seeded by ``(seed, L)``: reproducible, but
    independent between depths.
    """

    regularity = 0.5

    def __init__(self, shape, draws, dtype, scale, law: str, seed: int):
        super().__init__(shape, draws, dtype, scale)
        self.law, self.seed = law, seed

    def iter_weights(self, depth: int) -> Iterator[torch.Tensor]:
        depth = V.integer("depth", depth)
        seed = V.mix_seed(self.seed, depth - 1)
        c = self._chunk_layers(1)
        a = math.sqrt(3.0) * self.scale if self.law == "uniform" else 1.0
        for j, k0 in enumerate(range(0, depth, c)):
            n = min(c, depth - k0)
            u = _rng.uniform((n, self.draws, *self.shape), V.mix_seed(seed, j), self.dtype, -a, a)
            yield u if self.law == "uniform" else torch.where(u < 0, -self.scale, self.scale).to(self.dtype)


class SmoothSample(DriverSample):
    """Stationary RBF Gaussian process weights ``V(t)``, evaluable at any t in [0, 1].

    ``weights(L)`` reads ``V(k / L)``, ``k = 1..L`` (right points, SPEC §2).
    """

    regularity = 1.0

    def __init__(self, shape, draws, dtype, scale, length_scale: float, coefficients: torch.Tensor):
        super().__init__(shape, draws, dtype, scale)
        self.length_scale = length_scale
        omega, _, self.kernel_error = _rbf_quadrature(length_scale)
        self._omega = omega.to(dtype)
        self._coef = coefficients  # (2M, draws * prod(shape)), already times sqrt(w) * scale

    def at(self, t) -> torch.Tensor:
        """``V(t)`` for a scalar ``t`` (shape ``(draws, *shape)``) or a 1-d tensor of times
        (shape ``(len(t), draws, *shape)``)."""
        tt = torch.as_tensor(t, dtype=self.dtype)
        if not bool(((tt >= -0.25) & (tt <= 1.25)).all()):  # NaN fails too
            raise ValueError(f"t must lie in [-0.25, 1.25] (the depth interval [0, 1] with the margin an "
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
            k = torch.arange(k0 + 1, min(depth, k0 + c) + 1, dtype=torch.float64)
            yield self.at((k / depth).to(self.dtype))


# ----------------------------------------------------------------------------------------
# Drivers
# ----------------------------------------------------------------------------------------

class Driver(abc.ABC):
    """A weight law as a function of depth. Declares its ``regularity``, ``coupled`` and ``nested``."""

    name: str
    regularity: float
    coupled: bool = True  # do depths read off one sample share one path?
    #: are the depth-L weights, in law, the first L layers of a deeper network's weights?
    #: (i.i.d. and stationary fGn: yes; the smooth law reads V(k / L): no)
    nested: bool = True

    def sample(self, shape, *, draws: int = 1, resolution: int | None = None,
               generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64,
               scale: float | None = None) -> DriverSample:
        """Draw ``draws`` independent weight paths for a weight tensor of ``shape``.

        Args:
            shape: shape of one layer's weight, e.g. ``(d, d)`` for V or ``(d,)`` for a bias.
            draws: number of independent paths (batch dimension of the weights).
            resolution: finest depth (a power of two) for path drivers; every depth dividing
                it is available and coupled. Refused by the smooth and non-Gaussian i.i.d. laws.
            generator: a seeded :class:`torch.Generator`; same seed, same numbers.
            dtype: float32 or float64.
            scale: entry standard deviation of the weights, default ``shape[-1] ** -0.5`` for
                matrices (SPEC §1), 1 for vectors.
        """
        shape = V.size(shape, name="shape")
        draws = V.integer("draws", draws)
        dtype = V.dtype(dtype)
        V.generator(generator)
        if scale is None:
            scale = shape[-1] ** -0.5 if len(shape) >= 2 else 1.0
        scale = V.real("scale", scale, low=0.0, low_open=True)
        if self.needs_resolution:
            if resolution is None:
                raise ValueError(f"resolution must be given (a power of two) for the {self.name} driver")
            resolution = V.power_of_two("resolution", resolution)
        elif resolution is not None:
            raise ValueError(f"resolution applies only to path drivers (Gaussian i.i.d., fractional), "
                             f"not to the {self.name} driver")
        return self._sample(shape, draws, resolution, generator, dtype, scale)

    needs_resolution = False

    @abc.abstractmethod
    def _sample(self, shape, draws, resolution, generator, dtype, scale) -> DriverSample: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _pow2_floor(x: int) -> int:
    return 1 << (max(1, x).bit_length() - 1)


class IIDDriver(Driver):
    """i.i.d. weights with variance ``scale^2``: ``'gaussian'`` (Brownian increments),
    ``'uniform'`` (the papers' default) or ``'rademacher'``.

    Only the Gaussian law is coupled across depths (``V_k = sqrt(L) * scale * dB``); for it a
    ``resolution`` is required.
    """

    regularity = 0.5
    LAWS = ("gaussian", "uniform", "rademacher")

    def __init__(self, law: str = "gaussian"):
        self.name = V.choice("law", law, self.LAWS)
        self.coupled = self.needs_resolution = law == "gaussian"

    def _sample(self, shape, draws, resolution, generator, dtype, scale):
        if self.name == "gaussian":
            return BrownianSample(shape, draws, dtype, scale, resolution, _rng.seed_from(generator))
        return IIDSample(shape, draws, dtype, scale, self.name, _rng.seed_from(generator))


class FractionalDriver(Driver):
    """Increments of independent fractional Brownian motions with Hurst index ``hurst``.

    ``V^(L)_k = L^H (B^H_{k/L} - B^H_{(k-1)/L}) * scale``: unit-variance fGn along depth.
    """

    name = "fractional"
    needs_resolution = True

    def __init__(self, hurst: float):
        self.hurst = self.regularity = V.hurst(hurst)

    def _sample(self, shape, draws, resolution, generator, dtype, scale):
        noise = fgn(resolution, self.hurst, (draws, *shape), generator=generator, dtype=dtype)
        noise = noise.movedim(-1, 0).contiguous()
        return FractionalSample(shape, draws, dtype, scale, resolution, self.hurst, noise)

    def __repr__(self) -> str:
        return f"FractionalDriver(hurst={self.hurst})"


class SmoothDriver(Driver):
    """Stationary Gaussian process weights with RBF kernel of length scale ``length_scale``."""

    name = "smooth"
    regularity = 1.0
    nested = False

    def __init__(self, length_scale: float = 0.1):
        self.length_scale = V.real("length_scale", length_scale, low=0.05, high=100.0)

    def _sample(self, shape, draws, resolution, generator, dtype, scale):
        omega, sqrt_w, _ = _rbf_quadrature(self.length_scale)
        m = omega.numel()
        entries = draws * math.prod(shape)
        R.require_memory(4 * m * entries * torch.empty((), dtype=dtype).element_size(),
                         f"for the spectral coefficients of {draws} smooth weight paths of shape {shape}",
                         ("draws", "shape"))
        z = torch.randn(2 * m, draws * math.prod(shape), generator=generator, dtype=dtype)
        coef = z * (torch.cat([sqrt_w, sqrt_w]).to(dtype) * scale).unsqueeze(1)
        return SmoothSample(shape, draws, dtype, scale, self.length_scale, coef)

    def __repr__(self) -> str:
        return f"SmoothDriver(length_scale={self.length_scale})"
