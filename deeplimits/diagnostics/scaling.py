"""Exponents of the weight diagnostics across a family of depths (docs/weights.md): the slope
of ``log diagnostic`` against ``log L`` by least squares, with a Student-t confidence interval
(one value per depth: no draws to resample). The weight exponent ``beta`` is minus the slope of
the max norm (``max_k ||A_k|| ~ L^-beta``)."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import Sequence

import numpy as np

from .. import _validate as V_
from .._plain import PlainData
from ..errors import ParameterError
from .measures import WeightDiagnostics

__all__ = ["interval", "loglog_fit", "scaling_exponents", "Exponents", "SCALED", "hypothesis"]

#: the diagnostics whose exponent is fitted (the Hurst index is not a power of L)
SCALED = ("max_norm", "increment_norm", "cumsum_norm", "rss", "quadratic_variation")


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
        raise ParameterError("values", f"values must have one value per depth ({len(depths)} depths), got "
                                       f"{len(values)}")
    return _loglog_fit(depths, values, _level(level))


def _loglog_fit(depths, values, level: float = 0.95) -> tuple[float, tuple]:
    """:func:`loglog_fit` without the checks (non-finite or negative values give ``nan``)."""
    from scipy import stats

    x, y = np.log(np.asarray(depths, dtype=float)), np.asarray(values, dtype=float)
    if len(x) < 2 or not np.all(y > 0) or len(set(x.tolist())) < 2:
        return math.nan, (math.nan, math.nan)
    fit = stats.linregress(x, np.log(y))
    if len(x) < 3:
        return float(fit.slope), (math.nan, math.nan)
    half = stats.t.ppf((1 + level) / 2, len(x) - 2) * fit.stderr
    return float(fit.slope), (float(fit.slope - half), float(fit.slope + half))


@dataclasses.dataclass
class Exponents(PlainData):
    """``exponents``: name -> ``{'value', 'ci'}`` for the slope of each diagnostic on ``L``
    and for ``beta`` (minus the max-norm slope); ``depths`` the family's depths;
    ``hypothesis`` and ``reason``: what they support (:func:`hypothesis`)."""

    name: str
    """The tensor's name."""
    depths: list
    """The family's depths."""
    exponents: dict
    """Name -> ``{'value', 'ci'}``: the slope of each diagnostic on ``L``, and ``beta``."""
    hypothesis: str
    """The limit the exponents support (:func:`hypothesis`)."""
    reason: str
    """Why, in a few words."""

    def report(self) -> str:
        """The exponents with their intervals, one per line, after what they support."""
        lines = [f"{self.name}: exponents over depths {self.depths} (log-log slope, 95% CI); "
                 f"supports: {self.hypothesis} ({self.reason})"]
        for k, v in self.exponents.items():
            ci = " " + interval(v["ci"])
            lines.append(f"  {k:>20} {v['value']:8.3f}{ci}")
        return "\n".join(lines)


def scaling_exponents(family: Sequence[WeightDiagnostics], level: float = 0.95) -> Exponents:
    """The exponents of one tensor's diagnostics across the depths of ``family`` (a list of
    :class:`WeightDiagnostics`, one per depth, at least two distinct depths), with ``level``
    (in (0, 1)) intervals."""
    family = V_.sequence("family", family, what="a list of WeightDiagnostics (one per depth)")
    bad = [type(d).__name__ for d in family if not isinstance(d, WeightDiagnostics)]
    if bad:
        raise ParameterError("family", f"family must hold WeightDiagnostics (one per depth), got a {bad[0]}")
    level = _level(level)
    family = sorted(family, key=lambda d: d.depth)
    depths = [d.depth for d in family]
    if len(set(depths)) < 2:
        raise ParameterError("family", f"family must hold at least two distinct depths, got {depths}")
    out = {}
    for name in SCALED:
        slope, ci = _loglog_fit(depths, [getattr(d, name) for d in family], level)
        out[name] = {"value": slope, "ci": list(ci)}
    m = out["max_norm"]
    out["beta"] = {"value": -m["value"], "ci": [-m["ci"][1], -m["ci"][0]]}
    hurst = float(np.median([d.hurst for d in family]))
    return Exponents(family[0].name, depths, out, *hypothesis(out, hurst))


