"""Statistics the studies share: the median of finite numbers, per-depth medians of records and a
log-log slope with its interval (the scaling and convolutional scaling studies read them)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["median", "median_records", "slope"]


def median(values) -> float:
    """The median of the finite numbers of ``values`` (``None``: a NaN stored as JSON), else NaN."""
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    return float(np.median(finite)) if finite else math.nan


def median_records(records: list[dict], key: str) -> list[dict]:
    """Per depth, the median over seeds of every number of ``record[key]`` (the diagnostics)."""
    out = []
    for L in sorted({r["depth"] for r in records}):
        group = [r[key] for r in records if r["depth"] == L]
        out.append({k: (median([g[k] for g in group]) if v is None or isinstance(v, float) else v)
                    for k, v in group[0].items()})
    return out


def slope(depths, values, negate: bool = True) -> dict:
    """The log-log slope of ``values`` against ``depths`` with its interval (negated by default:
    a decay exponent), ``{'value', 'ci'}`` (:func:`deeplimits.diagnostics.scaling._loglog_fit`)."""
    from ...diagnostics.scaling import _loglog_fit

    slope, (lo, hi) = _loglog_fit(depths, values)
    return {"value": -slope, "ci": [-hi, -lo]} if negate else {"value": slope, "ci": [lo, hi]}
