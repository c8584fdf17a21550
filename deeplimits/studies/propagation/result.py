"""The results of the signal-propagation studies, each holding its plan
(:class:`~deeplimits.studies.result.PlanResult`): the stability ratios over (beta, depth) with their
theory (:class:`StabilityResult`, :func:`summarise_stability`) and the (H, beta) phase diagram
(:class:`PhaseResult`, :func:`summarise_phase`)."""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar, Sequence

import numpy as np

from ...paths import driver_from_spec
from ..result import PlanResult, draw_into
from ..theory import CRITICAL_LIMITS, bounds_apply, classify, critical_beta, high_probability_bounds, theory_bounds
from ..theory_conditions import high_probability_conditions, high_probability_constants
from .core import CAP, _spec_driver
from .presets import DELTA
from .stability_theory import fits, lognormal_fit, quantiles, ratio_statistics

__all__ = ["StabilityResult", "PhaseResult", "summarise_stability", "summarise_phase"]


@dataclasses.dataclass
class StabilityResult(PlanResult):
    """Stability ratios over (beta, depth), each beside its theory (docs/theory.md): plain data
    holding its plan (:class:`~deeplimits.studies.result.PlanResult`: ``arch``, ``width``, ``draws``, ... are the
    plan's; see :meth:`to_dict`).

    ``records``: one per (beta, depth), with statistics (``mean, median, q25, q75, mean_sq``)
    over every (draw, input) of

    * ``r_h``, ``r_p`` and ``r_h_max = max_k ||h_k - h_0|| / ||h_0||`` (the largest deviation
      over the layers, ``None`` for chunks stored before it was recorded);
    * ``norm_ratio_h = ||h_L|| / ||h_0||`` and ``norm_ratio_p = ||p_0|| / ||p_L||``;

    ``exploded`` (draws with an input whose ratio overflowed, reported as :data:`CAP`) and
    ``regime`` (:func:`classify` of the median ``r_h``); and the theory:

    * ``theory_lower``, ``theory_upper``: the bounds on ``E r^2`` where :func:`bounds_apply`
      (else ``None``, also where a bound exceeds the largest double), and at ``beta = 1/2``
      their limits ``limit_lower = e^(1/2) - 1``, ``limit_upper = e - 1``;
    * ``quantiles`` (where the bounds apply and ``L a^2 <= 1``): at each level ``u`` of
      ``levels`` the empirical quantiles ``r_h_sq``, ``r_p_sq`` of ``r^2`` and ``bound =``
      :func:`quantile_bound` at ``delta = 1 - u``;
    * ``hp_lower``, ``hp_upper``: the square roots of :func:`high_probability_bounds` at
      ``delta`` (bounds on ``||h_L|| / ||h_0||``, each with probability at least ``1 - delta``),
      ``hp_conditions``: every condition of the bounds with its numbers
      (:func:`~deeplimits.studies.theory_conditions.high_probability_conditions`: (A1), ``s``,
      ``C``, ``d >= 64``, ``alpha`` small, both forms of the damaged ``sqrt(C)``), and
      ``hp_constants`` (``s``, ``C`` and how it was found, or ``None``), and ``hp_unmet``: the
      text of those that do not hold, per bound;
    * ``lognormal_h``/``lognormal_p``: the normal fit ``(mu, sigma)`` of ``log ||h_L||/||h_0||``
      (``log ||p_0||/||p_L||``) over every (draw, input) that did not explode, with the
      D'Agostino–Pearson normality test (``statistic``, ``pvalue``; ``None`` with fewer than 20 values).

    ``fits``: one per beta, over the depths whose median is finite: ``slope`` (with ``slope_ci``,
    a 95% bootstrap interval over draws) of ``log median r_h`` on ``log L`` beside
    ``slope_predicted`` (:func:`predicted_slope`), and where a growth law is stated
    (:func:`growth_exponent` ``gamma``) ``growth_lambda`` (with ``growth_lambda_ci``) and
    ``growth_intercept`` of ``log median r_h_max = intercept + lambda L^gamma``.
    ``samples``: with ``histograms=True``, the norm ratios at the largest depth per beta.
    """

    plan: object
    """The plan of the draws summarised (``arch``, ``width``, ``draws``, ... are read from it)."""
    records: list[dict]
    """One per (beta, depth): the ratios' statistics and the theory (see above)."""
    samples: list[dict]
    """With ``histograms=True``, the norm ratios at the largest depth per beta."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""
    fits: list[dict] = dataclasses.field(default_factory=list)
    """One per beta: the fitted slope and growth law (see above)."""

    shown: ClassVar[dict] = {"arch": "arch", "driver": None, "activation": "activation", "width": "width",
                             "n_in": "n_in", "draws": "draws", "inputs": "inputs", "seed": "seed", "dtype": "dtype",
                             "delta": None, "bias": "bias"}
    """The plan's values the result shows: its JSON name -> the plan's field (see
    :class:`~deeplimits.studies.result.PlanResult`)."""

    @property
    def driver(self) -> dict:
        """The law of the weights as its spec (``driver``, and ``hurst``/``length_scale`` when set)."""
        return self.plan.driver.spec()

    @property
    def delta(self) -> float:
        """The ``delta`` of the high-probability bounds (the plan's, :data:`DELTA` when not set)."""
        return DELTA if self.plan.delta is None else self.plan.delta

    @classmethod
    def plan_of(cls, d: dict):
        """The plan of a result's JSON written before results held their plans: the depths and
        betas of its records, ``histograms`` when it has samples, one chunk of all its draws (the
        chunking was not recorded and does not change the summary)."""
        return cls.plan_type(d["arch"], driver_from_spec(d["driver"]), d["activation"], d["width"], d["n_in"],
                             tuple(sorted({r["depth"] for r in d["records"]})),
                             tuple(sorted({r["beta"] for r in d["records"]})), d["draws"], d["inputs"], d["seed"],
                             d["dtype"], bool(d["samples"]), d["draws"],
                             delta=None if d.get("delta", DELTA) == DELTA else d["delta"], bias=d.get("bias"))

    @property
    def label(self) -> str:
        """The study in a few words, for titles and legends."""
        drv = ", ".join(f"{k}={v}" for k, v in self.driver.items() if k != "driver")
        drv = self.driver["driver"] + (f" ({drv})" if drv else "")
        arch = self.arch + ("" if self.bias is None else " with bias" if self.bias else " without bias")
        return f"{arch}, {self.activation}, {drv} weights, d={self.width}, {self.draws} draws"

    def report(self) -> str:
        """A table of medians and regimes, one line per (beta, depth); then the theory at the
        largest depth of each beta and the fitted laws (docs/theory.md; :mod:`.report`)."""
        from .report import stability_report

        return stability_report(self)

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies.propagation.points`)."""
        from .points import stability_points

        return stability_points(self)

    def figures(self, out: str) -> list[str]:
        """Draw ``stability.png``, ``theory.png`` and, with stored samples, ``histograms.png``
        into the directory ``out``; returns their paths."""
        return draw_into(out, [("stability.png", self.plot), ("theory.png", self.plot_theory)]
                         + [("histograms.png", self.plot_histograms)] * bool(self.samples))

    def plot(self, path: str | None = None, *, ax=None):
        """Median ratios against depth with quartile bands, one line per beta."""
        from .plots import plot_stability

        return plot_stability(self, path, ax=ax)

    def plot_histograms(self, path: str | None = None, *, ax=None):
        """Histograms of the norm ratios at the largest depth with the log-normal fits."""
        from .plots import plot_histograms

        return plot_histograms(self, path, ax=ax)

    def plot_theory(self, path: str | None = None, *, ax=None):
        """Each bound beside its measured counterpart: quantiles of ``r^2``, quartiles of the norm
        ratios with the high-probability bounds, and the fitted slope and growth laws."""
        from .plots import plot_theory

        return plot_theory(self, path, ax=ax)


def summarise_stability(spec: dict, parts: Sequence[dict], seconds: float = 0.0) -> StabilityResult:
    """Combine the chunks of a stability study into a :class:`StabilityResult`."""
    keys = set.intersection(*(set(p) for p in parts))  # chunks stored before r_h_max have none
    a = {k: np.concatenate([np.asarray(p[k], dtype=np.float64) for p in parts]) for k in keys}
    driver = _spec_driver(spec)
    apply = bounds_apply(spec["arch"], spec["activation"], driver)  # the block's declarations
    delta = spec.get("delta", DELTA)
    records, samples = [], []
    for i, beta in enumerate(spec["betas"]):
        for j, depth in enumerate(spec["depths"]):
            cell = {k: v[:, j, i, :] for k, v in a.items()}  # (draws, inputs), already capped
            rec = {"beta": beta, "depth": depth, "driver": spec["driver"]}
            for key, name in (("r_h", "r_h"), ("r_p", "r_p"), ("r_h_max", "r_h_max"), ("norm_ratio_h", "norm_h"),
                              ("norm_ratio_p", "norm_p")):  # r_h_max: None in chunks stored before it was recorded
                rec[key] = ratio_statistics(cell[name].ravel()) if name in cell else None
            rec["exploded"] = int(((cell["r_h"] >= CAP) | (cell["r_p"] >= CAP)).any(-1).sum())
            bounds = theory_bounds(beta, depth) if apply else (None, None)
            rec["theory_lower"], rec["theory_upper"] = (b if b is not None and math.isfinite(b) else None
                                                        for b in bounds)
            rec["limit_lower"], rec["limit_upper"] = CRITICAL_LIMITS if apply and beta == 0.5 else (None, None)
            rec["quantiles"] = quantiles(cell, beta, depth) if apply else None
            lo, hi = high_probability_bounds(beta, depth, spec["width"], delta)
            rec["hp_lower"], rec["hp_upper"] = math.sqrt(lo), (math.sqrt(hi) if math.isfinite(hi) else None)
            rec["hp_conditions"] = high_probability_conditions(spec["arch"], driver, spec["width"], beta, depth, delta)
            rec["hp_constants"] = high_probability_constants(spec["arch"], driver, spec["width"])
            rec["hp_unmet"] = {b: [c["text"] for c in rec["hp_conditions"] if c["bound"] == b and not c["holds"]]
                               for b in ("lower", "upper")}
            rec["regime"] = classify(rec["r_h"]["median"])
            rec["lognormal_h"] = lognormal_fit(cell["norm_h"].ravel())
            rec["lognormal_p"] = lognormal_fit(cell["norm_p"].ravel())
            records.append(rec)
            if spec["histograms"] and depth == spec["depths"][-1]:
                samples.append({"beta": beta, "depth": depth, "norm_h": cell["norm_h"].ravel().tolist(),
                                "norm_p": cell["norm_p"].ravel().tolist()})
    return StabilityResult(StabilityResult.plan_type.from_dict(spec), records, samples, seconds, fits(spec, a, driver))


@dataclasses.dataclass
class PhaseResult(PlanResult):
    """The (H, beta) phase diagram with fractional weights: plain data holding its plan
    (:class:`~deeplimits.studies.result.PlanResult`: ``hurst``, ``beta``, ``arch``, ... are the plan's).

    ``log10_rh[i][j]`` and ``log10_rp[i][j]`` are the means of ``log10 r_h`` and
    ``log10 r_p`` over draws and inputs at ``hurst[i]``, ``beta[j]`` (an exploded ratio counts
    as ``log10 CAP = 30``); ``exploded[i][j]`` counts exploded (draw, input) pairs;
    ``beta_star[i]`` is :func:`critical_beta` of row ``i`` (``None`` without a crossing), to
    compare with ``predicted[i] = max(H, 1/2)``.

    That crossing carries a finite-depth offset: near the boundary ``r_h ~ c L^(H - beta)``,
    so ``log10 r_h = 0`` at ``beta = H + log10(c) / log10(L)``; for res-3, ``c`` is about
    ``E ReLU(Z) / sd(Z) = 1/sqrt(2 pi)`` and the offset about -0.1 at L = 1000. The scaling
    estimate ``beta_star_scaling[i]`` is free of ``c``: the beta where ``r_h`` stops depending
    on the depth, i.e. where the mean ``log10 r_h`` at ``depth`` and at ``short_depth =
    depth // 10`` (the first tenth of the same weights, ``log10_rh_short``) cross.

    ``beta_star_p[i]``: the same crossing for ``log10 r_p``. ``slope_h[i][j]``: the log-log
    slope of ``r_h`` on ``L`` in the cell, ``(log10_rh - log10_rh_short) / log10(depth /
    short_depth)`` (``None`` where a draw exploded at ``depth``), beside ``predicted_slope[i][j]
    = max(H, 1/2) - beta`` (the identity side, ``beta > max(H, 1/2)``, is where it is a power law).
    """

    plan: object
    """The plan of the Hurst indices summarised (``hurst``, ``beta``, ``arch``, ``width``, ... are read from it)."""
    log10_rh: list[list[float]]
    """Mean ``log10 r_h`` over draws and inputs per (H, beta)."""
    log10_rp: list[list[float]]
    """Mean ``log10 r_p`` over draws and inputs per (H, beta)."""
    exploded: list[list[int]]
    """Exploded (draw, input) pairs per (H, beta)."""
    beta_star: list[float | None]
    """Per H, the beta where the mean ``log10 r_h`` crosses 0 (:func:`critical_beta`; ``None`` without a
    crossing)."""
    predicted: list[float]
    """Per H, the predicted boundary ``max(H, 1/2)``."""
    beta_star_scaling: list[float | None]
    """Per H, the beta where ``r_h`` stops depending on the depth (free of the constant ``c``)."""
    short_depth: int | None
    """``depth // 10``, the depth of ``log10_rh_short``."""
    log10_rh_short: list[list[float]] | None
    """Mean ``log10 r_h`` at ``short_depth`` (the first tenth of the same weights)."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""
    beta_star_p: list[float | None] = dataclasses.field(default_factory=list)
    """Per H, the crossing of the mean ``log10 r_p`` with 0."""
    slope_h: list[list[float | None]] | None = None
    """Per (H, beta), the log-log slope of ``r_h`` on ``L`` (``None`` where a draw exploded)."""
    predicted_slope: list[list[float]] | None = None
    """Per (H, beta), the predicted slope ``max(H, 1/2) - beta``."""
    log10_rh_corrected: list[list[float]] | None = None
    """With ``corrected`` (res-1): mean ``log10 r_h`` of the corrected network on the same weights
    (:class:`~deeplimits.networks.CorrectedResNet`); ``None`` otherwise."""
    log10_rp_corrected: list[list[float]] | None = None
    """With ``corrected``: its mean ``log10 r_p``."""
    beta_star_corrected: list[float | None] | None = None
    """With ``corrected``: per H, the crossing of its mean ``log10 r_h`` with 0."""
    beta_star_scaling_corrected: list[float | None] | None = None
    """With ``corrected``: per H, the beta where its ``r_h`` stops depending on the depth."""

    shown: ClassVar[dict] = {"hurst": "hursts", "beta": "betas", "arch": "arch", "activation": "activation",
                             "width": "width", "n_in": "n_in", "depth": "depth", "draws": "draws",
                             "inputs": "inputs", "seed": "seed", "dtype": "dtype", "bias": "bias",
                             "corrected": "corrected"}
    """The plan's values the result shows: its JSON name -> the plan's field (see
    :class:`~deeplimits.studies.result.PlanResult`)."""

    def report(self) -> str:
        """One line per H: the estimates of beta*, the prediction, and the mean gap between the
        measured and the predicted slope over the identity side of the row (:mod:`.report`)."""
        from .report import phase_report

        return phase_report(self)

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies.propagation.points`)."""
        from .points import phase_points

        return phase_points(self)

    def slope_gaps(self) -> list[float | None]:
        """Per H, the mean of ``slope_h - predicted_slope`` over the cells with
        ``beta > max(H, 1/2)`` and a slope (``None`` without such a cell)."""
        if self.slope_h is None:
            return [None] * len(self.hurst)
        out = []
        for row, pred, rho in zip(self.slope_h, self.predicted_slope, self.predicted):
            d = [s - p for s, p, b in zip(row, pred, self.beta) if s is not None and b > rho]
            out.append(float(np.mean(d)) if d else None)
        return out

    def figures(self, out: str) -> list[str]:
        """Draw the phase diagram into the directory ``out`` (``phase.png``); returns its path."""
        return draw_into(out, [("phase.png", self.plot)])

    def plot(self, path: str | None = None, *, ax=None):
        """Heat maps of mean log10 r_h and log10 r_p with beta*(H) against max(H, 1/2)."""
        from .plots import plot_phase

        return plot_phase(self, path, ax=ax)


def summarise_phase(spec: dict, parts: Sequence[dict], seconds: float = 0.0) -> PhaseResult:
    """Combine the per-H tasks of a phase study into a :class:`PhaseResult`."""
    rh = [p["log10_rh"] for p in parts]
    rp = [p["log10_rp"] for p in parts]
    short = [p.get("log10_rh_short") for p in parts]
    scaling = [None if s is None else critical_beta(spec["betas"], np.subtract(r, s)) for r, s in zip(rh, short)]
    short_depth = spec["depth"] // 10 if short[0] else None
    slope = predicted = None
    if short_depth:
        span = np.log10(spec["depth"] / short_depth)
        slope = [[None if e else (a - b) / span for a, b, e in zip(r, s, p["exploded"])]
                 for r, s, p in zip(rh, short, parts)]
        predicted = [[max(h, 0.5) - b for b in spec["betas"]] for h in spec["hursts"]]
    return PhaseResult(PhaseResult.plan_type.from_dict(spec), rh, rp, [p["exploded"] for p in parts],
                       [critical_beta(spec["betas"], r) for r in rh], [max(h, 0.5) for h in spec["hursts"]], scaling,
                       short_depth, short if short[0] else None, seconds, [critical_beta(spec["betas"], r) for r in rp],
                       slope, predicted, **_corrected(spec["betas"], parts))


def _corrected(betas, parts) -> dict:
    """The corrected network's fields of a :class:`PhaseResult` (none without it)."""
    if "log10_rh_corrected" not in parts[0]:
        return {}
    rh = [p["log10_rh_corrected"] for p in parts]
    short = [p.get("log10_rh_short_corrected") for p in parts]
    return dict(log10_rh_corrected=rh, log10_rp_corrected=[p["log10_rp_corrected"] for p in parts],
                beta_star_corrected=[critical_beta(betas, r) for r in rh],
                beta_star_scaling_corrected=None if short[0] is None else
                [critical_beta(betas, np.subtract(r, s)) for r, s in zip(rh, short)])
