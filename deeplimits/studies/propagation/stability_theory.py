"""Each bound of :mod:`deeplimits.studies.theory` beside its measured counterpart, for the
records of a stability study (:class:`~deeplimits.studies.propagation.result.StabilityResult`; docs/theory.md)."""

from __future__ import annotations

import math

import numpy as np

from ..fits import bootstrap_fit
from .core import CAP
from ..theory import QUANTILE_LEVELS, growth_exponent, predicted_slope, quantile_bound
from ..theory_conditions import is_structural

__all__ = ["quantiles", "fits", "theory_lines", "fit_lines", "ratio_statistics", "lognormal_fit"]


def quantiles(cell: dict, beta: float, depth: int) -> dict | None:
    """The empirical quantiles of ``r_h^2``, ``r_p^2`` at :data:`QUANTILE_LEVELS` beside
    :func:`quantile_bound`; ``None`` when ``L a^2 > 1``."""
    bound = [quantile_bound(beta, depth, 1.0 - u) for u in QUANTILE_LEVELS]
    if bound[0] is None:
        return None
    q = {k: np.quantile(cell[k].ravel() ** 2, QUANTILE_LEVELS).tolist() for k in ("r_h", "r_p")}
    return {"levels": list(QUANTILE_LEVELS), "bound": bound, "r_h_sq": q["r_h"], "r_p_sq": q["r_p"]}


def _per_draw(x: np.ndarray) -> np.ndarray:
    """``(draws, depths, inputs)`` -> ``(draws, depths)``: the geometric mean over the inputs of a
    draw (they share its weights, so the bootstrap resamples draws)."""
    with np.errstate(divide="ignore"):
        out = np.exp(np.log(x).mean(-1))
    exploded = (x >= CAP).any(-1).any(0)  # per depth: a capped ratio is not a value to fit
    out[:, exploded] = np.inf
    return out


def _fit(depths, x: np.ndarray, feature) -> tuple | None:
    """:func:`~deeplimits.studies.fits.bootstrap_fit` of the median over draws of ``x``
    ``(draws, depths)`` on ``feature(L)``, over the depths whose median is positive and below
    :data:`CAP`; ``None`` with fewer than two such depths. Returns ``(slope, intercept, ci, depths)``."""
    med = np.median(x, axis=0)
    keep = (med > 0) & np.isfinite(med)  # a depth where any draw exploded is dropped (see _per_draw)
    if keep.sum() < 2:
        return None
    used = [int(L) for L, k in zip(depths, keep) if k]
    slope, intercept, ci = bootstrap_fit(feature(np.asarray(used, dtype=np.float64)), x[:, keep], np.median)
    return slope, intercept, ci, used


def fits(spec: dict, a: dict, driver) -> list[dict]:
    """The slope of ``log median r_h`` on ``log L`` and, where :func:`growth_exponent` states
    one, the growth law of ``median r_h_max``, per beta (:class:`StabilityResult`)."""
    out = []
    for i, beta in enumerate(spec["betas"]):
        gamma = growth_exponent(driver, beta)
        f = {"beta": beta, "slope": None, "slope_ci": [None, None], "depths": [],
             "slope_predicted": predicted_slope(driver, beta), "growth_exponent": gamma}
        slope = _fit(spec["depths"], _per_draw(a["r_h"][:, :, i, :]), np.log)
        if slope is not None:
            f.update(slope=slope[0], slope_ci=list(slope[2]), depths=slope[3])
        if gamma is not None and "r_h_max" in a:
            growth = _fit(spec["depths"], _per_draw(a["r_h_max"][:, :, i, :]), lambda L: L ** gamma)
            if growth is not None:
                f.update(growth_lambda=growth[0], growth_intercept=growth[1], growth_lambda_ci=list(growth[2]),
                         growth_depths=growth[3])
        out.append(f)
    return out


