"""The numerical core of :func:`~deeplimits.studies.expansion_fit.fit_expansion`: the weighted
design of a declared expansion as a reference sees it, the constrained least squares over the
coherences of its ``mixed`` terms, the p-value of the residual under the correlation of the
depths (Satterthwaite 1946) and the profile of the leading exponent."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._stats import chi2_sf
from ..errors import ParameterError
from ..orders import TERM_RANGE, Term

#: the coherences a mixed term is tried with (0 a fluctuation, 1 coherent), the shares of a partial one
#: (0 independent, 1 a fluctuation)
MIXES = np.linspace(0.0, 1.0, 11)
#: the exponent shifts searched by the profile: |delta| <= REACH, a grid of COARSE, then refined
REACH, COARSE = 1.0, 0.025
#: the 95% quantile of chi-square on 1 degree of freedom
CHI1 = 3.841458820694124


def mixes(terms, reference) -> np.ndarray:
    """The coherences to try: :data:`MIXES` when a mixed (or partial) term is seen against a nested reference."""
    nested = reference is not None and any(t.kind in ("mixed", "partial") and t.exponent > 0 for t in terms)
    return MIXES if nested else np.array([1.0])


def seen(term, L: np.ndarray, reference, mix: np.ndarray) -> np.ndarray:
    """``(len(mix), len(L))``: :meth:`~deeplimits.orders.Term.seen` for every mix and depth."""
    f = L ** -term.exponent * (np.log(L) ** term.log_power if term.log_power else 1.0)
    out = np.broadcast_to(f, (len(mix), len(L)))
    if reference is None or term.exponent <= 0 or term.kind == "unshared":
        return out
    g = term.law(float(reference))
    if term.kind == "coherent":
        return out - g
    if term.kind == "partial":
        return np.sqrt(np.clip(f * f + g * g - 2 * mix[:, None] * g * g, 0.0, None))
    m = np.zeros_like(mix) if term.kind == "fluctuation" else mix
    return np.sqrt(np.clip(f * f + g * g - 2 * g * (m[:, None] * f + (1 - m[:, None]) * g), 0.0, None))


def designs(L, w, terms, reference, mix) -> np.ndarray:
    """The weighted designs ``(len(mix), n, k)``: column ``i`` is term ``i`` as seen, times ``w``."""
    return np.stack([seen(t, L, reference, mix) for t in terms], axis=-1) * w[:, None]


def _lstsq(A: np.ndarray, b: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Batched least squares ``(M, n, k), (n,) -> (M, k)``: Householder QR of the whole batch and a
    triangular solve (stable for the near-collinear designs of an expansion); SVD where a design
    is rank-deficient, for every design of its problem: the batch's problems are ``groups`` (an
    integer per design; ``None``: one problem), so that a batch of many problems (the profile's
    shifts, :func:`best_of`) solves each as it would be solved alone."""
    if not A.shape[-1]:
        return np.zeros((len(A), 0))
    if A.shape[-1] > A.shape[-2]:  # more terms than depths: the minimum-norm solution
        return np.stack([np.linalg.lstsq(a, b, rcond=None)[0] for a in A])
    Q, R = np.linalg.qr(A)
    diag = np.abs(np.diagonal(R, axis1=-2, axis2=-1))
    full = (diag > 1e-12 * diag.max(-1, keepdims=True)).all(-1)
    ok = np.full(len(A), full.all()) if groups is None else ~np.isin(groups, groups[~full])
    c = np.empty(A.shape[::2])
    if ok.any():
        c[ok] = np.linalg.solve(R[ok], np.einsum("mnk,n->mk", Q[ok], b)[..., None])[..., 0]
    if not ok.all():
        c[~ok] = np.stack([np.linalg.lstsq(a, b, rcond=None)[0] for a in A[~ok]])
    return c


