"""Distances between trained networks of a depth family and its reference depth, and the rule
that reads their decay with depth (docs/trained-limit.md).

For a depth ``L`` dividing the reference depth ``R`` (layer ``k`` of depth ``L`` sits at time
``k/L``, as does layer ``k R / L`` of the reference):

* the weight distance ``max_k ||A^(L)_k - A^(R)(k/L)||`` (Frobenius norm, the largest over the
  residual weights ``V``, ``W``), per configuration;
* the hidden-state distance ``sup_k ||h^(L)_k - h^(R)_(k/L)||`` on each input, averaged over the
  inputs (as the strong error ``E max_k ||H_{k/L} - h_k||`` of docs/mathematics.md), per configuration.

A family has a common limit when these fall with depth. :func:`rate_test` reads a distance's
decay as a test at level :data:`LEVEL` (docs/trained-limit.md, "The verdict is a test"):

* the statistic is the rate ``-slope`` of ``log (mean over seeds of the distance)`` against
  ``log L``, over all depths and over the deepest depths (:func:`deep_window`), each with the
  one-sided bounds of a jackknife-over-seeds Student-t interval at level :data:`LEVEL` (together
  a ``1 - 2 LEVEL`` interval);
* ``'no common limit'`` rejects "the distance falls at least as ``L^-MIN_RATE``" (H0: the rate
  over the deepest depths is at least :data:`MIN_RATE`): the upper bound of the deep rate lies
  below :data:`MIN_RATE`;
* ``'falls'`` rejects "the distance does not fall as ``L^-MIN_RATE``" (H0: a rate below
  :data:`MIN_RATE` over all depths or over the deepest ones: a constant, a plateau, a slow
  decay): both lower bounds lie above :data:`MIN_RATE`, the margin (an intersection-union test:
  level :data:`LEVEL` without correction); its power at the run's size against a rate of
  :data:`POWER_RATE` is reported beside it (:func:`falls_power`);
* anything else, and too little evidence (fewer than :data:`MIN_DEPTHS` depths, a span under
  :data:`MIN_SPAN`, fewer than :data:`MIN_SEEDS` finite seeds), is ``'insufficient evidence'``,
  with what is missing in words.

``benchmarks/calibrate_trained_verdict.py`` measures how often each verdict is wrong.
"""

from __future__ import annotations

import math

import torch

__all__ = ["on_grid", "weight_distance", "state_distance", "MIN_RATE", "LEVEL", "MIN_DEPTHS", "MIN_SPAN", "MIN_SEEDS",
           "ZERO", "INSUFFICIENT", "rate_interval", "deep_window", "missing_evidence", "rate_test", "limit_verdict",
           "reference_slope", "family_verdict", "falls_power", "POWER_RATE"]

MIN_RATE = 0.25
"""The rate that separates the hypotheses: a distance "falls" when it falls at least as ``L^-1/4``."""
LEVEL = 0.01
"""The level of each verdict's test: the chance that it says ``'falls'`` of a distance that does not
fall as ``L^-MIN_RATE``, or ``'no common limit'`` of one that does, is at most this."""
MIN_DEPTHS = 4
"""The fewest depths a verdict reads (fewer: ``'insufficient evidence'``)."""
MIN_SPAN = 4
"""The smallest ratio of the deepest to the shallowest depth a verdict reads."""
MIN_SEEDS = 3
"""The fewest finite seeds (independent families) a verdict reads."""
INSUFFICIENT = "insufficient evidence"
"""The verdict when the evidence cannot decide (stored results before it read ``'inconclusive'``)."""
ZERO = 1e-12
"""Distances at most this times the size of the reference are zero (the same numbers, up to rounding)."""


def on_grid(snap: dict, depth: int, finest: int) -> dict:
    """A reference :func:`~deeplimits.training.family.snapshot` kept on the grid of the finest
    depth ``finest``, read on the grid ``k / depth`` (``depth`` divides ``finest``)."""
    s = finest // depth
    return {"weights": {n: w[s - 1::s] for n, w in snap["weights"].items()}, "states": snap["states"][::s]}


def weight_distance(weights: dict, reference: dict) -> torch.Tensor:
    """``max_k ||A_k - A^ref_k||`` (Frobenius, the largest over the names) per configuration
    ``(C,)``: ``weights`` and ``reference`` map names to ``(L, C, ...)`` tensors on one grid."""
    out = None
    for name, w in weights.items():
        d = (w - reference[name]).flatten(2).norm(dim=-1).amax(0)
        out = d if out is None else torch.maximum(out, d)
    return out


