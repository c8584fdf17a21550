"""Stability curves and criticality distributions at initialisation (Marion et al., JMLR 2025, §4)."""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, ClassVar, Sequence

import numpy as np
import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...paths import Driver, driver_from_spec, driver_spec, make_driver
from ...runs import register_task, Task, chunk_sizes
from .memory import default_draw_bytes, propagation_bytes
from ..plan import Plan, register_plan
from ..result import PlanResult, draw_into
from ..settings import Compute, Execution, Network, grouped
from ..presets import DEFAULTS, STABILITY_PRESETS  # noqa: F401 - STABILITY_PRESETS re-exported (torch-free home)
from .core import (CAP, _check_steps, _chunk, _common, _network, _sizes,
                          _grid, _run, _spec_driver, bias_field, estimate_stability)
from .stability_theory import fit_lines, fits, lognormal_fit, quantiles, ratio_statistics, theory_lines
from ..theory import CRITICAL_LIMITS, bounds_apply, classify, high_probability_bounds, theory_bounds
from ..theory_conditions import high_probability_conditions, high_probability_constants

__all__ = ["stability", "plan_stability", "run_stability", "StabilityPlan", "StabilityResult", "STABILITY_PRESETS",
           "DELTA"]

DELTA = DEFAULTS["stability"]["delta"]
"""The default ``delta`` of the high-probability bounds (each holds with probability ``>= 1 - delta``)."""


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

    plan: StabilityPlan
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
        return StabilityPlan(d["arch"], driver_from_spec(d["driver"]), d["activation"], d["width"], d["n_in"],
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
        largest depth of each beta and the fitted laws (docs/theory.md)."""
        lines = [self.label, f"{'beta':>6} {'depth':>6} {'median r_h':>11} {'median r_p':>11} {'E r_h^2':>10} "
                             f"{'E r_p^2':>10} {'bounds on E r^2':>21} {'exploded':>8}  regime"]
        for r in self.records:
            b = (f"[{r['theory_lower']:.3g}, {r['theory_upper']:.3g}]" if r["theory_lower"] is not None
                 else "-")
            lines.append(f"{r['beta']:6.3g} {r['depth']:6d} {r['r_h']['median']:11.4g} {r['r_p']['median']:11.4g} "
                         f"{r['r_h']['mean_sq']:10.3g} {r['r_p']['mean_sq']:10.3g} {b:>21} {r['exploded']:8d}  "
                         f"{r['regime']}")
        top = max(r["depth"] for r in self.records)
        for r in (r for r in self.records if r["depth"] == top):
            lines += theory_lines(r, self.delta)
        for s in self.samples:
            rec = next(r for r in self.records if r["beta"] == s["beta"] and r["depth"] == s["depth"])
            for key, what in (("lognormal_h", "||h_L||/||h_0||"), ("lognormal_p", "||p_0||/||p_L||")):
                f = rec[key]
                if f is not None:
                    lines.append(f"beta {s['beta']:g}, L={s['depth']}: log {what} ~ N({f['mu']:.3f}, "
                                 f"{f['sigma']:.3f}^2); normality test p = {f['pvalue']:.3g} (n = {f['n']})")
        lines += [line for f in self.fits for line in fit_lines(f)]
        return "\n".join(lines)

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies.propagation.points`)."""
        from .points import stability_points
        return stability_points(self)

    def figures(self, out: str) -> list[str]:
        """Draw ``stability.png``, ``theory.png`` and, with samples, ``histograms.png`` into ``out``."""
        return draw_into(out, [("stability.png", self.plot), ("theory.png", self.plot_theory)]
                         + [("histograms.png", self.plot_histograms)] * bool(self.samples))

    def plot(self, path: str | None = None, *, ax=None):
        """Median ratios against depth with quartile bands, one line per beta."""
        from ...plots import plot_stability

        return plot_stability(self, path, ax=ax)

    def plot_histograms(self, path: str | None = None, *, ax=None):
        """Histograms of the norm ratios at the largest depth with the log-normal fits."""
        from ...plots import plot_histograms

        return plot_histograms(self, path, ax=ax)

    def plot_theory(self, path: str | None = None, *, ax=None):
        """Each bound beside its measured counterpart (quantiles of ``r^2``, quartiles, slope and growth laws)."""
        from ...plots import plot_theory

        return plot_theory(self, path, ax=ax)


@register_plan
@dataclasses.dataclass(frozen=True)
class StabilityPlan(Plan):
    """A validated stability study (from :func:`plan_stability`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "stability"
    optional: ClassVar[tuple[str, ...]] = ("device", "delta", "bias")

    arch: str
    """The residual map."""
    driver: Driver
    """The law of the weights (its spec, :meth:`~deeplimits.paths.Driver.spec`, is spread into
    :meth:`to_dict`: ``'driver'`` its name, and its parameters, e.g. ``'hurst'``, by their names)."""
    activation: str
    """The activation's name."""
    width: int
    """The hidden width ``d``."""
    n_in: int
    """The input dimension (``h_0 = A x``)."""
    depths: tuple[int, ...]
    """The depths ``L``."""
    betas: tuple[float, ...]
    """The scaling exponents ``beta``."""
    draws: int
    """Independent draws of (weights, ``A``, ``B``, ``x``)."""
    inputs: int
    """Inputs ``x`` per draw."""
    seed: int
    """The base seed."""
    dtype: str
    """The dtype, by name."""
    histograms: bool
    """Whether the norm ratios at the largest depth are kept (``StabilityResult.samples``)."""
    chunk: int
    """Draws per task."""
    device: str | None = None  # None: the CPU (CPU specs are unchanged)
    """Where the tasks run (``None``: the CPU)."""
    delta: float | None = None  # None: DELTA
    """The high-probability bounds hold each with probability at least ``1 - delta`` (``None``:
    :data:`DELTA`)."""
    bias: bool | None = None  # the inside model only; a spec without it (an older run) had the bias
    """For ``inside`` only: whether the model has the bias ``b`` (``None``: other architectures)."""

    def to_dict(self) -> dict:
        """The plan as plain JSON, the driver spread into it (``'driver'``: its name, and its parameters)."""
        return {**super().to_dict(), **self.driver.spec()}

    def __getattr__(self, name: str):
        """A parameter of the driver by name (``plan.hurst``, ``plan.length_scale``): its value,
        ``None`` for a law that does not take it."""
        from ...paths.registry import driver_parameters

        if name.startswith("_") or name == "driver" or name not in driver_parameters():
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.driver, name) if any(o.name == name for o in self.driver.options) else None

    @classmethod
    def from_dict(cls, d: dict) -> "StabilityPlan":
        """The plan of a spec written by :meth:`to_dict` (the driver read back from its keys)."""
        driver = driver_from_spec(d)
        own = {o.name for o in driver.options}
        return super().from_dict({**{k: v for k, v in d.items() if k not in own}, "driver": driver})

    def estimate(self) -> R_.Estimate:
        """Peak bytes of the largest task, tasks and networks (no allocation)."""
        return estimate_stability(self.to_dict())

    def tasks(self) -> list:
        """Chunks of draws; chunk ``i`` is seeded by ``chunk_seed(seed, i)``."""
        spec = self.to_dict()
        base = {k: v for k, v in spec.items() if k not in ("draws", "chunk", "seed", "delta")}  # delta: summary only
        return [Task(f"stability/chunk-{i:05d}", "stability-chunk", {**base, "draws": n}, chunk_seed(self.seed, i))
                for i, n in enumerate(chunk_sizes(self.draws, self.chunk))]

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> StabilityResult:
        """Pool the draws of the finished chunks into a :class:`StabilityResult`."""
        spec = {**self.to_dict(), "draws": sum(t.params["draws"] for t in tasks)}
        return summarise_stability(spec, results, seconds)


