"""The fit of a declared error expansion and its tests, the parts of
:func:`~deeplimits.studies.expansion_fit.fit_expansion` that measure (its docstring says what they
are): the fitted coefficients, the test of the fit, the profile test of the leading exponent, the
slopes, and the verdict of the tests alone, read again by
:mod:`~deeplimits.studies._expansion_reading`."""


from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from .._stats import chi2_sf
from ..orders import Term
from . import _fit_core as F_
from .equivalence import MARGIN, Equivalence, interval_chi

__all__ = ["ExpansionFit", "LEVEL", "VERDICTS", "WHY", "local_slopes", "power_law_slope", "equivalence_of"]

LEVEL = 0.01
"""The level of the test: a correct expansion is told ``disagrees`` at most this often."""
VERDICTS = ("agrees", "faster than declared", "pre-asymptotic", "disagrees", "insufficient evidence")
"""The verdicts of :func:`fit_expansion`."""
WHY = "docs/schemes.md, \"Why does my scheme disagree or read pre-asymptotic?\""
"""Where a verdict other than ``agrees`` is explained."""
#: the 97.5% quantile of N(0, 1): the 95% intervals; the 95% quantile of chi-square on 1 dof
_Z, _CHI1 = 1.959963984540054, 3.841458820694124
#: the depths searched for the domination depth (beyond: "no depth below 1e15")
_HORIZON = np.logspace(0, 15, 3001)
_NAMES = "abcdefgh"


