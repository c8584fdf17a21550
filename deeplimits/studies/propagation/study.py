"""The signal-propagation studies at initialisation (Marion et al., JMLR 2025, §4; docs/propagation.md):
their plans, checks, sweep tasks and runs.

* the stability study: the ratios ``r_h``, ``r_p`` over depths and betas, and the criticality
  distributions (:class:`StabilityPlan`, :func:`plan_stability`, :func:`stability`);
* the (H, beta) phase diagram with fractional weights and the critical scaling beta*(H)
  (:class:`PhasePlan`, :func:`plan_phase`, :func:`phase_diagram`).

Both run the one pass of :mod:`.core`; their results are :mod:`.result`'s.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, ClassVar, Sequence

import numpy as np
import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...networks import CorrectedResNet
from ...paths import Driver, driver_from_spec, driver_spec, make_driver
from ...runs import Task, chunk_sizes, register_task
from ..plan import Plan, register_plan
from ..settings import Compute, Execution, Network, grouped
from .core import (CAP, _check_steps, _chunk, _common, _grid, _network, _phase_depths, _run, _sizes, _spec_driver,
                   bias_field, estimate_phase, estimate_stability)
from .memory import default_draw_bytes, propagation_bytes
from .presets import DELTA, PHASE_PRESETS
from .result import PhaseResult, StabilityResult, summarise_phase, summarise_stability

__all__ = ["stability", "plan_stability", "run_stability", "StabilityPlan", "phase_diagram", "plan_phase",
           "run_phase", "PhasePlan", "stability_task", "phase_task", "DELTA"]


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
    historical rule, :data:`~deeplimits.studies.propagation.presets.TASK_BYTES`), checked against the machine's memory and the task limit."""
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


@register_plan
@dataclasses.dataclass(frozen=True)
class PhasePlan(Plan):
    """A validated phase-diagram study (from :func:`plan_phase`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "phase"
    optional: ClassVar[tuple[str, ...]] = ("device", "bias", "corrected")

    arch: str
    """The residual map."""
    activation: str
    """The activation's name."""
    hursts: tuple[float, ...]
    """The Hurst indices ``H`` of the fractional weights."""
    betas: tuple[float, ...]
    """The scaling exponents ``beta``."""
    width: int
    """The hidden width ``d``."""
    n_in: int
    """The input dimension (``h_0 = A x``)."""
    depth: int
    """The depth ``L``."""
    draws: int
    """Independent draws of (weights, ``A``, ``B``, ``x``)."""
    inputs: int
    """Inputs ``x`` per draw."""
    seed: int
    """The base seed."""
    dtype: str
    """The dtype, by name."""
    device: str | None = None  # None: the CPU (CPU specs are unchanged)
    """Where the tasks run (``None``: the CPU)."""
    bias: bool | None = None  # the inside model only; a spec without it (an older run) had the bias
    """For ``inside`` only: whether the model has the bias ``b``."""
    corrected: bool | None = None  # res-1 only, recorded when True
    """For ``res-1`` only: whether the corrected network runs too, on the same weights (``None``: not)."""

    def estimate(self) -> R_.Estimate:
        """Peak bytes of one task (all draws of one Hurst index), tasks and networks."""
        return estimate_phase(self.to_dict())

    def tasks(self) -> list:
        """One task per Hurst index (its weights are drawn once and reused for every beta)."""
        base = {k: v for k, v in self.to_dict().items() if k not in ("hursts", "seed", "study")}
        return [Task(f"phase/hurst-{h:.6f}", "phase-hurst", {**base, "hurst": h}, chunk_seed(self.seed, i))
                for i, h in enumerate(self.hursts)]

    def progress_units(self, task) -> int:
        return 1

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> PhaseResult:
        """The diagram over the Hurst indices of the finished tasks."""
        spec = {**self.to_dict(), "hursts": [t.params["hurst"] for t in tasks]}
        return summarise_phase(spec, results, seconds)


PhaseResult.plan_type = PhasePlan