StabilityResult.plan_type = StabilityPlan


@grouped
def plan_stability(arch: str = "res-3", driver: Driver | str | None = None, *, n_in: int = 64,
                   depths: Sequence[int] = (10, 100, 1000), betas: Sequence[float] = (0.25, 0.5, 1.0), draws: int = 50,
                   inputs: int = 1, histograms: bool = False, delta: float = DELTA,
                   network: Network = Network(activation=None, width=40, bias=None),
                   compute: Compute = Compute(seed=0, dtype=torch.float32, chunk=None, device=None)) -> StabilityPlan:
    """Validate the arguments of :func:`stability` (every check, before any work) and return
    the study as a :class:`StabilityPlan` (its spec records ``"device"`` only when not the CPU,
    ``"delta"`` only when not :data:`DELTA`, ``"bias"`` only for ``inside``)."""
    activation, width, bias = network.activation, network.width, network.bias
    seed, dtype, chunk, device = compute.seed, compute.dtype, compute.chunk, compute.device
    where = {"device": V_.device_spec(device, dtype)}
    net = _common(arch, activation, width, n_in, draws, inputs, seed, dtype)
    where.update(bias_field(net.block, bias))
    delta = V_.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    if delta != DELTA:
        where["delta"] = delta
    driver = make_driver("uniform") if driver is None else make_driver(driver) if isinstance(driver, str) else driver
    driver_spec(driver)  # a Driver, or a one-line error
    driver.check()  # its samples: the shape and dtype asked for, finite
    depths = _grid("depths", depths, lambda L: V_.integer("depths", L))
    betas = _grid("betas", betas, lambda b: V_.real("betas", b, low=0.0))
    V_.flag("histograms", histograms)
    chunk = _stability_chunk(net.block, driver, width, n_in, depths, betas, draws, inputs, dtype, chunk,
                             where.get("device"), where.get("bias", True))
    return StabilityPlan(net.arch, driver, net.activation.name, width=width, n_in=n_in, depths=tuple(depths),
                         betas=tuple(betas), draws=draws, inputs=inputs, seed=seed,
                         dtype=str(dtype).replace("torch.", ""), histograms=histograms, chunk=chunk, **where)


