"""Strong convergence studies: plans, runs (in-process or through a sweep), stored results.

:func:`strong_convergence` = :func:`plan_convergence` (every check, the resource estimate) then
:func:`run_plan` (chunks of draws as sweep tasks, seeded by :func:`~deeplimits._random.chunk_seed`)
and :func:`summarise` (estimates, standard errors and the fitted rate). See docs/mathematics.md,
"Strong error".
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, Sequence

import numpy as np
import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...runs import register_task, Task, chunk_sizes
from ...pairs import Pair
from ...paths import driver_from_spec, driver_spec, make_driver
from ...regimes import REGISTRY, declarations, get_regime, is_given, pair as _pair
from ...regimes.base import check_options
from . import spec as S_
from .result import ConvergenceResult
from .described import described as _described
from .statistics import decode_errors, describe, encode_errors, error_statistics, summarise  # noqa: F401 - public
from .memory import convergence_bytes
from ..plan import Plan, register_plan
from .presets import MAX_CHUNK, REFERENCE_REFINEMENT
from ..equivalence import MARGIN, check_margin
from ..sequential import check_budget, plan_stages
from ..settings import Compute, Decision, Execution, Network, grouped
from ..strong_error import fit_rate, run_chunk

__all__ = ["strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "ConvergenceResult", "fit_rate"]

#: plan field -> its key in the spec. The spec names the run directory (``runs/convergence-<hash>``)
#: and the store compares it, so ``draws`` keeps its former key ``paths`` there: stores written
#: before the rename still resume (tests/golden/SPECS.json)
_SPEC_KEYS = {"draws": "paths"}


@register_plan
@dataclasses.dataclass(frozen=True)
class ConvergencePlan(Plan):
    """A validated strong-error study: everything needed to run it, nothing computed yet.

    Draws are split into chunks (``chunk_sizes``); chunk ``i`` is seeded by
    :func:`chunk_seed` ``(seed, i)``, so any executor reproduces the same numbers. The regime's
    options are ``options`` (as the spec records them, :mod:`~deeplimits.studies.convergence.spec`)
    and read by name: ``plan.hurst``, ``plan.beta`` (the neutral value when not recorded).
    The spec (:meth:`to_dict`) records ``draws`` under its former name ``paths``, so the run
    directories and stores of older runs keep their names and resume.
    """

    regime: str
    """The regime's registry name."""
    width: int
    """The width ``d``."""
    activation: object
    """The activation (a name, or a callable: then the plan runs in this process only)."""
    arch: str | None
    """The residual map (``None``: the regime's default)."""
    depths: tuple[int, ...]
    """The depths, increasing powers of two."""
    draws: int
    """Independent draws (driver sample and inputs); the spec's key ``paths``."""
    inputs: int
    """Inputs per draw (errors are averaged over them within a draw)."""
    reference: int
    """The finest grid on which the reference is solved (rough regimes)."""
    seed: int
    """Base seed; chunk ``i`` uses :func:`chunk_seed` ``(seed, i)``."""
    dtype: torch.dtype
    """float32 or float64."""
    chunk: int
    """Draws per chunk."""
    options: dict = dataclasses.field(default_factory=dict)
    """The regime's options as the spec records them (declared options, resolved; see convergence.spec)."""
    device: str | None = None
    """Where the chunks run (``None``: the CPU; ``'cuda:0'``, ...; :func:`~deeplimits._validate.device_spec`)."""
    margin: float = MARGIN
    """An ``agrees`` needs the leading exponent within this of the declared one (in the spec when not the default)."""
    stages: tuple = ()
    """The draws of each stage of a run sized to decide (:mod:`~deeplimits.studies.sequential`; ``()``:
    one run; ``draws`` is the last stage's), in the spec when there are stages."""
    budget: float | None = None
    """The seconds a run sized to decide may take (in the spec with its stages)."""
    driver: dict | None = None
    """The law of every weight when not the regime's own: a registered driver's spec
    (:meth:`~deeplimits.paths.Driver.spec`; in the spec only when given)."""

    def __getattr__(self, name: str):
        """A declared option by name (``plan.hurst``): its recorded value, else its neutral one."""
        if name.startswith("_") or name not in declarations():
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.__dict__.get("options", {}).get(name, S_.neutral(name))

    def pair(self) -> Pair:
        """The :class:`~deeplimits.pairs.Pair` the plan measures (built from its fields and options)."""
        driver = None if self.driver is None else driver_from_spec(self.driver)
        return _pair(self.regime, width=self.width, activation=self.activation, arch=self.arch, driver=driver,
                     **self.options)

    @property
    def chunk_sizes(self) -> list[int]:
        """The draws of each chunk (``draws`` split into chunks of at most ``chunk``)."""
        return chunk_sizes(self.draws, self.chunk)

    def estimate(self) -> R_.Estimate:
        """Peak memory of one chunk, tasks and networks of the plan (no allocation)."""
        n = min(self.chunk, self.draws)
        peak = convergence_bytes(self.pair(), n, self.inputs, self.reference, self.depths, self.dtype.itemsize,
                                 self.device)
        return R_.Estimate(peak, R_.tasks_of(self.draws, self.chunk), self.draws * len(self.depths), n,
                           self.reference, R_.available_memory(self.device))

    def to_dict(self) -> dict:
        """The plan as plain JSON (what a run store records): ``draws`` under the key ``paths``
        (the spec, hence the run directory's name, of a plan is the one written before the rename)."""
        if self.activation is not None and not isinstance(self.activation, str):
            raise ParameterError("activation", "activation must be given by name (a string) to run through a sweep or "
                                               "a run store")
        d = {_SPEC_KEYS.get(f.name, f.name): getattr(self, f.name) for f in dataclasses.fields(self)
             if f.name not in ("options", "device", "margin", "stages", "budget", "driver")}
        if self.margin != MARGIN:  # the specs (and store keys) of runs at the default margin are unchanged
            d["margin"] = self.margin
        if self.stages:
            d["stages"], d["budget"] = list(self.stages), self.budget
        d["depths"] = list(self.depths)
        d["dtype"] = str(self.dtype).replace("torch.", "")
        fields, rest = S_.split(self.regime, self.options)
        d.update(fields)
        if rest:  # options outside the fields, when given
            d["options"] = dict(rest)
        if self.device is not None:  # the specs (and store keys) of CPU runs are unchanged
            d["device"] = self.device
        if self.driver is not None:  # ... and so are those of the regimes' own laws
            d["driver"] = dict(self.driver)
        return d

    @classmethod
    def from_dict(cls, spec: dict) -> "ConvergencePlan":
        """The plan of a spec written by :meth:`to_dict` (or by an older store)."""
        keys = {_SPEC_KEYS.get(f.name, f.name): f.name for f in dataclasses.fields(cls)}
        d, options = S_.join(spec, set(keys))
        d = {keys[k]: v for k, v in d.items()}
        d["depths"] = tuple(d["depths"])
        d["stages"] = tuple(d.get("stages", ()))
        d["dtype"] = getattr(torch, d["dtype"])
        return cls(**d, options=options)

    def tasks(self) -> list:
        """One sweep task per chunk of draws, keyed ``'<name>/chunk-<i>'`` (see :attr:`name`)."""
        spec = self.to_dict()
        return [Task(f"{self.name}/chunk-{c:05d}", "convergence-chunk", {**spec, "draws": n},
                     chunk_seed(self.seed, c)) for c, n in enumerate(self.chunk_sizes)]

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> ConvergenceResult:
        """Estimates, standard errors and the fitted rate over the draws of the finished chunks (of a
        run sized to decide: read at the share of the levels of the last stage they complete)."""
        mx = np.concatenate([decode_errors(r["max_err"]) for r in results])
        tm = np.concatenate([decode_errors(r["terminal_err"]) for r in results])
        out = summarise(_described(results) or self.pair(), self.depths, self.reference, mx, tm, inputs=self.inputs,
                        seed=self.seed, dtype=self.dtype, seconds=seconds, options=self.options)
        share = 1.0
        if self.stages:
            from ..sequential import shares

            reached = [i for i, n in enumerate(self.stages) if n <= len(mx)]
            share = shares(len(self.stages))[reached[-1] if reached else 0]
        named = self.activation is None or isinstance(self.activation, str)  # a callable has no spec
        return dataclasses.replace(out, margin=self.margin, level_share=share, driver=self.driver,
                                   plan=self if named else None)

    def run(self, progress: Callable[[int], None] | None = None, *, store=None, workers: int | None = None,
            scheduler: str | None = None, timeout: float | None = None, tasks: list | None = None) -> ConvergenceResult:
        """As :meth:`Plan.run`; a callable activation (not storable by name) runs in this process only;
        with :attr:`stages`, the first stage's chunks, then the next stage's, until the verdict is
        decided or the budget spent (:func:`~deeplimits.studies.sequential.run_stages`)."""
        if self.stages and tasks is None:
            from ..sequential import run_stages

            every = self.tasks()
            return run_stages(self.stages, lambda n, share: self.run(
                progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout,
                tasks=every[:-(-n // self.chunk)]), self.budget)
        if self.activation is None or isinstance(self.activation, str):
            return super().run(progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout,
                               tasks=tasks)
        if store is not None or workers is not None or scheduler is not None:
            raise ParameterError("activation", "activation must be given by name (a string) to run through a sweep or "
                                               "a run store")
        V_.callback("progress", progress)
        t0, p, results = time.perf_counter(), self.pair(), []
        for c, n in enumerate(self.chunk_sizes[:None if tasks is None else len(tasks)]):
            mx, tm = run_chunk(p, self.depths, self.reference, n, self.inputs, chunk_seed(self.seed, c), self.dtype,
                               self.device)
            results.append({"max_err": mx, "terminal_err": tm})
            if progress is not None:
                progress(n)
        return self.summarise([], results, time.perf_counter() - t0)

    @property
    def name(self) -> str:
        """``'<regime>[-H<hurst>][-corrected][-beta<beta>][-no-ito][-no-correction][-<driver>]'``."""
        h = f"-H{self.hurst:g}" if self.hurst is not None else ""
        b = f"-beta{self.beta:g}" if self.beta is not None else ""
        d = f"-{self.driver['driver']}" if self.driver is not None else ""
        return (f"{self.regime}{h}{'-corrected' if self.corrected else ''}{b}{'' if self.ito_correction else '-no-ito'}"
                f"{'' if self.correction else '-no-correction'}{d}")


ConvergenceResult.plan_type = ConvergencePlan


@grouped
def plan_convergence(regime: str, *, depths: Sequence[int] | None = None, draws: int | None = None,
                     reference: int | None = None, inputs: int = 1, driver=None,
                     network: Network = Network(width=None, activation=None, arch=None),
                     compute: Compute = Compute(seed=0, dtype=torch.float64, chunk=None, device=None),
                     decision: Decision = Decision(margin=MARGIN, budget=None), **options) -> ConvergencePlan:
    """Validate the arguments of :func:`strong_convergence` (all checks, before any work).
    Defaults (``width``, ``depths``, ``draws``, ``reference``) are the regime's ``defaults``;
    ``device`` (default the CPU) is where the chunks run, sized by its memory;
    ``**options`` are the regime's declared options (``Regime.options``). ``network``: ``width``,
    ``activation``, ``arch`` as for :func:`deeplimits.pair`; ``driver``: the law of the weights in
    place of the regime's own, a registered :class:`~deeplimits.paths.Driver` or its name, whose
    declarations give the regime's limit (:func:`deeplimits.pair`); ``compute``: ``seed``, ``dtype``,
    ``chunk``, ``device``; ``decision``: ``margin``, ``budget`` (with a budget: the stages of draws it
    fits, :func:`~deeplimits.studies.sequential.plan_stages`, each whole chunks, the plan sized as the
    last) (groups of :mod:`deeplimits.studies.settings`, or their fields as keywords)."""
    device, seed, dtype, chunk = V_.device_spec(compute.device), compute.seed, compute.dtype, compute.chunk
    dflt = get_regime(regime).defaults
    # a keyword beyond its parameters is a regime's option: else named as this function's (widht=4)
    check_options(get_regime(regime), {k: v for k, v in options.items() if is_given(k, v)}, plan_convergence)
    width, activation, arch = dflt["width"] if network.width is None else network.width, network.activation, network.arch
    if driver is not None:  # a registered law: the spec records it by name, its tasks rebuild it
        driver = driver_spec(make_driver(driver) if isinstance(driver, str) else driver)
    p = _pair(regime, width=width, activation=activation, arch=arch,
              driver=None if driver is None else driver_from_spec(driver), **options)
    depths = V_.depths("depths", dflt["depths"] if depths is None else depths)
    draws = V_.integer("draws", dflt["draws"] if draws is None else draws)
    inputs = V_.integer("inputs", inputs)
    seed = V_.integer("seed", seed, low=0)
    dtype = V_.dtype(dtype)
    V_.device("device", device, dtype)
    reference = _reference(p, reference, depths)
    chunk = _fit_chunk(p, width, inputs, reference, depths, draws, chunk, dtype, device)
    plan = ConvergencePlan(regime, width, activation, arch, tuple(depths), draws, inputs, reference, seed, dtype, chunk,
                           S_.record(regime, p.options, options), device=device, margin=check_margin(decision.margin),
                           driver=driver)
    budget = check_budget(decision.budget)
    if budget is None:
        return plan
    from ..timing import convergence_seconds

    stages = plan_stages(draws, lambda n: convergence_seconds(dataclasses.replace(plan, draws=n)), budget, unit=chunk)
    _fit_chunk(p, width, inputs, reference, depths, stages[-1], chunk, dtype, device)  # the last stage's sizes
    return dataclasses.replace(plan, draws=stages[-1], stages=stages if len(stages) > 1 else (),
                               budget=budget if len(stages) > 1 else None)


def _reference(p: Pair, reference, depths) -> int:
    """The finest grid: given (at least the limit's ``refinement`` times ``max(depths)``) or
    ``REFERENCE_REFINEMENT * max(depths)`` (:mod:`~deeplimits.studies.convergence.presets`; the limit's
    refinement when it asks for more) for rough weights, ``2 * max(depths)`` for an exact limit, read at
    the grid points; ``max(depths)`` (the grid at which the adaptive solve is read) otherwise."""
    if not p.rough:
        if reference is not None:
            rough = [n for n, r in REGISTRY.items() if r.defaults.get("reference")]
            raise ParameterError("reference", "reference applies only to the regimes with Brownian or fractional "
                                              f"weights ({', '.join(rough)}), not {p.regime!r}: its ODE reference is "
                                              "adaptive")
        return depths[-1]
    least = p.limit.refinement
    default = 2 if p.limit.exact is not None else max(REFERENCE_REFINEMENT, least)
    reference = default * depths[-1] if reference is None else V_.power_of_two("reference", reference)
    if reference < least * depths[-1]:
        why = "" if least == 2 else f" for regime {p.regime!r} ({p.limit.refinement_reason})"
        raise ParameterError("reference", f"reference must be at least {least} * max(depths) = {least * depths[-1]}"
                                          f"{why}, got {reference}")
    return reference


def _fit_chunk(p: Pair, width, inputs, reference, depths, draws, chunk, dtype, device=None) -> int:
    """Draws per task. The default chunk (part of the spec, hence of the seeds) keeps its historical
    rule; it is lowered only where it would not fit the machine, and a given chunk that does not
    fit is refused. Also refuses too many tasks or steps."""
    stored = any(d.stores_path for d in p.drivers.values())  # fGn is held on the finest grid
    per_draw = width * width * inputs * (reference if stored else 1)
    default = int(max(1, min(draws, MAX_CHUNK, (1 << 25) // max(1, per_draw))))
    chunk = None if chunk is None else V_.integer("chunk", chunk)
    item = torch.empty((), dtype=dtype).element_size()
    knobs = ("width", "inputs", "reference") if p.rough else ("width", "inputs", "depths")
    chunk = R_.fit_chunk(lambda n: convergence_bytes(p, n, inputs, reference, depths, item, device), draws, chunk, default,
                         f"at width={width}, inputs={inputs}, reference={reference}, depths up to {depths[-1]}", knobs,
                         device=device)
    R_.require_count(R_.tasks_of(draws, chunk), R_.MAX_TASKS,
                     f"draws={draws} in chunks of {chunk} draws makes too many tasks", ("draws",))
    R_.require_kept(2 * draws * len(depths), f"of the result (draws={draws} x {len(depths)} depths, two errors each)",
                    ("draws",))
    R_.require_count(reference, R_.MAX_STEPS, f"reference={reference} makes too many steps per task",
                     ("reference" if p.rough else "depths",))
    return chunk


@grouped
def strong_convergence(regime: str, *, execution: Execution = Execution(), **settings) -> ConvergenceResult:
    """Estimate the strong error of a pair against depth and fit its rate.

    Args:
        regime: ``'sde'``, ``'ode'``, ``'fbm'``, ``'inside-sde'`` or ``'inside-ode'`` (see
            :func:`deeplimits.pair`).
        execution: how the chunks run (:class:`~deeplimits.studies.settings.Execution`):
            ``progress``, called with the number of draws finished after each chunk; ``store``,
            ``workers``, ``scheduler``, ``timeout`` as for :func:`run_plan`.
        **settings: the arguments of :func:`plan_convergence`, or its groups' fields as keywords:

            * ``depths``: increasing powers of two (defaults: the regime's ``defaults``,
              :mod:`deeplimits.regimes`); ``draws``: independent draws (driver sample and inputs).
            * ``reference``: finest grid (power of two, at least ``2 * max(depths)``) on which
              the reference is solved for the sde, fbm and inside-sde regimes; default
              ``REFERENCE_REFINEMENT * max(depths)`` (:mod:`deeplimits.studies.convergence.presets`). The ODE
              references (ode, inside-ode) are the adaptive solve read at ``k / max(depths)``.
            * ``inputs``: inputs per draw (errors are averaged over them within a draw).
            * ``network`` (:class:`~deeplimits.studies.settings.Network`): ``width``,
              ``activation``, ``arch`` as for :func:`deeplimits.pair`.
            * ``compute`` (:class:`~deeplimits.studies.settings.Compute`): ``seed``, the base seed
              (chunk ``i`` of draws uses :func:`chunk_seed` ``(seed, i)``); ``dtype``, float32 or
              float64; ``chunk``, draws per chunk (bounded memory; default chosen from the
              sizes); ``device``, where the chunks run (default the CPU; ``'cuda'``,
              ``'cuda:1'``, ``'mps'``): samples, networks and limits live there and its memory
              sizes the chunks, recorded in the spec only when not the CPU.
            * the regime's options, declared in ``Regime.options`` (as for
              :func:`deeplimits.pair`: ``hurst``, ``corrected``, ``length_scale``, ``alpha``,
              ``beta``, ``sa``, ``sb``, ``ito_correction`` for the built-in regimes, or those of
              a regime added with :func:`~deeplimits.regimes.register_regime`). The plan's spec
              records them (:mod:`deeplimits.studies.convergence.spec`), and so does the result.

    Returns:
        A :class:`ConvergenceResult`.
    """
    return execution.run(plan_convergence(regime, **settings))


def run_plan(plan: ConvergencePlan, progress: Callable[[int], None] | None = None, *, store=None,
             workers: int | None = None, scheduler: str | None = None,
             timeout: float | None = None) -> ConvergenceResult:
    """Run the chunks of a plan and combine them.

    With a :class:`~deeplimits.runs.RunStore`, finished chunks are committed as they come
    and chunks already in the store are not recomputed; ``workers``/``scheduler`` run the
    chunks on a local or an existing Dask cluster (same numbers as in-process).
    ``progress`` is called with the number of draws of each finished chunk.
    """
    return plan.run(progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout)


@register_task("convergence-chunk", axes=("draw", "depth"))
def run_task(params: dict, seed: int) -> dict:
    """Sweep task: one chunk of draws of a plan (``params`` = plan spec + ``draws``)."""
    spec = {k: v for k, v in params.items() if k != "draws"}
    plan = ConvergencePlan.from_dict(spec)
    p = plan.pair()
    mx, tm = run_chunk(p, plan.depths, plan.reference, params["draws"], plan.inputs, seed, plan.dtype, plan.device)
    return {"max_err": encode_errors(mx), "terminal_err": encode_errors(tm), "pair": describe(p, plan.reference)}