@dataclasses.dataclass(frozen=True)
class ExpansionFit:
    """A fitted expansion: the terms, their coefficients, the test, the slopes, the verdict."""

    terms: tuple
    """The declared terms (:class:`~deeplimits.orders.Term`), the leading one first."""
    reference: int | None
    """The grid of the nested reference the terms are seen against (``None``: exact or adaptive)."""
    coefficients: list
    """The fitted coefficient of each term."""
    coefficient_se: list
    """Their standard errors."""
    statistic: float
    """The test statistic ``sum_j (r_j / se_j)^2`` of the weighted residuals (of :attr:`mix`'s fit)."""
    dof: int
    """Its degrees of freedom: depths minus terms (a coherence whose fit the bound ``c_0 >= 0`` holds
    is tested on one more)."""
    pvalue: float
    """The p-value of the fit's test under the correlation of the depths (Satterthwaite; the F law
    with :attr:`draws`), the largest over the coherences (:func:`~deeplimits.studies._fit_core.tested`)."""
    level: float
    """The test's level: the expansion fits when ``pvalue >= level / 2``, and the exponent is
    rejected when ``exponent_pvalue < level / 2``."""
    dominant_from: float
    """The depth from which the leading term is at least the rest of the fitted error (its net part)."""
    leading_share: float
    """The leading term's share ``|c_0 f_0| / (|c_0 f_0| + |sum_i>0 c_i f_i|)`` at the deepest depth."""
    local_slopes: list
    """``(L_j, L_j+1, slope, lo, hi)`` between successive depths, with 95% intervals."""
    slope: list
    """``[slope, lo, hi]``: the single power-law slope over all depths, with its 95% interval (reported, not tested)."""
    theory_slope: float
    """The leading term's least-squares slope over these depths (its exponent without a log factor)."""
    verdict: str
    """One of :data:`VERDICTS` (module docstring)."""
    note: str
    """The verdict's reading in words."""
    mix: float | None = None
    """The coherence of the ``mixed`` terms (the share of the ``partial`` ones) that fits best (``None``: no
    such term is seen against a nested reference)."""
    remainder: Term | None = None
    """The first term the expansion leaves out, tried when the expansion alone does not fit."""
    remainder_pvalue: float | None = None
    """The p-value of the expansion with :attr:`remainder` (and :attr:`further` when it needed it;
    ``None``: not tried)."""
    exponent_pvalue: float | None = None
    """The p-value of the declared leading exponent against the best shift of the exponents (the
    profile test; ``None``: not tested, when the expansion does not fit or its leading term does
    not lead)."""
    best_exponent: float | None = None
    """The leading exponent of the best shift (the profile's minimum; ``None``: not tested)."""
    margin: float = MARGIN
    """The margin of the equivalence test an ``agrees`` passes (:mod:`~deeplimits.studies.equivalence`)."""
    equivalence: dict | None = None
    """The equivalence test of the leading exponent (:meth:`~deeplimits.studies.equivalence.Equivalence.to_dict`;
    ``None``: not reached, the expansion does not fit or its leading term does not lead)."""
    from_depth: int | None = None
    """The shallowest depth the verdict reads (``None``: every depth); deeper than the first when the
    shallower depths show the next term of the expansion."""
    faster: dict | None = None
    """``{'terms', 'exponent', 'interval'}``: the higher order the data fit without the declared
    leading term (``'faster than declared'``; ``None`` otherwise)."""
    further: Term | None = None
    """The term after :attr:`remainder`, when the expansion fits only with both (``None``: not needed);
    a correct expansion's truncation is rejected once the draws are many enough, so a run of more
    draws may need one more term (docs/mathematics.md, "The next term")."""
    draws: int | None = None
    """The draws the mean errors and their covariance were estimated from (``None``: unknown): the
    residual's test reads them (:func:`~deeplimits.studies._fit_core.pvalue`)."""
    data: tuple = dataclasses.field(default=(), repr=False, compare=False)
    """What :attr:`exponent_ci` refits: ``(L, weighted errors, weights, correlation)``."""

    @functools.cached_property
    def exponent_ci(self) -> list:
        """The 95% profile interval of the leading exponent, the other exponents tied to it: of the
        declared expansion, or of the expansion with its next terms when the verdict needed them
        (module docstring; ``nan`` without a degree of freedom; computed when first asked)."""
        return list(self.exponent_interval[:2])

    @functools.cached_property
    def exponent_interval(self) -> tuple:
        """``(lo, hi, closed)``: :attr:`exponent_ci` and whether it is closed at both ends (``False``
        where it runs into the edge of the search: the next terms can take the leading one's place)."""
        if self.dof < 1 or not self.data:
            return (math.nan, math.nan, False)
        return F_.exponent_interval(*self.data, self.read_terms, self.reference)

    @property
    def needs_depths(self) -> bool:
        """Whether only more depths can decide this ``insufficient evidence`` (not more draws)."""
        eq = self.equivalence
        return self.verdict == "insufficient evidence" and (eq is None or not eq.get("closed", True))

    @property
    def read_terms(self) -> tuple:
        """The terms the verdict reads: the declared ones, with :attr:`remainder` (and
        :attr:`further`) when the verdict needed them."""
        return self.terms + tuple(t for t in (self.remainder, self.further) if t is not None)

    @property
    def next_text(self) -> str:
        """:func:`next_text` of :attr:`remainder` and :attr:`further`."""
        return next_text(self.remainder, self.further)

    @property
    def coefficient_ci(self) -> list:
        """95% intervals of the coefficients (the leading one clipped at 0)."""
        out = [[c - _Z * s, c + _Z * s] for c, s in zip(self.coefficients, self.coefficient_se)]
        out[0][0] = max(0.0, out[0][0])
        return out

    @property
    def rate(self) -> float:
        """The asymptotic rate: the leading exponent."""
        return self.terms[0].exponent

    def value(self, depths, *, seen: bool = True) -> np.ndarray:
        """The fitted error at ``depths`` (``seen``: against the nested reference, as measured;
        otherwise against the exact limit)."""
        ref = self.reference if seen else None
        mix = 1.0 if self.mix is None else self.mix
        return np.array([sum(c * t.seen(float(L), ref, mix) for c, t in zip(self.coefficients, self.terms))
                         for L in depths])

    def asymptote(self, depths) -> np.ndarray:
        """The fitted leading term alone, ``c_0 L^-r (log L)^p``."""
        return np.array([self.coefficients[0] * self.terms[0].law(float(L)) for L in depths])

    @property
    def law_text(self) -> str:
        """The fitted law's terms with letters for coefficients, ``a L^-1/2 + b L^-1``."""
        return " + ".join(f"{n} {t.text}" for n, t in zip(_NAMES, self.terms))

    def to_dict(self) -> dict:
        """Plain JSON: the fields, ``exponent_ci`` and the terms as dicts."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "data"}
        d["exponent_ci"] = self.exponent_ci
        d["terms"] = [dataclasses.asdict(t) for t in self.terms]
        d["remainder"] = None if self.remainder is None else dataclasses.asdict(self.remainder)
        d["further"] = None if self.further is None else dataclasses.asdict(self.further)
        d["local_slopes"] = [list(x) for x in self.local_slopes]
        d["coefficient_ci"] = self.coefficient_ci
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}

    def lines(self) -> list[str]:
        """The report's lines: the local slopes, the fit and its test, which term dominates where."""
        slopes = ", ".join(f"{a}-{b}: {s:.3f} [{lo:.3f}, {hi:.3f}]" for a, b, s, lo, hi in self.local_slopes)
        ref = f" (as seen against the reference on 1/{self.reference})" if self.reference else ""
        coef = ", ".join(f"{n} = {c:.4g} [{lo:.3g}, {hi:.3g}]"
                         for n, c, (lo, hi) in zip(_NAMES, self.coefficients, self.coefficient_ci))
        half = self.level / 2
        fits = "fits" if self.pvalue >= half else "does not fit"
        law = [f"F law, {self.draws} draws"] if self.draws is not None and self.draws >= 3 else []
        law += ["the largest over the coherences"] if self.mix is not None else []
        test = (f"residual {self.statistic:.3g} on {self.dof} dof, p = {self.pvalue:.3g}"
                f"{' (' + '; '.join(law) + ')' if law else ''}: {fits} (level {half:g}, half of {self.level:g})"
                if self.dof >= 1 else "no test: no degree of freedom left")
        out = [f"local slopes, 95% CI: {slopes}", f"expansion {self.law_text}{ref}: {coef}", test]
        if self.remainder_pvalue is not None:
            out.append(f"with {self.next_text}: p = {self.remainder_pvalue:.3g}")
        if self.equivalence is not None:  # the interval the verdict reads
            eq = Equivalence(**{k: self.equivalence[k] for k in ("declared", "margin", "level", "estimate", "closed")},
                             interval=tuple(math.nan if x is None else x for x in self.equivalence["interval"]))
            rejected = "" if self.exponent_pvalue is None else (f"; the declared {self.rate:g} has p = "
                                                                 f"{self.exponent_pvalue:.3g} (rejected below {half:g})")
            out.append(f"leading exponent{rejected}; agreement within {self.margin:g}: {eq.text()}")
        elif self.exponent_pvalue is not None:
            out.append(f"leading exponent: best {self.best_exponent:.3f}, 95% profile interval {self.exponent_text}; "
                       f"the declared {self.rate:g} has p = {self.exponent_pvalue:.3g} (rejected below {half:g})")
        if self.faster is not None:
            lo, hi = self.faster["interval"]
            out.append(f"faster than declared: {self.faster['terms']} fits without {self.terms[0].text}, exponent "
                       f"{self.faster['exponent']:.3f} [{lo:.3f}, {hi:.3f}]")
        lead, rest = self.terms[0].text, " + ".join(t.text for t in self.terms[1:])
        if self.dominant_from < 2:
            where = f"{lead} dominates at every depth"
        elif math.isfinite(self.dominant_from):
            where = f"{lead} dominates {_from(self.dominant_from)}, {rest} below it"
        else:
            where = f"{lead} dominates at no depth below 1e15"
        out.append(f"{where} ({100 * self.leading_share:.0f}% of the fitted error at depth "
                   f"{self.local_slopes[-1][1] if self.local_slopes else '-'})")
        return out

    @property
    def exponent_text(self) -> str:
        """The profile interval in words: ``[0.48, 0.52]``, or where the depths do not bound it."""
        lo, hi, closed = self.exponent_interval
        if math.isnan(lo):
            return "none (no shift of the exponents leaves a leading term)"
        if not closed:
            return f"[{lo:.3f}, {hi:.3f}], open (the next terms can take the leading one's place)"
        return f"[{lo:.3f}, {hi:.3f}]"


