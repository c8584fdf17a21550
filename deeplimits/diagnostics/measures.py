"""Norms and the Hurst index of one layer-indexed weight tensor ``A`` of shape ``(L, ...)``
(docs/weights.md; Cohen, Cont, Rossier & Xu, ICML 2021, §2-3).

With ``||.||`` the Frobenius norm of one layer's weight and ``X_k = sum_{j<k} A_j`` the path
whose increments are the weights:

* ``max_norm = max_k ||A_k||``,
* ``increment_norm = L^beta max_k ||A_{k+1} - A_k||`` (``beta = 0`` by default),
* ``cumsum_norm = max_k ||X_k||``,
* ``rss = sqrt(sum_k ||A_k||^2)``,
* ``quadratic_variation = sum_k ||A_{k+1} - A_k||^2``,
* ``layers_90``: the fewest layers whose squared norms hold :data:`SHARE` (90%) of
  ``sum_k ||A_k||^2`` (a fixed fraction of ``L`` for a function of depth, smooth or rough; a
  bounded number when a few layers carry the weight: the sparse regime of Cohen et al., §3.2),
* ``hurst``: per coordinate, the discrete-variation estimator
  ``0.5 log2( mean_k (X_{k+2} - X_k)^2 / mean_k (X_{k+1} - X_k)^2 )`` (exact in expectation
  for fractional Gaussian noise: ``E (X_{k+2} - X_k)^2 = 2^{2H} E (X_{k+1} - X_k)^2``); its
  median and interquartile range over the coordinates;
* the noise part ``N = A - trend(A)`` (:func:`~deeplimits.diagnostics.trend.trend_split`,
  bandwidth :data:`NOISE_BANDWIDTH`), whose cumulative sum is the noise part of ``X``:
  ``noise_qv = sum_k ||N_k||^2`` (its quadratic variation) and ``noise_hurst`` (the median
  Hurst index of its coordinates: 1/2 for the increments of a rough process, near 1 for what
  the smoothing leaves of a continuous function of depth); NaN below ``L = 1 / NOISE_BANDWIDTH``
  (20 layers), where the kernel is narrower than one layer.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from .. import _resources as R_
from .. import _validate as V_
from .._plain import PlainData
from ..errors import ParameterError
from .trend import _split

__all__ = ["weight_diagnostics", "WeightDiagnostics", "hurst_index", "diagnostics_bytes", "DIAGNOSTICS", "layers_holding"]

DIAGNOSTICS = ("max_norm", "increment_norm", "cumsum_norm", "rss", "quadratic_variation", "hurst", "noise_qv",
               "noise_hurst", "layers_90")
"""The scalar diagnostics, in report order."""
NOISE_BANDWIDTH = 0.05
"""The bandwidth of the trend / noise split of the diagnostics (a fraction of the depth)."""
SHARE = 0.9
"""The share of ``sum_k ||A_k||^2`` whose fewest holding layers ``layers_90`` counts."""


@dataclasses.dataclass
class WeightDiagnostics(PlainData):
    """The diagnostics of one tensor ``name`` of depth ``depth`` (plain data)."""

    name: str
    """The tensor's name."""
    depth: int
    """The number of layers ``L``."""
    shape: list
    """The shape of one layer's weight."""
    beta: float
    """The exponent scaling ``increment_norm`` by ``L^beta``."""
    max_norm: float
    """``max_k ||A_k||``."""
    increment_norm: float
    """``L^beta max_k ||A_{k+1} - A_k||``."""
    cumsum_norm: float
    """``max_k ||X_k||``, ``X_k = sum_{j<k} A_j``."""
    rss: float
    """``sqrt(sum_k ||A_k||^2)``."""
    quadratic_variation: float
    """``sum_k ||A_{k+1} - A_k||^2``."""
    hurst: float
    """The median over coordinates of the discrete-variation Hurst estimate of ``X``."""
    hurst_iqr: float
    """Its interquartile range over the coordinates."""
    noise_qv: float = math.nan
    """The quadratic variation of the noise part left by the trend (NaN: a record written before it was measured)."""
    noise_hurst: float = math.nan
    """The Hurst index of the noise part (NaN: a record written before it was measured)."""
    layers_90: float = math.nan
    """The fewest layers holding 90% of ``sum_k ||A_k||^2`` (NaN: all zero, or a record written before it was
    measured)."""

    HEADER = (f"{'tensor':>16} {'L':>7} {'max norm':>10} {'incr norm':>10} {'cumsum':>10} {'rss':>10} "
              f"{'quad var':>10} {'hurst':>7} {'IQR':>7} {'noise qv':>10} {'noise H':>7} {'90% in':>6}")
    """The header of :meth:`report_line`."""

    def report_line(self) -> str:
        """One line of the diagnostics table (name, depth, then :data:`DIAGNOSTICS` and ``hurst_iqr``)."""
        return (f"{self.name:>16} {self.depth:7d} {self.max_norm:10.4g} {self.increment_norm:10.4g} "
                f"{self.cumsum_norm:10.4g} {self.rss:10.4g} {self.quadratic_variation:10.4g} "
                f"{self.hurst:7.3f} {self.hurst_iqr:7.3f} {self.noise_qv:10.4g} {self.noise_hurst:7.3f} "
                f"{self.layers_90:6.0f}")