def solve(A: np.ndarray, b: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """``min |A c - b|`` with ``c_0 >= 0`` for each design of the batch: the free solution, or, when
    its ``c_0`` is negative, the solution on the boundary ``c_0 = 0`` (one bound on a convex
    quadratic: the constrained minimum lies on it when the free one violates it); ``groups``: as
    :func:`_lstsq`."""
    c = _lstsq(A, b, groups)
    bad = c[:, 0] < 0
    if bad.any():
        c[bad] = np.concatenate([np.zeros((bad.sum(), 1)),
                                 _lstsq(A[bad][:, :, 1:], b, None if groups is None else groups[bad])], axis=1)
    return c


def best(L, b, w, terms, reference):
    """``(coef, stat, mix, A)`` of the coherence that fits best."""
    return best_of(L, b, w, [terms], reference)[0]


def best_of(L, b, w, expansions, reference) -> list:
    """:func:`best` of each expansion of ``expansions`` (a list of term lists: e.g. one expansion at
    many shifts of its exponents), their least squares solved in one batch."""
    if not expansions:
        return []
    m = [mixes(terms, reference) for terms in expansions]
    A = np.concatenate([designs(L, w, terms, reference, mix) for terms, mix in zip(expansions, m)])
    groups = np.repeat(np.arange(len(expansions)), [len(mix) for mix in m])
    c = solve(A, b, groups)
    stats = ((b - np.einsum("mnk,mk->mn", A, c)) ** 2).sum(-1)
    out, start = [], 0
    for mix in m:
        i = start + int(np.argmin(stats[start:start + len(mix)]))
        out.append((c[i], float(stats[i]), float(mix[i - start]), A[i]))
        start += len(mix)
    return out


def tested(L, b, w, terms, reference, corr, q: int, draws: int | None = None):
    """``(coef, stat, mix, A, p)``: the fit of ``terms`` on ``q`` degrees of freedom and its test.
    Each coherence is fitted and tested on the degrees of freedom its fit left: ``q``, or ``q + 1``
    where the bound ``c_0 >= 0`` held its leading coefficient at 0 (the fit then spent one parameter
    fewer; the residual is that of the design without the leading term). The expansion fits where
    any coherence fits, so ``p`` is the largest of their p-values (an intersection-union test: were
    the true coherence on the grid, the size is at most that of its own test, the level); the fit
    returned is the coherence of the smallest residual (``draws``: :func:`pvalue`'s). Tested on
    ``q`` alone, the smallest residual's coherence read as if fixed, the fbm regime's tables at
    H = 0.6 (width 4, depths 8..128, 64 draws) were told ``disagrees`` in 13 of 1,000 at the level's
    half, 0.5%."""
    m = mixes(terms, reference)
    A = designs(L, w, terms, reference, m)
    c = solve(A, b)
    stats = ((b - np.einsum("mnk,mk->mn", A, c)) ** 2).sum(-1)
    i = int(np.argmin(stats))
    if q < 1:
        return c[i], float(stats[i]), float(m[i]), A[i], math.nan
    bound = _lstsq(A, b)[:, 0] < 0  # as solve() decides it
    p = [pvalue(float(stats[j]), A[j][:, 1:] if bound[j] else A[j], corr, q + int(bound[j]), draws)
         for j in range(len(m))]
    return c[i], float(stats[i]), float(m[i]), A[i], float(np.nanmax(p)) if not np.isnan(p).all() else math.nan


def pvalue(stat: float, A: np.ndarray, corr: np.ndarray, q: int, draws: int | None = None) -> float:
    """P(T >= stat) for ``T = |r|^2``, the weighted residual of the fit, when the weighted errors
    have correlation ``corr``: ``T = sum_i lambda_i chi2_1`` with ``lambda`` the eigenvalues of
    ``P corr P`` (``P`` projects out the columns of ``A``), read as the scaled chi-square
    ``g chi2_h`` with the same mean and variance (Satterthwaite 1946). Uncorrelated errors:
    ``lambda`` is ``q`` ones, the chi-square law on ``q`` degrees of freedom. With ``draws`` (the
    draws the means and their covariance were estimated from; at least 3, else the chi-square
    reading), ``T / g`` is read as ``h F(h, draws - 1)``: the variances that weigh ``T`` are
    estimated on ``draws - 1`` degrees of freedom (Student's ``t^2`` on one degree of freedom; not
    Hotelling's ``(n - 1) h / (n - h) F(h, n - h)``, the law of a statistic weighted by the whole
    inverse covariance, which is heavier). On Gaussian tables of 12 draws, 7 depths and 3 degrees
    of freedom, rejected at 5%: chi-square 6.3%, this law 2.3%, Hotelling's 1.4%; at 64 draws 5.9%,
    5.0%, 4.5%. Read by the chi-square law, the fbm regime's tables at H = 0.6 (64 draws) were told
    ``disagrees`` in 11 of 1,000 at the level's half, 0.5%; by this law, 8."""
    if np.allclose(corr, np.eye(len(A))):
        g, h = 1.0, float(q)
    else:
        Q = np.linalg.qr(A)[0]
        P = np.eye(len(A)) - Q @ Q.T
        lam = np.clip(np.linalg.eigvalsh(P @ corr @ P), 0.0, None)
        if lam.sum() <= 0:
            return 1.0 if stat <= 0 else 0.0
        g, h = (lam ** 2).sum() / lam.sum(), lam.sum() ** 2 / (lam ** 2).sum()
    if draws is None or draws < 3:
        return chi2_sf(stat / g, h)
    from scipy.special import fdtrc

    return float(fdtrc(h, draws - 1, stat / g / h))


def shifted(terms, delta: float) -> list:
    """The terms with every exponent shifted by ``delta``."""
    return [dataclasses.replace(t, exponent=t.exponent + delta) for t in terms]


#: the shifts of the profile interval's walk solved in one batch (:func:`exponent_interval`)
WALK = 8

HORIZON_POINTS = 17
"""The depths, log-spaced from the deepest to half the nested reference's grid, at which
:func:`leading_stat` looks for a leading term that leads deeper (``leads=False``)."""


def leading_stat(L, b, w, terms, reference, delta: float, leads: bool = True) -> float:
    """The statistic of the expansion shifted by ``delta``, ``inf`` where its leading term does not
    lead (a coefficient that is not positive, or under half of the fitted error at the deepest
    depth as the reference sees it: a next term would take its place; against a nested reference a
    term that does not decay is not seen at all). With ``leads=False`` the leading term may lead
    deeper than the deepest depth: at some depth up to half the nested reference's grid (the depths
    its errors are measured against; :data:`HORIZON_POINTS` of them, log-spaced), at any depth
    against an exact reference (there, a positive coefficient is enough)."""
    return float(leading_stats(L, b, w, terms, reference, [delta], leads)[0])


def leading_stats(L, b, w, terms, reference, deltas, leads: bool = True) -> np.ndarray:
    """:func:`leading_stat` at each shift of ``deltas``, their fits solved in one batch."""
    out = np.full(len(deltas), math.inf)
    inside = [i for i, d in enumerate(deltas)
              if all(TERM_RANGE[0] <= t.exponent + d <= TERM_RANGE[1] for t in terms)]  # the exponents an expansion may have
    expansions = [shifted(terms, deltas[i]) for i in inside]
    deepest = float(L[-1])
    horizon = np.geomspace(deepest, max(reference / 2, deepest), HORIZON_POINTS) if reference is not None else None
    for i, s, (coef, stat, mix, _) in zip(inside, expansions, best_of(L, b, w, expansions, reference)):
        if coef[0] <= 0:
            continue
        if not leads and reference is None:
            out[i] = stat  # the smallest exponent's term, its coefficient positive, leads from some depth on
            continue
        for x in (horizon if not leads else (deepest,)):
            parts = np.abs([c * t.seen(float(x), reference, mix) for c, t in zip(coef, s)])
            if parts[0] > 0 and 2 * parts[0] >= parts.sum():
                out[i] = stat
                break
    return out


def shifts(step: float) -> np.ndarray:
    """The shifts searched: ``|delta| <= REACH`` (a leading exponent at or below 0 is an error that
    does not decay: the test must be able to find one)."""
    return np.arange(-REACH, REACH + 1e-9, step)


def profile_minimum(L, b, w, terms, reference, leads: bool = True) -> tuple[float, float]:
    """``(delta, stat)`` at the best shift of the exponents: a grid of steps :data:`COARSE`, then
    three rounds of the vertex of the parabola through the best point and its neighbours, the
    step divided by 5 each round (the profile is quadratic near its minimum); ``(nan, inf)`` when
    no shift leaves a leading term (``leads``: as :func:`leading_stat`)."""
    grid = shifts(COARSE)
    stats = leading_stats(L, b, w, terms, reference, grid, leads)
    if not np.isfinite(stats).any():
        return math.nan, math.inf
    i = int(np.argmin(stats))
    d, t, step = float(grid[i]), float(stats[i]), COARSE
    for _ in range(3):
        y0, y2 = leading_stats(L, b, w, terms, reference, [d - step, d + step], leads)
        curve = y0 - 2 * t + y2
        if not (math.isfinite(curve) and curve > 0):
            break
        x = min(max(d + step * (y0 - y2) / (2 * curve), -REACH), REACH)  # a flat profile's vertex flies off
        tx = leading_stat(L, b, w, terms, reference, x, leads)
        if tx < t:
            d, t = x, tx
        step /= 5
    return d, t


def exponent_interval(L, b, w, corr, terms, reference, chi: float = CHI1,
                      leads: bool = False) -> tuple[float, float, bool]:
    """``(lo, hi, closed)``: the profile interval of the leading exponent (95% with ``chi`` the
    default :data:`CHI1`; the quantile of chi-square on 1 dof of another level otherwise): from the
    best shift whose leading term leads at the deepest depth (the minimum the exponent's test uses;
    where there is none, the best shift :func:`leading_stat` admits), the run of shifts whose
    statistic lies within ``g * chi`` of that minimum (``g``: the sandwich ratio), found in steps of
    :data:`COARSE` then by bisection to 1e-4 at each end. The run holds the shifts
    :func:`leading_stat` admits with ``leads``: by default (``False``) those whose leading term leads
    at some depth up to half the nested reference's grid, or has a positive coefficient against an
    exact reference: the data allow that leading exponent, its term leading deeper, and an
    equivalence test that left them out told a scheme off by 0.1 in the fBm regime within 0.1 in 98
    of 200 tables (docs/schemes.md); with ``True``, only those that lead at the deepest depth. Where
    the nested reference's grid is under twice the deepest depth the two coincide. ``closed`` when
    neither end is the edge of the search (``|delta| = REACH``): an end where no admitted shift
    continues the run still bounds the exponents. ``nan`` bounds when no shift is admitted."""
    r0 = terms[0].exponent
    d0, t0 = profile_minimum(L, b, w, terms, reference)
    if not (leads or math.isfinite(t0)):
        d0, t0 = profile_minimum(L, b, w, terms, reference, False)
    if not math.isfinite(t0):
        return math.nan, math.nan, False
    bound = t0 + chi * sandwich_ratio(L, b, w, corr, terms, reference, d0)
    runs, closed = [], True
    for sign in (-1, 1):  # the walk out of d0 in steps of COARSE, WALK shifts a batch
        steps, x = [], d0
        while abs(x := x + sign * COARSE) <= REACH + 1e-9:
            steps.append(x)
        a, z = d0, None
        for k in range(0, len(steps), WALK):
            for x, t in zip(steps[k:k + WALK], leading_stats(L, b, w, terms, reference, steps[k:k + WALK], leads)):
                if t > bound:
                    z = x
                    break
                a = x
            if z is not None:
                break
        if z is None:
            closed, z = False, sign * REACH
        runs.append([a, z])
    for _ in range(8):  # both ends bisected together
        mids = [(a + z) / 2 for a, z in runs]
        for run, m, t in zip(runs, mids, leading_stats(L, b, w, terms, reference, mids, leads)):
            run[:] = (m, run[1]) if t <= bound else (run[0], m)
    ends = [a for a, _ in runs]
    return r0 + ends[0], r0 + ends[1], closed


def sandwich_ratio(L, b, w, corr, terms, reference, delta: float) -> float:
    """``var_robust / var_naive`` of the shift ``delta`` at the fit: the Jacobian ``J`` of the
    weighted model in ``(c, delta)``, ``(J'J)^-1 J' corr J (J'J)^-1`` over ``(J'J)^-1`` (1 when
    the depths are independent)."""
    coef, _, mix, A = best(L, b, w, shifted(terms, delta), reference)
    h, m = 1e-4, np.array([mix])
    dA = (designs(L, w, shifted(terms, delta + h), reference, m)[0] -
          designs(L, w, shifted(terms, delta - h), reference, m)[0]) / (2 * h)
    J = np.column_stack([A, dA @ coef])
    naive = np.linalg.pinv(J.T @ J)
    if naive[-1, -1] <= 0:
        return 1.0
    return float(max((naive @ J.T @ corr @ J @ naive)[-1, -1] / naive[-1, -1], 1e-12))


def check(depths, error, terms, stderr, cov, reference, slope, level, remainder):
    """The arguments of :func:`fit_expansion`, checked: one line naming the parameter and its range."""
    if terms is None or isinstance(terms, (str, bytes, Term)):
        raise ParameterError("terms", f"terms must be a non-empty sequence of deeplimits.orders.Term, got {terms!r:.80}")
    try:
        terms = tuple(terms)
    except TypeError:
        raise ParameterError("terms", f"terms must be a non-empty sequence of deeplimits.orders.Term, got {terms!r:.80}") from None
    if not terms or not all(isinstance(t, Term) for t in terms):
        raise ParameterError("terms", f"terms must be a non-empty sequence of deeplimits.orders.Term, got {terms!r:.80}")
    if remainder is not None and not isinstance(remainder, Term):
        raise ParameterError("remainder", f"remainder must be a deeplimits.orders.Term or None, got {remainder!r:.80}")
    L = _floats("depths", depths, "increasing depths >= 1")
    if L.ndim != 1 or len(L) < 1 or not (L >= 1).all() or (np.diff(L) <= 0).any():
        raise ParameterError("depths", f"depths must be increasing depths >= 1 without repeats, got {_short(depths)}")
    if L[0] < 2 and any(t.log_power < 0 for t in (*terms, *([remainder] if remainder else []))):
        raise ParameterError("depths", f"depths must be >= 2 with a term of negative log power ((log L)^p is infinite "
                                       f"at L = 1), got {_short(depths)}")
    e = _floats("error", error, f"{len(L)} finite errors > 0, one per depth")
    if e.shape != L.shape or not (e > 0).all():
        raise ParameterError("error", f"error must hold {len(L)} finite errors > 0, one per depth, got {_short(error)}")
    if cov is None:
        if stderr is None:
            raise ParameterError("stderr", "stderr or cov must be given: the standard errors of the mean errors")
        se = _floats("stderr", stderr, f"{len(L)} finite standard errors > 0")
        if se.shape != L.shape or not (se > 0).all():
            raise ParameterError("stderr", f"stderr must hold {len(L)} finite standard errors > 0, got {_short(stderr)}")
        cov = np.diag(se ** 2)
    cov = _floats("cov", cov, f"a ({len(L)}, {len(L)}) covariance matrix")
    if cov.shape != (len(L), len(L)) or (np.diag(cov) <= 0).any():
        raise ParameterError("cov", f"cov must be a ({len(L)}, {len(L)}) covariance with positive variances, got an "
                                    f"array of shape {cov.shape}")
    if not np.allclose(cov, cov.T, rtol=1e-8, atol=0.0) or np.linalg.eigvalsh((cov + cov.T) / 2).min() < \
            -1e-8 * np.abs(np.diag(cov)).max():
        raise ParameterError("cov", "cov must be symmetric positive semi-definite (a covariance matrix of the mean errors)")
    if reference is not None:
        if isinstance(reference, bool) or not isinstance(reference, (int, np.integer)) or reference <= L[-1]:
            raise ParameterError("reference", f"reference must be None (an exact reference) or the finest grid, an "
                                              f"integer above the largest depth {L[-1]:g}, got {reference!r:.40}")
        reference = int(reference)
    if slope is not None:
        slope = _floats("slope", slope, "(slope, lo, hi), three finite numbers")
        if slope.shape != (3,):
            raise ParameterError("slope", f"slope must be (slope, lo, hi), three finite numbers, got {_short(slope)}")
        slope = [float(x) for x in slope]
    return L, e, terms, (cov + cov.T) / 2, reference, slope, check_level("level", level), remainder


def check_level(name: str, level, high: float = 1.0) -> float:
    """A level in ``(0, high)`` (one line naming ``name`` otherwise)."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < high:
        raise ParameterError(name, f"{name} must be a number in (0, {high:g}), got {level!r:.40}")
    return float(level)


def _floats(name, x, what) -> np.ndarray:
    try:
        if isinstance(x, (str, bytes)) or np.asarray(x).dtype.kind in "USVO" and any(
                isinstance(v, (str, bytes)) for v in np.asarray(x, dtype=object).reshape(-1)):
            raise TypeError  # numbers, not their text ("64")
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(name, f"{name} must be {what}, got {_short(x)}") from None
    if not np.isfinite(a).all():
        raise ParameterError(name, f"{name} must be {what}: finite numbers, got {_short(x)}")
    return a


def _short(x) -> str:
    text = " ".join(repr(x).split())  # an array's repr spans lines
    return f"{text:.60}" + ("..." if len(text) > 60 else "")
