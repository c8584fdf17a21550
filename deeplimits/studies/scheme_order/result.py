"""The results of the scheme-order study: a strong order's result (a
:class:`~deeplimits.studies.convergence.result.ConvergenceResult` of ``regime='scheme'``,
:func:`order_result`) and its calibration's (:class:`Calibration`, one :class:`CalibrationRow` per
case: how often the verdict is wrong, docs/schemes.md)."""

from __future__ import annotations

import dataclasses

from ..._plain import PlainData
from ..._stats import wilson
from ...orders import next_pairs
from ..convergence.result import ConvergenceResult
from ..convergence.statistics import error_statistics
from ..fits import ENDPOINT_TOL
from .presets import default_reference

__all__ = ["order_result", "CalibrationRow", "Calibration"]


def order_result(scheme, op, exact, reference_scheme, mx, tm, seconds: float,
                  share: float) -> ConvergenceResult:
    """The result of the per-draw errors ``mx``, ``tm`` of ``scheme`` on the sizes of ``op`` (its
    :class:`~.study.OrderPlan`), read at the share ``share`` of the levels."""
    kind = "fBm" if op.hurst is not None else "Brownian"
    ref = ("the exact solution" if exact is not None else
           f"{getattr(reference_scheme or scheme, 'name', 'the scheme')} on the grid 1/{op.reference}")
    drawn = ""
    if exact is not None:  # the path is drawn on the grid 1/reference; the depths read its sums
        chosen = " (2 x the deepest depth: the default with an exact solution)" * (
            op.reference == default_reference(op.depths, exact))
        drawn = f", drawn on the grid 1/{op.reference}{chosen}"
    return ConvergenceResult(
        regime="scheme", hurst=op.hurst, width=len(op.x0), activation=getattr(scheme, "name", "scheme"),
        arch="one-step map", corrected=False, inputs=1, reference=op.reference, seed=op.seed,
        dtype=str(op.dtype).replace("torch.", ""), theory_rate=op.order.rate, rate_note=op.order.note,
        theory_log_power=op.order.log_power, seconds=seconds, margin=op.margin, level_share=share,
        reference_method=f"{ref} of the same {kind} path{drawn}", nested_reference=exact is None,
        options={"noise": op.noise}, terminal_constant=op.order.constant,
        constant_next=[list(x) for x in next_pairs(op.order.constant_next)],
        constant_source=op.order.constant_source,
        **error_statistics(op.depths, mx, tm, op.seed, op.order, endpoint_tol=ENDPOINT_TOL))


@dataclasses.dataclass
class CalibrationRow(PlainData):
    """One case: the verdicts of its tables at each reading (``counts``), and with a budget those of
    its runs sized to decide (``budget_counts``)."""

    case: str
    """The case's name."""
    expansion: str
    """Its declared expansion."""
    depths: list
    """The depths."""
    draws: int
    """Draws per table."""
    pool: int
    """Draws in the pool the tables are taken from."""
    tables: int
    """Tables per reading."""
    counts: dict
    """``key -> {verdict: count}`` (:func:`_key`: ``'0.0'`` correct at the default margin, ``'0.0@m'`` at
    margin ``m``, ``'+-m'`` off by ``m`` read at margin ``m``)."""
    seconds: float
    """CPU seconds of work (this process's: the unit of the time model, whatever the load)."""
    budget: float | None = None
    """The budget of the runs sized to decide (``None``: none measured)."""
    budget_counts: dict = dataclasses.field(default_factory=dict)
    """As :attr:`counts`, for the runs sized to decide."""
    budget_draws: float | None = None
    """The mean draws at which a correct scheme's run sized to decide ended."""
    budget_drawn: float | None = None
    """The mean draws a run sized to decide drew (until every reading was decided, or its last
    stage): what its time is (``None``: not recorded)."""
    rule: str | None = None
    """The verdict rule that read the tables (:func:`~.sized.rule_fingerprint`; ``None``: recorded
    before rows named their rule)."""

    def rate(self, key, verdict: str, counts: dict | None = None) -> float:
        """The fraction of tables of ``key`` (a shift, or :func:`_key`'s text) told ``verdict``."""
        c = (self.counts if counts is None else counts)[key if isinstance(key, str) else str(float(key))]
        return c.get(verdict, 0) / max(1, sum(c.values()))

    def interval(self, key, verdict: str, *, negate: bool = False, counts: dict | None = None) -> tuple:
        """``(rate, lo, hi)``: the fraction told (``negate``: not told) ``verdict``, with its 95% Wilson interval."""
        c = (self.counts if counts is None else counts)[key]
        n = sum(c.values())
        k = n - c.get(verdict, 0) if negate else c.get(verdict, 0)
        return (k / max(1, n), *wilson(k, n))

    @property
    def size(self) -> float:
        """The fraction of correct tables told ``disagrees``."""
        return self.rate("0.0", "disagrees")

    @property
    def size_ci(self) -> tuple:
        """Its 95% Wilson interval."""
        return self.interval("0.0", "disagrees")[1:]

    def power(self, shift: float) -> tuple:
        """``(disagrees, not agrees)`` against a leading exponent off by ``shift`` (read at margin ``|shift|``)."""
        return self.rate(shift, "disagrees"), 1.0 - self.rate(shift, "agrees")

    def cells(self, counts: dict, shifts) -> list[str]:
        """The table's cells of ``counts``: size, agreement, and per shift the worse sign's refusals."""
        def pct(rate, lo, hi):
            return f"{100 * rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"

        out = [pct(*self.interval("0.0", "disagrees", counts=counts)), pct(*self.interval("0.0", "agrees",
                                                                                          counts=counts))]
        for m in shifts:
            worse = min((self.interval(str(float(s)), "agrees", negate=True, counts=counts) for s in (-m, m)),
                        key=lambda x: x[0])
            out.append(pct(*worse))
        return out


@dataclasses.dataclass
class Calibration(PlainData):
    """The size and power of the verdict over a suite of cases."""

    rows: list
    """One :class:`CalibrationRow` per case (as dicts in JSON)."""
    level: float
    """The level of the tests that say ``disagrees``."""
    shifts: list
    """The exponent errors the power is measured against, each read at itself as the margin."""

    def row_objects(self) -> list:
        """The rows as :class:`CalibrationRow` objects (a result read from JSON holds dicts)."""
        return [CalibrationRow(**x) if isinstance(x, dict) else x for x in self.rows]

    def table(self) -> str:
        """A Markdown table: size and agreement with their intervals, and per shift the refusals of
        ``agrees`` (the worse of both signs), at the default size and, where measured, at the budget's
        (:func:`.report.calibration_table`)."""
        from .report import calibration_table

        return calibration_table(self)

    def plot(self, path: str | None = None, *, ax=None):
        """The size and the agreement of every case with their intervals
        (:func:`~deeplimits.studies.scheme_order.plots.plot_calibration`)."""
        from .plots import plot_calibration

        return plot_calibration(self, path, ax=ax)
