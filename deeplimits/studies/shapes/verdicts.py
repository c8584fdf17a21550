"""The two structural claims of the law as calibrated tests (docs/shapes.md, "The verdicts").

**Depth and width enter only through M L** (the L <-> M swap). For a cell ``(L, M, D)`` whose swap
``(M, L, D)`` is in the grid, each run gives ``r = log e(L, M, D) - log e(M, L, D)`` (the two share the
run's embeddings: a paired difference). With the mean ``r`` and its Student-t interval over runs
(``1 - 2 LEVEL``, two one-sided tests at :data:`~.presets.LEVEL`):

* ``agrees``: the interval lies within ``+-SWAP_MARGIN`` (an equivalence test: the errors are equal
  within about 10%);
* ``disagrees``: the interval lies outside ``+-SWAP_MARGIN`` (the errors differ by more than it);
* ``insufficient evidence`` otherwise (too few runs, or an interval across the margin).

Over several cells: ``agrees`` when every cell agrees (an intersection-union test, no correction),
``disagrees`` when a cell disagrees at level ``LEVEL / cells`` (Bonferroni), else insufficient.

**At fixed M L the error in D is U-shaped with its minimum near sqrt(b/a) sqrt(M L).** For an
``(L, M)`` whose embedding sizes reach beyond ``D* = sqrt(b/a) sqrt(M L)`` by a factor 2 on each
side, ``log e`` is fitted by a parabola in ``log D``: its curvature ``c2`` and its vertex. Over the
resamples of the runs (:func:`~.fit.resamples`, the law refitted to each: ``D*`` moves with them),
the ``LEVEL`` and ``1 - LEVEL`` percentiles of ``c2`` and of ``log(vertex / D*)``:

* ``agrees``: ``c2`` above :data:`~.presets.MIN_CURVATURE` and the vertex within a factor
  :data:`~.presets.VERTEX_MARGIN` of ``D*``;
* ``disagrees``: ``c2`` below :data:`~.presets.MIN_CURVATURE` (no U), or the vertex outside that factor;
* ``insufficient evidence`` otherwise. Over several slices: ``agrees`` when every slice agrees (an
  intersection-union test), ``disagrees`` when the same reading of the slices' mean curvature and mean
  vertex shift (one test, no correction) disagrees, else ``insufficient evidence``.

Each test states its power at the run's own size (normal approximation with the measured standard
error): the chance to agree were the claim exact, and to disagree against a stated departure (a ratio
``e^(2 SWAP_MARGIN)``; a flat curve). Their size and power over many seeded runs are measured by
:mod:`.calibration`.
"""

from __future__ import annotations

import math

import numpy as np

from .presets import LEVEL, MIN_CURVATURE, SWAP_MARGIN, VERTEX_MARGIN
from .fit import run_matrix

__all__ = ["AGREES", "DISAGREES", "INSUFFICIENT", "swap_test", "swap_tests", "ushape_stats", "read_ushape",
           "ushape_test", "ushape_tests", "combine"]

AGREES = "agrees"
"""The claim holds within its margin (an equivalence test)."""
DISAGREES = "disagrees"
"""The data depart from the claim by more than its margin."""
INSUFFICIENT = "insufficient evidence"
"""Neither can be told at this size."""
_FAR = 1e6  # the log-vertex shift of a resample with no minimum (a flat or capped parabola)


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def swap_test(first, second, *, level: float = LEVEL, margin: float = SWAP_MARGIN) -> dict:
    """The swap test of two cells' per-run errors (paired by run; runs not finite in both left out):
    ``ratio`` (``exp`` of the mean log-ratio), ``interval`` (of the log-ratio), ``verdict``, ``runs``,
    and the power at this size: ``power_agree`` (were the errors equal), ``power_disagree`` (against a
    log-ratio ``2 margin``)."""
    from scipy.special import stdtrit

    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
    r = np.log(a[ok]) - np.log(b[ok])
    n = len(r)
    out = {"runs": n, "ratio": math.nan, "interval": [math.nan, math.nan], "power_agree": math.nan,
           "power_disagree": math.nan}
    if n < 3:
        return {**out, "verdict": INSUFFICIENT, "why": f"{n} runs finite in both cells (needs 3)"}
    mean, se = float(r.mean()), float(r.std(ddof=1) / math.sqrt(n))
    t = float(stdtrit(n - 1, 1 - level))
    lo, hi = mean - t * se, mean + t * se
    se = max(se, 1e-300)
    out.update(ratio=math.exp(mean), interval=[lo, hi], power_agree=max(0.0, 2 * _phi((margin - t * se) / se) - 1),
               power_disagree=_phi((margin - t * se) / se))
    if -margin < lo and hi < margin:
        return {**out, "verdict": AGREES, "why": ""}
    if lo > margin or hi < -margin:
        return {**out, "verdict": DISAGREES, "why": ""}
    return {**out, "verdict": INSUFFICIENT, "why": f"the interval [{lo:.3f}, {hi:.3f}] crosses +-{margin:g}"}


