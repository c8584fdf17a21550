"""How the verdict of a fitted expansion is read (docs/mathematics.md, "Error expansions and the
verdict"): after the tests of :func:`~deeplimits.studies.expansion_fit.fit_expansion` that can say
``disagrees`` (decided on every depth, so their size is the level),

* an ``agrees`` must pass the equivalence test of the leading exponent within the margin
  (:mod:`~deeplimits.studies.equivalence`); short of it the verdict is ``insufficient evidence``,
  with the draws that would decide;
* where the declared expansion fits only with its next term (or, with more draws, its next two
  terms: a truncated series is rejected once the draws are many enough), the expansion with them is
  read the same way (the same leading exponent, more terms of its series); short of
  agreement, the shallowest depths are those that show the next term: the depths from the
  second, third, ... on (while they leave a degree of freedom and span a factor
  :data:`MIN_SPAN`) are read alone with the declared expansion, and the first that agrees gives
  the verdict and ``from_depth``. More draws on a fixed grid of depths then do not turn
  ``agrees`` into ``pre-asymptotic`` as the next term comes into view;
* where the declared expansion fits on every depth not even with its next terms, the deeper runs
  of depths are read alone the same way before saying ``disagrees``: the shallowest depths of a
  correct scheme can hold more of its series than its next terms (Euler-Maruyama on a CIR-like
  SDE read ``disagrees`` in 1 of 20 runs of 16,384 draws; tests/test_agreement.py). The first
  that agrees gives the verdict, else the first that fits (``insufficient evidence``, with its
  ``from_depth``); ``disagrees`` stands where none fits;
* where the declared leading term is not detected and the expansion without it fits with its
  next term leading, at an exponent whose interval lies above the declared one plus the margin,
  the scheme converges ``faster than declared``: that order and its interval are said, rather
  than sending the user to deeper depths.

An ``agrees`` may come from any of these readings (:func:`readings` counts them), and which one is
read depends on the data: the level of the equivalence test is split over them
(Bonferroni): the declared expansion on every depth, the usual reading, half the level, the others
the other half in equal shares, so that an exponent off by the margin reads ``agrees`` at most
the level often whichever reading it takes. Read at the full level, the readings taken after the declared
expansion failed were selected by data that look like the declared exponent: Euler-Maruyama off by
0.1 read ``agrees`` in 9 of 100 runs sized to decide (docs/schemes.md, "How often the verdict is
wrong").
"""

from __future__ import annotations

import dataclasses

from .equivalence import DECIDING_POWER
from ._expansion_core import WHY, ExpansionFit, _fit, _from, equivalence_of

__all__ = ["read", "readings", "levels", "MIN_SPAN"]

MIN_SPAN = 4.0
"""The depths read alone span at least this factor."""


def read(fit: ExpansionFit, L, e, cov, *, margin: float, eq_level: float, draws: int | None,
         remainder=None) -> ExpansionFit:
    """The verdict of ``fit`` (on the depths ``L``, errors ``e``, covariance ``cov``) read as the
    module docstring says."""
    fit = dataclasses.replace(fit, margin=margin)
    first, rest = levels(eq_level, readings(L, len(fit.terms), remainder))
    if fit.verdict == "agrees":
        return _agreement(fit, margin, first, draws)
    if fit.verdict == "pre-asymptotic" and _needs_next(fit):
        return _with_next(fit, L, e, cov, margin, rest, draws)
    if fit.verdict == "pre-asymptotic":
        return _faster(fit, L, e, cov, margin, eq_level, remainder) or fit
    if fit.verdict == "disagrees" and _misfits_with_next(fit):
        return _below(fit, L, e, cov, margin, rest, draws) or fit
    return fit


def readings(L, k: int, remainder) -> int:
    """The readings an ``agrees`` may come from on the depths ``L`` with ``k`` declared terms and the
    next term ``remainder``: the declared expansion; where it has a next term and two degrees of
    freedom, with that term, with the term after it too where four are left
    (:func:`~deeplimits.studies._expansion_core._fit`), and alone from each deeper depth
    :func:`_starts` gives."""
    q = len(L) - k
    if remainder is None or q < 2:
        return 1
    return 2 + (q >= 4) + len(_starts(L, k))


def levels(eq_level: float, count: int) -> tuple[float, float]:
    """``(first, rest)``: the equivalence level of the declared expansion read on every depth and
    of each of the ``count - 1`` other readings: all of ``eq_level`` when it is the only one, else
    half of it and the other half shared (their sum is ``eq_level``: Bonferroni's inequality)."""
    if count <= 1:
        return eq_level, eq_level
    return eq_level / 2, eq_level / (2 * (count - 1))


def _starts(L, k: int) -> list:
    """The first depths (indices) from which the declared expansion of ``k`` terms is read alone:
    the second, third, ... while the depths left leave a degree of freedom and span :data:`MIN_SPAN`."""
    out = []
    for i in range(1, len(L)):
        if len(L) - i < k + 1 or L[-1] < MIN_SPAN * L[i]:
            break
        out.append(i)
    return out


def _needs_next(fit: ExpansionFit) -> bool:
    """Whether the declared expansion fits only with its next term (and its exponent is not rejected there)."""
    return fit.remainder is not None and fit.remainder_pvalue is not None and fit.remainder_pvalue >= fit.level / 2


def _misfits_with_next(fit: ExpansionFit) -> bool:
    """Whether the declared expansion fits on every depth not even with its next terms."""
    return fit.remainder is not None and fit.remainder_pvalue is not None and fit.remainder_pvalue < fit.level / 2