@grouped
def plan_phase(hursts: Sequence[float] | None = None, betas: Sequence[float] | None = None, *, arch: str = "res-3",
               n_in: int = 64, draws: int = 5, inputs: int = 10, corrected: bool = False,
               network: Network = Network(activation=None, width=40, depth=1000, bias=None),
               compute: Compute = Compute(seed=0, dtype=torch.float32, device=None)) -> PhasePlan:
    """Validate the arguments of :func:`phase_diagram` and return the study as a :class:`PhasePlan`
    (its spec records ``"device"`` only when not the CPU, ``"bias"`` only for ``inside``).
    ``network``: ``activation``, ``width``, ``depth``, ``bias``; ``compute``: ``seed``, ``dtype``,
    ``device`` (groups of :mod:`deeplimits.studies.settings`, or their fields as keywords).
    ``corrected`` (res-1 only): also run the corrected network on the same weights (its spec
    records ``"corrected": true``)."""
    activation, width, depth, bias = network.activation, network.width, network.depth, network.bias
    seed, dtype = compute.seed, compute.dtype
    where = {"device": V_.device_spec(compute.device, dtype)}
    full = PHASE_PRESETS["full"]
    hursts = full["hursts"] if hursts is None else hursts
    betas = full["betas"] if betas is None else betas
    net = _common(arch, activation, width, n_in, draws, inputs, seed, dtype)
    where.update(bias_field(net.block, bias))
    if V_.flag("corrected", corrected):
        if not net.block.rough_correction:
            raise ParameterError("corrected", f"corrected applies only to a block h + alpha V sigma(h) (one that declares "
                                              f"Block.rough_correction: 'res-1'), got arch {net.arch!r}")
        where["corrected"] = True
    hursts = _grid("hursts", hursts, lambda h: round(V_.hurst(h, name="hursts"), 6))  # task keys: 6 decimals
    betas = _grid("betas", betas, lambda b: V_.real("betas", b, low=0.0))
    depth = V_.integer("depth", depth)
    plan = PhasePlan(net.arch, net.activation.name, tuple(hursts), tuple(betas), width, n_in, depth, draws, inputs,
                     seed, str(dtype).replace("torch.", ""), **where)
    est = plan.estimate()  # a task holds all draws of one Hurst index: not chunked
    R_.require_memory(est.peak_bytes, f"per Hurst index ({draws} draws x {inputs} inputs) at width={width}, "
                      f"n_in={n_in}, depth={depth}, {len(betas)} betas", ("width", "n_in", "depth", "betas", "draws", "inputs"),
                      device=where.get("device"))
    R_.require_count(depth, R_.MAX_STEPS, f"depth={depth} makes too many layers per task", ("depth",))
    return plan


@register_task("phase-hurst", axes=("beta",))
def phase_task(params: dict, seed: int) -> dict:
    """Sweep task: mean log10 ratios over draws and inputs at one H, for every beta, at the
    depth and (for the scaling estimate of beta*) at a tenth of it, on a prefix of the same weights;
    with ``corrected``, the same for the corrected network on the same weights (same seed)."""
    driver = make_driver("fractional", params["hurst"])
    depths = _phase_depths(params["depth"])
    res = _means(_run(_network(params["arch"], params["activation"]), driver, params, depths, seed, deviation=False))
    if params.get("corrected"):
        fixed = _run(CorrectedResNet(params["activation"]), driver, params, depths, seed, deviation=False)
        res.update({f"{k}_corrected": v for k, v in _means(fixed).items() if k != "exploded"})
    return res


def _means(out: dict) -> dict:
    """The task's numbers from the ratios ``out`` of one network: the mean log10 ratios at the depth
    (and at a tenth of it), and the exploded counts."""
    res = {}
    for name in ("r_h", "r_p"):
        x = out[name]  # (draws, depths, betas, inputs)
        res["log10_" + name.replace("_", "")] = np.log10(np.maximum(x[:, 0], 1 / CAP)).mean((0, 2)).tolist()
    if out["r_h"].shape[1] == 2:
        res["log10_rh_short"] = np.log10(np.maximum(out["r_h"][:, 1], 1 / CAP)).mean((0, 2)).tolist()
    res["exploded"] = ((out["r_h"][:, 0] >= CAP) | (out["r_p"][:, 0] >= CAP)).sum((0, 2)).tolist()
    return res


@grouped
def phase_diagram(hursts: Sequence[float] | None = None, betas: Sequence[float] | None = None, *,
                  execution: Execution = Execution(), **settings) -> PhaseResult:
    """The (H, beta) phase diagram (docs/mathematics.md, "Signal propagation at initialisation") with fractional
    weights V and W: ``execution.run(plan_phase(hursts, betas, **settings))``.

    For each Hurst index, ``draws`` weight samples (fGn along depth, exact) with ``inputs``
    inputs each are drawn ONCE and every beta runs on them in one forward and one backward
    pass. The critical scaling ``beta*(H)`` is where the mean ``log10 r_h`` crosses 0; the
    prediction is ``max(H, 1/2)`` (Marion et al. §4).

    Args:
        hursts, betas: the grid (default: the published one, 51 H in [0.05, 0.97] and 70 beta
            in [0, 1.3]).
        execution: how the tasks run (:class:`~deeplimits.studies.settings.Execution`: ``progress``,
            called with 1 after each finished Hurst index; ``store``, ``workers``, ``scheduler``,
            ``timeout``: a run store and an executor, see :func:`stability`).
        **settings: the arguments of :func:`plan_phase` (``arch``, ``n_in``, ``draws``,
            ``inputs`` as for :func:`stability`; ``network``: ``activation``, ``width``,
            ``depth``, ``bias``, for ``arch='inside'`` only, default False, the published ``h +
            alpha sigma(W h)``; ``compute``: ``seed``, ``dtype``, ``device``, where the tasks run,
            default the CPU, recorded in the spec only when not the CPU), or the groups' fields
            as keywords.
    """
    return execution.run(plan_phase(hursts, betas, **settings))


def run_phase(plan: PhasePlan | dict, progress: Callable[[int], None] | None = None, *, store=None,
              workers: int | None = None, scheduler: str | None = None,
              timeout: float | None = None) -> PhaseResult:
    """Run a phase study (a :class:`PhasePlan`, or its spec as stored) and summarise it."""
    plan = plan if isinstance(plan, PhasePlan) else PhasePlan.from_dict(plan)
    return plan.run(progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout)