def combine(tests: list, level: float = LEVEL) -> str:
    """The verdict of several tests: all agree -> ``agrees``; one disagrees at ``level / len(tests)``
    (each test's ``strong`` flag) -> ``disagrees``; else ``insufficient evidence``."""
    if not tests:
        return INSUFFICIENT
    if all(t["verdict"] == AGREES for t in tests):
        return AGREES
    if any(t.get("strong", t["verdict"] == DISAGREES) for t in tests):
        return DISAGREES
    return INSUFFICIENT


def swap_tests(cells: list, *, level: float = LEVEL, margin: float = SWAP_MARGIN) -> dict:
    """Every swap pair of ``cells`` (records with ``L``, ``M``, ``D`` and ``values``, the runs' errors):
    each :func:`swap_test` at ``level`` and, for the combined ``disagrees``, at ``level / pairs``."""
    key = {(c["L"], c["M"], c["D"]): c for c in cells}
    pairs = [(k, key[(k[1], k[0], k[2])]) for k in sorted(key) if k[0] < k[1] and (k[1], k[0], k[2]) in key]
    tests = []
    for (L, M, D), other in pairs:
        e1, e2 = run_matrix([key[(L, M, D)], other])
        t = swap_test(e1, e2, level=level, margin=margin)
        strict = swap_test(e1, e2, level=level / len(pairs), margin=margin)
        tests.append({"cell": [L, M, D], **t, "strong": strict["verdict"] == DISAGREES})
    why = "" if tests else "no cell whose swap (M, L, D) is in the grid"
    return {"tests": tests, "verdict": combine(tests, level), "why": why, "margin": margin, "level": level}