def local_slopes(depths, error, cov) -> list:
    """``(L_j, L_j+1, slope, lo, hi)``: ``-d log e / d log L`` between successive depths with a
    95% interval (delta method: ``var log e_j = S_jj / e_j^2``, the covariance of successive
    depths included)."""
    L = np.asarray(depths, dtype=float)
    e = np.asarray(error, dtype=float)
    out = []
    for j in range(len(L) - 1):
        dx = math.log(L[j + 1] / L[j])
        s = math.log(e[j] / e[j + 1]) / dx
        v = cov[j, j] / e[j] ** 2 + cov[j + 1, j + 1] / e[j + 1] ** 2 - 2 * cov[j, j + 1] / (e[j] * e[j + 1])
        h = _Z * math.sqrt(max(v, 0.0)) / dx
        out.append((int(L[j]), int(L[j + 1]), s, s - h, s + h))
    return out


def power_law_slope(depths, error, cov) -> list:
    """``[slope, lo, hi]``: the least-squares slope of ``-log e`` against ``log L`` with a 95%
    interval (delta method with the covariance of ``log e``, ``S_ij / (e_i e_j)``)."""
    x = np.log(np.asarray(depths, dtype=float))
    e = np.asarray(error, dtype=float)
    c = (x - x.mean()) / ((x - x.mean()) ** 2).sum()
    s = -float(c @ np.log(e))
    h = _Z * math.sqrt(max(float(c @ (cov / np.outer(e, e)) @ c), 0.0))
    return [s, s - h, s + h]


