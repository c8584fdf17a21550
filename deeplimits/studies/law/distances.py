"""Distances between the laws of a scalar output (docs/law.md, "Distances between laws"): the
1-Wasserstein distance (from sorted samples) and the Kolmogorov distance between the law of
``|h_L| / |h_0|`` and the SDE's, with their Monte Carlo floor and bootstrap intervals.

The kept draws are split in halves: each network's first half is compared with the SDE's second
half (independent draws, also when the study couples them), and the SDE's two halves with each
other give the floor, the distance two samples of one law show at this size (the Monte Carlo bias,
of order ``n^-1/2``). Intervals: 95% basic bootstrap (``2 D - `` the resampled quantiles, at least
0: resampling a sample adds to its distance what the Monte Carlo noise does), each half resampled.
"""

from __future__ import annotations

import numpy as np

__all__ = ["wasserstein1", "kolmogorov", "law_distances", "BOOTSTRAP"]

BOOTSTRAP = 200
"""Bootstrap resamples of the intervals."""


def wasserstein1(x: np.ndarray, y: np.ndarray) -> float:
    """``W1`` between the empirical laws of two samples: the area between their quantile functions
    (equal sizes: the mean distance of the sorted samples)."""
    x, y = np.sort(x), np.sort(y)
    if len(x) == len(y):
        return float(np.abs(x - y).mean())
    grid = np.linspace(0.0, 1.0, 4 * max(len(x), len(y)) + 1)[1:-1]
    return float(np.abs(np.quantile(x, grid) - np.quantile(y, grid)).mean())


def kolmogorov(x: np.ndarray, y: np.ndarray) -> float:
    """The Kolmogorov distance ``sup_t |F_x(t) - F_y(t)|`` between two empirical laws."""
    x, y = np.sort(x), np.sort(y)
    t = np.concatenate([x, y])
    return float(np.abs(np.searchsorted(x, t, "right") / len(x) - np.searchsorted(y, t, "right") / len(y)).max())


def _both(x, y) -> tuple[float, float]:
    return wasserstein1(x, y), kolmogorov(x, y)


def _boot(x, y, rng, resamples) -> np.ndarray:
    """``(resamples, 2)``: the distances of resampled halves (each resample ``x[rng.integers(0, n,
    n)]``, then ``y``'s, in that order). Halves of one size: by counts (:func:`_boot_counts`, the
    same resamples and distances to rounding); else each resample sorted."""
    if len(x) == len(y):
        return _boot_counts(x, y, rng, resamples)
    return np.array([_both(x[rng.integers(0, len(x), len(x))], y[rng.integers(0, len(y), len(y))])
                     for _ in range(resamples)])


def _boot_counts(x, y, rng, resamples) -> np.ndarray:
    """The bootstrap of :func:`_boot` for two samples of one size ``n``, without sorting a resample:
    both samples are sorted once together (``z``, ``2n`` values); a resample is the count of each
    value drawn (a ``bincount`` of the same ``rng.integers`` draws), placed at its value's place in
    ``z``, and ``n (F_x - F_y)`` of every resample at every value of ``z`` is one cumulative sum of
    ``count_x - count_y`` along ``z`` (integers: exact). Then ``W1 = sum |F_x - F_y| diff(z)`` (the
    area between the laws; for equal sizes the mean distance of the sorted samples, to rounding)
    and ``KS = max |F_x - F_y|`` read after the last of each run of equal values."""
    n = len(x)
    v = np.concatenate([x, y])
    order = np.argsort(v, kind="stable")
    z = v[order]
    where = np.empty(2 * n, dtype=np.int64)
    where[order] = np.arange(2 * n)  # the place of x[i] (then of y[i]) in z
    at_x, at_y = where[:n], where[n:]
    steps = np.empty((resamples, 2 * n), dtype=np.int64)
    for b in range(resamples):  # the resamples of _boot's loop, in its order
        row = np.bincount(at_x[rng.integers(0, n, n)], minlength=2 * n)
        row -= np.bincount(at_y[rng.integers(0, n, n)], minlength=2 * n)
        steps[b] = row
    np.cumsum(steps, axis=1, out=steps)
    np.abs(steps, out=steps)  # n |F_x - F_y| after each value of z
    w1 = np.einsum("ij,j->i", steps[:, :-1], np.diff(z)) / n  # no BLAS threads, no float copy
    last = z[1:] != z[:-1]
    ks = (steps.max(axis=1) if last.all() else steps[:, np.append(last, True)].max(axis=1)) / n
    return np.stack([w1, ks], axis=1)


def _basic(d: tuple, boot: np.ndarray) -> list:
    """The 95% basic bootstrap intervals of the distances ``d`` (clipped at 0)."""
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
    return [[max(0.0, 2 * v - float(h)), max(0.0, 2 * v - float(lo_))] for v, lo_, h in zip(d, lo, hi)]


def law_distances(ratios: np.ndarray, depths, *, seed: int = 0, resamples: int = BOOTSTRAP) -> dict:
    """``ratios`` ``(draws, len(depths) + 1)``: the norm ratios of every network, then the SDE's.
    Returns ``{'depths', 'draws' (per half), 'w1', 'w1_ci', 'ks', 'ks_ci', 'floor_w1', 'floor_w1_ci',
    'floor_ks', 'floor_ks_ci'}``: per depth the distances and intervals, and the floor's."""
    rng = np.random.default_rng(seed)
    half = len(ratios) // 2
    sde_a, sde_b = ratios[:half, -1], ratios[half:2 * half, -1]
    out = {"depths": list(depths), "draws": half, "w1": [], "w1_ci": [], "ks": [], "ks_ci": []}
    for j in range(len(depths)):
        net = ratios[:half, j]
        d = _both(net, sde_b)
        w1_ci, ks_ci = _basic(d, _boot(net, sde_b, rng, resamples))
        out["w1"].append(d[0])
        out["ks"].append(d[1])
        out["w1_ci"].append(w1_ci)
        out["ks_ci"].append(ks_ci)
    f = _both(sde_a, sde_b)
    w1_ci, ks_ci = _basic(f, _boot(sde_a, sde_b, rng, resamples))
    out.update(floor_w1=f[0], floor_ks=f[1], floor_w1_ci=w1_ci, floor_ks_ci=ks_ci)
    return out
