"""Small statistical functions without SciPy (the import of :mod:`scipy.stats` costs about a
second, that of :mod:`scipy.special` about half of one, benchmarks/RESULTS.md): the chi-square
survival function, the normal law's distribution and quantile functions, and a binomial
proportion's interval."""

from __future__ import annotations

import math

__all__ = ["chi2_sf", "wilson", "normal_cdf", "normal_quantile"]

#: the relative size of the last term kept in the series and the continued fraction of :func:`_gamma_q`
_EPS = 1e-16
#: the most terms of either (the chi-square laws of the fits have a few degrees of freedom: tens suffice)
_TERMS = 100_000


def _gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function ``Q(a, x)``, ``a > 0``, ``x >= 0``: the
    series of ``P = 1 - Q`` below ``x = a + 1``, where ``Q`` is not small, and the continued
    fraction of ``Q`` (modified Lentz) above it (Press et al., Numerical Recipes, 6.2)."""
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        for n in range(1, _TERMS):
            term *= x / (a + n)
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b, c, d = x + 1 - a, 1 / tiny, 1 / (x + 1 - a)
    h = d
    for n in range(1, _TERMS):
        an, b = -n * (n - a), b + 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < _EPS:
            break
    return math.exp(log_front) * h


def chi2_sf(x: float, dof: float) -> float:
    """``P(chi2_dof >= x)`` (``dof > 0`` need not be an integer; ``scipy.special.chdtrc`` to about
    1e-14 relative, tests/test_strong_order.py)."""
    x, dof = float(x), float(dof)
    if math.isnan(x) or math.isnan(dof):
        return math.nan
    if math.isinf(x):
        return 0.0 if x > 0 else 1.0
    return _gamma_q(dof / 2, max(x, 0.0) / 2)


def normal_cdf(x: float) -> float:
    """``P(N(0, 1) <= x)``."""
    return 0.5 * math.erfc(-float(x) / math.sqrt(2))


def normal_quantile(p: float) -> float:
    """The ``p`` quantile of ``N(0, 1)``, ``0 < p < 1`` (the standard library's, Wichura's AS241)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(float(p))


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of a proportion ``k / n`` (Wilson 1927)."""
    if n <= 0:
        return (0.0, 1.0)
    p, d = k / n, 1 + z * z / n
    centre, half = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    # the interval contains p exactly (rounding can put an end a hair inside it at k = 0 or k = n)
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))
