"""Agreement within a stated margin: the equivalence test every ``agrees`` of the package is
(docs/mathematics.md, "Error expansions and the verdict"; Schuirmann 1987).

A measured exponent ``p`` *agrees* with a declared ``p0`` within a margin ``delta`` when both
one-sided tests of ``p <= p0 - delta`` and of ``p >= p0 + delta`` reject at the level
:data:`EQUIVALENCE_LEVEL`: the estimate's ``1 - 2 level`` interval lies inside
``(p0 - delta, p0 + delta)``. An exponent off by ``delta`` or more then reads ``agrees`` at most
that often, whatever the size of the run. The test's power at the run's size, the chance that a
correct ``p0`` reads ``agrees``, is ``2 Phi(delta / s - z) - 1`` with ``s`` the estimate's
standard error (read from the interval, no extra runs) and ``z`` the ``1 - level`` normal
quantile; since ``s`` falls like ``draws^-1/2``, ``draws (z + z_power)^2 s^2 / delta^2`` draws
reach the power ``DECIDING_POWER`` (:meth:`Equivalence.draws_to_decide`).
"""

from __future__ import annotations

import dataclasses
import math

from .._stats import normal_cdf, normal_quantile
from ..errors import ParameterError

__all__ = ["Equivalence", "MARGIN", "EQUIVALENCE_LEVEL", "DECIDING_POWER", "check_margin", "interval_chi"]

MARGIN = 0.1
"""The default margin on the leading exponent (a researcher may ask for 0.05)."""
EQUIVALENCE_LEVEL = 0.05
"""The level of each one-sided test: an exponent off by the margin reads ``agrees`` at most this often."""
DECIDING_POWER = 0.9
"""The power :meth:`Equivalence.draws_to_decide` sizes a run for."""


def check_margin(margin) -> float:
    """A margin in ``(0, 1]`` (one line naming ``margin`` otherwise)."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin <= 1:
        raise ParameterError("margin", f"margin must be a number in (0, 1], the largest distance of the exponent from "
                                       f"the declared one that still agrees, got {margin!r:.40}")
    return float(margin)


def interval_chi(level: float = EQUIVALENCE_LEVEL) -> float:
    """The chi-square (1 dof) quantile of the ``1 - 2 level`` two-sided interval: ``z_{1-level}^2``."""
    return normal_quantile(1 - level) ** 2


@dataclasses.dataclass(frozen=True)
class Equivalence:
    """The equivalence test of an estimated exponent against a declared one."""

    declared: float
    """The declared exponent ``p0``."""
    margin: float
    """The margin ``delta``."""
    level: float
    """The level of each one-sided test."""
    estimate: float
    """The estimate of the exponent."""
    interval: tuple
    """Its ``1 - 2 level`` interval ``(lo, hi)`` (``nan`` ends: none)."""
    closed: bool = True
    """Whether the interval is bounded by the data (not by the edge of the search)."""

    @property
    def within(self) -> bool:
        """Whether both one-sided tests reject: the interval closed and inside the margin."""
        lo, hi = self.interval
        return bool(self.closed and self.declared - self.margin < lo and hi < self.declared + self.margin)

    @property
    def stderr(self) -> float:
        """The estimate's standard error read from the interval (half its width over ``z``)."""
        lo, hi = self.interval
        if not (self.closed and math.isfinite(hi - lo)):
            return math.inf
        return (hi - lo) / (2 * normal_quantile(1 - self.level))

    @property
    def power(self) -> float:
        """The chance that an exactly correct exponent reads ``agrees`` at this run's size."""
        s = self.stderr
        if not math.isfinite(s):
            return 0.0
        if s <= 0:
            return 1.0
        return max(0.0, 2 * normal_cdf(self.margin / s - normal_quantile(1 - self.level)) - 1)

    def draws_to_decide(self, draws: int, power: float = DECIDING_POWER) -> int | None:
        """The draws at which a correct exponent would read ``agrees`` with ``power`` (``None``:
        the interval is open, and more depths rather than draws are needed)."""
        s = self.stderr
        if not math.isfinite(s) or draws < 1:
            return None
        need = (normal_quantile(1 - self.level) + normal_quantile((1 + power) / 2)) * s / self.margin
        return max(int(draws), math.ceil(draws * need * need * (1 - 1e-12)))

    def text(self) -> str:
        """``'0.503 [0.47, 0.53] within 0.5 +- 0.1 (power 0.98)'`` or why not."""
        lo, hi = self.interval
        if not math.isfinite(hi - lo):
            return "no interval: the declared expansion's leading term does not lead at any exponent"
        ci = f"{100 * (1 - 2 * self.level):.3g}% interval [{lo:.3f}, {hi:.3f}]" + ("" if self.closed else " (open)")
        where = "inside" if self.within else "not inside"
        return (f"exponent {self.estimate:.3f}, {ci} {where} {self.declared:g} +- {self.margin:g} "
                f"(power {self.power:.2f} at this size)")

    def to_dict(self) -> dict:
        """Plain JSON: the fields, ``within``, ``power`` and ``stderr`` (``None`` where not finite)."""
        d = {**dataclasses.asdict(self), "interval": list(self.interval), "within": self.within,
             "power": self.power, "stderr": self.stderr}
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}