def _dominant_from(coef, terms) -> float:
    """The first depth from which ``|c_0 f_0| >= |sum_i>0 c_i f_i|`` (and stays so), ``inf`` if none
    below 1e15: the rest's net part, since two close next terms may take large opposite coefficients
    (the rough regime's ``L^-3/5`` and ``L^-0.7`` at H = 0.35 on tables of 64 draws)."""
    if coef[0] <= 0:
        return math.inf
    lead = coef[0] * np.array([terms[0].law(x) for x in _HORIZON])
    with np.errstate(invalid="ignore"):  # terms of negative log power are infinite at L = 1: nan, not dominated
        rest = np.abs(sum((c * np.array([t.law(x) for x in _HORIZON]) for c, t in zip(coef[1:], terms[1:])),
                          np.zeros_like(_HORIZON)))
    ok = lead >= rest
    if not ok[-1]:
        return math.inf
    bad = np.flatnonzero(~ok)
    return float(_HORIZON[bad[-1] + 1]) if len(bad) else 1.0


def _fit(L, e, terms, cov, reference, slope, level, remainder, draws: int | None = None) -> ExpansionFit:
    """The fit and its test on these depths, with the verdict of the tests alone (module
    docstring); its ``agrees`` is read again by the equivalence test
    (:func:`deeplimits.studies._expansion_reading.read`)."""
    w = 1.0 / np.sqrt(np.diag(cov))  # weighted by the standard errors
    corr, b = cov * np.outer(w, w), e * w
    q = len(L) - len(terms)
    coef, stat, mix, A, p = F_.tested(L, b, w, terms, reference, corr, q, draws)
    se = np.sqrt(np.clip(np.diag(np.linalg.pinv(A.T @ A)), 0.0, None))
    start = _dominant_from(coef, terms)
    lead, rest = abs(coef[0] * terms[0].law(L[-1])), abs(sum(c * t.law(L[-1]) for c, t in zip(coef[1:], terms[1:])))
    share = float(lead / (lead + rest)) if lead + rest > 0 else 0.0  # at least 1/2 where it dominates (_dominant_from)
    ext = (*terms, remainder) if remainder is not None and q >= 2 else None
    fits = level if ext else level / 2  # disagrees spends half the level, the exponent's test the other half
    leads = coef[0] - _Z * se[0] > 0 and start <= L[-1]
    p_next = exp = exp_next = further = None
    if p >= fits and leads:  # the exponent's own test (module docstring)
        exp = _exponent_test(L, b, w, corr, terms, reference)
    if ext and (p < fits or (exp and exp[0] < level)):  # the declared expansion (or its exponent) needs its next term
        p_next, exp_next = _extended(L, b, w, corr, ext, reference, q - 1, level, draws)
        # and the term after it, where two degrees of freedom are left to test that (with one, four terms of
        # free signs mimic a wrong order: Euler-Maruyama declared order 1 on five depths fits)
        if q >= 4 and (p_next < level / 2 or (exp_next and exp_next[0] < level / 2)):
            after = beyond(terms, remainder)
            p_two, exp_two = _extended(L, b, w, corr, (*ext, after), reference, q - 2, level, draws)
            if p_two >= level / 2 and not (exp_two and exp_two[0] < level / 2):
                p_next, exp_next, further = p_two, exp_two, after
    slope = power_law_slope(L, e, cov) if slope is None else slope
    nxt = next_text(remainder, further)
    verdict, note = _verdict(terms, coef, se, start, L[-1], p, q, level, nxt, p_next, exp, exp_next)
    shown = exp_next or exp or (None, None)
    return ExpansionFit(terms, reference, coef.tolist(), se.tolist(), stat, q, p, level, start, share,
                        local_slopes(L, e, cov), slope, terms[0].slope(L.tolist()), verdict, note,
                        mix if len(F_.mixes(terms, reference)) > 1 else None, remainder if p_next is not None else None,
                        p_next, shown[0], shown[1], further=further, data=(L, b, w, corr), draws=draws)