def _parabola(u: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Curvature and vertex of the least-squares parabola of ``y`` in ``u`` (vertex ``nan`` when not a minimum)."""
    c2, c1, _ = np.polyfit(u, y, 2)
    return float(c2), (float(-c1 / (2 * c2)) if c2 > 0 else math.nan)


def ushape_stats(D, values: np.ndarray, idx: np.ndarray, boot_params: np.ndarray, ML: float) -> np.ndarray:
    """``(resamples, 2)``: per resample of the runs (row 0: the data) the curvature of ``log e`` in
    ``log D`` and the log-ratio of its vertex to the law's ``D*`` (a parabola with no minimum: +-1e6);
    ``values`` ``(len(D), runs)``, ``boot_params`` the law's constants fitted to each resample."""
    u = np.log(np.asarray(D, dtype=np.float64))
    stats = []
    for i, p in zip(idx, boot_params):
        with np.errstate(invalid="ignore"):
            y = np.log(np.nanmean(values[:, i], axis=1))
        c2, v = _parabola(u, y) if np.all(np.isfinite(y)) else (math.nan, math.nan)
        star = 0.5 * math.log(p[1] / p[0] * ML) if p[0] > 0 and p[1] > 0 else math.nan
        stats.append((c2, v - star if math.isfinite(v) and math.isfinite(star) else math.inf))
    s = np.array(stats)
    s[:, 1] = np.clip(np.nan_to_num(s[:, 1], nan=_FAR, posinf=_FAR, neginf=-_FAR), -_FAR, _FAR)
    return s


def read_ushape(s: np.ndarray, *, level: float = LEVEL, vertex: bool = True) -> dict:
    """The U-shape reading of resample statistics ``s`` (:func:`ushape_stats`, or their mean over
    slices): curvature and vertex shift with their ``level`` / ``1 - level`` bounds, the verdict, and
    the power at this size (normal approximation with the resamples' spread). Without ``vertex`` (a law
    with no minimum to compare the vertex with) only the curvature is read: ``disagrees`` (no U) or
    ``insufficient evidence``."""
    c2, shift = (float(v) for v in s[0])
    c_lo, c_hi = np.nanquantile(s[1:, 0], [level, 1 - level])
    v_lo, v_hi = np.quantile(s[1:, 1], [level, 1 - level])
    m = math.log(VERTEX_MARGIN)
    se_c = float(np.nanstd(s[1:, 0]))
    finite = s[1:, 1][np.abs(s[1:, 1]) < _FAR]
    se_v = float(finite.std()) if len(finite) > 1 else math.inf
    z = _z(level)
    out = {"curvature": c2, "curvature_interval": [float(c_lo), float(c_hi)], "shift": shift,
           "shift_interval": [float(v_lo), float(v_hi)],
           "power_agree": _phi((c2 - MIN_CURVATURE) / se_c - z) * max(0.0, 2 * _phi((m - z * se_v) / se_v) - 1)
           if se_c > 0 and math.isfinite(se_v) and se_v > 0 else math.nan,
           "power_disagree": _phi(MIN_CURVATURE / se_c - z) if se_c > 0 else math.nan}
    if vertex and c_lo > MIN_CURVATURE and -m < v_lo and v_hi < m:
        return {**out, "verdict": AGREES}
    if c_hi < MIN_CURVATURE or (vertex and c_lo > MIN_CURVATURE and (v_lo > m or v_hi < -m)):
        return {**out, "verdict": DISAGREES}
    return {**out, "verdict": INSUFFICIENT}


def ushape_test(D, values: np.ndarray, idx: np.ndarray, boot_params: np.ndarray, ML: float, *,
                level: float = LEVEL) -> dict:
    """The U-shape test of one ``(L, M)``: ``D`` its embedding sizes, ``values`` ``(len(D), runs)`` its
    per-run errors, ``idx`` the resamples and ``boot_params`` the law's constants fitted to each
    (:func:`read_ushape` of :func:`ushape_stats`, and ``d_star``)."""
    out = read_ushape(ushape_stats(D, values, idx, boot_params, ML), level=level)
    p = boot_params[0]
    return {**out, "d_star": math.sqrt(p[1] / p[0] * ML) if p[0] > 0 else math.nan}


def _z(level: float) -> float:
    """The standard normal's ``1 - level`` quantile (``erfc`` inverted by bisection: no scipy needed)."""
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _phi(mid) < 1 - level else (lo, mid)
    return (lo + hi) / 2


def ushape_tests(cells: list, fit: dict, idx: np.ndarray, *, level: float = LEVEL) -> dict:
    """The U-shape test of every ``(L, M)`` of ``cells`` whose embedding sizes (at least 4) reach a
    factor 2 beyond the law's ``D*`` on each side (``fit``: :func:`~.fit.fit_with_intervals` of the
    hidden law, its ``boot`` fits for the resamples ``idx``); where the law is fitted with ``a`` or ``b``
    at 0 (no minimum in ``D``), of every ``(L, M)`` whose sizes span a factor 8, on its curvature alone
    (no U is no U; a U cannot be compared with a minimum the law does not have)."""
    a, b = fit["params"][0], fit["params"][1]
    minimum = a > 0 and b > 0
    slices: dict = {}
    for c in cells:
        slices.setdefault((c["L"], c["M"]), []).append(c)
    chosen = []
    for (L, M), group in sorted(slices.items()):
        group = sorted(group, key=lambda c: c["D"])
        D = [c["D"] for c in group]
        if minimum:  # the law's minimum, bracketed by a factor 2
            star = math.sqrt(b / a * M * L)
            take = D[0] <= star / 2 and D[-1] >= 2 * star
        else:  # a law fitted with no minimum in D: every slice spanning a factor 8, its curvature alone
            take = D[-1] >= 8 * D[0]
        if len(D) >= 4 and take:
            chosen.append(((L, M), D, run_matrix(group, runs=idx.shape[1])))
    tests, stats = [], []
    for (L, M), D, values in chosen:
        stats.append(ushape_stats(D, values, idx, fit["boot"], M * L))
        p = fit["boot"][0]
        tests.append({"slice": [L, M], "dims": D, **read_ushape(stats[-1], level=level, vertex=minimum),
                      "d_star": math.sqrt(p[1] / p[0] * M * L) if p[0] > 0 else math.nan})
    if not tests:
        return {"tests": [], "pooled": None, "verdict": INSUFFICIENT, "level": level, "margin": VERTEX_MARGIN,
                "min_curvature": MIN_CURVATURE,
                "why": "no (L, M) whose embedding sizes (at least 4) reach a factor 2 beyond D* on each side (or, "
                     "fitted with no minimum, span a factor 8)"}
    pooled = read_ushape(np.mean(stats, axis=0), level=level, vertex=minimum)
    verdict = DISAGREES if pooled["verdict"] == DISAGREES else AGREES if all(
        t["verdict"] == AGREES for t in tests) else INSUFFICIENT
    return {"tests": tests, "pooled": pooled, "verdict": verdict, "why": "", "level": level, "margin": VERTEX_MARGIN,
            "min_curvature": MIN_CURVATURE}
