"""The D'Agostino–Pearson test of normality in NumPy (D'Agostino, Biometrika 1970; Anscombe &
Glynn, Biometrika 1983; D'Agostino & Pearson, Biometrika 1973), the formulas of
``scipy.stats.normaltest``: a stability summary needs no SciPy import (about a second here)."""

from __future__ import annotations

import math

import numpy as np
from ..errors import ParameterError

__all__ = ["normaltest"]


def _skew_z(x: np.ndarray) -> float:
    n = x.size
    d = x - x.mean()
    m2, m3 = (d ** 2).mean(), (d ** 3).mean()
    b = m3 / m2 ** 1.5 if m2 > 0 else 0.0
    y = b * math.sqrt((n + 1) * (n + 3) / (6.0 * (n - 2)))
    beta2 = 3.0 * (n ** 2 + 27 * n - 70) * (n + 1) * (n + 3) / ((n - 2.0) * (n + 5) * (n + 7) * (n + 9))
    w2 = -1 + math.sqrt(2 * (beta2 - 1))
    delta = 1 / math.sqrt(0.5 * math.log(w2))
    alpha = math.sqrt(2.0 / (w2 - 1))
    y = 1.0 if y == 0 else y
    return delta * math.log(y / alpha + math.sqrt((y / alpha) ** 2 + 1))


def _kurtosis_z(x: np.ndarray) -> float:
    n = x.size
    d = x - x.mean()
    m2, m4 = (d ** 2).mean(), (d ** 4).mean()
    b2 = m4 / m2 ** 2 if m2 > 0 else 0.0
    e = 3.0 * (n - 1) / (n + 1)
    var = 24.0 * n * (n - 2) * (n - 3) / ((n + 1) * (n + 1.0) * (n + 3) * (n + 5))
    z = (b2 - e) / math.sqrt(var)
    sb1 = 6.0 * (n * n - 5 * n + 2) / ((n + 7) * (n + 9)) * math.sqrt(6.0 * (n + 3) * (n + 5) / (n * (n - 2) * (n - 3)))
    a = 6.0 + 8.0 / sb1 * (2.0 / sb1 + math.sqrt(1 + 4.0 / sb1 ** 2))
    denom = 1 + z * math.sqrt(2 / (a - 4.0))
    if denom == 0:
        return math.nan
    term2 = math.copysign(((1 - 2.0 / a) / abs(denom)) ** (1 / 3.0), denom)
    return (1 - 2 / (9.0 * a) - term2) / math.sqrt(2 / (9.0 * a))


def normaltest(x) -> tuple[float, float]:
    """``(statistic, pvalue)``: ``K^2 = Z_skew^2 + Z_kurtosis^2`` and its chi-squared (2 degrees
    of freedom) tail ``exp(-K^2 / 2)``, for at least 20 values."""
    x = np.asarray(x, dtype=np.float64).ravel()
    if x.size < 20:
        raise ParameterError("x", f"x must have at least 20 values for the normality test, got {x.size}")
    k2 = _skew_z(x) ** 2 + _kurtosis_z(x) ** 2
    return float(k2), float(math.exp(-k2 / 2))
