"""The margin and the power of a strong-order verdict at its run's size, for every verdict
(docs/mathematics.md, "Error expansions and the verdict"): read from the fitted covariance, no
extra runs.

With ``s`` the standard error of the exponent the verdict reads, from its profile interval (of
the declared expansion, with its next terms where the verdict needed them, at the level of that
reading),

* the equivalence test shows a correct exponent within the margin ``delta`` with power
  ``2 Phi(delta / s - z_a) - 1`` (:attr:`~deeplimits.studies.equivalence.Equivalence.power`,
  ``z_a`` the quantile of the reading's level);
* an exponent off by the margin is rejected (``disagrees``) with power
  ``Phi(delta / s - z_r) + Phi(-delta / s - z_r)``, ``z_r`` the two-sided quantile of the profile
  test's level (half the verdict's level);
* ``faster than declared``: an exponent ``delta`` beyond ``p0 + delta`` reads it with power
  ``Phi(delta / s - z)``, ``s`` and ``z`` of the higher order's interval.

Where the expansion does not fit at all, the rejection does not depend on the margin; where the
leading exponent was not tested (its term not detected or not leading) or the data do not bound
it, the run has no power at the margin, and the line says so rather than print a number.

The verdict itself is computed elsewhere (:mod:`~deeplimits.studies.expansion_fit`); this module
only says how decisive the run's size is, so it is not part of the verdict's rule.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._stats import normal_cdf, normal_quantile
from ._expansion_core import LEVEL, ExpansionFit, _fit, _from, equivalence_of
from ._expansion_reading import levels, readings
from .equivalence import EQUIVALENCE_LEVEL, Equivalence

__all__ = ["VerdictPower", "KINDS", "verdict_power", "reading_level", "rejection_power", "faster_power",
           "evidence_draws", "seen_from"]


def _at(stderr: float, power) -> float:
    """``power(stderr)``; 0 without a finite standard error, 1 with a zero one."""
    if not math.isfinite(stderr):
        return 0.0
    return 1.0 if stderr <= 0 else power(stderr)


def rejection_power(stderr: float, margin: float, level: float) -> float:
    """The chance that a two-sided test at ``level`` of the declared exponent rejects an exponent
    off by ``margin``, the estimate normal with standard error ``stderr``."""
    z = normal_quantile(1 - level / 2)
    return _at(stderr, lambda s: min(1.0, normal_cdf(margin / s - z) + normal_cdf(-margin / s - z)))


def faster_power(stderr: float, margin: float, level: float) -> float:
    """The chance that an exponent ``margin`` beyond the declared one plus the margin reads ``faster
    than declared``: its one-sided test at ``level`` (the interval's lower end above ``p0 + margin``),
    ``Phi(margin / s - z)``."""
    return _at(stderr, lambda s: normal_cdf(margin / s - normal_quantile(1 - level)))


#: what a verdict's powers are of: both tests of the leading exponent; the higher order's test;
#: a misfit whatever the exponent; a leading exponent not tested; one the data do not bound
KINDS = ("tested", "faster", "misfit", "untested", "unbounded")
#: the line of each kind (:meth:`VerdictPower.text`): ``m`` the margin, ``a`` and ``r`` the powers, ``s``
#: the standard error
_TEXTS = {
    "tested": ("margin {m}; the leading exponent's tests at this size: a correct one shown within {m} with power "
               "{a:.2f}, one off by {m} rejected with power {r:.2f} (standard error {s:.3g})"),
    "faster": ("margin {m}; the faster order's test at this size: an exponent {m} beyond the declared one plus {m} "
               "reads faster than declared with power {a:.2f} (standard error {s:.3g})"),
    "misfit": ("margin {m}: the declared expansion does not fit, whatever its exponent (a rejection that does not "
               "depend on the margin)"),
    "untested": ("margin {m}: the leading exponent is not tested at these depths (its term not detected or not "
                 "leading), so this run has no power at the margin"),
    "unbounded": ("margin {m}: the data do not bound the leading exponent, so at this size neither agreement nor a "
                  "rejection at {m} has power (more depths over a wider range would)"),
}


@dataclasses.dataclass(frozen=True)
class VerdictPower:
    """The margin and the powers of a verdict's tests at its run's size."""

    margin: float
    """The margin ``delta`` on the leading exponent."""
    kind: str
    """What the powers are of (:data:`KINDS`)."""
    stderr: float
    """The standard error of the exponent the verdict reads (``inf``: none, or not bounded)."""
    agrees: float
    """``'tested'``: the chance that the equivalence test shows a correct exponent within the margin;
    ``'faster'``: the chance that an exponent ``margin`` beyond ``p0 + margin`` reads ``faster than
    declared``; 0 otherwise."""
    rejects: float
    """``'tested'``: the chance that an exponent off by the margin is rejected (the profile test at
    :attr:`level`); 0 otherwise."""
    equivalence_level: float
    """The level of each one-sided test of the equivalence (of the faster order's test)."""
    level: float
    """The level of the profile test that rejects (half the verdict's)."""

    def text(self) -> str:
        """``'margin 0.1; the leading exponent's tests at this size: a correct one shown within 0.1 with
        power 0.93, one off by 0.1 rejected with power 0.71 (standard error 0.021)'``, or why they have none."""
        return _TEXTS[self.kind].format(m=f"{self.margin:g}", a=self.agrees, r=self.rejects, s=self.stderr)

    def to_dict(self) -> dict:
        """Plain JSON (``None`` where not finite)."""
        d = dataclasses.asdict(self)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def reading_level(fit: ExpansionFit, remainder, equivalence_level: float) -> float:
    """The equivalence level of the reading ``fit``'s verdict took (:func:`~deeplimits.studies.
    _expansion_reading.levels`): the declared expansion's on every depth, or, where the verdict read
    its next terms, each other reading's share."""
    L = fit.data[0] if fit.data else ()
    first, rest = levels(equivalence_level, readings(L, len(fit.terms), remainder))
    return rest if fit.remainder is not None else first


def verdict_power(fit: ExpansionFit, remainder=None, equivalence_level: float | None = None) -> VerdictPower:
    """The margin and powers of ``fit``'s verdict (module docstring); ``remainder``: the first term
    the declared expansion leaves out, as the verdict was read with it; ``equivalence_level``: the
    level the verdict's equivalence test was given (default: the package's, at the share of the
    verdict's level)."""
    if equivalence_level is None:
        equivalence_level = EQUIVALENCE_LEVEL * fit.level / LEVEL
    eq_level, half = reading_level(fit, remainder, equivalence_level), fit.level / 2
    p = fit.pvalue if fit.remainder_pvalue is None else fit.remainder_pvalue
    if fit.verdict == "disagrees" and p < half:
        return VerdictPower(fit.margin, "misfit", math.inf, 0.0, 0.0, eq_level, half)
    if fit.faster is not None:
        lo, hi = fit.faster["interval"]
        s = Equivalence(fit.rate, fit.margin, fit.faster["level"], fit.faster["exponent"], (lo, hi)).stderr
        return VerdictPower(fit.margin, "faster", s, faster_power(s, fit.margin, fit.faster["level"]), 0.0,
                            fit.faster["level"], half)
    if fit.equivalence is not None:  # the verdict's own test, at the level it read
        eq = Equivalence(**{k: fit.equivalence[k] for k in ("declared", "margin", "level", "estimate", "closed")},
                         interval=tuple(math.nan if x is None else x for x in fit.equivalence["interval"]))
    elif fit.exponent_pvalue is None or not fit.data:
        return VerdictPower(fit.margin, "untested", math.inf, 0.0, 0.0, eq_level, half)
    else:
        eq = equivalence_of(fit, fit.margin, eq_level)
    s = eq.stderr
    if not math.isfinite(s):
        return VerdictPower(fit.margin, "unbounded", s, 0.0, 0.0, eq.level, half)
    return VerdictPower(fit.margin, "tested", s, eq.power, rejection_power(s, fit.margin, half), eq.level, half)


def evidence_draws(interval, draws: int, width: float) -> int | None:
    """The finite draws at which the 95% bootstrap ``interval`` of the rate, measured at ``draws``
    draws, would narrow under ``width`` (it narrows like ``draws^-1/2``); ``None`` where it is not
    finite. A lower bound on what a verdict needs: the expansion's own test reads a wider interval."""
    lo, hi = interval
    if not all(x is not None and math.isfinite(x) for x in (lo, hi)) or draws < 1 or not width > 0:
        return None
    return max(int(draws), math.ceil(draws * ((hi - lo) / width) ** 2))


def seen_from(fit: ExpansionFit) -> str | None:
    """Where the declared expansion fits only with its next terms: the depth from which, fitted with
    them, the declared leading term dominates (``'from depth 785'``: the declared order is seen from
    there; ``'(its coefficient not detected)'`` added where its 95% interval reaches 0); ``None`` for
    another reading."""
    if fit.remainder is None or fit.remainder_pvalue is None or fit.remainder_pvalue < fit.level / 2 or not fit.data:
        return None
    L, b, w, corr = fit.data
    e, cov = b / w, corr / np.outer(w, w)
    ext = _fit(L, e, fit.read_terms, cov, fit.reference, None, fit.level, None, fit.draws)
    where = _from(ext.dominant_from) if math.isfinite(ext.dominant_from) else "at no depth below 1e15"
    lo = ext.coefficient_ci[0][0]
    return where if lo > 0 else f"{where} (its coefficient not detected)"
