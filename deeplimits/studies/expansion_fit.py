"""The declared error expansion fitted to a measured error table, and the verdict as a
calibrated test (docs/mathematics.md, "Error expansions and the verdict"; docs/schemes.md, "Why
does my scheme disagree or read pre-asymptotic?").

Given the mean errors ``e_j`` at depths ``L_j``, their covariance ``S`` (or standard errors
``se_j``) and the declared terms ``f_i`` (:class:`~deeplimits.orders.Term`), :func:`fit_expansion`

* fits ``e ~ sum_i c_i f_i(L)`` by least squares weighted by the standard errors, the leading
  coefficient ``c_0 >= 0`` and the others of either sign (the error is a mean of norms,
  ``E|A + B| = E|A| + E[sign(A) B] + ...``: its correction terms have no fixed sign); each term is
  seen as the reference sees it (:meth:`~deeplimits.orders.Term.seen`): whole against an exact
  solution; against the scheme itself on a finer grid ``N``, reduced by the reference's own error
  as its kind says, a ``mixed`` term with the coherence ``m`` in [0, 1] that fits best (a
  ``partial`` one with the share ``m`` of its variance the reference holds);
* tests the fit: ``T = sum_j (r_j / se_j)^2`` of the residuals ``r`` against the chi-square law
  on ``q = n - k`` degrees of freedom when the errors of different depths are independent, and
  otherwise against the law of ``T`` under their correlation (a weighted sum of chi-square
  variables read as a scaled chi-square with its mean and variance: Satterthwaite 1946), since
  the errors of one draw at every depth share its path; with the draws known (``draws=``), the
  weights being estimated from them, ``T / g`` is read by ``h F(h, draws - 1)``. Each mix is
  tested on the degrees of freedom its fit left (one more where the bound ``c_0 >= 0`` held); the
  expansion fits where any mix fits (the largest p-value: an intersection-union test, each at the
  level), and the fit reported is the mix of the smallest residual;
* when the declared expansion does not fit, tests it again with the first term it leaves out
  (:attr:`~deeplimits.orders.StrongOrder.omitted`): a table that fits only with it is still
  consistent with the declared order, but its depths are not asymptotic yet; where that fails
  too and two degrees of freedom are left, with the term after it as well (a truncated series is
  rejected once the draws are many enough);
* tests the leading exponent itself (the goodness of fit alone has little power against a shifted
  exponent: the next terms absorb a shift): the expansion with every exponent shifted by
  ``delta`` and refitted gives the profile statistic ``T(delta)``, and ``(T(0) - min T) / g``, with
  ``g`` the robust (sandwich) variance of the shift over its naive one under the correlation of
  the depths, is a chi-square on 1 degree of freedom under the declared exponent; only shifts
  whose leading term still leads at the deepest depth count. Its inversion at 95%, over the shifts
  whose leading term leads there or deeper, is the exponent's profile interval
  (:func:`~deeplimits.studies._fit_core.exponent_interval`);
* reports the coefficients with 95% intervals, the depth from which the leading term is at
  least the rest of the fitted error (``|c_0 f_0| >= |sum_i>0 c_i f_i|``), the local slopes between
  successive depths and the single power-law slope, each with a 95% interval (delta method on
  ``log e``).

The verdict, a test at level :data:`LEVEL` split in halves between the fit and the exponent for
``disagrees``, and an equivalence test for ``agrees`` (its size and power are measured by
:mod:`deeplimits.studies.scheme_order.calibration`):

* ``'agrees'``: the declared expansion fits, its leading term is detected (the 95% interval of
  ``c_0`` excludes 0) and dominates at the deepest depth, its exponent is not rejected, and the
  exponent lies within a margin ``delta`` (default 0.1) of the declared one: both one-sided tests
  of ``|p - p0| >= delta`` reject at the reading's share of
  :data:`~deeplimits.studies.equivalence.EQUIVALENCE_LEVEL` (the profile interval at ``1 - 2 level``
  inside ``p0 +- delta``; the readings an agreement may come from share the level:
  :func:`~deeplimits.studies._expansion_reading.levels`), its power at the run's size printed
  beside it (:mod:`~deeplimits.studies.equivalence`);
* ``'faster than declared'``: the declared leading term is not detected, and the expansion
  without it fits with its next term leading at an exponent whose interval lies above the
  declared one plus the margin: that order and its interval are given;
* ``'pre-asymptotic'``: the declared expansion fits but its leading term is not detected or does
  not dominate yet;
* ``'disagrees'``: it does not fit, not even with its next term (nor the term after it), or its
  leading exponent is rejected (decided on every depth: its size is the level);
* ``'insufficient evidence'``: no degree of freedom is left to test it (fewer depths than terms
  plus one), or it does not fit on one degree of freedom, none left to test it with its next term
  (the misfit may be that term: the note says how many depths would decide), or the expansion fits
  and leads but its exponent is not yet shown within the margin: the note says how many draws would
  decide at power 0.9.

Where the declared expansion fits only with its next term, that expansion is read the same way,
and short of agreement the depths from the second, third, ... on are read alone
(:mod:`~deeplimits.studies._expansion_reading`): more draws on a fixed grid of depths do not turn a
correct scheme's ``agrees`` into ``pre-asymptotic`` as the next term comes into view (a further term can
still widen the interval: docs/mathematics.md, "Error expansions and the verdict").

The single power-law slope is reported, never tested: it is the leading exponent only in the
limit, and with enough draws it excludes the exponent of every correct scheme.
"""