def next_text(remainder: Term | None, further: Term | None = None) -> str:
    """``'its next term L^-2'`` or ``'its next two terms L^-2 + L^-5/2'`` (empty: none)."""
    if remainder is None:
        return ""
    if further is None:
        return f"its next term {remainder.text}"
    return f"its next two terms {remainder.text} + {further.text}"


def beyond(terms, remainder: Term) -> Term:
    """The term after ``remainder``: as far beyond it as it lies beyond the last declared term (1/2
    where that is not positive), of its kind."""
    step = remainder.exponent - max(t.exponent for t in terms)
    return Term(remainder.exponent + (step if step > 0 else 0.5), kind=remainder.kind)


def _extended(L, b, w, corr, terms, reference, dof, level, draws=None) -> tuple:
    """``(p, exponent test)`` of the expansion ``terms`` (the declared ones and the next ones):
    the test of its fit, and where it fits the profile test of its leading exponent."""
    p = F_.tested(L, b, w, terms, reference, corr, dof, draws)[4]
    return p, (_exponent_test(L, b, w, corr, terms, reference) if p >= level / 2 else None)


def equivalence_of(fit: ExpansionFit, margin: float, eq_level: float) -> Equivalence:
    """The equivalence test of ``fit``'s leading exponent: its ``1 - 2 eq_level`` profile interval
    (of the expansion with its next terms when the verdict needed them) against the margin."""
    L, b, w, corr = fit.data
    lo, hi, closed = F_.exponent_interval(L, b, w, corr, fit.read_terms, fit.reference, interval_chi(eq_level))
    best = fit.best_exponent if fit.best_exponent is not None else (lo + hi) / 2
    return Equivalence(fit.rate, margin, eq_level, best, (lo, hi), closed)


