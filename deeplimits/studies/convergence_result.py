"""The result of a strong-error study: plain data, the verdict rule, the report."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._plain import PlainData
from ..regimes.base import StrongOrder


#: a verdict needs at least this many finite draws (and at least half of the draws)
MIN_FINITE_DRAWS = 8
#: a verdict needs a bootstrap interval of the rate at most this wide
MAX_CI_WIDTH = 0.5



@dataclasses.dataclass
class ConvergenceResult(PlainData):
    """Strong-error study of one pair: plain data, see :meth:`to_dict` for the JSON fields."""

    regime: str
    hurst: float | None
    width: int
    activation: str
    arch: str
    corrected: bool
    paths: int
    inputs: int
    reference: int
    seed: int
    dtype: str
    depths: list[int]
    error: list[float]
    stderr: list[float]
    terminal_error: list[float]
    terminal_stderr: list[float]
    rate: float
    rate_ci: list[float]
    theory_rate: float
    rate_note: str
    nonfinite: int
    seconds: float
    # inside regimes only (None elsewhere; results stored before they existed load with None)
    alpha: float | None = None
    beta: float | None = None
    sa: float | None = None
    sb: float | None = None
    ito_correction: bool | None = None
    #: power of a logarithmic factor in the declared order ``L^-theory_rate (log L)^theory_log_power``
    theory_log_power: float = 0.0
    #: the regime's other options (declared in ``Regime.options``, not fields above), as its plan
    #: records them; written only when not empty
    options: dict = dataclasses.field(default_factory=dict)
    #: how the reference was computed, in words (empty in results written before it was recorded)
    reference_method: str = ""

    @property
    def theory_slope(self) -> float:
        """The slope the declared order predicts over these depths (``theory_rate`` unless the
        order has a logarithmic factor); the verdict compares the fitted rate with it."""
        return StrongOrder(self.theory_rate, "", "", self.theory_log_power).slope(self.depths)

    @property
    def verdict_note(self) -> str | None:
        """Why there is no verdict (``None`` when there is one). A verdict needs

        * at least two depths (a rate is a slope);
        * at least :data:`MIN_FINITE_DRAWS` finite draws and at least half of the draws finite
          (a run where most draws blew up estimates the error of the survivors only);
        * a finite rate and a finite bootstrap interval, of width at most :data:`MAX_CI_WIDTH`
          (a wider interval contains any plausible rate: agreeing with it says nothing).
        """
        finite = self.paths - self.nonfinite
        if len(self.depths) < 2:
            return "fewer than two depths"
        if finite < max(MIN_FINITE_DRAWS, math.ceil(self.paths / 2)):
            return (f"only {finite} of {self.paths} draws finite (a verdict needs at least {MIN_FINITE_DRAWS} and "
                    f"at least half of them)")
        rate, (lo, hi) = self.rate, self.rate_ci
        if not all(x is not None and math.isfinite(x) for x in (rate, lo, hi)):
            return "rate not finite"
        if hi - lo > MAX_CI_WIDTH:
            return f"interval too wide (width {hi - lo:.2f} > {MAX_CI_WIDTH})"
        return None

    @property
    def verdict(self) -> str | None:
        """``'agrees'`` when the theory rate is within 0.1 of the fit or inside its interval,
        otherwise ``'faster'`` or ``'slower'`` than theory; ``None`` when the data cannot tell
        (see :attr:`verdict_note`)."""
        if self.verdict_note is not None:
            return None
        lo, hi = self.rate_ci
        theory = self.theory_slope
        if abs(self.rate - theory) <= 0.1 or (lo <= theory <= hi):
            return "agrees"
        return "faster" if self.rate > theory else "slower"

    def to_dict(self) -> dict:
        """Plain strict JSON (non-finite numbers as ``None``) with the derived ``verdict`` and
        ``verdict_note``."""
        d = super().to_dict()
        if not self.options:  # the results of the built-in regimes are as they were
            del d["options"]
        d["theory_slope"] = self.theory_slope
        d["verdict"] = self.verdict
        d["verdict_note"] = self.verdict_note
        return d

    @property
    def table(self):
        """The per-depth table as a :class:`pandas.DataFrame`."""
        from .._extras import need

        pd = need("pandas")
        return pd.DataFrame({"depth": self.depths, "error": self.error, "stderr": self.stderr,
                             "ratio": self._ratios(), "terminal_error": self.terminal_error,
                             "terminal_stderr": self.terminal_stderr})

    def _ratios(self) -> np.ndarray:
        """``error[j-1] / error[j]``, NaN first (and where an error is missing)."""
        err = np.array([np.nan if e is None else e for e in self.error], dtype=float)
        return np.concatenate([[np.nan], err[:-1] / err[1:]])

    @property
    def label(self) -> str:
        h = f" H={self.hurst:g}" if self.hurst is not None else ""
        c = " corrected" if self.corrected else ""
        more = "".join(f" {k}={v:g}" if isinstance(v, float) else f" {k}={v}" for k, v in self.options.items())
        if self.sa is not None:  # the inside regimes; short enough for a figure title; alpha = 1 - beta is in report()
            b = f" beta={self.beta:g}" if self.beta is not None else ""
            ito = " no-Itô" if self.ito_correction is False else ""
            return f"{self.regime}{b}{ito}{more} ({self.activation}, d={self.width}, sA={self.sa:g}, sb={self.sb:g})"
        return f"{self.regime}{h}{c}{more} ({self.arch}, {self.activation}, d={self.width})"

    def report(self) -> str:
        """The table, the fitted rate against theory, and the verdict, as text."""
        alpha = f", alpha={self.alpha:g}" if self.alpha else ""
        ito = ", limit without the Itô correction" if self.ito_correction is False else ""
        ref = self.reference_method or f"reference grid 1/{self.reference}"
        lines = [f"{self.label}: {self.paths} draws, reference: {ref}{alpha}{ito}",
                 f"{'depth':>7}  {'E max_k |H-h|':>14}  {'± se':>9}  {'ratio':>6}  {'E |H_1-h_L|':>12}"]
        for depth, error, stderr, r, terminal in zip(self.depths, self.error, self.stderr, self._ratios(),
                                                      self.terminal_error):  # no pandas: the base install
            ratio = "" if math.isnan(r) else f"{r:6.2f}"
            lines.append(f"{depth:7d}  {_num(error, '14.5g')}  {_num(stderr, '9.2g')}  {ratio:>6}  "
                         f"{_num(terminal, '12.5g')}")
        lo, hi = self.rate_ci
        verdict = self.verdict or f"no verdict: {self.verdict_note}"
        lines.append(f"rate {_num(self.rate, '.3f')}  95% CI [{_num(lo, '.3f')}, {_num(hi, '.3f')}]   "
                     f"theory {self._theory_text()}   -> {verdict}")
        lines.append(f"note: {self.rate_note}")
        if self.nonfinite == self.paths:
            lines.append(f"warning: all {self.paths} draws blew up (non-finite states): no error estimate")
        elif self.nonfinite:
            lines.append(f"warning: {self.nonfinite} draws blew up (non-finite states) and are excluded")
        return "\n".join(lines)

    def _theory_text(self) -> str:
        if not self.theory_log_power:
            return f"{self.theory_rate:.3f}"
        log = "sqrt(log L)" if self.theory_log_power == 0.5 else f"(log L)^{self.theory_log_power:g}"
        return f"{self.theory_rate:.3f} x {log} (slope {self.theory_slope:.3f} over these depths)"

    def plot(self, path: str | None = None, *, ax=None):
        """Log-log plot of the error against depth with the theoretical slope drawn in
        (:func:`deeplimits.plots.plot_convergence`: ``path`` writes it, ``ax`` draws into yours)."""
        from ..plots import plot_convergence

        return plot_convergence([self], path, ax=ax)


def _num(x, fmt: str) -> str:
    """``x`` formatted, or ``'-'`` (right-aligned to the same width) when missing or not finite."""
    if x is None or not math.isfinite(x):
        return format("-", ">" + fmt.split(".")[0]) if fmt[0].isdigit() else "-"
    return format(x, fmt)
