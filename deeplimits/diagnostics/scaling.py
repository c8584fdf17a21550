"""Exponents of the weight diagnostics across a family of depths (docs/weights.md): the slope
of ``log diagnostic`` against ``log L`` by least squares, with a Student-t confidence interval
(one value per depth: no draws to resample), and the steps of Cohen, Cont, Rossier & Xu (ICML
2021, §2.3):

* step 2: the weight exponent ``beta`` is one minus the slope of the CUMULATIVE-SUM norm
  (``max_k ||sum_{j<k} A_j|| ~ L^(1 - beta)``). Minus the slope of the max norm
  (``beta_max``) is the same number only for a pure trend: a noise part of size ``L^-1/2``
  is the largest weight when ``beta > 1/2``;
* step 3: ``scaled_increments``, the exponent of ``L^beta max_k ||A_{k+1} - A_k||`` (``-nu``
  under Hypothesis 1 with a nu-Hölder limit; ``nu`` is reported when it is positive);
* steps 4 and 5: the exponents of the noise part's quadratic variation and of the root sum of
  squares, and the noise part's size beside the weights (:func:`noise_fraction`);
* step 6 (Cohen et al., §3.2): the exponent of ``layers_90``, the fewest layers holding 90% of
  ``sum_k ||A_k||^2`` at each depth (``L^0``: a few layers carry the weight, the sparse regime);
  :mod:`.verdict` weighs them.

Beside them, :func:`released_statistics`: what the released code's ReLU figures fit
(instadeepai/scaling-resnets, ``plots_fully_connected.py``): minus the slope of the MAX norm
of ``|delta_k| A_k`` (its "beta", which is alpha + beta here), the slope of the increment norm
multiplied by ``L^0.5`` (synthetic) or ``L^0.4`` (MNIST) before the fit, and the slope of the
root sum of squares; the cumulative-sum statistics of ``regression.py`` are not called there.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

from .. import _validate as V_
from .._plain import PlainData
from ..errors import ParameterError
from .measures import WeightDiagnostics
from .verdict import hypothesis, verdict_line, weigh_evidence

__all__ = ["interval", "loglog_fit", "scaling_exponents", "Exponents", "SCALED", "hypothesis", "weigh_evidence",
           "noise_fraction", "verdict_line", "released_statistics", "RELEASED_FACTORS"]

#: the diagnostics whose exponent is fitted (the Hurst indices are not powers of L)
SCALED = ("max_norm", "increment_norm", "cumsum_norm", "rss", "quadratic_variation", "noise_qv", "layers_90")


def interval(ci) -> str:
    """``'[lo, hi]'`` to three decimals, or ``''`` when there is none (two depths, a failed fit)."""
    lo, hi = ci
    return "" if lo is None or not math.isfinite(lo) else f"[{lo:.3f}, {hi:.3f}]"


def _level(level) -> float:
    return V_.real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)


def loglog_fit(depths: Sequence[float], values: Sequence[float], level: float = 0.95) -> tuple[float, tuple]:
    """Slope of ``log values`` on ``log depths`` and its ``level`` Student-t interval
    (``nan`` bounds with two depths; ``nan`` slope with fewer, or with a value 0, which has no
    logarithm). ``depths``: finite reals > 0; ``values``: one finite real >= 0 per depth;
    ``level`` in (0, 1)."""
    depths = V_.sequence("depths", depths, lambda L: V_.real("depths", L, low=0.0, low_open=True),
                         what="a list of depths > 0")
    values = V_.sequence("values", values, lambda v: V_.real("values", v, low=0.0), what="a list of values >= 0")
    if len(values) != len(depths):
        raise ParameterError("values", f"values must have one value per depth ({len(depths)} depths), got {len(values)}")
    return _loglog_fit(depths, values, _level(level))


def _loglog_fit(depths, values, level: float = 0.95) -> tuple[float, tuple]:
    """:func:`loglog_fit` without the checks (non-finite or negative values give ``nan``)."""
    from scipy import stats

    x, y = np.log(np.asarray(depths, dtype=float)), np.asarray(values, dtype=float)
    if len(x) < 2 or not np.all(y > 0) or len(set(x.tolist())) < 2:
        return math.nan, (math.nan, math.nan)
    y = np.log(y)
    dx = x - x.mean()
    slope = float(dx @ (y - y.mean()) / (dx @ dx))
    if len(x) < 3:
        return slope, (math.nan, math.nan)
    # the residuals' standard error written out: scipy's linregress gives NaN for a constant y (an exact fit)
    resid = y - y.mean() - slope * dx
    stderr = math.sqrt(float(resid @ resid) / (len(x) - 2) / float(dx @ dx))
    half = float(stats.t.ppf((1 + level) / 2, len(x) - 2)) * stderr
    return slope, (slope - half, slope + half)


@dataclasses.dataclass
class Exponents(PlainData):
    """``exponents``: name -> ``{'value', 'ci'}`` for the slope of each diagnostic on ``L``,
    ``beta`` (step 2: one minus the cumulative-sum slope), ``beta_max`` (minus the max-norm
    slope), ``scaled_increments`` (step 3) and ``nu`` (minus it, when positive); ``depths`` the
    family's depths; ``hurst``, ``noise_hurst``: the median Hurst indices of ``A`` and of its
    noise part over the depths; ``noise_fraction``: the noise part's size beside the weights
    at the deepest depth (:func:`noise_fraction`); ``hypothesis`` and ``reason``: the verdict
    (:func:`hypothesis`), ``evidence``: each step against what each hypothesis predicts
    (:func:`weigh_evidence`)."""

    name: str
    """The tensor's name."""
    depths: list
    """The family's depths."""
    exponents: dict
    """Name -> ``{'value', 'ci'}`` (see above)."""
    hypothesis: str
    """The verdict: smooth, rough, sparse, neither or insufficient evidence
    (:func:`~deeplimits.diagnostics.verdict.hypothesis`)."""
    reason: str
    """The evidence for and against it, in words."""
    evidence: list = dataclasses.field(default_factory=list)
    """Each step against what each hypothesis predicts (:func:`~deeplimits.diagnostics.verdict.weigh_evidence`)."""
    hurst: float = math.nan
    """The median Hurst index of ``A`` over the depths."""
    noise_hurst: float = math.nan
    """The median Hurst index of its noise part over the depths."""
    noise_fraction: float = math.nan
    """The noise part's size beside the weights at the deepest depth."""

    def report(self) -> str:
        """The exponents with their intervals, one per line, the evidence, then the verdict."""
        lines = [f"{self.name}: exponents over depths {self.depths} (log-log slope, 95% CI)"]
        for k, v in self.exponents.items():
            ci = " " + interval(v["ci"])
            lines.append(f"  {k:>20} {v['value']:8.3f}{ci}")
        lines += evidence_lines(self.evidence)
        lines.append(verdict_line(self.hypothesis, self.reason))
        return "\n".join(lines)


