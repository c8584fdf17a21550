"""The weak-error expansion fitted and tested, and the verdict (docs/law.md, "The fit, the rate and the verdict").

Given the mean weak errors ``e_j`` at depths ``L_j`` and their covariance ``C`` (the errors of one
draw at every depth share its path when coupled), :func:`fit_weak`

* fits the declared Talay-Tubaro expansion in powers of ``1/L``, ``a L^-1 + b L^-2 (+ c L^-3 ...)``, by
  generalised least squares (weights ``C^-1``; coefficients of either sign: a weak error has no
  fixed sign) and tests it, ``T = r' C^-1 r`` against the chi-square law on its degrees of freedom.
  The expansion goes on, and the more precise the errors the more of its terms show at the
  shallowest depth: the fit takes the fewest terms ``t`` (from 2, at most one fewer than the depths)
  that fit. The test is exact for a linear expansion, and fails only if the last one fails;
* profiles the leading exponent: ``a L^-r + b L^-(r+1) (+ ...)`` refitted for every ``r`` in ``[0, 3]``
  where the leading term still leads (every test function whose ``a`` is detected has
  ``|a| L >= |b|`` at the deepest depth), ``T(r) - min T`` a chi-square on 1 degree of freedom under
  the true ``r``; its inversion is the rate's interval (95%, and at the test's level ``1 - level/2``).
  The profile with ``t`` terms gives the rate; the same with one more term (``t + 1`` when the depths
  allow) tests the order 1. The first omitted term biases a profile's rate (at the preset's size a
  ``c L^-3`` within its noise moves it by about its interval), so a rate excluding 1 with ``t`` terms
  but not with ``t + 1`` is read as higher terms at work, not as a wrong order;
* fits several test functions at once (their errors concatenated, with their joint covariance):
  each its own coefficients, one common leading exponent.

The verdict, a test at level :data:`LEVEL` split in halves between the fit and the exponent (its
size and power are measured by :mod:`.calibration` and docs/law.md):

* ``'agrees'``: the expansion fits, its leading term is detected (``|a| > 2.58 se``) and dominates at
  the deepest depth (``|a| L >= |b|``), the order 1 is not rejected, and the rate lies within the
  margin (default :data:`MARGIN`) of 1: an equivalence test, the rate's profile interval (90% with
  one reading, 95% on every depth where deeper readings share the level, below) inside
  ``1 +- margin`` (:mod:`~deeplimits.studies.equivalence`), its power printed beside it;
* ``'pre-asymptotic'``: it fits, but the leading term is not detected or does not dominate yet, or
  the rate's interval excludes 1 only until the next term is fitted;
* ``'disagrees'``: no expansion in powers of ``1/L`` fits, or the order 1 is rejected even with
  the next term;
* ``'insufficient evidence'``: fewer than :data:`MIN_DEPTHS` depths or a span under :data:`MIN_SPAN`,
  or the rate not yet shown within the margin (the note says how many draws would decide).

``disagrees`` is decided on every depth (the most powerful test, and the only one: its size is the
level). Otherwise, where the shallowest depths show more than two terms (the fit needs a third, or
the rate excludes 1 only until it is fitted), the asymptotic regime is sought from a deeper depth:
the depths from the second, third, ... on (while at least :data:`MIN_DEPTHS` spanning
:data:`MIN_SPAN`) are read alone, and the first that ``agrees`` gives the verdict, its fit and
``from_depth``. Without it more draws on a fixed grid of depths would turn ``agrees`` into
``insufficient evidence`` as the next term comes into view. An ``agrees`` may come from any of these
readings, so the equivalence level is split over them (Bonferroni, as for the strong order:
:func:`~deeplimits.studies._expansion_reading.levels`): the reading on every depth takes half, each
deeper one an equal share of the other half. The interval's ends are found to 0.0005 between the
exponents of the profile's grid (:func:`_interval`).
"""

from __future__ import annotations

import math

import numpy as np

from ..._stats import chi2_sf
from .._expansion_reading import levels
from ..equivalence import DECIDING_POWER, EQUIVALENCE_LEVEL, Equivalence, check_margin, interval_chi
from .presets import MARGIN

