"""Exponents of the weight diagnostics across a family of depths (docs/weights.md): the slope
of ``log diagnostic`` against ``log L`` by least squares, with a Student-t confidence interval
(one value per depth: no draws to resample). The weight exponent ``beta`` is minus the slope of
the max norm (``max_k ||A_k|| ~ L^-beta``)."""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

from .._plain import PlainData
from .measures import WeightDiagnostics

__all__ = ["loglog_fit", "scaling_exponents", "Exponents", "SCALED"]

#: the diagnostics whose exponent is fitted (the Hurst index is not a power of L)
SCALED = ("max_norm", "increment_norm", "cumsum_norm", "rss", "quadratic_variation")


def loglog_fit(depths: Sequence[float], values: Sequence[float], level: float = 0.95) -> tuple[float, tuple]:
    """Slope of ``log values`` on ``log depths`` and its ``level`` Student-t interval
    (``nan`` bounds with two depths; ``nan`` slope with fewer, or a non-positive value)."""
    from scipy import stats

    x, y = np.log(np.asarray(depths, dtype=float)), np.asarray(values, dtype=float)
    if len(x) < 2 or not np.all(y > 0) or len(set(x.tolist())) < 2:
        return math.nan, (math.nan, math.nan)
    fit = stats.linregress(x, np.log(y))
    if len(x) < 3:
        return float(fit.slope), (math.nan, math.nan)
    half = stats.t.ppf((1 + level) / 2, len(x) - 2) * fit.stderr
    return float(fit.slope), (float(fit.slope - half), float(fit.slope + half))


@dataclasses.dataclass
class Exponents(PlainData):
    """``exponents``: name -> ``{'value', 'ci'}`` for the slope of each diagnostic on ``L``
    and for ``beta`` (minus the max-norm slope); ``depths`` the family's depths."""

    name: str
    depths: list
    exponents: dict

    def report(self) -> str:
        lines = [f"{self.name}: exponents over depths {self.depths} (log-log slope, 95% CI)"]
        for k, v in self.exponents.items():
            lo, hi = v["ci"]
            ci = "" if lo is None or not math.isfinite(lo) else f"  [{lo:.3f}, {hi:.3f}]"
            lines.append(f"  {k:>20} {v['value']:8.3f}{ci}")
        return "\n".join(lines)


def scaling_exponents(family: Sequence[WeightDiagnostics], level: float = 0.95) -> Exponents:
    """The exponents of one tensor's diagnostics across the depths of ``family`` (one
    :class:`WeightDiagnostics` per depth, at least two distinct depths)."""
    family = sorted(family, key=lambda d: d.depth)
    depths = [d.depth for d in family]
    if len(set(depths)) < 2:
        raise ValueError(f"scaling needs at least two distinct depths, got {depths}")
    out = {}
    for name in SCALED:
        slope, ci = loglog_fit(depths, [getattr(d, name) for d in family], level)
        out[name] = {"value": slope, "ci": list(ci)}
    m = out["max_norm"]
    out["beta"] = {"value": -m["value"], "ci": [-m["ci"][1], -m["ci"][0]]}
    return Exponents(family[0].name, depths, out)