def evidence_lines(evidence: list) -> list[str]:
    """The evidence as a table: step, quantity, measured, what each hypothesis predicts, agrees
    (with H1 / H2), and what Hypothesis 3 (sparse) predicts and whether it agrees (``yes``, ``no``,
    blank: no prediction, or evidence weighed before it existed)."""
    if not evidence:
        return []
    rows = [("step", "quantity", "measured", "Hypothesis 1", "Hypothesis 2", "agrees", "H3 (sparse)", "")]
    yes = {True: "yes", False: "no", None: ""}
    rows += [(str(e["step"]), e["name"], e["measured"], e["H1"].split(" (")[0], e["H2"].split(" (")[0], e["agrees"],
              e.get("H3", "").split(" (")[0], yes[e.get("agrees_H3")]) for e in evidence]
    widths = [max(len(r[i]) for r in rows) for i in range(8)]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def scaling_exponents(family: Sequence[WeightDiagnostics], level: float = 0.95, *,
                      trend_ratio: float | None = None) -> Exponents:
    """The exponents of one tensor's diagnostics across the depths of ``family`` (a list of
    :class:`WeightDiagnostics`, one per depth, at least two distinct depths), with ``level``
    (in (0, 1)) intervals, and the verdict they support; ``trend_ratio`` (``None`` or a
    number), for trained weights, the loss of the network rebuilt from their trend over the
    original's at the deepest depth, weighed with the rest."""
    family = V_.sequence("family", family, what="a list of WeightDiagnostics (one per depth)")
    bad = [type(d).__name__ for d in family if not isinstance(d, WeightDiagnostics)]
    if bad:
        raise ParameterError("family", f"family must hold WeightDiagnostics (one per depth), got a {bad[0]}")
    level = _level(level)
    family = sorted(family, key=lambda d: d.depth)
    depths = [d.depth for d in family]
    if len(set(depths)) < 2:
        raise ParameterError("family", f"family must hold at least two distinct depths, got {depths}")
    out = {name: _fit(depths, [getattr(d, name) for d in family], level) for name in SCALED}
    c = out["cumsum_norm"]
    out["beta"] = {"value": 1 - c["value"], "ci": [1 - c["ci"][1], 1 - c["ci"][0]]}
    m = out["max_norm"]
    out["beta_max"] = {"value": -m["value"], "ci": [-m["ci"][1], -m["ci"][0]]}
    beta = out["beta"]["value"]
    raw = [d.increment_norm / float(d.depth) ** d.beta for d in family]  # the increments unscaled
    s = _fit(depths, [v * float(d.depth) ** beta if math.isfinite(beta) else math.nan for v, d in zip(raw, family)],
             level)
    out["scaled_increments"] = s
    if s["value"] < 0:
        out["nu"] = {"value": -s["value"], "ci": [-s["ci"][1], -s["ci"][0]]}
    hurst = _median([d.hurst for d in family])
    noise_hurst = _median([d.noise_hurst for d in family])
    kw = dict(noise_hurst=noise_hurst, trend_ratio=trend_ratio, noise_fraction=noise_fraction(family))
    verdict, reason = hypothesis(out, hurst, depths=depths, **kw)
    return Exponents(family[0].name, depths, out, verdict, reason, weigh_evidence(out, **kw), hurst, noise_hurst,
                     kw["noise_fraction"])