__all__ = ["fit_weak", "fit_power", "gls", "LEVEL", "VERDICTS", "MARGIN", "MIN_DEPTHS", "MIN_SPAN",
           "RESAMPLES"]

LEVEL = 0.01
"""The level of the verdict's test: a correct law is told ``disagrees`` at most this often."""
VERDICTS = ("agrees", "pre-asymptotic", "disagrees", "insufficient evidence")
"""The verdicts of :func:`fit_weak`."""
MIN_DEPTHS = 3
"""A verdict needs at least this many depths."""
MIN_SPAN = 4.0
"""A verdict needs the deepest depth at least this many times the shallowest."""
#: 97.5% and 99.5% normal quantiles; chi-square(1) quantiles at 95% and 99.5%
_Z95, _Z_DETECT, _CHI95, _CHI_TEST = 1.959963984540054, 2.5758293035489, 3.841458820694124, 7.879438576622417
_GRID = np.round(np.arange(0.0, 3.0 + 1e-9, 0.02), 6)
_ONE = int(np.flatnonzero(_GRID == 1.0)[0])
_FINE = 40
"""The steps an interval's end is refined to between two exponents of :data:`_GRID` (0.0005)."""
RESAMPLES = 2000
"""Tables of the parametric bootstrap that reads the order-1 test near its level (:func:`fit_weak`)."""