def _stability_chunk(block, driver, width, n_in, depths, betas, draws, inputs, dtype, chunk, device, bias) -> int:
    """Draws per task: given, or the default (part of the spec, hence of the seeds: its
    historical rule, :data:`~deeplimits.studies.presets.TASK_BYTES`), checked against the machine's memory and the task limit."""
    item = dtype.itemsize
    per_draw = default_draw_bytes(block, driver, width, depths, betas, inputs, item, bias)
    chunk = None if chunk is None else V_.integer("chunk", chunk)
    chunk = R_.fit_chunk(lambda n: propagation_bytes(block, driver, width, n_in, depths, betas, inputs, n, item, bias),
                         draws, chunk, _chunk(per_draw, draws), _sizes(width, depths, betas, inputs, n_in),
                         ("width", "n_in", "depths", "betas", "inputs"), device=device)
    _check_steps(driver, depths)
    R_.require_count(R_.tasks_of(draws, chunk), R_.MAX_TASKS,
                     f"draws={draws} in chunks of {chunk} draws makes too many tasks", ("draws",))
    kept = 2 * draws * len(depths) * len(betas) * inputs
    R_.require_kept(kept, f"of the result (draws={draws} x {len(depths)} depths x {len(betas)} betas x {inputs} inputs, "
                    "two ratios each)", ("draws", "depths", "betas", "inputs"))
    return chunk


@register_task("stability-chunk", axes=("draw", "depth", "beta", "input"))
def stability_task(params: dict, seed: int) -> dict:
    """Sweep task: the ratios of one chunk of draws, ``(draws, depths, betas, inputs)`` lists."""
    net = _network(params["arch"], params["activation"])
    out = _run(net, _spec_driver(params), params, params["depths"], seed)
    return {k: v.tolist() for k, v in out.items()}


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
    return StabilityResult(StabilityPlan.from_dict(spec), records, samples, seconds, fits(spec, a, driver))


@grouped
def stability(arch: str = "res-3", driver: Driver | str | None = None, *, execution: Execution = Execution(),
              **settings) -> StabilityResult:
    """Stability ratios of a residual network at initialisation over depths and betas:
    ``execution.run(plan_stability(arch, driver, **settings))``.

    Args:
        arch: ``'res-1'``, ``'res-2'``, ``'res-3'``, ``'inside'``, or a registered block of your own
            (a name, or a :class:`~deeplimits.blocks.Block` whose class is registered).
        driver: law of the weights, a :class:`~deeplimits.paths.Driver` or a name
            (``'uniform'``, the papers' default; ``'gaussian'``, ``'rademacher'``, ``'smooth'``, or
            a registered law of your own).
        execution: how the tasks run (:class:`~deeplimits.studies.settings.Execution`):
            ``progress``, called with the number of draws of each finished chunk; ``store``,
            ``workers``, ``scheduler``, ``timeout``: a :class:`~deeplimits.runs.RunStore` and an
            executor, as for :func:`~deeplimits.studies.convergence.study.run_plan`.
        **settings: the arguments of :func:`plan_stability`, or its groups' fields as keywords:

            * ``n_in``: the input dimension; ``A`` and ``x`` are Gaussian with ``h_0 = A x`` of
              unit-variance entries, ``B`` has N(0, 1/d) entries.
            * ``depths``, ``betas``: the grid. Weights are reused for every beta, and, for i.i.d.
              and fractional weights, the depth-L network is the first L layers of the deepest
              one (the same law; depths are then coupled, each depth's statistics are exact).
            * ``draws``: independent draws of (weights, A, B, x); ``inputs`` inputs per draw.
            * ``histograms``: keep the norm ratios at the largest depth (for
              :meth:`~StabilityResult.plot_histograms`).
            * ``delta``: the high-probability bounds hold each with probability at least
              ``1 - delta`` (default 1/4, as published).
            * ``network`` (:class:`~deeplimits.studies.settings.Network`): ``activation``, a name
              (default tanh; ReLU for res-3); ``width``, the hidden width ``d``; ``bias``, for
              ``inside`` only: whether the model is ``h + alpha sigma(W h + b)`` (default False,
              the published ``h + alpha sigma(W h)``).
            * ``compute`` (:class:`~deeplimits.studies.settings.Compute`): ``seed``; ``dtype``,
              float32 by default (ratios need no more; non-finite or > CAP counts as exploded);
              ``chunk``, draws per task (default: as many as fit in ``presets.TASK_BYTES``
              bytes); ``device``, where the tasks run (default the CPU; ``'cuda'``, ``'mps'``),
              recorded in the spec only when not the CPU.

    Returns:
        A :class:`StabilityResult`.
    """
    return execution.run(plan_stability(arch, driver, **settings))


def run_stability(plan: StabilityPlan | dict, progress: Callable[[int], None] | None = None, *, store=None,
                  workers: int | None = None, scheduler: str | None = None,
                  timeout: float | None = None) -> StabilityResult:
    """Run a stability study (a :class:`StabilityPlan`, or its spec as stored) and summarise it."""
    plan = plan if isinstance(plan, StabilityPlan) else StabilityPlan.from_dict(plan)
    return plan.run(progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout)
