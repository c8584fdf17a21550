"""Which limit the exponents of a family of weights support (Cohen, Cont, Rossier & Xu, ICML
2021, §2.3; docs/weights.md, "Which limit the exponents support"): each step's quantity against
what each hypothesis predicts for it, and a verdict that weighs them.

* Hypothesis 1: ``L^beta A_{floor(Lt)} -> A(t)`` with ``A`` nu-Hölder (a neural ODE limit);
* Hypothesis 2: ``A_k = L^-beta A(k/L) + W_{(k+1)/L} - W_{k/L}`` with ``W`` a rough (Itô)
  process of finite quadratic variation (an SDE limit): a noise part whose increments are of
  size ``L^-1/2``.

With ``beta`` read from the cumulative sum (step 2), the evidence is

* step 2, the max norm ``max_k ||A_k||``: ``L^-beta`` under Hypothesis 1, ``L^-min(beta, 1/2)``
  under Hypothesis 2 (the noise, of size ``L^-1/2``, is the largest weight when ``beta > 1/2``);
* step 3, the beta-scaled increment norm ``L^beta max_k ||A_{k+1} - A_k||``: ``L^-nu`` with
  ``nu > 0`` under Hypothesis 1 (``nu = 1`` a smooth ``A``, ``1/2`` a Brownian path); not
  vanishing rules Hypothesis 1 out, which is Cohen et al.'s reading of it for Hypothesis 2
  (their ReLU networks: ``L^(1/2) max_k ||A_{k+1} - A_k||`` growing like ``L^0.2`` to ``L^0.4``
  at ``beta = 0.8``, i.e. ``L^0.5`` to ``L^0.7`` scaled by ``L^beta``); a fixed noise path
  ``W`` gives ``L^(beta - 1/2)``, so Hypothesis 2 agrees with an exponent within 0.2 of
  ``beta - 1/2`` or, when that prediction does not vanish itself (``beta`` at least
  ``1/2 - 0.15``), with any exponent above -0.15 (below ``beta = 1/2`` Hypothesis 2's increments
  shrink too, and a noise of the trend's size there is not a noise path: it stays ``neither``);
* step 4, the noise part ``N = A - trend(A)``: under Hypothesis 2 the increments of a rough
  process (Hurst index near 1/2) whose quadratic variation ``sum_k ||N_k||^2`` stays bounded
  and away from 0 (exponent 0, within 0.3) and is not negligible beside the weights (its root sum of squares
  at least :data:`NEGLIGIBLE` of theirs at the deepest depth); under Hypothesis 1 what the
  smoothing leaves of a continuous function (Hurst index near 1), a part that vanishes with
  depth, or one that is negligible;
* step 5 (``beta >= 1/2`` only): the root sum of squares, bounded (exponent 0: a finite
  quadratic variation) under Hypothesis 2, ``L^(1/2 - beta)`` under Hypothesis 1;
* for a trained network, the loss of the network rebuilt from the trend of its weights over
  the original's: kept (at most 1.5) under Hypothesis 1, lost (at least 3) under Hypothesis 2.

The verdict: ``'smooth'`` (Hypothesis 1, with ``nu``) when step 3 agrees with it and more
evidence agrees with Hypothesis 1 alone than with Hypothesis 2 alone; ``'rough'`` (Hypothesis
2) when the noise part is non-negligible (step 4, or the trend loses the loss), the quadratic
variation is finite (step 5, for ``beta >= 1/2``), step 3 agrees with Hypothesis 2 alone and
more evidence agrees with Hypothesis 2 alone; both need step 6, where measured, to spread the
weight over a fixed fraction of the layers; ``'neither'`` otherwise.
Hypothesis 3, **sparse** (Cohen et al., §3.2, their convolutional networks): a bounded number
of layers of constant order carry the weight, the rest is small, so there is neither a smooth
nor a rough limit. Its predictions, in the column ``H3`` of the evidence (``agrees_H3``):

* step 2, the max norm: ``L^0`` (constant order: ``beta_max`` near 0);
* step 3, the beta-scaled increments: bounded below (not decaying: the increments beside a
  large layer are of its size);
* step 5, the root sum of squares: ``L^0`` (bounded, at any ``beta``);
* step 6, ``layers_90``, the fewest layers holding 90% of ``sum_k ||A_k||^2``: ``L^0`` (a few:
  the upper end of the exponent's interval at most 0.3, a growing count ruled out), where any
  function of depth, smooth or rough, puts them in a fixed fraction of the layers (``L^1``:
  exponent at least 0.7, what H1 and H2 predict).

The verdict ``'sparse'`` needs all four and is weighed first (its step 3 excludes ``'smooth'``;
a rough family's max norm shrinks like ``L^-min(beta, 1/2)``).
The reason lists which evidence agrees with which hypothesis.

No verdict without evidence: fewer than :data:`MIN_DEPTHS` depths, a span below a
factor :data:`MIN_SPAN`, or an exponent the verdict reads whose 95% interval is missing or wider
than :data:`MAX_WIDTH` give ``'insufficient evidence'`` and a reason naming what is missing. The
verdict is a test: its wrong-verdict rate and power on seeded families of known hypothesis are
measured by :mod:`.calibration` (docs/weights.md, "How often the verdict is wrong").
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from ..errors import ParameterError

__all__ = ["hypothesis", "weigh_evidence", "verdict_line", "VERDICTS", "INSUFFICIENT", "TOLERANCE", "NEGLIGIBLE",
           "MIN_DEPTHS", "MIN_SPAN", "MAX_WIDTH"]

#: the verdict where the depths or the intervals cannot support one (:data:`MIN_DEPTHS`, :data:`MAX_WIDTH`)
INSUFFICIENT = "insufficient evidence"
VERDICTS = ("smooth", "rough", "sparse", "neither", INSUFFICIENT)
#: a verdict needs at least MIN_DEPTHS distinct depths, the deepest at least MIN_SPAN times the shallowest
MIN_DEPTHS, MIN_SPAN = 4, 4.0
#: and the 95% interval of every exponent it reads at most MAX_WIDTH wide (docs/weights.md, "How often the
#: verdict is wrong": the largest bound measured that names no wrong hypothesis on the scattered families of
#: the least evidence; 0.6 named one for 2 of 500 built to say no)
MAX_WIDTH = 0.5
#: how far a fitted exponent may lie from a hypothesis' prediction and still agree with it
TOLERANCE = 0.15
#: step 3: a beta-scaled increment norm decays (Hypothesis 1) when its exponent is at most -0.15,
#: and does not vanish (ruling Hypothesis 1 out, Cohen et al.'s reading for Hypothesis 2) above
#: it; a fixed noise path's prediction beta - 1/2 is matched within 0.2 (the max over L layers
#: of the noise adds a sqrt(log L) factor: about +0.05 to the exponent)
_DECAYS, _STEP3_TOL = -0.15, 0.2
#: step 4: the noise part is rough below this Hurst index, a smooth residual above _SMOOTH_NOISE
_ROUGH_NOISE, _SMOOTH_NOISE = 0.7, 0.75
#: step 4: the noise part's quadratic variation stays (exponent within 0.3 of 0) or vanishes (at most -0.5)
_QV_STAYS, _QV_VANISHES = 0.3, -0.5
#: step 4: a noise part whose root sum of squares is below this fraction of the weights' is
#: negligible (a smooth function's smoothing residual at bandwidth 0.05 is a few percent of it)
NEGLIGIBLE = 0.1
#: step 6: the layers holding 90% of the squared norm are a few (exponent at most _FEW) or a
#: fixed fraction of the layers (at least _MANY)
_FEW, _MANY = 0.3, 0.7
#: the trend keeps the loss (ratio at most 1.5) or loses it (at least 3)
_KEPT, _LOST = 1.5, 3.0


def _number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _value(exponents: Mapping, key: str) -> float:
    entry = exponents.get(key)
    return float(entry["value"]) if isinstance(entry, Mapping) and _number(entry.get("value")) else math.nan


def _item(step: int, name: str, quantity: str, measured: str, h1: str, h2: str, agrees: str, h3: str = "",
          agrees_h3: bool | None = None) -> dict:
    """One quantity: what H1, H2 and H3 (sparse; ``''``: no prediction) predict, which of H1 and H2
    it ``agrees`` with, and whether it agrees with H3 (``None``: no prediction)."""
    return {"step": step, "name": name, "quantity": quantity, "measured": measured, "H1": h1, "H2": h2,
            "agrees": agrees, "H3": h3, "agrees_H3": agrees_h3}


def _agree(h1: bool, h2: bool) -> str:
    return "both" if h1 and h2 else "H1" if h1 else "H2" if h2 else "neither"


def _step2(exponents: Mapping, beta: float) -> dict | None:
    m = _value(exponents, "max_norm")
    if not math.isfinite(m):
        return None
    h2 = -min(beta, 0.5)
    return _item(2, "max norm", "max_k ||A_k||", f"L^{m:.2f}", f"L^{-beta:.2f} (L^-beta)",
                 f"L^{h2:.2f} (L^-min(beta, 1/2))",
                 _agree(abs(m + beta) <= TOLERANCE, abs(m - h2) <= TOLERANCE), "L^0 (constant order)",
                 abs(m) <= TOLERANCE)


def _step3(s: float, beta: float) -> dict:
    return _item(3, "scaled increments", "L^beta max_k ||A_{k+1} - A_k||", f"L^{s:.2f}",
                 "L^-nu, nu > 0 (1: smooth, 1/2: a Brownian path)",
                 f"not vanishing, or L^{beta - 0.5:.2f} (L^(beta - 1/2))",
                 _agree(s <= _DECAYS, (s > _DECAYS and beta >= 0.5 - TOLERANCE) or abs(s - (beta - 0.5)) <= _STEP3_TOL),
                 "bounded below (not decaying)",
                 s > _DECAYS)


def _step4(exponents: Mapping, noise_hurst, noise_fraction) -> dict | None:
    q = _value(exponents, "noise_qv")
    h = math.nan if noise_hurst is None else float(noise_hurst)
    if not (math.isfinite(q) and math.isfinite(h)):
        return None
    f = math.nan if noise_fraction is None else float(noise_fraction)
    small = math.isfinite(f) and f < NEGLIGIBLE
    rough = h < _ROUGH_NOISE and abs(q) < _QV_STAYS and not small
    smooth = h >= _SMOOTH_NOISE or q <= _QV_VANISHES or small
    size = "" if not math.isfinite(f) else f", {f:.1%} of A"
    return _item(4, "noise part", "N = A - trend(A): Hurst index, quadratic variation sum_k ||N_k||^2, its size",
                 f"Hurst {h:.2f}, L^{q:.2f}{size}", f"Hurst near 1 (a smooth residual), vanishing or < {NEGLIGIBLE:.0%}",
                 "Hurst near 1/2, L^0 (increments of a rough process)", _agree(smooth and not rough, rough))


def _step5(exponents: Mapping, beta: float) -> dict | None:
    r = _value(exponents, "rss")
    if not math.isfinite(r):
        return None
    h3 = ("L^0 (bounded)", abs(r) <= TOLERANCE)
    if beta < 0.5:
        return _item(5, "root sum of squares", "sqrt(sum_k ||A_k||^2)", f"L^{r:.2f}",
                     f"L^{0.5 - beta:.2f}", f"L^{0.5 - beta:.2f}", "both", *h3)
    return _item(5, "root sum of squares", "sqrt(sum_k ||A_k||^2)", f"L^{r:.2f}",
                 f"L^{0.5 - beta:.2f} (L^(1/2 - beta))",
                 "L^0 (bounded: finite quadratic variation)",
                 _agree(abs(r - (0.5 - beta)) <= TOLERANCE, abs(r) <= TOLERANCE), *h3)


def _interval(exponents: Mapping, key: str) -> tuple[float, float]:
    """The exponent's interval (NaN ends: none)."""
    ci = exponents[key].get("ci") if isinstance(exponents.get(key), Mapping) else None
    ok = isinstance(ci, (list, tuple)) and len(ci) == 2 and all(_number(x) for x in ci)
    return (float(ci[0]), float(ci[1])) if ok else (math.nan, math.nan)