def diagnostics_bytes(shape) -> int:
    """Peak bytes of :func:`weight_diagnostics` (and :func:`hurst_index`) of a tensor of
    ``shape``, from the shape alone: its float64 working copy and two float64 temporaries of
    its size (the differences, the cumulative sums, the squares of the Hurst estimator), or the
    trend / noise split of the working copy (:func:`~deeplimits.diagnostics.trend.trend_bytes`)
    with the copy and the noise part."""
    from .trend import trend_bytes

    n = math.prod(shape)
    return max(3 * 8 * n, 2 * 8 * n + trend_bytes((shape[0], n // max(shape[0], 1)), 8, NOISE_BANDWIDTH))


def real_array(name: str, A: np.ndarray) -> np.ndarray:
    """An array of real numbers (float, integer) in native byte order; complex numbers (their
    imaginary part would be dropped), booleans, strings and objects are refused."""
    if A.dtype.kind not in "fiu":
        raise ParameterError(V_.param_name(name), f"{name} must hold real numbers (float or integer), got an array of "
                                                  f"dtype {A.dtype}")
    return A.astype(A.dtype.newbyteorder("="), copy=False)


def real_tensor(name: str, A) -> torch.Tensor:
    """A tensor (or array) of real numbers holding data: not complex, boolean or on ``meta``."""
    if isinstance(A, np.ndarray):
        A = torch.from_numpy(real_array(name, A).copy())
    if not isinstance(A, torch.Tensor):
        raise ParameterError(V_.param_name(name), f"{name} must be a tensor or array of shape (L, ...), got "
                                                  f"{type(A).__name__}")
    V_.has_data(name, A)
    if A.is_complex() or A.dtype == torch.bool:
        raise ParameterError(V_.param_name(name), f"{name} must hold real numbers (float or integer), got dtype "
                                                  f"{A.dtype}")
    return A


def _layers(A) -> torch.Tensor:
    A = real_tensor("A", A)
    if A.dim() < 1 or A.shape[0] < 3:
        raise ParameterError("A", f"A must have shape (L, ...) with L >= 3 layers, got {tuple(A.shape)}")
    # before the float64 copy (an expanded view holds no memory, its copy does)
    R_.require_memory(diagnostics_bytes(A.shape), f"for the float64 working copies of A of shape {tuple(A.shape)} "
                      f"({A.numel():.3g} numbers)", ("A",))
    A = A.detach().to(device="cpu", dtype=torch.float64)
    if not bool(torch.isfinite(A).all()):
        raise ParameterError("A", "A must be finite (a blown-up network has no weight diagnostics)")
    return A.reshape(A.shape[0], -1)


def hurst_index(A) -> torch.Tensor:
    """The discrete-variation estimate of the Hurst index of every coordinate of the path
    ``X_k = sum_{j<k} A_j`` (``A`` a tensor or array of real numbers of shape ``(L, ...)``,
    ``L >= 3``, all finite): a tensor of shape ``...`` (NaN for a coordinate that is zero at
    every layer)."""
    shape = (A.shape[1:] if isinstance(A, (torch.Tensor, np.ndarray)) else ())
    return _hurst(_layers(A)).reshape(tuple(shape))


def _hurst(a: torch.Tensor) -> torch.Tensor:
    """The estimator on ``(L, coordinates)`` float64 weights."""
    one = a.square().mean(0)
    two = torch.add(a[1:], a[:-1]).square_().mean(0)
    return 0.5 * torch.log2(two / one)


def weight_diagnostics(A, *, beta: float = 0.0, name: str = "A") -> WeightDiagnostics:
    """The diagnostics of ``A`` of shape ``(L, ...)`` (module docstring): real numbers (a tensor
    or array of floats or integers), ``L >= 3`` layers, all finite; ``beta`` (a finite real)
    scales the increment norm by ``L^beta``, which must be finite; ``name`` is a string.
    Computed in float64 on the CPU; an ``A`` whose working copies (:func:`diagnostics_bytes`)
    cannot fit in memory is refused (``ResourceError``) before any is made."""
    beta = V_.real("beta", beta)
    if not isinstance(name, str):
        raise ParameterError("name", f"name must be a string, got {name!r}")
    a = _layers(A)
    L = a.shape[0]
    try:
        scale = float(L) ** beta
    except OverflowError:
        scale = math.inf
    if not math.isfinite(scale):
        raise ParameterError("beta", f"beta must keep L^beta finite (L = {L} layers), got {beta!r}")
    norms = a.norm(dim=1)
    inc = (a[1:] - a[:-1]).norm(dim=1)
    big, step, cum = float(norms.max()), float(scale * inc.max()), float(torch.cumsum(a, 0).norm(dim=1).max())
    rss, qv = float(norms.square().sum().sqrt()), float(inc.square().sum())
    q25, med, q75 = _quartiles(_hurst(a))
    noise_qv = noise_hurst = math.nan
    if NOISE_BANDWIDTH * L >= 1:  # a kernel narrower than one layer leaves no noise to measure
        _, noise = _split(a, NOISE_BANDWIDTH)
        noise_qv, noise_hurst = float(noise.square().sum()), _quartiles(_hurst(noise))[1]
    return WeightDiagnostics(name, L, list(A.shape[1:]), beta, big, step, cum, rss, qv, med, q75 - q25, noise_qv,
                             noise_hurst, layers_holding(norms.square()))


def layers_holding(squares: torch.Tensor, share: float = SHARE) -> float:
    """The fewest entries of ``squares`` (the ``(L,)`` squared norms of the layers, >= 0) whose sum
    is at least ``share`` of the total: the largest first (NaN when the total is 0 or not finite)."""
    total = squares.sum()
    if not bool(torch.isfinite(total)) or float(total) <= 0:
        return math.nan
    held = torch.cumsum(squares.sort(descending=True).values, 0)
    # rounding may leave the last partial sum a hair below share * total: never more than L layers
    return float(min(int((held < share * total).sum()) + 1, squares.numel()))


def _quartiles(h: torch.Tensor) -> tuple[float, float, float]:
    """The quartiles of the finite entries of ``h`` (NaN when none is)."""
    h = h[torch.isfinite(h)].numpy()
    return tuple(float(q) for q in np.quantile(h, [0.25, 0.5, 0.75])) if len(h) else (math.nan,) * 3