def _exponent_test(L, b, w, corr, terms, reference) -> tuple[float, float] | None:
    """``(p, best exponent)``: the profile test of the declared leading exponent (module
    docstring); ``None`` when the declared expansion's leading term does not lead."""
    s0 = F_.leading_stat(L, b, w, terms, reference, 0.0)
    d0, t0 = F_.profile_minimum(L, b, w, terms, reference)
    if not (math.isfinite(t0) and math.isfinite(s0)):
        return None
    g = F_.sandwich_ratio(L, b, w, corr, terms, reference, d0)
    return chi2_sf(max(s0 - t0, 0.0) / g, 1), terms[0].exponent + d0


def _verdict(terms, coef, se, start, deepest, p, q, level, nxt, p_next, exp, exp_next) -> tuple[str, str]:
    """The verdict and its reading in words (see the module's docstring); ``nxt``: the next terms
    the verdict read, in words (:attr:`ExpansionFit.next_text`); on one degree of freedom a misfit or a
    rejected exponent may be the declared next term (none left to test it with): ``insufficient evidence``."""
    verdict, note = _tested(terms, coef, se, start, deepest, p, q, level, nxt, p_next, exp, exp_next)
    if verdict == "disagrees" and q == 1 and nxt:
        return "insufficient evidence", (f"{note.removesuffix(f'; see {WHY}')}; on {len(terms) + 1} depths no degree "
                                         f"of freedom is left to test it with {nxt}, which may be what shows: at "
                                         f"least {len(terms) + 2} depths would decide; see {WHY}")
    return verdict, note


def _tested(terms, coef, se, start, deepest, p, q, level, nxt, p_next, exp, exp_next) -> tuple[str, str]:
    """:func:`_verdict` of the tests alone."""
    lead, half = terms[0].text, level / 2
    law = " + ".join(t.text for t in terms)
    if q < 1:
        return "insufficient evidence", (f"{len(terms)} declared terms for {len(terms) + q} depths: a test needs at "
                                         f"least {len(terms) + 1} depths")
    if p_next is not None and p_next < half:
        after = " or the term after it" if q >= 4 else ""
        return "disagrees", (f"the declared expansion {law} does not fit, not even with {nxt}{after} "
                             f"(p = {p:.2g}, {p_next:.2g} < {half:g}); see {WHY}")
    for test, terms_text in ((exp_next, f"{law} with {nxt}"), (exp if p_next is None else None, law)):
        if test is not None and test[0] < half:
            return "disagrees", (f"{terms_text} fits, but its leading exponent {terms[0].exponent:g} is rejected: the "
                                 f"exponents shifted to a leading {test[1]:.3f} fit better (p = {test[0]:.2g} < {half:g});"
                                 f" see {WHY}")
    if p_next is not None:
        why = "does not fit" if exp is None or exp[0] >= level else f"fits with a leading exponent {exp[1]:.3f}"
        return "pre-asymptotic", (f"{law} {why} (p = {min(p, exp[0] if exp else 1):.2g}), but fits with {nxt} "
                                  f"(p = {p_next:.2g}): these depths are not asymptotic yet; see {WHY}")
    if p < half:
        return "disagrees", f"the declared expansion {law} does not fit (p = {p:.2g} < {half:g}); see {WHY}"
    if coef[0] - _Z * se[0] <= 0:
        return "pre-asymptotic", (f"{law} fits, but its leading term {lead} is not detected yet (coefficient "
                                  f"{coef[0]:.3g}, its 95% interval reaches 0); see {WHY}")
    if start > deepest:
        where = _from(start) if math.isfinite(start) else "at no depth below 1e15"
        return "pre-asymptotic", f"{law} fits; its leading term {lead} would dominate {where}; see {WHY}"
    return "agrees", f"{law} fits and its leading term {lead} dominates {_from(start)}"


def _from(depth: float) -> str:
    """``'at every depth'`` or ``'from depth 596'``."""
    return "at every depth" if depth < 2 else f"from depth {depth:.0f}"