def _step6(exponents: Mapping) -> dict | None:
    c = _value(exponents, "layers_90")
    if not math.isfinite(c):
        return None
    many, hi = c >= _MANY, _interval(exponents, "layers_90")[1]
    # Hypothesis 3 needs a growing count ruled out: the interval's upper end (not the estimate) at most _FEW
    measured = f"L^{c:.2f}" + (f" (<= L^{hi:.2f})" if math.isfinite(hi) else " (no interval)")
    return _item(6, "layers holding 90%", "the fewest layers holding 90% of sum_k ||A_k||^2", measured,
                 "L^1 (a fixed fraction of the layers)", "L^1 (a fixed fraction of the layers)",
                 "both" if many else "neither", f"L^0 (a few layers: the interval below L^{_FEW})", hi <= _FEW)


def _trend(trend_ratio) -> dict | None:
    if trend_ratio is None or not math.isfinite(float(trend_ratio)):
        return None
    t = float(trend_ratio)
    return _item(4, "trend loss", "loss of the network rebuilt from the trend / loss", f"{t:.3g}", f"kept (<= {_KEPT})",
                 f"lost (>= {_LOST:g})", _agree(t <= _KEPT, t >= _LOST))


def weigh_evidence(exponents, *, noise_hurst=None, trend_ratio=None, noise_fraction=None) -> list[dict]:
    """The evidence of the module docstring, one dict per quantity (``step``, ``quantity``,
    ``measured``, what ``H1`` and ``H2`` predict, which it ``agrees`` with: ``'H1'``,
    ``'H2'``, ``'both'`` or ``'neither'``; what ``H3``, sparse, predicts (``''``: nothing) and
    ``agrees_H3``: ``True``, ``False`` or ``None``); a quantity that was not measured is left out.
    Arguments as for :func:`hypothesis`."""
    beta, s = _check(exponents, noise_hurst, trend_ratio, noise_fraction)
    if not (math.isfinite(beta) and math.isfinite(s)):
        return []
    items = [_step2(exponents, beta), _step3(s, beta), _step4(exponents, noise_hurst, noise_fraction),
             _step5(exponents, beta), _step6(exponents), _trend(trend_ratio)]
    return [i for i in items if i is not None]


