"""The result of a strong-error study: plain data, the verdict (a test of the declared error
expansion, :mod:`~deeplimits.studies.expansion_fit`), the report."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ...orders import StrongOrder, Term, expected_constant
from ..equivalence import EQUIVALENCE_LEVEL, MARGIN
from ..expansion_fit import LEVEL, ExpansionFit, fit_expansion
from ..result import PlanResult
from ..verdict_power import evidence_draws, verdict_power


MIN_FINITE_DRAWS = 8
"""A verdict needs at least this many finite draws (and at least half of the draws)."""
MAX_CI_WIDTH = 0.5
"""A verdict needs a bootstrap interval of the rate at most this wide."""



@dataclasses.dataclass
class ConvergenceResult(PlanResult):
    """Strong-error study of one pair: plain data, see :meth:`to_dict` for the JSON fields. It holds
    its :attr:`plan` (a :class:`~deeplimits.studies.convergence.study.ConvergencePlan`) beside what
    was measured of the pair the plan built (its regime, width, activation, ... as resolved)."""

    regime: str
    """The regime's registry name."""
    hurst: float | None
    """The Hurst index (``None`` for a regime without one)."""
    width: int
    """The width ``d``."""
    activation: str
    """The activation's name."""
    arch: str
    """The residual map."""
    corrected: bool
    """Whether the network is the modified Euler one (:class:`~deeplimits.networks.ModifiedEulerResNet`)."""
    draws: int
    """Independent draws (older JSON calls it ``paths``: :meth:`from_dict` reads both)."""
    inputs: int
    """Inputs per draw."""
    reference: int
    """The finest grid of the reference (see ``reference_method``)."""
    seed: int
    """The base seed."""
    dtype: str
    """The dtype, by name."""
    depths: list[int]
    """The depths ``L``."""
    error: list[float]
    """Per depth, the strong error ``max_k ||H_{k/L} - h_k||`` averaged over the finite draws."""
    stderr: list[float]
    """Its standard error over the draws."""
    terminal_error: list[float]
    """Per depth, the terminal error ``||H_1 - h_L||`` averaged over the finite draws."""
    terminal_stderr: list[float]
    """Its standard error over the draws."""
    rate: float
    """The fitted rate: ``error ~ L^-rate`` by least squares (:func:`fit_rate`)."""
    rate_ci: list[float]
    """A 95% bootstrap interval of ``rate`` over draws."""
    theory_rate: float
    """The exponent of ``L`` in the declared strong order."""
    rate_note: str
    """Where the declared order comes from and what to expect at practical depths."""
    nonfinite: int
    """Draws left out because an error was not finite (blow-up)."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""
    # inside regimes only (None elsewhere; results stored before they existed load with None)
    alpha: float | None = None
    """The inside regimes' ``alpha`` (``None`` elsewhere)."""
    beta: float | None = None
    """The inside regimes' ``beta`` (``None`` elsewhere)."""
    sa: float | None = None
    """The inside regimes' entry scale ``s_A`` (``None`` elsewhere)."""
    sb: float | None = None
    """The inside regimes' entry scale ``s_b`` (``None`` elsewhere)."""
    ito_correction: bool | None = None
    """The inside-SDE's Itô correction flag (``None`` elsewhere)."""
    theory_log_power: float = 0.0
    """Power of a logarithmic factor in the declared order ``L^-theory_rate (log L)^theory_log_power``."""
    options: dict = dataclasses.field(default_factory=dict)
    """The regime's other options (declared in ``Regime.options``, not fields above), as its plan records
    them; written only when not empty."""
    reference_method: str = ""
    """How the reference was computed, in words (empty in results written before it was recorded)."""
    expansion: list = dataclasses.field(default_factory=list)
    """The declared error expansion, its terms as ``{exponent, log_power, kind}`` (empty in results
    written before it was recorded: the leading term alone, ``theory_rate``)."""
    error_cov: list | None = None
    """The covariance matrix of the mean errors ``error`` over depths (``None``: ``stderr`` alone)."""
    nested_reference: bool | None = None
    """Whether the reference is the scheme on a finer grid ``reference`` of the same path (``None``:
    when ``reference > max(depths)``); an exact or adaptive reference is not nested."""
    terminal_constant: float | None = None
    """The theory's ``lim L^r E|H_1 - h_L|`` where the error's limit law is known
    (``StrongOrder.constant``); ``None`` elsewhere."""
    constant_next: list = dataclasses.field(default_factory=list)
    """The constant's next-term corrections ``[[c, e], ...]``: ``constant (1 + sum c L^-e)`` (a flat
    ``[c, e]`` in results written before several were declared)."""
    constant_source: str = ""
    """Where the constant comes from."""
    margin: float = MARGIN
    """The margin of the equivalence test an ``agrees`` passes (:mod:`~deeplimits.studies.equivalence`)."""
    level_share: float = 1.0
    """The share of the verdict's levels this look spends: 1 for one run, less for a look of a run
    sized to decide (:mod:`~deeplimits.studies.sequential`), so that the sequence keeps its size."""
    stages: list = dataclasses.field(default_factory=list)
    """A sequential run's stages, ``[{'draws', 'verdict', 'seconds'}, ...]`` (empty: one run)."""
    driver: dict | None = None
    """The law of the weights when not the regime's own (a registered driver's spec; written only when given)."""
    remainder: dict | None = None
    """The first term the declared expansion leaves out (``{exponent, log_power, kind}``), tried when
    the expansion alone does not fit (``None`` in results written before it was recorded: the last
    declared exponent plus 1/2, :attr:`~deeplimits.orders.StrongOrder.omitted`)."""
    plan: object = None
    """The plan summarised (``None``: a strong order of a scheme, :func:`~deeplimits.strong_order`,
    whose scheme is a callable with no spec, and results written before results held their plans)."""

    @classmethod
    def plan_of(cls, d: dict):
        """JSON written before results held their plans records no chunk: no plan (``None``)."""
        return None

    @property
    def theory_slope(self) -> float:
        """The slope the declared order predicts over these depths (``theory_rate`` unless the
        order has a logarithmic factor); the verdict compares the fitted rate with it."""
        return StrongOrder(self.theory_rate, "", "", self.theory_log_power).slope(self.depths)

    @property
    def terms(self) -> tuple:
        """The declared expansion as :class:`~deeplimits.orders.Term` objects, the leading one first."""
        if self.expansion:
            return tuple(Term(**t) for t in self.expansion)
        return (Term(self.theory_rate, self.theory_log_power),)

    @functools.cached_property
    def fit(self) -> ExpansionFit | None:
        """The declared expansion fitted to the errors and tested
        (:func:`~deeplimits.studies.expansion_fit.fit_expansion`); ``None`` without a verdict
        (:attr:`verdict_note`). Computed once (the result's fields are not meant to change)."""
        if self._evidence_note() is not None:
            return None
        nested = self.nested
        cov = None if self.error_cov is None else np.asarray(self.error_cov, dtype=float)
        share = min(1.0, max(float(self.level_share), 1e-6))  # a sized run spends its levels over its looks
        return fit_expansion(self.depths, self.error, self.terms, stderr=self.stderr, cov=cov,
                             reference=self.reference if nested else None, slope=[self.rate, *self.rate_ci],
                             remainder=self.omitted, margin=self.margin, level=LEVEL * share,
                             equivalence_level=EQUIVALENCE_LEVEL * share, draws=self.draws - self.nonfinite)

    @property
    def omitted(self) -> Term:
        """The first term the declared expansion leaves out (:attr:`remainder`)."""
        if self.remainder:
            return Term(**self.remainder)
        return Term(max(t.exponent for t in self.terms) + 0.5)

    @property
    def nested(self) -> bool:
        """Whether the reference is nested (the scheme on a finer grid of the same path)."""
        return self.reference > self.depths[-1] if self.nested_reference is None else self.nested_reference

    def normalised_terminal(self) -> dict | None:
        """At the deepest depth ``L``: ``L^r (log L)^-p E|H_1 - h_L|`` with its standard error, and
        what theory expects there (:attr:`terminal_constant`, corrected by the next term and by the
        nested reference: :func:`~deeplimits.orders.expected_constant`); ``None`` without a constant."""
        if self.terminal_constant is None or self.terminal_error[-1] is None:
            return None
        lead, L = self.terms[0], self.depths[-1]
        norm = 1.0 / lead.law(L)
        theory = expected_constant(self.terminal_constant, lead, L, self.reference if self.nested else None,
                                   tuple(self.constant_next))
        return dict(depth=L, value=self.terminal_error[-1] * norm, stderr=self.terminal_stderr[-1] * norm,
                    theory=theory, constant=self.terminal_constant)

    @property
    def verdict_note(self) -> str | None:
        """What the evidence lacks when the verdict is ``'insufficient evidence'`` (:meth:`_evidence_note`,
        or a fit without a degree of freedom left to test it); ``None`` otherwise."""
        note = self._evidence_note()
        if note is None and self.fit.verdict == "insufficient evidence":
            return self.fit.note
        if note is not None and note.startswith("interval too wide"):  # what would narrow it
            need = evidence_draws(self.rate_ci, self.draws - self.nonfinite, MAX_CI_WIDTH)
            if need is not None:
                note += (f"; at least about {need} finite draws would narrow it under {MAX_CI_WIDTH} (it narrows like "
                         f"draws^-1/2; the expansion's own test at the margin {self.margin:g} may need more)")
            if len(self.depths) < len(self.terms) + 1:  # no draws decide on this grid
                note += (f"; and its {len(self.terms)} declared terms need at least {len(self.terms) + 1} depths for "
                         f"a test")
        return note

    @property
    def power(self):
        """The margin and the powers of the verdict's tests at this run's size
        (:class:`~deeplimits.studies.verdict_power.VerdictPower`; ``None`` without a fit)."""
        fit = self.fit
        share = min(1.0, max(float(self.level_share), 1e-6))  # as :attr:`fit` reads it
        return None if fit is None else verdict_power(fit, self.omitted, EQUIVALENCE_LEVEL * share)

    def _evidence_note(self) -> str | None:
        """Why the data cannot support a verdict (``None`` when they can). A verdict needs

        * at least two depths (a rate is a slope);
        * at least :data:`MIN_FINITE_DRAWS` finite draws and at least half of the draws finite
          (a run where most draws blew up estimates the error of the survivors only);
        * a finite rate and a finite bootstrap interval, of width at most :data:`MAX_CI_WIDTH`
          (a wider interval contains any plausible rate: agreeing with it says nothing).
        """
        finite = self.draws - self.nonfinite
        if len(self.depths) < 2:
            return "fewer than two depths"
        if finite < max(MIN_FINITE_DRAWS, math.ceil(self.draws / 2)):
            return (f"only {finite} of {self.draws} draws finite (a verdict needs at least {MIN_FINITE_DRAWS} and "
                    f"at least half of them)")
        rate, (lo, hi) = self.rate, self.rate_ci
        if not all(x is not None and math.isfinite(x) for x in (rate, lo, hi)):
            return "rate not finite"
        if hi - lo > MAX_CI_WIDTH:
            return f"interval too wide (width {hi - lo:.2f} > {MAX_CI_WIDTH})"
        if not all(x is not None and math.isfinite(x) and x > 0 for x in self.error):
            return "an error is zero or missing"
        return None

    @property
    def verdict(self) -> str:
        """The test of the declared expansion (:attr:`fit`, :mod:`~deeplimits.studies.expansion_fit`):
        ``'agrees'`` (it fits, its leading term is detected and dominates at the deepest depth),
        ``'pre-asymptotic'`` (it fits, but the leading term is not detected or does not dominate
        yet, or it fits only with its next term), ``'disagrees'`` (it does not fit) or
        ``'insufficient evidence'`` (see :attr:`verdict_note`)."""
        fit = self.fit
        return "insufficient evidence" if fit is None else fit.verdict

    def to_dict(self) -> dict:
        """Plain strict JSON (non-finite numbers as ``None``) with the derived ``verdict`` and
        ``verdict_note``."""
        d = super().to_dict()
        if not self.options:  # the results of the built-in regimes are as they were
            del d["options"]
        if self.driver is None:  # ... and so are those of the regimes' own laws
            del d["driver"]
        d["theory_slope"] = self.theory_slope
        fit = self.fit
        d["verdict"] = self.verdict
        d["verdict_note"] = self.verdict_note
        d["fit"] = None if fit is None else fit.to_dict()
        d["power"] = None if fit is None else self.power.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ConvergenceResult":
        """The result of :meth:`to_dict`'s JSON, or of older JSON that names ``draws`` ``paths``."""
        if "draws" not in d and "paths" in d:
            d = {("draws" if k == "paths" else k): v for k, v in d.items()}
        return super().from_dict(d)

    @property
    def table(self):
        """The per-depth table as a :class:`pandas.DataFrame`."""
        from ..._extras import need

        pd = need("pandas")
        return pd.DataFrame({"depth": self.depths, "error": self.error, "stderr": self.stderr,
                             "ratio": self.ratios(), "terminal_error": self.terminal_error,
                             "terminal_stderr": self.terminal_stderr})

    def readings(self) -> dict:
        """What its figure shows, read under today's rules from the measurements (a stored result
        re-read here is read by the current verdict): the verdict and, where the declared leading
        term does not yet dominate at the deepest depth, the depth from which the fit says it would."""
        fit = self.fit
        late = fit is not None and math.isfinite(fit.dominant_from) and fit.dominant_from > max(self.depths)
        return {"label": self.label, "verdict": self.verdict,
                "dominates_from": round(fit.dominant_from) if late else None}

    def points(self, study: str = "convergence") -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`): per
        depth the strong error ``max_error`` and the ``terminal_error`` with their standard errors."""
        from .._shared.points import point, setting

        where = setting(regime=self.regime, hurst=self.hurst, corrected=self.corrected or None, arch=self.arch,
                        activation=self.activation, width=self.width, **self.options)
        return [point(study, where, L, q, v, se) for q, values, ses in (
            ("max_error", self.error, self.stderr), ("terminal_error", self.terminal_error, self.terminal_stderr))
                for L, v, se in zip(self.depths, values, ses)]

    def ratios(self) -> np.ndarray:
        """``error[j-1] / error[j]``, NaN first (and where an error is missing)."""
        err = np.array([np.nan if e is None else e for e in self.error], dtype=float)
        return np.concatenate([[np.nan], err[:-1] / err[1:]])

    @property
    def label(self) -> str:
        """The pair in a few words, for titles and legends."""
        h = f" H={self.hurst:g}" if self.hurst is not None else ""
        if self.regime == "scheme":  # strong_order: the scheme's name, its state and noise dimensions
            m = self.options.get("noise", 1)
            return f"{self.activation}{h} (d={self.width}, {m} noise channel{'s' if m > 1 else ''})"
        c = " corrected" if self.corrected else ""
        more = "".join(f" {k}={v:g}" if isinstance(v, float) else (" no-" + k if v is False else "") if isinstance(v, bool)
                       else f" {k}={v}" for k, v in self.options.items())  # a flag: named when off
        if self.sa is not None:  # the inside regimes; short enough for a figure title; alpha = 1 - beta is in report()
            b = f" beta={self.beta:g}" if self.beta is not None else ""
            ito = " no-Itô" if self.ito_correction is False else ""
            return f"{self.regime}{b}{ito}{more} ({self.activation}, d={self.width}, sA={self.sa:g}, sb={self.sb:g})"
        law = "" if self.driver is None else f", {self.driver['driver']} weights"
        return f"{self.regime}{h}{c}{more} ({self.arch}, {self.activation}, d={self.width}{law})"

    def report(self) -> str:
        """The table, the fitted rate against theory, and the verdict, as text (:mod:`.report`)."""
        from .report import report

        return report(self)

    def plot(self, path: str | None = None, *, ax=None):
        """Log-log plot of the error against depth with the theoretical slope drawn in
        (:func:`~deeplimits.studies.convergence.plots.plot_convergence`: ``path`` writes it, ``ax``
        draws into yours)."""
        from .plots import plot_convergence

        return plot_convergence([self], path, ax=ax)

