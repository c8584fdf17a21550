"""The error law of the shapes study fitted, with intervals (docs/shapes.md, "The law").

The hidden-state error after ``k`` steps, averaged over runs, is fitted to
``e(L, M, D) = sqrt(a D/(M L) + b/D + c/L^2)`` by least squares on the cells of a mask (the authors':
``L > 50``, ``M > 10``, ``D > 10``; ``a, b, c >= 0``), and the output error to
``sqrt(a (D/(M L))^2 + b/D)`` (their output law). Intervals: percentiles of the fits to
:data:`BOOTSTRAP` resamples of the runs (a resample draws runs with replacement and keeps each
drawn run in every cell: a run's embeddings are shared across the cells, so runs, not cells, are
the independent units). Read off the law: the best embedding size at ``P = L M D`` parameters,
``D* = (b / 2a)^(1/3) P^(1/3)``, where the error is ``sqrt(a k^2 + b/k) P^(-1/6)`` (``k`` that
constant), and, at fixed ``M L``, the minimum of the error in ``D`` at ``sqrt(b/a) sqrt(M L)``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LAWS", "BOOTSTRAP", "run_matrix", "cell_table", "fit_law", "fit_with_intervals", "resamples", "envelope",
           "law_value"]

BOOTSTRAP = 400
"""Resamples of the runs behind every interval."""

LAWS = {
    "hidden": ("sqrt(a D/(M L) + b/D + c/L^2)", 3),
    "output": ("sqrt(a (D/(M L))^2 + b/D)", 2),
}
"""The fitted laws: name -> (formula, number of constants)."""


_FEATURES = {
    "hidden": lambda L, M, D: (D / (M * L), 1.0 / D, 1.0 / L ** 2),
    "output": lambda L, M, D: ((D / (M * L)) ** 2, 1.0 / D),
}


def _features(law: str, L, M, D) -> np.ndarray:
    """The columns of the law ``law`` (the squared error is linear in its constants)."""
    L, M, D = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (L, M, D)))
    return np.stack(_FEATURES[law](L, M, D), axis=1)


def law_value(law: str, params, L, M, D) -> np.ndarray:
    """The law ``law`` with constants ``params`` at the shapes ``(L, M, D)``."""
    return np.sqrt(_features(law, np.atleast_1d(L), np.atleast_1d(M), np.atleast_1d(D)) @ np.asarray(params))


def fit_law(law: str, L, M, D, error, *, iterations: int = 50) -> np.ndarray:
    """The constants (non-negative) of ``law`` that fit ``error`` at the shapes ``(L, M, D)`` by least
    squares in the error (as the authors fit): Gauss-Newton from the non-negative linear fit of the
    squared error, each step a non-negative least-squares problem (the bounds held exactly), halved
    until the misfit falls, until it changes by less than 1e-12 of itself."""
    from scipy.optimize import nnls

    X, e = _features(law, L, M, D), np.asarray(error, dtype=np.float64)
    p = nnls(X, e ** 2)[0]

    def cost(q):
        return float(np.sum((np.sqrt(np.maximum(X @ q, 0.0)) - e) ** 2))

    c = cost(p)
    for _ in range(iterations):
        root = np.sqrt(np.maximum(X @ p, 1e-300))
        J = X / (2.0 * root)[:, None]
        step = nnls(J, e - root / 2.0)[0] - p
        for _ in range(30):
            new = cost(p + step)
            if new <= c:
                break
            step = step / 2.0
        else:
            break
        p, done = p + step, c - new <= 1e-12 * c
        c = new
        if done:
            break
    return p


def run_matrix(cells: list, key: str = "values", runs: int | None = None) -> np.ndarray:
    """``(cells, runs)``: each cell's per-run errors ``key`` in the column of its run (``run_ids``; in
    order when absent), NaN where a run blew up or is missing (a stored run not yet finished);
    ``runs`` columns at least (default: the largest run id + 1)."""
    ids = [c.get("run_ids") or list(range(len(c[key]))) for c in cells]
    out = np.full((len(cells), max([runs or 0] + [max(i) + 1 for i in ids if i])), math.nan)
    for row, (c, i) in enumerate(zip(cells, ids)):
        out[row, i] = [math.nan if v is None else v for v in c[key]]
    return out


def cell_table(cells: list, key: str = "values") -> dict:
    """``L``, ``M``, ``D`` of ``cells`` (:func:`~.result.cell_summary` records) and ``values``
    ``(cells, runs)``: each run's error ``key`` (``'values'``: hidden, ``'output_values'``: output) at
    the fitted step (:func:`run_matrix`)."""
    return {"L": np.array([c["L"] for c in cells]), "M": np.array([c["M"] for c in cells]),
            "D": np.array([c["D"] for c in cells]), "values": run_matrix(cells, key)}


def resamples(runs: int, boots: int = BOOTSTRAP, seed: int = 0) -> np.ndarray:
    """``(boots, runs)`` run indices drawn with replacement (the first row: every run once)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, runs, (boots, runs))
    idx[0] = np.arange(runs)
    return idx


def _mean(values: np.ndarray, idx) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.nanmean(values[:, idx], axis=1) if values.size else np.zeros(len(values))


def fit_with_intervals(law: str, table: dict, idx: np.ndarray, level: float = 0.05) -> dict:
    """``law`` fitted to the run means of ``table`` (:func:`cell_table`) and to each resample of
    ``idx`` (:func:`resamples`; row 0 the data): ``params`` and their ``1 - level`` percentile
    ``intervals``, the ``boot`` fits ``(boots, constants)``, the number of ``cells`` and the relative
    root-mean-square misfit ``misfit``."""
    import warnings

    if len(table["L"]) < LAWS[law][1] + 1:
        n = LAWS[law][1]
        return {"law": LAWS[law][0], "cells": int(len(table["L"])), "params": [math.nan] * n,
                "intervals": [[math.nan, math.nan]] * n, "boot": np.full((len(idx), n), math.nan), "misfit": math.nan}
    shapes = (table["L"], table["M"], table["D"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a cell whose resample has no finite run
        means = [_mean(table["values"], i) for i in idx]
    boot = np.array([fit_law(law, *(s[np.isfinite(m)] for s in shapes), m[np.isfinite(m)]) for m in means])
    p, e = boot[0], means[0]
    fitted = law_value(law, p, *shapes)
    ok = np.isfinite(e)
    lo, hi = np.quantile(boot[1:], [level / 2, 1 - level / 2], axis=0) if len(boot) > 1 else (p * np.nan, p * np.nan)
    return {"law": LAWS[law][0], "cells": int(ok.sum()), "params": p.tolist(),
            "intervals": [[float(a), float(b)] for a, b in zip(lo, hi)], "boot": boot,
            "misfit": float(np.sqrt(np.mean((fitted[ok] / e[ok] - 1.0) ** 2)))}


def envelope(a: float, b: float) -> dict:
    """The best shape at ``P`` parameters under ``a D/(M L) + b/D``: ``D* = kappa P^(1/3)`` with
    ``kappa = (b / 2a)^(1/3)``, and the error there, ``constant P^(-1/6)``."""
    if not (a > 0 and b > 0):
        return {"kappa": math.nan, "constant": math.nan}
    kappa = (b / (2 * a)) ** (1 / 3)
    return {"kappa": kappa, "constant": math.sqrt(a * kappa ** 2 + b / kappa)}