def state_distance(states: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """``mean_inputs max_k ||h_k - h^ref_k||`` per configuration ``(C,)`` of states
    ``(L + 1, C, n, d)`` on one grid."""
    return (states - reference).norm(dim=-1).amax(0).mean(-1)


def reference_slope(depths, reference: int, rate: float = 1.0) -> float:
    """The least-squares slope of ``log(L^-rate - R^-rate)`` against ``log L`` over ``depths``:
    what a distance ``c (L^-rate - R^-rate)`` to a reference of finite depth ``R`` shows (slightly
    steeper than ``-rate``: e.g. -1.034 over 8..256 against R = 2048)."""
    xs = [math.log(L) for L in depths]
    ys = [math.log(L ** -rate - reference ** -rate) for L in depths]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def rate_interval(depths, table, level: float = LEVEL) -> tuple[float, float, float]:
    """``(rate, lower, upper)``: the rate ``-slope`` of ``log (mean over seeds)`` of ``table``
    ``(seeds, depths)`` (positive values) against ``log depths``, and the one-sided bounds at
    ``level`` of its jackknife Student-t interval over seeds (``rate -+ t_(n-1, 1-level) se``,
    ``se`` the jackknife standard error of the ``n`` leave-one-seed-out rates). NaN bounds below
    two seeds, NaN throughout below two depths."""
    import numpy as np
    from scipy.special import stdtrit

    x = np.log(np.asarray(depths, dtype=np.float64))
    t = np.asarray(table, dtype=np.float64).reshape(-1, len(x))
    if len(x) < 2 or len(t) == 0:
        return math.nan, math.nan, math.nan
    xc = x - x.mean()

    def rate(rows):
        return float(-(np.log(np.maximum(rows.mean(0), 1e-300)) * xc).sum() / (xc ** 2).sum())

    r, n = rate(t), len(t)
    if n < 2:
        return r, math.nan, math.nan
    loo = np.array([rate(np.delete(t, i, 0)) for i in range(n)])
    se = math.sqrt((n - 1) / n * float(((loo - loo.mean()) ** 2).sum()))
    q = float(stdtrit(n - 1, 1 - level))
    return r, r - q * se, r + q * se


def deep_window(depths) -> list[int]:
    """The deepest depths (sorted) whose rate the verdict also reads: the deepest half, at least
    :data:`MIN_DEPTHS` of them, widened to shallower depths until they span :data:`MIN_SPAN` (all
    the depths when they are fewer)."""
    depths = sorted(depths)
    k = min(len(depths), max(MIN_DEPTHS, -(-len(depths) // 2)))
    while k < len(depths) and depths[-1] < MIN_SPAN * depths[-k]:
        k += 1
    return depths[-k:]


def missing_evidence(depths, seeds: int) -> str:
    """What a family lacks before a verdict can read it (``''``: nothing): at least
    :data:`MIN_DEPTHS` distinct depths spanning a factor :data:`MIN_SPAN`, :data:`MIN_SEEDS` finite seeds."""
    depths, out = sorted(set(depths)), []
    if len(depths) < MIN_DEPTHS:
        out.append(f"{len(depths)} depths (needs at least {MIN_DEPTHS})")
    if depths and depths[-1] < MIN_SPAN * depths[0]:
        out.append(f"depths spanning a factor {depths[-1] / depths[0]:g} (needs at least {MIN_SPAN})")
    if seeds < MIN_SEEDS:
        out.append(f"{seeds} finite seeds (needs at least {MIN_SEEDS})")
    return "; ".join(out)


def rate_test(depths, table, *, level: float = LEVEL, zero: bool = False) -> dict:
    """The verdict on a distance ``table`` ``(finite seeds, depths)``: ``rate`` and ``ci`` (the
    bounds of :func:`rate_interval` over all depths), ``deep_depths``, ``deep_rate`` and ``deep_ci``
    (the same over :func:`deep_window`), ``verdict`` (:func:`limit_verdict`) and ``missing`` (why
    the evidence is insufficient, ``''`` otherwise). ``zero``: the distance is zero at every depth."""
    depths = [int(L) for L in depths]
    deep = deep_window(depths)
    nan = {"rate": math.nan, "ci": [math.nan, math.nan], "deep_depths": deep, "deep_rate": math.nan,
           "deep_ci": [math.nan, math.nan]}
    if zero:
        return {**nan, "verdict": limit_verdict(None, None, zero=True), "missing": ""}
    import numpy as np

    table = np.asarray(table, dtype=np.float64).reshape(-1, len(depths))
    missing = missing_evidence(depths, len(table))
    if missing:
        return {**nan, "verdict": INSUFFICIENT, "missing": missing}
    r, lo, hi = rate_interval(depths, table, level)
    d, dlo, dhi = rate_interval(deep, table[:, [depths.index(L) for L in deep]], level)
    out = {"rate": r, "ci": [lo, hi], "deep_depths": deep, "deep_rate": d, "deep_ci": [dlo, dhi],
           "power": min(falls_power((lo, hi), level), falls_power((dlo, dhi), level))}
    verdict = limit_verdict(r, (lo, hi), deep_ci=(dlo, dhi))
    if verdict != INSUFFICIENT:
        return {**out, "verdict": verdict, "missing": ""}
    where = "" if len(deep) == len(depths) else f" (deepest {len(deep)}: [{dlo:.2f}, {dhi:.2f}])"
    return {**out, "verdict": verdict, "missing": f"the rate's {100 * (1 - 2 * level):g}% interval [{lo:.2f}, "
                                                  f"{hi:.2f}]{where} does not decide against {MIN_RATE:g}: more seeds"}


POWER_RATE = 0.5
"""The rate a family with a limit shows at least (an SDE limit's strong rate): :func:`falls_power` is the
chance of ``'falls'`` against it."""


def falls_power(ci, level: float = LEVEL) -> float:
    """The chance that the rate's lower bound clears :data:`MIN_RATE` (``'falls'``) at this run's size
    when the true rate is :data:`POWER_RATE`: ``Phi((POWER_RATE - MIN_RATE) / s - z)``, ``s`` the rate's
    standard error read from its ``1 - 2 level`` interval ``ci``, ``z`` the ``1 - level`` quantile."""
    from .._stats import normal_cdf, normal_quantile

    lo, hi = ci
    if lo is None or hi is None or not math.isfinite(hi - lo):
        return 0.0
    z = normal_quantile(1 - level)
    s = (hi - lo) / (2 * z)
    return 1.0 if s <= 0 else normal_cdf((POWER_RATE - MIN_RATE) / s - z)


def limit_verdict(rate: float | None, ci, *, zero: bool = False, deep_ci=None) -> str:
    """The decision of :func:`rate_test` from the bounds ``ci = (lower, upper)`` of the rate over
    all depths and ``deep_ci`` over the deepest ones (default: ``ci``), each one-sided at :data:`LEVEL`.

    * ``'zero'``: the distance is zero at every depth (``zero``: the same numbers up to rounding);
    * ``'falls'``: both lower bounds lie above :data:`MIN_RATE` (the distance falls at least as
      ``L^-1/4``, over all depths and at the deep end: the depths approach a common limit);
    * ``'no common limit'``: the deep upper bound lies below :data:`MIN_RATE` (at the deepest
      depths the distance does not fall as any practical rate would make it);
    * ``'insufficient evidence'`` (:data:`INSUFFICIENT`): anything else (an interval that holds
      :data:`MIN_RATE`, or one that is not finite).
    """
    if zero:
        return "zero"
    lo, hi = (math.nan, math.nan) if ci is None else ci
    dlo, dhi = (lo, hi) if deep_ci is None else deep_ci
    if rate is None or not all(v is not None and math.isfinite(v) for v in (rate, lo, hi, dlo, dhi)):
        return INSUFFICIENT
    if lo > MIN_RATE and dlo > MIN_RATE:
        return "falls"
    if dhi < MIN_RATE:
        return "no common limit"
    return INSUFFICIENT


def family_verdict(weights: str, states: str) -> str:
    """What a family's two readings (:func:`limit_verdict` of the weight and of the hidden-state
    distance) say together: ``'common limit'`` (both fall, or the weights are equal and the
    states fall), ``'states converge, weights do not'`` (e.g. i.i.d. weights read off one
    Brownian path: an SDE limit of the states, none of the weights), ``'no common limit'`` (the
    hidden states do not approach each other), else ``'insufficient evidence'``."""
    if states == "no common limit":
        return "no common limit"
    if states in ("falls", "zero"):
        if weights in ("falls", "zero"):
            return "common limit"
        if weights == "no common limit":
            return "states converge, weights do not"
    return INSUFFICIENT
