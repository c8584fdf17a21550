"""Small statistical functions without :mod:`scipy.stats` (whose import costs about a second):
the chi-square survival function and a binomial proportion's interval."""

from __future__ import annotations

import math

__all__ = ["chi2_sf", "wilson"]


def chi2_sf(x: float, dof: float) -> float:
    """``P(chi2_dof >= x)`` (``scipy.special.chdtrc``; ``dof > 0`` need not be an integer)."""
    from scipy.special import chdtrc

    return float(chdtrc(dof, max(float(x), 0.0)))


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of a proportion ``k / n`` (Wilson 1927)."""
    if n <= 0:
        return (0.0, 1.0)
    p, d = k / n, 1 + z * z / n
    centre, half = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))
