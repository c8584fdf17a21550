"""Straight-line fits of a statistic over draws against a function of the depth, with a
percentile bootstrap interval over draws (docs/mathematics.md, "One sample, every depth, and
the measured rate"; docs/theory.md, "Growth laws")."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["bootstrap_fit", "resamples_for"]

#: the Monte Carlo standard deviation :func:`resamples_for` allows an endpoint of a bootstrap
#: interval of a rate: a quarter of the last digit the reports print (three decimals)
ENDPOINT_TOL = 2.5e-4
#: the fewest resamples :func:`resamples_for` gives (a percentile interval's tails need some)
MIN_BOOT = 200


def bootstrap_fit(feature, samples, statistic: Callable = np.mean, *, n_boot: int = 2000, seed: int = 0,
                  level: float = 0.95) -> tuple[float, float, tuple[float, float]]:
    """Least-squares line ``log statistic(samples[:, j]) = intercept + slope * feature[j]``.

    Args:
        feature: one value per column (``log L`` for a power law, ``L^gamma`` for a growth law).
        samples: per-draw values, shape ``(draws, len(feature))``, positive.
        statistic: reduces the draws axis (axis 0 of a ``(draws, columns)`` array, or axis 1 of
            ``(resamples, draws, columns)``), e.g. ``np.mean`` or ``np.median``.
    Returns:
        ``(slope, intercept, (lo, hi))``, the interval a percentile bootstrap over draws of the
        slope (``nan`` bounds with one draw; ``nan`` throughout with fewer than two columns).
    """
    x = np.asarray(feature, dtype=np.float64)
    e = np.asarray(samples, dtype=np.float64)
    if len(x) < 2 or len(set(x.tolist())) < 2:
        return math.nan, math.nan, (math.nan, math.nan)
    xc = x - x.mean()

    def line(stat):
        y = np.log(stat)
        slope = (y * xc).sum(-1) / (xc ** 2).sum()
        return slope, y.mean(-1) - slope * x.mean()

    slope, intercept = (float(v) for v in line(statistic(e, axis=0)))
    if len(e) < 2:
        return slope, intercept, (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    boot = np.empty(n_boot)
    for i in range(0, n_boot, 250):  # bounded memory: 250 resamples at a time
        idx = rng.integers(0, len(e), size=(min(250, n_boot - i), len(e)))
        boot[i:i + len(idx)] = line(_resampled_means(e, idx) if statistic is np.mean else
                                    statistic(e[idx], axis=1))[0]
    lo, hi = _quantiles(boot, ((1 - level) / 2, (1 + level) / 2))
    return slope, intercept, (float(lo), float(hi))


def _resampled_means(e: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``e[idx].mean(axis=1)`` without the copy ``e[idx]`` (overwrites ``idx``): each resample's
    count of every draw, times ``e``: one matrix product, on one thread (the same means up to the
    order of the additions; a BLAS's threads on a shared machine cost several times the product)."""
    import torch

    from .._random import single_threaded_torch

    k, n = idx.shape
    idx += n * np.arange(k)[:, None]
    counts = torch.from_numpy(np.bincount(idx.ravel(), minlength=k * n).reshape(k, n))
    with single_threaded_torch():
        return (counts.to(torch.float64) @ torch.from_numpy(np.ascontiguousarray(e))).numpy() / n


def _quantiles(x: np.ndarray, qs) -> list[float]:
    """``np.nanquantile(x, qs)`` (its default ``'linear'`` method) without the import of
    :mod:`numpy.ma` that NumPy's quantiles make (a tenth of a second, benchmarks/RESULTS.md)."""
    a = np.sort(x[~np.isnan(x)])
    if not len(a):
        return [math.nan] * len(qs)
    out = []
    for q in qs:
        h = (len(a) - 1) * q
        i = min(int(math.floor(h)), len(a) - 1)
        lo, hi, t = a[i], a[min(i + 1, len(a) - 1)], h - i
        out.append(float(hi - (hi - lo) * (1 - t) if t >= 0.5 else lo + (hi - lo) * t))  # NumPy's _lerp
    return out


def resamples_for(feature, samples, most: int, tol: float = ENDPOINT_TOL, level: float = 0.95) -> int:
    """The bootstrap resamples (in ``[MIN_BOOT, most]``) that pin the endpoints of the percentile
    interval of :func:`bootstrap_fit`'s slope of the mean to a Monte Carlo standard deviation of
    ``tol``: the ``p``-quantile of ``B`` resamples of a law with density ``f`` there varies by
    ``sqrt(p (1 - p) / B) / f(q_p)``, and the slope's law is near normal with the standard deviation
    ``s`` of the delta method (the covariance of the means over draws), so ``B = (k s / tol)^2``
    with ``k = sqrt(p (1 - p)) / phi(z_p)`` (2.67 at 95%). ``most`` when ``s`` is not finite."""
    import statistics

    x = np.asarray(feature, dtype=np.float64)
    e = np.asarray(samples, dtype=np.float64)
    if len(e) < 2 or len(x) < 2:
        return most
    m, xc = e.mean(0), x - x.mean()
    g = xc / (m * (xc ** 2).sum())
    s = math.sqrt(max(float(g @ (np.atleast_2d(np.cov(e, rowvar=False)) / len(e)) @ g), 0.0))
    p = (1 - level) / 2
    z = statistics.NormalDist().inv_cdf(1 - p)
    k = math.sqrt(p * (1 - p)) / (math.exp(-z * z / 2) / math.sqrt(2 * math.pi))
    need = (k * s / tol) ** 2
    return most if not math.isfinite(need) else int(min(most, max(MIN_BOOT, math.ceil(need))))
