"""The declared error expansion fitted to a measured error table, and the verdict as a test
(docs/mathematics.md, "Error expansions and the verdict").

Given the mean errors ``e_j`` at depths ``L_j``, their covariance ``S`` (or standard errors
``se_j``) and the declared terms ``f_i`` (:class:`~deeplimits.orders.Term`, as seen against the
nested reference), :func:`fit_expansion`

* fits ``e ~ sum_i c_i f_i(L)`` by least squares weighted by the standard errors, the leading
  coefficient ``c_0 >= 0`` and the others of either sign:
  the error is a mean of norms, ``E|A + B| = E|A| + E[sign(A) B] + ...``, so the correction terms
  of an expansion of ``E|e_L|`` have no fixed sign (the maximum over a grid of a Brownian-like
  error process lies below its supremum by a term ``L^-1/2`` smaller, for instance);
* tests the fit: ``T = sum_j (r_j / se_j)^2`` of the residuals ``r``, against the chi-square
  law on ``q = n - k`` degrees of freedom when the errors of different depths are independent,
  and otherwise against the law of ``T`` under their correlation (a weighted sum of chi-square
  variables, read as a scaled chi-square with its mean and variance: Satterthwaite 1946), since
  the errors of one draw at every depth share its path; the expansion fits when the p-value is
  at least the level (:data:`LEVEL`);
* gives the leading exponent a 95% interval by inverting the test: the exponents ``r_0 + delta``
  for which the expansion with every exponent shifted by ``delta`` fits at level 0.05;
* reports the coefficients with 95% intervals, the depth from which the leading term is at
  least half of the fitted error (``|c_0 f_0| >= sum_i>0 |c_i f_i|``), the local slopes between
  successive depths and the single power-law slope, each with a 95% interval (delta method on
  ``log e``).

The verdict: ``'disagrees'`` when the expansion does not fit; ``'pre-asymptotic'`` when it fits
but the leading term is not detected (its interval reaches 0), does not dominate at the deepest
depth, or the single power-law slope's interval excludes the leading term's slope over these
depths (the next terms still bend it); ``'agrees'`` otherwise.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ..orders import Term
from ..errors import ParameterError

__all__ = ["fit_expansion", "ExpansionFit", "LEVEL", "local_slopes", "power_law_slope"]

LEVEL = 0.01
"""The level of the goodness-of-fit test (a declared expansion that fits is rejected this often)."""
#: the 97.5% quantile of N(0, 1): the 95% intervals
_Z = 1.959963984540054
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
    """The test statistic ``sum_j (r_j / se_j)^2`` of the weighted residuals."""
    dof: int
    """Its degrees of freedom: depths minus terms."""
    pvalue: float
    """The p-value of the statistic under the correlation of the depths (Satterthwaite)."""
    level: float
    """The test's level: the expansion fits when ``pvalue >= level``."""
    dominant_from: float
    """The depth from which the leading term is at least half of the fitted error."""
    leading_share: float
    """The leading term's share of the fitted error at the deepest depth."""
    local_slopes: list
    """``(L_j, L_j+1, slope, lo, hi)`` between successive depths, with 95% intervals."""
    slope: list
    """``[slope, lo, hi]``: the single power-law slope over all depths, with its 95% interval."""
    theory_slope: float
    """The leading term's least-squares slope over these depths (its exponent without a log factor)."""
    verdict: str | None
    """``'agrees'``, ``'pre-asymptotic'`` or ``'disagrees'`` (module docstring)."""
    note: str
    """The verdict's reading in words."""
    data: tuple = dataclasses.field(default=(), repr=False, compare=False)
    """What :attr:`exponent_ci` refits: ``(L, weighted errors, weights, correlation)``."""

    @functools.cached_property
    def exponent_ci(self) -> list:
        """The 95% interval of the leading exponent: those for which the expansion, its exponents
        shifted together, fits at level 0.05 (test inversion; computed when first asked)."""
        if self.dof < 1 or not self.data:
            return [math.nan, math.nan]
        return _exponent_interval(*self.data, self.terms, self.reference, self.dof)

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
        return np.array([sum(c * t.seen(float(L), ref) for c, t in zip(self.coefficients, self.terms))
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
        d["local_slopes"] = [list(x) for x in self.local_slopes]
        d["coefficient_ci"] = self.coefficient_ci
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}

    def lines(self) -> list[str]:
        """The report's lines: the local slopes, the fit and its test, which term dominates where."""
        slopes = ", ".join(f"{a}-{b}: {s:.3f} [{lo:.3f}, {hi:.3f}]" for a, b, s, lo, hi in self.local_slopes)
        ref = f" (as seen against the reference on 1/{self.reference})" if self.reference else ""
        coef = ", ".join(f"{n} = {c:.4g} [{lo:.3g}, {hi:.3g}]"
                         for n, c, (lo, hi) in zip(_NAMES, self.coefficients, self.coefficient_ci))
        fits = "fits" if self.pvalue >= self.level else "does not fit"
        lo, hi = self.exponent_ci
        within = f"[{lo:.3f}, {hi:.3f}]" if lo == lo else "none"
        test = (f"chi-square {self.statistic:.3g} on {self.dof} dof, p = {self.pvalue:.3g}: {fits} at level "
                f"{self.level:g}; leading exponent, 95% CI: {within}" if self.dof >= 1 else
                "no test: no degree of freedom left")
        out = [f"local slopes, 95% CI: {slopes}", f"expansion {self.law_text}{ref}: {coef}", test]
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
    """The first depth from which ``|c_0 f_0| >= sum_i>0 |c_i f_i|`` (and stays so), ``inf`` if
    none below 1e15."""
    lead = coef[0] * np.array([terms[0].law(x) for x in _HORIZON])
    rest = sum((abs(c) * np.array([t.law(x) for x in _HORIZON]) for c, t in zip(coef[1:], terms[1:])),
               np.zeros_like(_HORIZON))
    ok = lead >= rest
    if coef[0] <= 0 or not ok[-1]:
        return math.inf
    bad = np.flatnonzero(~ok)
    return float(_HORIZON[bad[-1] + 1]) if len(bad) else 1.0


def _pvalue(stat: float, A: np.ndarray, corr: np.ndarray, q: int) -> float:
    """P(T >= stat) for ``T = |r|^2``, the weighted residual of the fit, when the weighted errors
    have correlation ``corr``: ``T = sum_i lambda_i chi2_1`` with ``lambda`` the eigenvalues of
    ``P corr P`` (``P`` projects out the columns of ``A``), read as the scaled chi-square
    ``g chi2_h`` with the same mean and variance (Satterthwaite 1946). Uncorrelated errors:
    ``lambda`` is ``q`` ones, the chi-square law on ``q`` degrees of freedom."""
    from scipy import stats

    if np.allclose(corr, np.eye(len(A))):
        return float(stats.chi2.sf(stat, q))
    Q = np.linalg.qr(A)[0]
    P = np.eye(len(A)) - Q @ Q.T
    lam = np.clip(np.linalg.eigvalsh(P @ corr @ P), 0.0, None)
    if lam.sum() <= 0:
        return 1.0 if stat <= 0 else 0.0
    g, h = (lam ** 2).sum() / lam.sum(), lam.sum() ** 2 / (lam ** 2).sum()
    return float(stats.chi2.sf(stat / g, h))


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least squares ``min |A c - b|`` with ``c_0 >= 0``: the unconstrained solution, or, when its
    ``c_0`` is negative, the solution on the boundary ``c_0 = 0`` (one bound on a convex
    quadratic: the constrained minimum lies on it when the free one violates it)."""
    c = np.linalg.lstsq(A, b, rcond=None)[0]
    if c[0] < 0:
        c = np.concatenate([[0.0], np.linalg.lstsq(A[:, 1:], b, rcond=None)[0] if A.shape[1] > 1 else []])
    return c


def _fit(L, b, w, terms, reference, corr, q):
    """Coefficients, statistic, p-value and weighted design of ``terms`` on the weighted errors ``b``."""
    A = np.array([[t.seen(x, reference) for t in terms] for x in L]) * w[:, None]
    coef = _solve(A, b)
    stat = float(((b - A @ coef) ** 2).sum())
    return coef, stat, (_pvalue(stat, A, corr, q) if q >= 1 else math.nan), A


def _exponent_interval(L, b, w, corr, terms, reference, q, level: float = 0.05) -> list:
    """The leading exponents ``r_0 + delta`` (every exponent shifted by ``delta``, ``|delta| <= 1``)
    for which the expansion fits at ``level``: a 95% confidence interval of the leading exponent
    by inverting the test (``nan`` bounds when none fits; a bound at the edge of the search is
    reported as it is)."""
    deltas = np.round(np.arange(-1.0, 1.0 + 1e-9, 0.01), 2)
    ok = [d for d in deltas
          if _fit(L, b, w, [dataclasses.replace(t, exponent=t.exponent + d) for t in terms], reference, corr,
                  q)[2] >= level]
    r0 = terms[0].exponent
    return [float(r0 + min(ok)), float(r0 + max(ok))] if ok else [math.nan, math.nan]


def fit_expansion(depths, error, terms, *, stderr=None, cov=None, reference: int | None = None,
                  slope=None, level: float = LEVEL) -> ExpansionFit:
    """Fit ``terms`` to the mean errors ``error`` at ``depths`` and test the fit.

    Args:
        depths: increasing depths; error: mean errors there (finite, > 0).
        terms: :class:`~deeplimits.orders.Term` objects, the leading one first.
        stderr: their standard errors (when ``cov`` is not given).
        cov: the covariance matrix of the mean errors (errors of one draw at every depth are
            correlated: they share the draw's path); its diagonal gives the standard errors.
        reference: the grid of a nested reference, ``None`` for an exact or adaptive one.
        slope: ``(slope, lo, hi)``, the single power-law slope with its 95% interval (a
            bootstrap's); default :func:`power_law_slope`.
        level: the test's level.
    """
    L = np.asarray(depths, dtype=float)
    e = np.asarray(error, dtype=float)
    terms = tuple(terms)
    if not terms or not all(isinstance(t, Term) for t in terms):
        raise ParameterError("terms", f"terms must be a non-empty sequence of deeplimits.orders.Term, got {terms!r}")
    if L.ndim != 1 or e.shape != L.shape or not (np.isfinite(e).all() and (e > 0).all()):
        raise ParameterError("error", f"error must hold {len(L)} finite errors > 0, one per depth, got {error!r}")
    if cov is None:
        se = np.asarray(stderr, dtype=float)
        if se.shape != L.shape or not (np.isfinite(se).all() and (se > 0).all()):
            raise ParameterError("stderr", f"stderr must hold {len(L)} finite standard errors > 0, got {stderr!r}")
        cov = np.diag(se ** 2)
    cov = np.asarray(cov, dtype=float)
    if cov.shape != (len(L), len(L)) or not np.isfinite(cov).all() or (np.diag(cov) <= 0).any():
        raise ParameterError("cov", f"cov must be a ({len(L)}, {len(L)}) covariance with finite entries and positive "
                         f"variances, got {cov!r:.80}")
    w = 1.0 / np.sqrt(np.diag(cov))  # weighted by the standard errors
    corr = cov * np.outer(w, w)
    k, n = len(terms), len(L)
    q = n - k
    coef, stat, p, A = _fit(L, e * w, w, terms, reference, corr, q)
    se = np.sqrt(np.clip(np.diag(np.linalg.pinv(A.T @ A)), 0.0, None))
    start = _dominant_from(coef, terms)
    parts = np.abs([c * t.law(L[-1]) for c, t in zip(coef, terms)])
    share = float(parts[0] / parts.sum()) if parts.sum() > 0 else 0.0
    slope = power_law_slope(L, e, cov) if slope is None else [float(x) for x in slope]
    theory = terms[0].slope(L.tolist())
    verdict, note = _verdict(terms, coef, se, start, L[-1], p, q, level, slope, theory)
    return ExpansionFit(terms, reference, coef.tolist(), se.tolist(), stat, q, p, level, start, share,
                        local_slopes(L, e, cov), slope, theory, verdict, note, (L, e * w, w, corr))


def _verdict(terms, coef, se, start, deepest, p, q, level, slope, theory) -> tuple[str | None, str]:
    """The verdict and its reading in words (see the module's docstring)."""
    lead = terms[0].text
    law = " + ".join(t.text for t in terms)
    if q < 1:
        return None, f"{len(terms)} declared terms for {len(terms) + q} depths: no degree of freedom left to test the fit"
    if p < level:
        return "disagrees", f"the declared expansion {law} does not fit (p = {p:.2g} < {level:g})"
    if coef[0] - _Z * se[0] <= 0:
        return "pre-asymptotic", (f"{law} fits, but its leading term {lead} is not detected yet (coefficient "
                                  f"{coef[0]:.3g}, its 95% interval reaches 0)")
    if start > deepest:
        where = _from(start) if math.isfinite(start) else "at no depth below 1e15"
        return "pre-asymptotic", f"{law} fits; its leading term {lead} would dominate {where}"
    s, lo, hi = slope
    if not lo <= theory <= hi:
        return "pre-asymptotic", (f"{law} fits and {lead} dominates {_from(start)}, but the next terms "
                                  f"still bend the slope over these depths ({s:.3f} [{lo:.3f}, {hi:.3f}] against "
                                  f"{theory:.3f})")
    return "agrees", f"{law} fits and its leading term {lead} dominates {_from(start)}"


def _from(depth: float) -> str:
    """``'at every depth'`` or ``'from depth 596'``."""
    return "at every depth" if depth < 2 else f"from depth {depth:.0f}"