def gls(X: np.ndarray, e: np.ndarray, cinv: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Generalised least squares of ``e ~ X beta`` with the inverse covariance ``cinv``: the
    coefficients, their covariance and the statistic ``r' cinv r``."""
    cov = np.linalg.pinv(X.T @ cinv @ X)
    beta = cov @ (X.T @ cinv @ e)
    r = e - X @ beta
    return beta, cov, float(r @ cinv @ r)


def _inverse(cov) -> np.ndarray:
    cov = np.asarray(cov, dtype=float)
    return np.linalg.pinv(cov + np.eye(len(cov)) * 1e-12 * max(float(np.trace(cov)) / len(cov), 1e-300))


def _design(L: np.ndarray, r: float, terms: int, blocks: int) -> np.ndarray:
    """``blocks`` test functions, each with its own ``a L^-r + b L^-(r+1) (+ c L^-(r+2))``: block diagonal."""
    one = np.stack([L ** -(r + i) for i in range(terms)], axis=1)
    return np.kron(np.eye(blocks), one)


def _fit_at(L, e, cinv, r, terms, blocks) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """The fit at the leading exponent ``r``: coefficients ``(blocks, terms)``, their standard
    errors, the statistic, and whether the leading term leads (every test function whose leading
    coefficient is detected has ``|a| L >= |b|`` at the deepest depth, and one is detected)."""
    beta, cov, stat = gls(_design(L, r, terms, blocks), e, cinv)
    beta, se = beta.reshape(blocks, terms), np.sqrt(np.clip(np.diag(cov), 0.0, None)).reshape(blocks, terms)
    seen = np.abs(beta[:, 0]) > _Z95 * se[:, 0]
    leads = bool(seen.any()) and bool(np.all(np.abs(beta[seen, 0]) * L[-1] >= np.abs(beta[seen, 1])))
    return beta, se, stat, leads


def _interval(stats: np.ndarray, ok: np.ndarray, i: int, bound: float, at=None) -> tuple[float, float, bool]:
    """``(lo, hi, closed)``: the hull of the exponents where the leading term leads and the statistic
    is within ``bound`` of its minimum ``stats[i]`` (islands included: the data do not exclude them);
    closed when both ends cross the bound inside the grid where the leading term leads. With ``at``
    (``at(exponents) -> (stats, ok)``), each end is refined between its grid point and the next one
    out to :data:`_FINE` of a step: the hull of grid points alone falls short of the set by up to a
    step at each end, and a narrow interval then misses the true exponent well beyond its level
    (an exponent 0.75 between grid points lay above a 90% interval's lower end in 14% of tables)."""
    inside = np.flatnonzero(ok & (stats - stats[i] <= bound))
    lo, hi = int(inside[0]), int(inside[-1])
    closed = 0 < lo and hi < len(_GRID) - 1 and bool(ok[lo - 1]) and bool(ok[hi + 1])
    a, b = float(_GRID[lo]), float(_GRID[hi])
    if at is not None and lo > 0:
        a = _end(at, _GRID[lo], _GRID[lo - 1], stats[i] + bound)
    if at is not None and hi < len(_GRID) - 1:
        b = _end(at, _GRID[hi], _GRID[hi + 1], stats[i] + bound)
    return a, b, closed


def _end(at, inner: float, outer: float, bound: float) -> float:
    """Where, from ``inner`` towards ``outer`` (grid neighbours), the statistic leaves ``bound`` or
    the leading term stops leading: the first of :data:`_FINE` steps out (the interval holds the set
    to within a step of 0.0005, never short of it)."""
    fine = np.linspace(inner, outer, _FINE + 1)
    stats, ok = at(fine)
    good = ok & (stats <= bound)
    stop = int(np.argmin(good)) if not good.all() else len(fine) - 1  # the first fine point out
    return round(float(fine[stop]), 6)


def _profile_stats(L, E: np.ndarray, cinv, terms: int, blocks: int, grid=_GRID) -> tuple[np.ndarray, np.ndarray]:
    """The statistics ``T(r)`` and whether the leading term leads (:func:`_fit_at`), for every exponent of
    ``grid`` and every table ``E`` ``(tables, n)`` at once: two arrays ``(grid, tables)``. Every
    exponent's generalised least squares at once (stacked designs, one batched ``pinv``)."""
    one = np.stack([L[None, :] ** -(grid[:, None] + i) for i in range(terms)], axis=2)  # (grid, depths, terms)
    X = np.einsum("ij,gkl->gikjl", np.eye(blocks), one).reshape(len(grid), blocks * len(L), blocks * terms)
    XtC = np.swapaxes(X, 1, 2) @ cinv  # (grid, p, n)
    cov = np.linalg.pinv(XtC @ X)  # (grid, p, p)
    beta = np.einsum("tn,gpn->gtp", E, cov @ XtC)  # (grid, tables, p)
    res = E[None] - beta @ np.swapaxes(X, 1, 2)  # (grid, tables, n)
    stats = np.sum((res @ cinv) * res, axis=2)
    b = beta.reshape(len(grid), len(E), blocks, terms)
    se = np.sqrt(np.clip(np.diagonal(cov, axis1=1, axis2=2), 0.0, None)).reshape(len(grid), 1, blocks, terms)
    seen = np.abs(b[..., 0]) > _Z95 * se[..., 0]
    ok = seen.any(axis=2) & np.all(~seen | (np.abs(b[..., 0]) * L[-1] >= np.abs(b[..., 1])), axis=2)
    return stats, ok


def _order_statistic(stats: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``T(1) - min T`` over the exponents where the leading term leads (0 where it leads nowhere)."""
    best = np.where(ok, stats, np.inf).min(axis=0)
    return np.where(np.isfinite(best), np.maximum(stats[_ONE] - best, 0.0), 0.0)


def _order_pvalue(L, e, cov, cinv, terms: int, blocks: int, chi2_p: float, level: float) -> float:
    """The p-value of the order 1 on the profile with ``terms`` terms. Its chi-square reading is liberal
    where the exponent is weakly identified (the minimum over a family of fits); near the level it
    is replaced by a parametric bootstrap: :data:`RESAMPLES` tables drawn about the order-1 fit
    with the covariance ``cov`` (seeded: the verdict is a function of the table)."""
    if chi2_p >= 10 * level:
        return chi2_p
    X = _design(L, 1.0, terms, blocks)
    mean = X @ gls(X, e, cinv)[0]
    cov = np.asarray(cov, dtype=float)
    root = np.linalg.cholesky(cov + np.eye(len(cov)) * 1e-12 * max(float(np.trace(cov)) / len(cov), 1e-300))
    E = mean + np.random.default_rng(0).standard_normal((RESAMPLES, len(e))) @ root.T
    null = _order_statistic(*_profile_stats(L, E, cinv, terms, blocks))
    seen = float(_order_statistic(*_profile_stats(L, e[None], cinv, terms, blocks))[0])
    return max(chi2_p, (1 + int(np.sum(null >= seen))) / (RESAMPLES + 1))


def _profile(L, e, cinv, terms: int, blocks: int, eq_level: float = EQUIVALENCE_LEVEL) -> dict:
    """The profile of the common leading exponent ``r`` of ``a L^-r + b L^-(r+1) (+ ...)`` with ``terms``
    terms, over the exponents where the leading term leads (module docstring); ``rate_ci_eq`` at the
    equivalence level ``eq_level``."""
    stats, ok = (x[:, 0] for x in _profile_stats(L, e[None], cinv, terms, blocks))
    if not ok.any():
        return {"rate": math.nan, "rate_ci": [math.nan, math.nan], "rate_ci_test": [math.nan, math.nan],
                "rate_closed": False, "rate_ci_eq": [math.nan, math.nan], "rate_eq_closed": False, "rate_pvalue": 1.0}
    i = int(np.flatnonzero(ok)[np.argmin(stats[ok])])

    def at(grid):
        return tuple(x[:, 0] for x in _profile_stats(L, e[None], cinv, terms, blocks, np.asarray(grid)))

    lo, hi, closed = _interval(stats, ok, i, _CHI_TEST, at)
    lo95, hi95, _ = _interval(stats, ok, i, _CHI95, at)
    elo, ehi, eclosed = _interval(stats, ok, i, interval_chi(eq_level), at)
    return {"rate": float(_GRID[i]), "rate_ci": [lo95, hi95], "rate_ci_test": [lo, hi], "rate_closed": closed,
            "rate_ci_eq": [elo, ehi], "rate_eq_closed": eclosed,
            "rate_pvalue": chi2_sf(max(float(stats[_ONE] - stats[i]), 0.0), 1)}


def _terms(L, e, cinv, blocks: int, level: float) -> tuple[int | None, list]:
    """The fewest terms (2 to ``len(L) - 1``) of the expansion in powers of ``1/L`` that fit at ``level / 2``
    (``None`` if none does), and the p-value of every number of terms tried."""
    pvalues = []
    for t in range(2, len(L)):
        pvalues.append(chi2_sf(_fit_at(L, e, cinv, 1.0, t, blocks)[2], len(e) - t * blocks))
        if pvalues[-1] >= level / 2:
            return t, pvalues
    return None, pvalues


def fit_weak(depths, mean, cov, *, level: float = LEVEL, deeper: bool = True, margin: float = MARGIN,
             draws: int | None = None) -> dict:
    """The declared expansion ``a L^-1 + b L^-2 (+ ...)`` fitted to the mean weak errors ``mean`` of one
    or more test functions (concatenated, ``len(depths)`` each; ``cov`` their joint covariance: a
    common leading exponent), tested, its rate profiled, and the verdict (module docstring): a
    plain dict (``coefficients`` and ``coefficient_se`` per test function, ``statistic``, ``dof``,
    ``pvalue``, ``terms`` (those that fit), ``fit_pvalues`` (per number of terms tried), ``rate``,
    ``rate_ci`` (95%), ``rate_ci_test`` (the test's level), ``rate_pvalue``, ``next_rate_pvalue`` (the
    order 1 with one more term: the test), ``from_depth`` (the shallowest depth of the fit read),
    ``verdict``, ``note``, ``margin``, ``equivalence``: the equivalence test of the rate within
    ``margin`` of 1, :class:`~deeplimits.studies.equivalence.Equivalence`). ``deeper=False`` reads every
    depth alone, without the search from a deeper depth (what the search buys is measured in
    docs/law.md); ``draws``: the draws behind the means (``None``: unknown), for the draws that
    would decide."""
    L, e = np.asarray(depths, dtype=float), np.asarray(mean, dtype=float)
    cov = np.asarray(cov, dtype=float)
    n, blocks = len(L), len(e) // max(len(L), 1)
    margin = check_margin(margin)
    starts = _starts(L) if deeper else []
    first, rest = levels(EQUIVALENCE_LEVEL, 1 + len(starts))
    full = _fit_depths(L, e, cov, blocks, level, margin, draws, first)
    unread = full["verdict"] in ("pre-asymptotic", "insufficient evidence")
    if not (deeper and unread and _next_term_seen(full, level)):
        return full
    for j in starts:  # the asymptotic regime from a deeper depth: the verdict's size is the full grid's
        keep = (np.arange(j, n)[None, :] + n * np.arange(blocks)[:, None]).ravel()
        deep = _fit_depths(L[j:], e[keep], cov[np.ix_(keep, keep)], blocks, level, margin, draws, rest)
        if deep["verdict"] == "agrees":
            return {**deep, "note": f"from L = {L[j]:g}: {deep['note']}; {_set_aside(full, L[0])}"}
    return full


def _starts(L) -> list[int]:
    """The first depths (indices) from which the depths are read alone: the second, third, ... while
    at least :data:`MIN_DEPTHS` depths spanning :data:`MIN_SPAN` are left."""
    n = len(L)
    return [j for j in range(1, n) if n - j >= MIN_DEPTHS and L[-1] / L[j] >= MIN_SPAN]


def _set_aside(full: dict, shallowest: float) -> str:
    """Why the reading on every depth was set aside, in words and without its interval: the report
    prints one interval, the one its verdict uses (docs/law.md)."""
    why = (f"the fit there needs {full['terms']} terms" if full["terms"] > 2 else
           "the rate there excludes 1 only until the next term is fitted")
    return f"the depths from L = {shallowest:g} show the next term ({why}: {full['verdict']})"


def _next_term_seen(f: dict, level: float) -> bool:
    """Whether the shallowest depths show more than two terms: the fit needs a third, or the rate
    excludes 1 only until the next term is fitted (the evidence that drops a depth)."""
    nxt = f["next_rate_pvalue"]
    return f["terms"] > 2 or (nxt is not None and f["rate_pvalue"] < level / 2 <= nxt)


def _fit_depths(L: np.ndarray, e: np.ndarray, cov: np.ndarray, blocks: int, level: float, margin: float = MARGIN,
                draws: int | None = None, eq_level: float = EQUIVALENCE_LEVEL) -> dict:
    """:func:`fit_weak` on these depths alone, its equivalence test at ``eq_level``."""
    n, cinv = len(L), _inverse(cov)
    out = {"level": level, "dof": len(e) - 2 * blocks, "terms": 2, "pvalue": math.nan, "fit_pvalues": [],
           "next_rate_pvalue": None, "from_depth": float(L[0]) if n else math.nan, "margin": margin,
           "equivalence": None, "equivalence_level": eq_level}
    if n < MIN_DEPTHS or L[-1] / L[0] < MIN_SPAN:
        return {**out, **_empty(blocks), "verdict": "insufficient evidence",
                "note": f"{n} depths spanning a factor {L[-1] / L[0]:g}: a verdict needs at least {MIN_DEPTHS} depths "
                        f"spanning a factor {MIN_SPAN:g}"}
    terms, out["fit_pvalues"] = _terms(L, e, cinv, blocks, level)
    out["terms"] = terms = terms or n - 1
    beta, se, stat, _ = _fit_at(L, e, cinv, 1.0, terms, blocks)
    out.update(statistic=stat, dof=len(e) - terms * blocks, pvalue=out["fit_pvalues"][-1])
    out.update(coefficients=beta.tolist(), coefficient_se=se.tolist(), **_profile(L, e, cinv, terms, blocks, eq_level))
    if terms + 1 < n:
        nxt = _profile(L, e, cinv, terms + 1, blocks)["rate_pvalue"]
        out["next_rate_pvalue"] = _order_pvalue(L, e, cov, cinv, terms + 1, blocks, nxt, level)
    else:  # no room for the next term: this profile tests the order 1
        out["rate_pvalue"] = _order_pvalue(L, e, cov, cinv, terms, blocks, out["rate_pvalue"], level)
    if math.isfinite(out["rate"]):
        lo, hi = out["rate_ci_eq"]
        out["equivalence"] = Equivalence(1.0, margin, eq_level, out["rate"], (lo, hi),
                                         out["rate_eq_closed"]).to_dict()
    out["verdict"], out["note"] = _verdict(out, L, level, draws)
    return out


def _empty(blocks: int) -> dict:
    nan2 = [math.nan, math.nan]
    return {"coefficients": [nan2] * blocks, "coefficient_se": [nan2] * blocks, "statistic": math.nan,
            "rate": math.nan, "rate_ci": nan2, "rate_ci_test": nan2, "rate_closed": False, "rate_pvalue": math.nan}


def _expansion(terms: int) -> str:
    return " + ".join(f"{'abcdefgh'[i]}/L" + (f"^{i + 1}" if i else "") for i in range(terms))


def _verdict(f: dict, L: np.ndarray, level: float, draws: int | None = None) -> tuple[str, str]:
    """The verdict of a fit and its reading in words (module docstring)."""
    half = level / 2
    a, b = (np.array([c[i] for c in f["coefficients"]]) for i in (0, 1))
    sa = np.array([s[0] for s in f["coefficient_se"]])
    law = _expansion(f["terms"])
    lo, hi = f["rate_ci_test"]
    rate = f"rate {f['rate']:.2f}, interval at {100 * (1 - half):g}% [{lo:.2f}, {hi:.2f}]"
    if f["pvalue"] < half:
        return "disagrees", f"{law} does not fit (p = {f['pvalue']:.2g} < {half:g}), nor does any fewer term"
    nxt = f["next_rate_pvalue"]
    if (f["rate_pvalue"] if nxt is None else nxt) < half:  # no room for the next term: this profile tests
        also = "" if nxt is None else ", also with the next term"
        return "disagrees", (f"{law} fits, but the weak order 1 is rejected{also} "
                             f"(p = {f['rate_pvalue'] if nxt is None else nxt:.3g} < {half:g}): {rate}")
    seen = np.abs(a) > _Z_DETECT * sa
    if not seen.any():
        return "pre-asymptotic", f"{law} fits, but its leading term a/L is not detected (|a| <= {_Z_DETECT:.2f} se)"
    if np.any(np.abs(a[seen]) * L[-1] < np.abs(b[seen])):
        return "pre-asymptotic", f"{law} fits, but a/L does not dominate b/L^2 yet at L = {L[-1]:g}"
    if f["rate_pvalue"] < half:
        return "pre-asymptotic", (f"{law} fits, but its {rate} excludes 1 (p = {f['rate_pvalue']:.2g}) while with the "
                                  f"next term it does not (p = {nxt:.2g}): the higher terms still act at L = {L[0]:g}")
    eq = Equivalence(1.0, f["margin"], f["equivalence_level"], f["rate"], tuple(f["rate_ci_eq"]), f["rate_eq_closed"])
    if not eq.within:
        need = eq.draws_to_decide(draws) if draws else None
        more = ("more depths would close it" if not eq.closed else
                f"about {need} draws would decide it at power {DECIDING_POWER:g}" if need else "more draws")
        return "insufficient evidence", (f"{law} fits, a/L detected and dominant, but the rate is not shown within "
                                         f"{f['margin']:g} of 1: {eq.text()}; {more}")
    return "agrees", f"{law} fits (p = {f['pvalue']:.2g}), a/L detected and dominant, {eq.text()}"


def fit_power(depths, mean, cov) -> dict:
    """A single power law ``c L^-r`` fitted to ``mean`` (covariance ``cov``) by generalised least squares,
    its exponent profiled: ``rate``, ``rate_ci`` (95%), ``coefficient`` (the Richardson errors' order)."""
    L, e = np.asarray(depths, dtype=float), np.asarray(mean, dtype=float)
    if len(L) < 2:
        return {"rate": math.nan, "rate_ci": [math.nan, math.nan], "coefficient": math.nan}
    cinv = _inverse(cov)

    def at(grid):  # the statistic of each exponent, all of them admitted
        return np.array([gls(L[:, None] ** -float(r), e, cinv)[2] for r in grid]), np.ones(len(grid), bool)

    stats, ok = at(_GRID)
    i = int(np.argmin(stats))
    lo, hi, _ = _interval(stats, ok, i, _CHI95, at)
    return {"rate": float(_GRID[i]), "rate_ci": [lo, hi],
            "coefficient": float(gls(L[:, None] ** -float(_GRID[i]), e, cinv)[0][0])}
