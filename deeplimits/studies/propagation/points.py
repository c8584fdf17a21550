"""The measured points of the propagation studies as tidy rows (``points()`` of
:class:`~.result.StabilityResult`, :class:`~.result.PhaseResult` and
:class:`~.boundary.BoundaryResult`,
:mod:`~deeplimits.studies._shared.points`)."""

from __future__ import annotations

import math

from .._shared.points import point, seed_mean, setting

__all__ = ["stability_points", "phase_points", "boundary_points"]


def stability_points(result) -> list[dict]:
    """Per ``(beta, depth)``: the median, quartiles and mean square of ``r_h`` and ``r_p`` over every
    (draw, input) (``r_h_median``, ...), the mean of ``r_h`` and ``r_p`` with a standard error over
    the (draw, input) pairs (inputs of one draw share its weights: a lower bound), and the
    exploded draws."""
    out, n = [], result.draws * result.inputs
    for r in result.records:
        where = setting(beta=r["beta"], driver=r.get("driver"))
        for key in ("r_h", "r_p"):
            s = r[key]
            var = None if s["mean_sq"] is None or s["mean"] is None else s["mean_sq"] - s["mean"] ** 2
            se = math.sqrt(var / n) if var is not None and var >= 0 and n > 1 else None
            out += [point("stability", where, r["depth"], f"{key}_mean", s["mean"], se)]
            out += [point("stability", where, r["depth"], f"{key}_{k}", s[k]) for k in ("median", "q25", "q75", "mean_sq")]
        out.append(point("stability", where, r["depth"], "exploded", r["exploded"]))
    return out


def phase_points(result) -> list[dict]:
    """Per ``(H, beta)`` at the study's depth: the means of ``log10 r_h`` and ``log10 r_p`` (and of
    the corrected network's, where run) and the exploded (draw, input) pairs; at the short depth
    the mean ``log10 r_h`` where it was measured."""
    grids = {"log10_rh": result.log10_rh, "log10_rp": result.log10_rp, "exploded": result.exploded,
             "log10_rh_corrected": result.log10_rh_corrected, "log10_rp_corrected": result.log10_rp_corrected}
    out = []
    for i, h in enumerate(result.hurst):
        for j, b in enumerate(result.beta):
            where = setting(hurst=h, beta=b)
            out += [point("phase", where, result.depth, q, g[i][j]) for q, g in grids.items() if g is not None]
            if result.log10_rh_short is not None:
                out.append(point("phase", where, result.short_depth, "log10_rh", result.log10_rh_short[i][j]))
    return out


def boundary_points(result) -> list[dict]:
    """Per ``(H, beta)`` and depth: the means over draws of the per-draw mean ``log10 r_p`` and
    ``log10 r_h`` with their standard errors; per ``H`` and depth: the crossings ``crossing_p``
    and ``crossing_h`` (the beta where the mean crosses 0) with their 95% bootstrap intervals."""
    out = []
    for i, h in enumerate(result.hurst):
        for b_i, b in enumerate(result.beta):
            where = setting(hurst=h, beta=b)
            for l_i, L in enumerate(result.depths):
                for q, grid in (("log10_rp", result.log10_rp), ("log10_rh", result.log10_rh)):
                    out.append(point("phase-boundary", where, L, q, *seed_mean(d[l_i][b_i] for d in grid[i])))
    for rec in result.summary():
        where = setting(hurst=rec["hurst"])
        for q in ("crossing_p", "crossing_h"):
            out += [point("phase-boundary", where, L, q, v, ci=ci)
                    for L, v, ci in zip(result.depths, rec[q], rec[q + "_ci"])]
    return out
