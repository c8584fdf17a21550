"""The margin and the power of a strong-order verdict at its run's size, for every verdict
(docs/mathematics.md, "Error expansions and the verdict"): read from the fitted covariance, no
extra runs.

With ``s`` the standard error of the leading exponent, read from the profile interval the verdict
reads (of the declared expansion, with its next terms where the verdict needed them; of the higher
order for ``faster than declared``),

* the equivalence test shows a correct exponent within the margin with power ``2 Phi(delta / s - z_a) - 1``
  (:attr:`~deeplimits.studies.equivalence.Equivalence.power`, ``z_a`` the quantile of the
  equivalence test's level);
* an exponent off by the margin ``delta`` is rejected (``disagrees``) with power
  ``Phi(delta / s - z_r) + Phi(-delta / s - z_r)``, ``z_r`` the two-sided quantile of the profile
  test's level (half the verdict's level).

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
from .equivalence import DECIDING_POWER, EQUIVALENCE_LEVEL, Equivalence

__all__ = ["VerdictPower", "verdict_power", "rejection_power", "evidence_draws", "seen_from"]


def rejection_power(stderr: float, margin: float, level: float) -> float:
    """The chance that a two-sided test at ``level`` of the declared exponent rejects an exponent
    off by ``margin``, the estimate normal with standard error ``stderr``."""
    if not math.isfinite(stderr):
        return 0.0
    if stderr <= 0:
        return 1.0
    z, k = normal_quantile(1 - level / 2), margin / stderr
    return min(1.0, normal_cdf(k - z) + normal_cdf(-k - z))


@dataclasses.dataclass(frozen=True)
class VerdictPower:
    """The margin and the powers of a verdict's tests at its run's size."""

    margin: float
    """The margin ``delta`` on the leading exponent."""
    stderr: float
    """The standard error of the leading exponent (``inf``: the data do not bound it)."""
    agrees: float
    """The chance that the equivalence test shows a correct exponent within the margin (at its level)."""
    rejects: float
    """The chance that an exponent off by the margin is rejected (at the profile test's level)."""
    equivalence_level: float
    """The level of each one-sided test of the equivalence."""
    level: float
    """The level of the profile test that rejects (half the verdict's)."""
    misfit: bool = False
    """Whether the expansion the verdict reads does not fit on every depth (a rejection whatever the
    exponent, not a test at the margin)."""

    def text(self) -> str:
        """``'margin 0.1; the leading exponent's tests at this size: a correct one shown within 0.1 with
        power 0.93, one off by 0.1 rejected with power 0.71 (standard error 0.021)'``, or why they have none."""
        if not math.isfinite(self.stderr) and self.misfit:
            return (f"margin {self.margin:g}: the declared expansion does not fit, whatever its exponent (a rejection "
                    f"that does not depend on the margin); its leading exponent is not bounded at this size, so "
                    f"agreement within {self.margin:g} has no power")
        if not math.isfinite(self.stderr):
            return (f"margin {self.margin:g}: the data do not bound the leading exponent, so at this size neither "
                    f"agreement nor a rejection at {self.margin:g} has power (more depths over a wider range would)")
        return (f"margin {self.margin:g}; the leading exponent's tests at this size: a correct one shown within "
                f"{self.margin:g} with power {self.agrees:.2f}, one off by {self.margin:g} rejected with power "
                f"{self.rejects:.2f} (standard error {self.stderr:.3g})")

    def to_dict(self) -> dict:
        """Plain JSON (``None`` where not finite)."""
        d = dataclasses.asdict(self)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def verdict_power(fit: ExpansionFit, remainder=None) -> VerdictPower:
    """The margin and powers of ``fit``'s verdict (module docstring); ``remainder``: the first term
    the declared expansion leaves out, as the verdict was read with it (the equivalence level is
    the share of the declared expansion's reading on every depth)."""
    share = fit.level / LEVEL
    L = fit.data[0] if fit.data else ()
    eq_level = levels(EQUIVALENCE_LEVEL * share, readings(L, len(fit.terms), remainder))[0]
    if fit.faster is not None:
        lo, hi = fit.faster["interval"]
        eq = Equivalence(fit.rate, fit.margin, fit.faster["level"], fit.faster["exponent"], (lo, hi))
    elif fit.equivalence is not None:
        eq = Equivalence(**{k: fit.equivalence[k] for k in ("declared", "margin", "level", "estimate", "closed")},
                         interval=tuple(math.nan if x is None else x for x in fit.equivalence["interval"]))
    elif fit.dof >= 1 and fit.data:
        eq = equivalence_of(fit, fit.margin, eq_level)
    else:
        eq = Equivalence(fit.rate, fit.margin, eq_level, math.nan, (math.nan, math.nan), False)
    s = eq.stderr
    if fit.equivalence is not None and fit.faster is None:  # the level the verdict's own test read
        eq_level = eq.level
    agree = dataclasses.replace(eq, level=eq_level, interval=(0.0, 2 * s * normal_quantile(1 - eq_level)), closed=True)
    p = fit.pvalue if fit.remainder_pvalue is None else fit.remainder_pvalue
    return VerdictPower(fit.margin, s, agree.power if math.isfinite(s) else 0.0,
                        rejection_power(s, fit.margin, fit.level / 2), eq_level, fit.level / 2,
                        misfit=bool(fit.verdict == "disagrees" and p < fit.level / 2))


def evidence_draws(rate: float, interval, draws: int, *, declared: float, margin: float, share: float = 1.0,
                   width: float = math.inf) -> int | None:
    """The draws at which a run whose rate has the 95% bootstrap ``interval`` at ``draws`` draws would
    decide at the margin with power :data:`~deeplimits.studies.equivalence.DECIDING_POWER`: the
    interval narrowed under ``width`` and the equivalence test powered (the standard error falls like
    ``draws^-1/2``); ``None`` where the interval is not finite."""
    lo, hi = interval
    if not all(x is not None and math.isfinite(x) for x in (rate, lo, hi)) or draws < 1:
        return None
    level = EQUIVALENCE_LEVEL * share
    s = (hi - lo) / (2 * normal_quantile(0.975))
    z = normal_quantile(1 - level)
    eq = Equivalence(declared, margin, level, rate, (rate - z * s, rate + z * s))
    need = eq.draws_to_decide(draws, DECIDING_POWER)
    narrow = math.ceil(draws * ((hi - lo) / width) ** 2) if math.isfinite(width) and width > 0 else draws
    return max(need or draws, narrow)


def seen_from(fit: ExpansionFit) -> str | None:
    """Where the declared expansion fits only with its next terms: the depth from which, fitted with
    them, the declared leading term dominates (``'from depth 785'``: the declared order is seen from
    there); ``None`` for another reading."""
    if fit.remainder is None or fit.remainder_pvalue is None or fit.remainder_pvalue < fit.level / 2 or not fit.data:
        return None
    L, b, w, corr = fit.data
    e, cov = b / w, corr / np.outer(w, w)
    ext = _fit(L, e, fit.read_terms, cov, fit.reference, None, fit.level, None, fit.draws)
    return _from(ext.dominant_from) if math.isfinite(ext.dominant_from) else "at no depth below 1e15"
