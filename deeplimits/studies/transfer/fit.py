"""Where the optimal learning rate sits, how it moves with depth, and the verdict of the transfer
study (docs/transfer.md, "The verdict").

Per depth, the final training losses ``(rates, seeds)`` are read in ``log`` (a configuration
that blew up counts as the worst loss of its depth, or the untrained loss if larger); the mean
over seeds is a curve in ``log2`` of the base rate whose grid minimum and its two neighbours
fix a parabola: its vertex is the optimum (an optimum on the first or last rate of the grid is
flagged, not interpolated). The exponent of the optimum is the least-squares slope of ``log2``
optimum against ``log2 L``; its interval is ``slope -+ t_(S-1) se``, ``se`` the standard
deviation of the slope over seeds resampled with replacement (bootstrap, ``S/(S-1)``-corrected).
The loss gap at depth ``L`` is the mean loss at the transferred rate (the smallest depth's
optimum, rescaled) over the mean loss at the depth's own optimum, less 1, both read on the curve
(linearly in ``log2`` rate: the parabola's value is not used, a curve that blows up just past its
optimum is far from a parabola there), with its interval from the same resamples.
"""

from __future__ import annotations

import math

import numpy as np

from .presets import LEVEL, LOSS_MARGIN, SLOPE_MARGIN

__all__ = ["TRANSFERS", "MOVES", "INSUFFICIENT", "BOOTSTRAP", "log_losses", "vertex", "fit_optima", "verdict",
           "classify_slope", "power"]

TRANSFERS = "transfers"
"""The verdict where the rescaled optimum stays put and the transferred rate loses little."""
MOVES = "does not transfer"
"""The verdict where the optimum clearly moves with depth, or the transferred rate loses much."""
INSUFFICIENT = "insufficient evidence"
"""The verdict where the intervals are too wide or an optimum sits on the edge of the grid."""
BOOTSTRAP = 400
"""Resamples of the seeds."""


def log_losses(loss, initial) -> np.ndarray:
    """``log`` of the losses ``(rates, seeds)`` (``None``/non-finite: blown up) as floats, a blown-up
    configuration counted as the largest of the depth's finite losses and ``initial`` (the
    untrained losses)."""
    a = np.array([[np.nan if v is None else v for v in row] for row in loss], dtype=np.float64)
    ok = np.isfinite(a)
    cap = max([float(np.max(initial))] + ([float(a[ok].max())] if ok.any() else []))
    return np.log(np.where(ok, a, cap))


def vertex(y: np.ndarray) -> tuple[float, float, bool]:
    """``(index, value, edge)``: the vertex of the parabola through the minimum of ``y`` and its
    neighbours (a fractional index of the grid), or the minimum itself at the grid's edge."""
    i = int(np.argmin(y))
    if i == 0 or i == len(y) - 1:
        return float(i), float(y[i]), True
    a, b, c = y[i - 1], y[i], y[i + 1]
    curve = a - 2 * b + c
    delta = 0.0 if curve <= 0 else float(np.clip(0.5 * (a - c) / curve, -0.5, 0.5))
    return i + delta, float(b - 0.25 * (a - c) * delta), False


def _read(y: np.ndarray, x: float) -> float:
    """``y`` on the grid read at the fractional index ``x`` (linear; clamped to the grid)."""
    return float(np.interp(x, np.arange(len(y)), y))


def _statistics(curves: list[np.ndarray], lx: np.ndarray) -> tuple:
    """From mean log-loss curves per depth: optima (grid indices), edges, slope, loss gaps (the
    transferred rate is the smallest depth's optimum on the grid of base rates)."""
    v = [vertex(c) for c in curves]
    idx = np.array([a for a, _, _ in v])
    slope = float(np.polyfit(lx, idx, 1)[0])
    gaps = np.array([math.expm1(_read(c, idx[0]) - _read(c, i)) for c, i in zip(curves, idx)])
    return idx, [e for _, _, e in v], slope, gaps