def _with_next(fit, L, e, cov, margin, eq_level, draws) -> ExpansionFit:
    """The declared expansion fits on every depth only with its next term: that expansion, when its
    leading term leads, read by the equivalence test; short of agreement, the first deeper run of
    depths where the declared expansion agrees alone; else the first of the two readings."""
    ext = _fit(L, e, fit.read_terms, cov, fit.reference, None, fit.level, None, fit.draws)
    if ext.verdict != "agrees":
        return fit
    ext = _agreement(dataclasses.replace(ext, margin=margin), margin, eq_level, draws)
    ext = dataclasses.replace(ext, note=f"with {fit.next_text} (alone it does not fit, p = {fit.pvalue:.2g}): "
                                        f"{ext.note}")
    if ext.verdict == "agrees":
        return ext
    return _deeper(fit, L, e, cov, margin, eq_level, draws) or ext


def _agreement(fit: ExpansionFit, margin: float, eq_level: float, draws: int | None) -> ExpansionFit:
    """``agrees`` when the leading exponent is within ``margin`` of the declared one, else
    ``insufficient evidence`` saying what would decide."""
    eq = equivalence_of(fit, margin, eq_level)
    fit = dataclasses.replace(fit, equivalence=eq.to_dict())
    if eq.within:
        return dataclasses.replace(fit, note=f"{fit.note}; its exponent is within {margin:g} of {fit.rate:g}: "
                                             f"{eq.text()}")
    need = eq.draws_to_decide(draws) if draws else None
    if not eq.closed:
        more = "more depths over a wider range: the data do not bound the exponent"
    elif need is not None:
        more = f"about {need} draws would decide it at power {DECIDING_POWER:g}"
    else:
        more = "more draws would decide it"
    return dataclasses.replace(fit, verdict="insufficient evidence", note=(
        f"{fit.note}, but its exponent is not shown within {margin:g} of {fit.rate:g}: {eq.text()}; {more}; see {WHY}"))


def _alone_deeper(fit, L, e, cov, margin, eq_level, draws):
    """The deeper runs of depths (:func:`_starts`) where the declared expansion fits alone, each
    ``(first depth, its fit read by the equivalence test)``, shallowest first."""
    for i in _starts(L, len(fit.terms)):
        sub = _fit(L[i:], e[i:], fit.terms, cov[i:, i:], fit.reference, None, fit.level, fit.remainder, fit.draws)
        if sub.verdict == "agrees":
            yield int(L[i]), _agreement(dataclasses.replace(sub, margin=margin), margin, eq_level, draws)


def _deeper(fit, L, e, cov, margin, eq_level, draws) -> ExpansionFit | None:
    """Where the declared expansion fits only with its next term: the first deeper run of depths
    that agrees, read alone (``None``: none)."""
    for depth, sub in _alone_deeper(fit, L, e, cov, margin, eq_level, draws):
        if sub.verdict == "agrees":
            return dataclasses.replace(sub, from_depth=depth, note=(
                f"read from depth {depth}: below it {fit.next_text} show{'s' if fit.further is None else ''} (on "
                f"every depth {fit.law_text} fits only with {'it' if fit.further is None else 'them'}, p = "
                f"{fit.remainder_pvalue:.2g}); from depth {depth} on, "
                f"{sub.note}"))
    return None


def _below(fit, L, e, cov, margin, eq_level, draws) -> ExpansionFit | None:
    """Where the declared expansion fits on every depth not even with its next terms: the first
    deeper run of depths where it fits alone, read by the equivalence test (the first that agrees,
    else the first that fits: ``insufficient evidence``); ``None``: it fits on none, ``disagrees``.
    The shallowest depths of a correct scheme can hold more of its series than the next terms
    (Euler-Maruyama on a CIR-like SDE, docs/mathematics.md, "Error expansions and the verdict")."""
    first = None
    for depth, sub in _alone_deeper(fit, L, e, cov, margin, eq_level, draws):
        sub = dataclasses.replace(sub, from_depth=depth, note=(
            f"read from depth {depth}: below it the errors do not follow {fit.law_text}, not even with "
            f"{fit.next_text} (p = {fit.pvalue:.2g}, {fit.remainder_pvalue:.2g}); from depth {depth} on, {sub.note}"))
        if sub.verdict == "agrees":
            return sub
        first = first or sub
    return first


def _faster(fit, L, e, cov, margin, eq_level, remainder) -> ExpansionFit | None:
    """Where the declared leading term is not detected: the expansion without it, when it fits and
    its own leading term leads at an exponent above the declared one plus ``margin`` (``None``: not so)."""
    if fit.coefficients[0] - 1.959963984540054 * fit.coefficient_se[0] > 0:
        return None  # the declared leading term is detected: not faster
    higher = tuple(fit.terms[1:]) or ((remainder,) if remainder is not None else ())
    if not higher or len(L) < len(higher) + 1:
        return None
    sub = _fit(L, e, higher, cov, fit.reference, None, fit.level, None, fit.draws)
    if sub.verdict != "agrees":
        return None
    eq = equivalence_of(sub, margin, eq_level)
    lo, hi = eq.interval
    if not (eq.closed and lo > fit.rate + margin):
        return None
    faster = {"terms": sub.law_text, "exponent": eq.estimate, "interval": [lo, hi], "level": eq_level}
    return dataclasses.replace(fit, verdict="faster than declared", faster=faster, note=(
        f"the declared leading term {fit.terms[0].text} is not detected, and {sub.law_text} fits without it, leading "
        f"{_from(sub.dominant_from)}: the errors fall like L^-{eq.estimate:.3f} ({100 * (1 - 2 * eq_level):.3g}% "
        f"interval [{lo:.3f}, {hi:.3f}]), faster than the declared {fit.rate:g}; see {WHY}"))
