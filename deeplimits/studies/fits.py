"""Straight-line fits of a statistic over draws against a function of the depth, with a
percentile bootstrap interval over draws (docs/mathematics.md, "One sample, every depth, and
the measured rate"; docs/theory.md, "Growth laws")."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["bootstrap_fit"]


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
        boot[i:i + len(idx)] = line(statistic(e[idx], axis=1))[0]
    lo, hi = np.nanquantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return slope, intercept, (float(lo), float(hi))