def _vertices(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`vertex` of every curve of ``y`` ``(..., rates)`` at once: ``(index, edge)``."""
    R = y.shape[-1]
    i = np.argmin(y, axis=-1)
    edge = (i == 0) | (i == R - 1)
    j = np.clip(i, 1, R - 2)[..., None]
    a, b, c = (np.take_along_axis(y, j + k, axis=-1)[..., 0] for k in (-1, 0, 1))
    curve = a - 2 * b + c
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(curve <= 0, 0.0, np.clip(0.5 * (a - c) / curve, -0.5, 0.5))
    return np.where(edge, i, i + delta), edge


def _read_all(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`_read` of every curve of ``y`` ``(..., rates)`` at its fractional index ``x`` ``(...)``."""
    R = y.shape[-1]
    x = np.clip(x, 0.0, R - 1)
    k = np.minimum(np.floor(x).astype(np.int64), R - 2)[..., None]
    lo, hi = (np.take_along_axis(y, k + d, axis=-1)[..., 0] for d in (0, 1))
    return lo + (x - k[..., 0]) * (hi - lo)


def _resampled(curves: np.ndarray, lx: np.ndarray) -> tuple:
    """:func:`_statistics` of many sets of curves ``(B, depths, rates)`` at once: the optima
    ``(B, depths)``, the slopes ``(B,)`` (least squares on ``lx``) and the loss gaps ``(B, depths)``."""
    idx, _ = _vertices(curves)
    u = lx - lx.mean()
    slope = (idx - idx.mean(axis=1, keepdims=True)) @ u / (u @ u)
    first = np.broadcast_to(idx[:, :1], idx.shape)
    gaps = np.expm1(_read_all(curves, first) - _read_all(curves, idx))
    return idx, slope, gaps


def fit_optima(depths, lrs, tables: list[np.ndarray], *, seed: int = 0) -> dict:
    """The optima, their exponent and loss gaps (module docstring) from ``tables``: per depth the
    ``log`` losses ``(rates, seeds)`` (:func:`log_losses`). The resamples of the seeds are counts
    (each resample's mean curve is its counts times the table, every resample at once), drawn by
    the same ``rng.integers`` calls as resampling the columns one resample at a time."""
    from scipy.special import stdtrit

    lx = np.log2(np.asarray(depths, dtype=np.float64))
    S = tables[0].shape[1]
    idx, edges, slope, gaps = _statistics([t.mean(1) for t in tables], lx)
    rng = np.random.default_rng(seed)
    counts = np.empty((BOOTSTRAP, len(tables), S))
    for b in range(BOOTSTRAP):
        for d in range(len(tables)):
            counts[b, d] = np.bincount(rng.integers(0, S, S), minlength=S)
    curves = np.einsum("bds,drs->bdr", counts, np.stack(tables)) / S  # (resamples, depths, rates)
    boot_idx, boot_slope, boot_gaps = _resampled(curves, lx)
    q = float(stdtrit(S - 1, 1 - LEVEL / 2)) * math.sqrt(S / (S - 1))
    se, gse = float(np.std(boot_slope)), np.std(boot_gaps, axis=0)
    lo_i, hi_i = np.quantile(boot_idx, [LEVEL / 2, 1 - LEVEL / 2], axis=0)
    return {"optimum": [lrs[0] + float(i) for i in idx], "optimum_ci": [[lrs[0] + float(a), lrs[0] + float(b)]
                                                                     for a, b in zip(lo_i, hi_i)],
            "edge": edges, "slope": slope, "slope_ci": [slope - q * se, slope + q * se],
            "loss_gap": [float(g) for g in gaps],
            "loss_gap_ci": [[float(g - q * s), float(g + q * s)] for g, s in zip(gaps, gse)]}


def classify_slope(ci) -> str:
    """``'flat'`` (interval within the margin), ``'grows'`` / ``'shrinks'`` (beyond it), else ``'unclear'``."""
    lo, hi = ci
    if -SLOPE_MARGIN <= lo and hi <= SLOPE_MARGIN:
        return "flat"
    return "grows" if lo > SLOPE_MARGIN else "shrinks" if hi < -SLOPE_MARGIN else "unclear"


def verdict(fit: dict, depths) -> tuple[str, str]:
    """``(verdict, why)`` of :func:`fit_optima`'s numbers: ``transfers`` when the exponent's
    interval lies within ``±SLOPE_MARGIN`` and every depth's loss-gap interval below
    ``LOSS_MARGIN``, no optimum on the grid's edge; ``does not transfer`` when the interval lies
    beyond the margin (edges allowed: an optimum off the grid only hides movement) or a depth's
    gap interval lies above ``LOSS_MARGIN``; else ``insufficient evidence``, and why."""
    lo, hi = fit["slope_ci"]
    kind = classify_slope(fit["slope_ci"])
    above = [L for L, (g, _) in zip(depths, fit["loss_gap_ci"]) if g > LOSS_MARGIN]
    if kind in ("grows", "shrinks"):
        return MOVES, f"the optimum's exponent [{lo:.2f}, {hi:.2f}] lies beyond ±{SLOPE_MARGIN:g}"
    if above and not any(fit["edge"]):
        return MOVES, f"the transferred rate loses more than {LOSS_MARGIN:.0%} at depths {above}"
    if any(fit["edge"]):
        edges = [L for L, e in zip(depths, fit["edge"]) if e]
        return INSUFFICIENT, f"the optimum is on the edge of the grid at depths {edges}"
    if kind != "flat":
        return INSUFFICIENT, (f"the optimum's exponent [{lo:.2f}, {hi:.2f}] is not within the margin ±{SLOPE_MARGIN:g} "
                              f"(power {power(fit):.2f} at this size)")
    worst = max(g for _, g in fit["loss_gap_ci"])
    if worst > LOSS_MARGIN:
        return INSUFFICIENT, f"the loss gap's upper bound {worst:.0%} is above {LOSS_MARGIN:.0%}"
    return TRANSFERS, (f"exponent [{lo:.2f}, {hi:.2f}] within the margin ±{SLOPE_MARGIN:g} (power {power(fit):.2f} at "
                       f"this size), loss gaps below {worst:.0%} (margin {LOSS_MARGIN:.0%})")


def power(fit: dict) -> float:
    """The equivalence test's power at this run's size: the chance that an optimum that does not move
    (exponent 0) reads within ``±SLOPE_MARGIN``, from the exponent's interval
    (:class:`~deeplimits.studies.equivalence.Equivalence`)."""
    from ..equivalence import Equivalence

    return Equivalence(0.0, SLOPE_MARGIN, LEVEL / 2, fit["slope"], tuple(fit["slope_ci"])).power