def _scaled(exponents: Mapping, beta: float) -> float:
    s = _value(exponents, "scaled_increments")
    return s if math.isfinite(s) else _value(exponents, "increment_norm") + beta


def hypothesis(exponents, hurst=None, *, depths=None, noise_hurst=None, trend_ratio=None,
               noise_fraction=None) -> tuple[str, str]:
    """``(verdict, reason)``: ``'smooth'``, ``'rough'``, ``'sparse'``, ``'neither'`` (module
    docstring) or ``'insufficient evidence'``: fewer than :data:`MIN_DEPTHS` ``depths`` (the
    family's, ``None``: not given), spanning less than a factor :data:`MIN_SPAN`, or an exponent
    the verdict reads without a 95% interval at most :data:`MAX_WIDTH` wide; the reason names what
    is missing.

    ``exponents`` maps at least ``'beta'`` (from the cumulative sum), ``'increment_norm'`` (the
    exponent of the increment norm unscaled; or ``'scaled_increments'``, already scaled) and
    ``'rss'`` to ``{'value': number, 'ci': [lo, hi]}`` (as :attr:`Exponents.exponents`; NaN: not
    fitted), and optionally ``'max_norm'``, ``'noise_qv'`` and ``'layers_90'``; ``hurst`` (the Hurst
    index of ``A``, shown in the reason), ``noise_hurst`` (of the noise part), ``noise_fraction``
    (the noise part's root sum of squares over the weights' at the deepest depth) and
    ``trend_ratio`` (the loss kept by the trend) are ``None`` or numbers (NaN: unknown); ``depths``
    a list of depths > 0 or ``None``."""
    if hurst is not None and not _number(hurst):
        raise ParameterError("hurst", f"hurst must be a number or None, got {hurst!r}")
    depths = _depths(depths)
    items = weigh_evidence(exponents, noise_hurst=noise_hurst, trend_ratio=trend_ratio, noise_fraction=noise_fraction)
    beta = _value(exponents, "beta")
    if not items:
        return INSUFFICIENT, "the exponents could not be fitted (a diagnostic that is 0, or too few depths)"
    missing = _few_depths(depths)
    verdict = _verdict(items, beta)
    missing = missing or _wide(exponents, _READ_BY_SPARSE if verdict == "sparse" else _READ)
    if missing:
        return INSUFFICIENT, missing
    s = _scaled(exponents, beta)
    h = "" if hurst is None or not math.isfinite(hurst) else f", Hurst index of A {hurst:.2f}"
    head = {"smooth": f"Hypothesis 1 with nu = {-s:.2f}", "rough": "Hypothesis 2: a non-negligible noise part"
            + (" of finite quadratic variation" if beta >= 0.5 else ""),
            "sparse": "Hypothesis 3, sparse: a few layers of constant order carry the weight (no ODE or SDE limit; "
                      f"beta from the max norm {-_value(exponents, 'max_norm'):.2f})",
            "neither": "neither hypothesis"}[verdict]
    return verdict, f"{head}; beta {beta:.2f}{h}; " + summary(items)