#: thresholds: midpoints between the exponents of the beta-scaled increment norm in the three
#: regimes (-1 smooth, -1/2 a rough function, 0 increments of a rough process) and a band
#: around 0 for "does not scale"
_SMOOTH_BELOW, _ROUGH_BELOW, _FLAT = -0.75, -0.25, 0.15


def hypothesis(exponents: dict, hurst: float | None = None) -> tuple[str, str]:
    """The limit a set of exponents supports (Cohen, Cont, Rossier & Xu, ICML 2021, §3), with
    the reason. With ``s`` the exponent of the beta-scaled increment norm
    ``L^beta max_k ||A_{k+1} - A_k||``:

    * ``'smooth'``: ``s <= -3/4`` (close to ``-1``): ``L^beta A_{floor(Lt)} -> A(t)`` smooth,
      the network tends to a neural ODE (Hypothesis 1);
    * ``'rough'``: the weights shrink (``beta > 0.15``) but ``s > -3/4``: a rough function of
      depth (``s`` near ``-1/2``, Hypothesis 2) or the increments of a rough process (``s``
      near 0 with a Hurst index near 1/2: a diffusive, SDE-like limit);
    * ``'sparse'``: the largest weight does not shrink (``|beta| < 0.15``), the root sum of
      squares is bounded (``|exponent| < 0.15``) and the scaled increments do not shrink;
    * ``'inconclusive'`` otherwise. The thresholds are midpoints between the regimes' exponents.

    ``exponents`` maps at least ``'beta'``, ``'increment_norm'`` and ``'rss'`` to
    ``{'value': number}`` (as :attr:`Exponents.exponents`; NaN: not fitted); ``hurst`` is
    ``None`` or a number (NaN: unknown).
    """
    _exponents(exponents)
    if hurst is not None and not _number(hurst):
        raise ParameterError("hurst", f"hurst must be a number or None, got {hurst!r}")
    beta = exponents["beta"]["value"]
    scaled = exponents["increment_norm"]["value"] + beta
    rss = exponents["rss"]["value"]
    if not (math.isfinite(scaled) and math.isfinite(beta)):
        return "inconclusive", "the exponents could not be fitted (non-positive values or too few depths)"
    h = "" if hurst is None or not math.isfinite(hurst) else f", Hurst index {hurst:.2f}"
    why = f"beta {beta:.2f}, the beta-scaled increment norm scales as L^{scaled:.2f}{h}"
    if scaled <= _SMOOTH_BELOW:
        return "smooth", why + " (close to L^-1: a smooth function of depth, a neural ODE limit)"
    if beta > _FLAT:
        if scaled > _ROUGH_BELOW and hurst is not None and abs(hurst - 0.5) < 0.15:
            return "rough", why + " (increments that do not shrink, Hurst index near 1/2: increments of a " \
                                  "rough process, a diffusive limit)"
        return "rough", why + " (slower than L^-1: a rough function of depth)"
    if abs(beta) <= _FLAT and abs(rss) < _FLAT and scaled > _ROUGH_BELOW:
        return "sparse", why + f"; the largest weight does not shrink and the root sum of squares scales " \
                               f"as L^{rss:.2f} (bounded): a few large layers"
    return "inconclusive", why + " (none of the three regimes)"


def _number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _exponents(exponents) -> None:
    if not isinstance(exponents, Mapping):
        raise ParameterError("exponents", "exponents must be a dict (as Exponents.exponents), got "
                                          f"{type(exponents).__name__}")
    for key in ("beta", "increment_norm", "rss"):
        entry = exponents.get(key)
        if not isinstance(entry, Mapping) or not _number(entry.get("value")):
            raise ParameterError("exponents", f"exponents must map 'beta', 'increment_norm' and 'rss' to {{'value': "
                                              f"number}} (as Exponents.exponents), got {key!r}: {entry!r}")