def noise_fraction(family: Sequence[WeightDiagnostics]) -> float:
    """The noise part's root sum of squares over the weights' (``sqrt(noise_qv) / rss``) at the
    deepest depth where it is measured (NaN where it is not: fewer than 20 layers)."""
    for d in sorted(family, key=lambda d: -d.depth):
        if math.isfinite(d.noise_qv) and d.rss > 0:
            return math.sqrt(d.noise_qv) / d.rss
    return math.nan


def _fit(depths, values, level) -> dict:
    """The log-log fit over the depths whose value is finite (the noise part is not measured at
    the smallest depths)."""
    pairs = [(L, v) for L, v in zip(depths, values) if math.isfinite(v)]
    slope, ci = _loglog_fit([L for L, _ in pairs], [v for _, v in pairs], level)
    return {"value": slope, "ci": list(ci)}


def _median(values) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.median(finite)) if finite else math.nan


#: the power of ``L`` the released code multiplies the increment norm by before its fit
#: (``hypothesis_relu_delta_scalar``: ``factor=0.5`` on the synthetic task, 0.4 on MNIST, whose
#: nearest variant here is digits)
RELEASED_FACTORS = {"synthetic": 0.5, "digits": 0.4}


def released_statistics(family: Sequence[WeightDiagnostics], factor: float, level: float = 0.95) -> dict:
    """The released code's statistics (module docstring) of one tensor's ``family`` (a list of
    :class:`WeightDiagnostics`, at least two distinct depths; its ReLU figures read
    ``|delta_k| A_k``), each a log-log fit over the depths with its ``level`` (in (0, 1))
    interval: ``'max_norm'`` (minus the slope of ``max_k ||A_k||``, the figure's "beta"),
    ``'increments'`` (the slope of ``L^factor max_k ||A_{k+1} - A_k||``, with ``'factor'``, a
    finite real) and ``'rss'`` (the slope of the root sum of squares)."""
    family = V_.sequence("family", family, what="a list of WeightDiagnostics (one per depth)")
    bad = [type(d).__name__ for d in family if not isinstance(d, WeightDiagnostics)]
    if bad:
        raise ParameterError("family", f"family must hold WeightDiagnostics (one per depth), got a {bad[0]}")
    factor, level = V_.real("factor", factor), _level(level)
    family = sorted(family, key=lambda d: d.depth)
    depths = [d.depth for d in family]
    if len(set(depths)) < 2:
        raise ParameterError("family", f"family must hold at least two distinct depths, got {depths}")
    m = _fit(depths, [d.max_norm for d in family], level)
    raw = [d.increment_norm / float(d.depth) ** d.beta for d in family]  # the increments unscaled
    inc = _fit(depths, [v * float(L) ** factor for v, L in zip(raw, depths)], level)
    return {"max_norm": {"value": -m["value"], "ci": [-m["ci"][1], -m["ci"][0]]},
            "increments": {**inc, "factor": factor}, "rss": _fit(depths, [d.rss for d in family], level)}