#: the exponents a verdict reads, as the reason names them (the sparse verdict does not read the noise part)
_READ = {"beta": "the cumulative-sum exponent", "max_norm": "the max-norm exponent",
         "scaled_increments": "the scaled-increment exponent",
         "noise_qv": "the noise part's quadratic-variation exponent",
         "rss": "the root-sum-of-squares exponent", "layers_90": "the layers_90 exponent"}
_READ_BY_SPARSE = {k: v for k, v in _READ.items() if k != "noise_qv"}


def _depths(depths) -> list[float] | None:
    if depths is None:
        return None
    if isinstance(depths, (str, bytes, Mapping)) or not hasattr(depths, "__iter__"):
        raise ParameterError("depths", f"depths must be a list of depths > 0 or None, got {depths!r}")
    out = list(depths)
    if not all(_number(L) and math.isfinite(L) and L > 0 for L in out):
        raise ParameterError("depths", f"depths must be a list of depths > 0 or None, got {out!r}")
    return [float(L) for L in out]


def _few_depths(depths) -> str:
    """What the depths lack for a verdict (``''``: nothing)."""
    need = f"a verdict needs at least {MIN_DEPTHS} spanning a factor of {MIN_SPAN:g}"
    if depths is None:
        return f"the depths are not given ({need})"
    distinct = sorted(set(depths))
    if len(distinct) < MIN_DEPTHS:
        return f"{len(distinct)} depth{'s' * (len(distinct) != 1)} ({need})"
    if distinct[-1] < MIN_SPAN * distinct[0]:
        return (f"{len(distinct)} depths spanning a factor of {distinct[-1] / distinct[0]:.2g}, "
                f"{distinct[0]:g} to {distinct[-1]:g} ({need})")
    return ""