def theory_lines(r: dict, delta: float) -> list[str]:
    """The report lines of one record's theory: quartiles of the norm ratios beside the
    high-probability bounds, the quantile bound, the limits of the bounds on E r^2."""
    head = f"beta {r['beta']:g}, L={r['depth']}:"
    q = lambda s: f"{s['q25']:.4g} / {s['median']:.4g} / {s['q75']:.4g}"  # noqa: E731
    out = [f"{head} quartiles of ||h_L||/||h_0|| {q(r['norm_ratio_h'])}, of ||p_0||/||p_L|| {q(r['norm_ratio_p'])}"]
    out += _condition_lines(head, r, delta)
    if r["quantiles"] is not None:
        qs = r["quantiles"]
        k = qs["levels"].index(0.75)
        out.append(f"{head} P(r^2 > 2 L a^2 / delta) <= delta: at delta = 0.25 the bound is {qs['bound'][k]:.4g}, "
                   f"the 0.75-quantiles of r_h^2, r_p^2 are {qs['r_h_sq'][k]:.4g}, {qs['r_p_sq'][k]:.4g}")
    if r.get("limit_lower") is not None:
        out.append(f"{head} as L -> infinity the bounds on E r^2 tend to [{r['limit_lower']:.4f}, "
                   f"{r['limit_upper']:.4f}] (e^(1/2) - 1, e - 1); measured E r_h^2 = {r['r_h']['mean_sq']:.4f}, "
                   f"E r_p^2 = {r['r_p']['mean_sq']:.4f}")
    return out


def _condition_lines(head: str, r: dict, delta: float) -> list[str]:
    """The high-probability bounds, where they are about this network (res-3, (A1)), and every
    condition of each bound with its numbers (``[met]`` / ``[UNMET]``)."""
    conds = r.get("hp_conditions")
    if conds is None:  # a record summarised before the conditions were computed
        return []
    if not all(c["holds"] for c in conds if is_structural(c)):
        why = "; ".join(dict.fromkeys(c["text"] for c in conds if not c["holds"]))
        return [f"{head} the high-probability bounds are not stated for this network: {why}"]
    hi = "inf" if r["hp_upper"] is None else f"{r['hp_upper']:.4f}"
    out = [f"{head} with probability >= {1 - delta:g} each, ||h_L||/||h_0|| >= {r['hp_lower']:.4f} and <= {hi}"]
    k = r.get("hp_constants")
    if k is not None:
        out.append(f"{head} constants: s = {k['s']:g} (A1), C = {k['C']:.5g} (A2; {k['C_method']})")
    for b in ("lower", "upper"):
        mine = [c for c in conds if c["bound"] == b and not is_structural(c)]
        verdict = "all met" if all(c["holds"] for c in mine) else "NOT all met: the bound is not proved here"
        out.append(f"{head} conditions of the {b} bound ({verdict}): "
                   + "; ".join(f"[{'met' if c['holds'] else 'UNMET'}] {c['text']}" for c in mine))
    return out


def fit_lines(f: dict) -> list[str]:
    """The report lines of the fitted laws of one beta."""
    if f["slope"] is None:
        return []
    ci = lambda c: "" if c[0] is None or not math.isfinite(c[0]) else f" [{c[0]:.3f}, {c[1]:.3f}]"  # noqa: E731
    pred = "-" if f["slope_predicted"] is None else f"{f['slope_predicted']:.3f}"
    out = [f"beta {f['beta']:g}: log-log slope of median r_h on L = {f['slope']:.3f}{ci(f['slope_ci'])} "
           f"(predicted rho - beta = {pred}; depths {f['depths'][0]}..{f['depths'][-1]})"]
    if f.get("growth_lambda") is not None:
        out.append(f"beta {f['beta']:g}: max_k ||h_k - h_0||/||h_0|| ~ exp({f['growth_intercept']:.3f} + lambda "
                   f"L^{f['growth_exponent']:.3g}) with lambda = {f['growth_lambda']:.4f}{ci(f['growth_lambda_ci'])} "
                   f"(depths {f['growth_depths'][0]}..{f['growth_depths'][-1]})")
    return out


def ratio_statistics(x: np.ndarray) -> dict:
    """``mean``, ``median``, quartiles ``q25``/``q75`` and ``mean_sq`` of the ratios ``x``."""
    return {"mean": float(x.mean()), "median": float(np.median(x)), "q25": float(np.quantile(x, 0.25)),
            "q75": float(np.quantile(x, 0.75)), "mean_sq": float((x ** 2).mean())}


def lognormal_fit(x: np.ndarray) -> dict | None:
    """The normal fit ``(mu, sigma)`` of ``log x`` over the finite positive ratios (below :data:`CAP`)
    with the D'Agostino-Pearson test (``statistic``, ``pvalue``, ``n``); ``None`` under 20 values."""
    from .._normality import normaltest

    y = np.log(x[(x < CAP) & (x > 0)])
    if len(y) < 20:
        return None
    statistic, pvalue = normaltest(y)
    return {"mu": float(y.mean()), "sigma": float(y.std(ddof=1)), "statistic": statistic, "pvalue": pvalue,
            "n": int(len(y))}