from __future__ import annotations

from .. import _validate as V_
from ..orders import Term
from . import _fit_core as F_
from ._expansion_core import LEVEL, VERDICTS, WHY, ExpansionFit, _fit, local_slopes, power_law_slope
from ._expansion_reading import read
from .equivalence import EQUIVALENCE_LEVEL, MARGIN, check_margin

__all__ = ["fit_expansion", "ExpansionFit", "LEVEL", "VERDICTS", "WHY", "local_slopes", "power_law_slope"]


def fit_expansion(depths, error, terms, *, stderr=None, cov=None, reference: int | None = None,
                  slope=None, level: float = LEVEL, remainder: Term | None = None, margin: float = MARGIN,
                  equivalence_level: float = EQUIVALENCE_LEVEL, draws: int | None = None) -> ExpansionFit:
    """Fit ``terms`` to the mean errors ``error`` at ``depths``, test the fit, and read the verdict.

    Args:
        depths: increasing depths; error: mean errors there (finite, > 0).
        terms: :class:`~deeplimits.orders.Term` objects, the leading one first.
        stderr: their standard errors (when ``cov`` is not given).
        cov: the covariance matrix of the mean errors (errors of one draw at every depth are
            correlated: they share the draw's path); its diagonal gives the standard errors.
        reference: the grid of a nested reference (above the largest depth), ``None`` for an
            exact or adaptive one.
        slope: ``(slope, lo, hi)``, the single power-law slope with its 95% interval (a
            bootstrap's; reported, not tested); default :func:`power_law_slope`.
        level: the level of the tests that say ``disagrees``, in (0, 1).
        remainder: the first term the expansion leaves out
            (:attr:`~deeplimits.orders.StrongOrder.omitted`); ``None``: not tried.
        margin: an ``agrees`` needs the leading exponent within this of the declared one, in
            (0, 1] (an equivalence test at ``equivalence_level``, in (0, 0.5):
            :mod:`~deeplimits.studies.equivalence`).
        draws: the draws behind the errors (``None``: unknown), for the draws that would decide.
    """
    L, e, terms, cov, reference, slope, level, remainder = F_.check(depths, error, terms, stderr, cov, reference, slope,
                                                                  level, remainder)
    margin, eq_level = check_margin(margin), F_.check_level("equivalence_level", equivalence_level, 0.5)
    draws = None if draws is None else V_.integer("draws", draws)
    fit = _fit(L, e, terms, cov, reference, slope, level, remainder, draws)
    return read(fit, L, e, cov, margin=margin, eq_level=eq_level, draws=draws, remainder=remainder)