def _wide(exponents: Mapping, read: dict) -> str:
    """The exponents of ``read`` that were fitted but whose interval is missing or wider than
    :data:`MAX_WIDTH` (``''``: none)."""
    wide, bare = [], []
    for key, label in read.items():
        if key == "scaled_increments" and key not in exponents:
            key = "increment_norm"  # the increments given unscaled: the same interval, shifted by beta
        if not math.isfinite(_value(exponents, key)):
            continue  # not measured: not read
        lo, hi = _interval(exponents, key)
        if not math.isfinite(hi - lo):
            bare.append(label)
        elif hi - lo > MAX_WIDTH:
            wide.append((label, f"{hi - lo:.2g}"))
    out = []
    if len(wide) == 1:
        out.append(f"the interval of {wide[0][0]} is {wide[0][1]} wide (at most {MAX_WIDTH:g})")
    elif wide:
        out.append("the intervals of " + ", ".join(f"{label} ({w})" for label, w in wide)
                   + f" are wider than {MAX_WIDTH:g}")
    if bare:
        noise = "; the noise part is measured from 20 layers on" if _READ["noise_qv"] in bare else ""
        out.append(" and ".join(bare) + (" has" if len(bare) == 1 else " have") + " no interval (fitted on fewer "
                   f"than 3 depths{noise})")
    return "; ".join(out)


