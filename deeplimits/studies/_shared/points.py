"""The measured points of a result as a tidy table (``deeplimits runs export --csv``): one row per
measured point, the same columns for every study (:data:`COLUMNS`), what a user reads into a data
frame and plots.

* ``study``: the study's name (``convergence``, ``law``, ``transfer``, ...);
* ``setting``: what the point is measured under, as ``name=value`` pairs joined by ``, ``
  (``regime=sde``, ``beta=1, optimizer=adam, variant=rescaled``): one curve of the study's figure;
* ``depth``: the depth ``L`` (empty where a point has none);
* ``quantity``: what is measured (``max_error``, ``weak_error``, ``optimal_log2_lr``, ...);
* ``value``; ``stderr``, its standard error where the study estimates one; ``ci_low`` and
  ``ci_high``, an interval where the study gives one instead (its level in the study's docs);
  an empty cell where there is none, or where the value is not finite.

Each result's ``points()`` builds its rows with :func:`point`; :func:`seed_mean` reduces one
quantity measured per seed (or per draw) to its mean and standard error, and
:func:`record_means` does so for every group of a study's per-seed records.
"""

from __future__ import annotations

import math

__all__ = ["COLUMNS", "point", "setting", "seed_mean", "record_means"]

COLUMNS = ("study", "setting", "depth", "quantity", "value", "stderr", "ci_low", "ci_high")
"""The columns of every row, in order."""


def _number(x):
    """A finite float, else ``None`` (an empty cell)."""
    if x is None or isinstance(x, bool):
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def setting(**values) -> str:
    """``name=value`` pairs joined by ``, `` (``None`` values left out; floats as ``%g``)."""
    def text(v):
        return f"{v:g}" if isinstance(v, float) else str(v)
    return ", ".join(f"{k}={text(v)}" for k, v in values.items() if v is not None)


def point(study: str, where: str, depth, quantity: str, value, stderr=None, ci=None) -> dict:
    """One row: ``ci`` a pair ``(low, high)`` or ``None``."""
    lo, hi = ci if ci is not None else (None, None)
    return {"study": study, "setting": where, "depth": None if depth is None else int(depth), "quantity": quantity,
            "value": _number(value), "stderr": _number(stderr), "ci_low": _number(lo), "ci_high": _number(hi)}


def seed_mean(values) -> tuple:
    """``(mean, standard error)`` of the finite numbers of ``values`` (``None`` for none; the
    standard error ``None`` for fewer than two)."""
    xs = [v for v in map(_number, values) if v is not None]
    if not xs:
        return None, None
    mean = sum(xs) / len(xs)
    if len(xs) < 2:
        return mean, None
    var = sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
    return mean, math.sqrt(var / len(xs))


def _get(record: dict, path: str):
    """``record['W']['max_norm']`` for the path ``'W.max_norm'`` (``None`` where a level is missing)."""
    for key in path.split("."):
        record = record.get(key) if isinstance(record, dict) else None
    return record


def record_means(study: str, records, keys, quantities, depth_key: str | None = "depth", depth=None) -> list[dict]:
    """Rows of per-seed records: grouped by the values of ``keys`` (the setting) and the depth
    (``record[depth_key]``, or ``depth`` for all), one row per group and quantity of
    ``quantities`` (paths such as ``'W.max_norm'``) with the mean over the group's records and
    its standard error (:func:`seed_mean`)."""
    groups: dict = {}
    for r in records:
        at = r.get(depth_key) if depth_key else depth
        groups.setdefault((tuple(r.get(k) for k in keys), at), []).append(r)
    out = []
    for (values, at), rs in groups.items():
        where = setting(**dict(zip(keys, values)))
        for q in quantities:
            mean, se = seed_mean(_get(r, q) for r in rs)
            if mean is not None:
                out.append(point(study, where, at, q.replace(".", "_"), mean, se))
    return out