def _verdict(items: list, beta: float) -> str:
    sparse = {i["name"] for i in items if i.get("agrees_H3")}
    if {"max norm", "scaled increments", "root sum of squares", "layers holding 90%"} <= sparse:
        return "sparse"
    by = {i["name"]: i["agrees"] for i in items}
    only1 = sum(i["agrees"] == "H1" for i in items)
    only2 = sum(i["agrees"] == "H2" for i in items)
    # a function of depth, smooth or rough, spreads the weight over a fixed fraction of the layers
    spread = by.get("layers holding 90%") in (None, "both")
    if spread and by.get("scaled increments") in ("H1", "both") and only1 > only2:
        return "smooth"
    finite_qv = beta < 0.5 or by.get("root sum of squares") in ("H2", "both")
    noisy = "H2" in (by.get("noise part"), by.get("trend loss"))
    if spread and noisy and finite_qv and by.get("scaled increments") == "H2" and only2 > only1:
        return "rough"
    return "neither"


def verdict_line(verdict: str, reason: str | None = None) -> str:
    """A verdict as reports print it: ``'supports: smooth (reason)'``, or ``'no verdict, insufficient
    evidence: reason'``; without ``reason`` the short form of titles (``'supports smooth'``,
    ``'insufficient evidence'``)."""
    if reason is None:
        return verdict if verdict == INSUFFICIENT else f"supports {verdict}"
    return f"no verdict, {verdict}: {reason}" if verdict == INSUFFICIENT else f"supports: {verdict} ({reason})"


def summary(items: list) -> str:
    """Which evidence agrees with Hypothesis 1, with Hypothesis 2, fits both and fits neither, and
    which agrees with Hypothesis 3 (sparse), or, where step 6 does not rule a growing count out,
    that Hypothesis 3 is not shown."""
    parts = []
    for key, label in (("H1", "agrees with Hypothesis 1"), ("H2", "agrees with Hypothesis 2"),
                       ("both", "fits both"), ("neither", "fits neither")):
        found = [f"step {i['step']} {i['name']} {i['measured']}" for i in items if i["agrees"] == key]
        if found:
            parts.append(f"{label}: " + ", ".join(found))
    count = next((i for i in items if i["step"] == 6), None)
    if count is not None and count.get("agrees_H3") is False:  # a growing count is not ruled out
        parts.append(f"Hypothesis 3 (sparse) not shown: step 6 {count['name']} {count['measured']} "
                     f"(a growing count is not ruled out)")
    else:
        found = [f"step {i['step']} {i['name']}" for i in items if i.get("agrees_H3")]
        if found:
            parts.append("agrees with Hypothesis 3 (sparse): " + ", ".join(found))
    return "; ".join(parts)


def _check(exponents, noise_hurst, trend_ratio, noise_fraction=None) -> tuple[float, float]:
    if not isinstance(exponents, Mapping):
        raise ParameterError("exponents", f"exponents must be a dict (as Exponents.exponents), got {type(exponents).__name__}")
    for key in ("beta", "increment_norm", "rss"):
        entry = exponents.get(key)
        if key == "increment_norm" and entry is None and "scaled_increments" in exponents:
            entry = exponents["scaled_increments"]
        if not isinstance(entry, Mapping) or not _number(entry.get("value")):
            raise ParameterError("exponents", f"exponents must map 'beta', 'increment_norm' and 'rss' to {{'value': number}} "
                             f"(as Exponents.exponents), got {key!r}: {entry!r}")
    for name, x in (("noise_hurst", noise_hurst), ("trend_ratio", trend_ratio), ("noise_fraction", noise_fraction)):
        if x is not None and not _number(x):
            raise ParameterError(name, f"{name} must be a number or None, got {x!r}")
    beta = _value(exponents, "beta")
    return beta, _scaled(exponents, beta)
