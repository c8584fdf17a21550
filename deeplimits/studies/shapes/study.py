"""Training limits across depth, width and embedding size (docs/shapes.md; Chizat 2025, "The hidden
width of deep ResNets"; Chaintron, Chizat & Maass 2026, "ResNets of all shapes and sizes").

:func:`plan_shapes` checks a grid of shapes ``(L, M, D)`` and its runs (a :class:`ShapesPlan`,
nothing computed); its tasks are one depth and a chunk of runs each (:func:`~.task.depth_task`),
every cell of the depth trained in batches (:mod:`.network`) and measured against the exact limit
(linear activation, :mod:`.limit`) or the reference network (tanh); :meth:`ShapesPlan.summarise`
fits the law and reads the verdicts (:class:`~.result.ShapesResult`). Stored and resumable, in this
process or on Dask like every study (docs/sweeps.md).
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar, Sequence

import torch

from ... import _resources as R_
from ... import _validate as V_
from ...errors import ParameterError
from ...runs import Task, chunk_sizes
from ..plan import Plan, register_plan
from ..settings import Compute, grouped
from .presets import CASES, DEFAULT_PRESET, DEFAULTS, PRESETS, PROTOCOL, Protocol
from .result import ShapesResult
from .task import BATCH_CAP, GPU_BATCH_CAP, GPU_SMALL_BATCH, SMALL_BATCH

__all__ = ["ShapesPlan", "plan_shapes", "shapes", "MAX_SIZE"]

_CPU = PRESETS[DEFAULT_PRESET]
MAX_SIZE = 4096
"""The largest depth, width or embedding size of a grid."""


@register_plan
@dataclasses.dataclass(frozen=True)
class ShapesPlan(Plan):
    """A validated shapes study (from :func:`plan_shapes`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "shapes"
    optional: ClassVar[tuple[str, ...]] = ("reference", "device")

    case: str
    """One of :data:`~.presets.CASES`."""
    depths: tuple[int, ...]
    """The depths ``L``."""
    widths: tuple[int, ...]
    """The hidden widths ``M``."""
    dims: tuple[int, ...]
    """The embedding sizes ``D``."""
    seeds: int
    """Runs per cell (each its own embeddings, shared by its cells, and its own ``U``, ``V`` per cell)."""
    chunk: int
    """Runs per task."""
    steps: int
    """Recorded steps ``K`` (the networks after ``0 .. K - 1`` steps)."""
    lr: float
    """The base rate ``eta_0``."""
    step: int
    """The step ``k`` the law is fitted and the verdicts read at."""
    fit_min: tuple[int, ...]
    """``(L, M, D)``: the law is fitted, and the verdicts read, on the cells above all three."""
    seed: int
    """The base seed."""
    dtype: str
    """``'float32'`` or ``'float64'``."""
    cap: int = BATCH_CAP
    """Padded entries of a batch at most (:func:`~.task.batches`)."""
    small: int = SMALL_BATCH
    """Padded entries under which slots are batched whatever their padding (larger on a GPU)."""
    reference: tuple[int, ...] | None = None
    """``(L, M, D)`` of the reference network (tanh: the largest of the grid), ``None`` for the exact limit."""
    device: str | None = None
    """Where the tasks run (``None``: the CPU)."""

    @property
    def protocol(self) -> Protocol:
        """The training protocol of every run."""
        return dataclasses.replace(PROTOCOL, steps=self.steps, lr=self.lr)

    def chunks(self) -> list[tuple[int, int]]:
        """``(first run, runs)`` of each chunk."""
        out, first = [], 0
        for n in chunk_sizes(self.seeds, self.chunk):
            out.append((first, n))
            first += n
        return out

    def tasks(self) -> list:
        base = {"case": self.case, "protocol": dataclasses.asdict(self.protocol), "widths": list(self.widths),
                "dims": list(self.dims), "seed": self.seed, "dtype": self.dtype, "cap": self.cap,
                "small": self.small,
                "reference": None if self.reference is None else list(self.reference), "device": self.device,
                "single_thread": True}
        return [Task(f"shapes/{self.case}/runs-{first:05d}/L-{L:05d}", "shapes-depth",
                     {**base, "depth": L, "first_run": first, "runs": n}, self.seed)
                for first, n in self.chunks() for L in self.depths]

    def progress_units(self, task) -> int:
        return task.params["runs"] * len(self.widths) * len(self.dims)

    def estimate(self) -> R_.Estimate:
        """Peak memory of the largest task, tasks, networks, and the layer passes of the deepest task."""
        from .memory import task_layer_steps

        return R_.Estimate(self.task_bytes(), len(self.tasks()), self.networks(), self.chunk,
                           task_layer_steps(self, max(self.depths)), R_.available_memory(self.device), "run")

    def networks(self) -> int:
        """The networks trained: every cell's runs (and the tanh reference once per task)."""
        extra = len(self.depths) * len(self.chunks()) * self.chunk if self.reference is not None else 0
        return self.seeds * len(self.depths) * len(self.widths) * len(self.dims) + extra

    def task_bytes(self) -> int:
        """Peak bytes of the largest task (:func:`.memory.task_bytes`)."""
        from .memory import task_bytes

        return task_bytes(self)

    def seconds(self) -> float:
        """CPU seconds of the whole plan in one process on one thread per task (:func:`.memory.task_seconds`)."""
        from .memory import task_seconds

        return sum(task_seconds(self, L, n) for _, n in self.chunks() for L in self.depths)

    def gpu_seconds(self) -> float:
        """The plan's time on one GPU, estimated (:func:`.memory.gpu_seconds`)."""
        from .memory import gpu_seconds

        return gpu_seconds(self)

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> ShapesResult:
        return ShapesResult.from_tasks(self, tasks, results, seconds)


ShapesResult.plan_type = ShapesPlan


def _sizes(name: str, values) -> tuple[int, ...]:
    out = V_.sequence(name, values, lambda v: V_.integer(name, v, high=MAX_SIZE), what="a list of sizes")
    if not out or len(set(out)) != len(out):
        raise ParameterError(name, f"{name} must be a non-empty list of distinct sizes in [1, {MAX_SIZE}], got "
                                   f"{list(out)}")
    return tuple(sorted(out))


def _fit_min(fit_min) -> tuple[int, int, int]:
    out = V_.sequence("fit_min", fit_min, lambda v: V_.integer("fit_min", v, low=0, high=MAX_SIZE),
                      what="three sizes (L, M, D)")
    if len(out) != 3:
        raise ParameterError("fit_min", f"fit_min must be three sizes (L, M, D) in [0, {MAX_SIZE}], got {list(out)}")
    return tuple(out)


@grouped
def plan_shapes(*, case: str = DEFAULTS["case"], depths: Sequence[int] = tuple(_CPU["depths"]),
                widths: Sequence[int] = tuple(_CPU["widths"]), dims: Sequence[int] = tuple(_CPU["dims"]),
                seeds: int = _CPU["seeds"], steps: int = DEFAULTS["steps"], lr: float = DEFAULTS["lr"],
                step: int = DEFAULTS["step"], fit_min: Sequence[int] = tuple(_CPU["fit_min"]),
                compute: Compute = Compute(seed=DEFAULTS["seed"], dtype=torch.float64, chunk=None,
                                           device=None)) -> ShapesPlan:
    """Validate a shapes study (every check before any work). ``case``: one of
    :data:`~.presets.CASES`; ``depths``, ``widths``, ``dims``: the grid's ``L``, ``M``, ``D`` (distinct
    sizes in ``[1, MAX_SIZE]``); ``seeds``: runs per cell; ``steps``: recorded steps (2 to 64),
    ``lr`` the base rate (in ``(0, 10]``), ``step`` the step the law is fitted at; ``fit_min``: the
    cells above these ``(L, M, D)`` are fitted and read by the verdicts (at least 4 of them). Groups
    (or their fields as keywords): ``compute`` (``seed``, ``dtype``, ``chunk``: runs per task, default
    as many as fit in memory up to ``DEFAULTS['chunk']``, ``device``). Sizes (``ResourceError``): a task's memory
    within the machine's (or the device's), at most :data:`~deeplimits._resources.MAX_CONFIGS` networks."""
    case = V_.choice("case", case, tuple(CASES))
    depths, widths, dims = _sizes("depths", depths), _sizes("widths", widths), _sizes("dims", dims)
    seeds = V_.integer("seeds", seeds, high=10 ** 5)
    steps = V_.integer("steps", steps, low=2, high=64)
    lr = V_.real("lr", lr, low=0.0, high=10.0, low_open=True)
    step = V_.integer("step", step, low=0, high=steps - 1)
    fit_min = _fit_min(fit_min)
    fitted = math.prod(sum(v > low for v in sizes) for sizes, low in zip((depths, widths, dims), fit_min))
    if fitted < 4:
        raise ParameterError("fit_min", f"fit_min {list(fit_min)} leaves {fitted} cells of the grid to fit (at least "
                                        "4: the law has 3 constants)")
    if CASES[case]["limit"] == "exact":  # the limit solved now (milliseconds, cached): a diverging one is refused
        from .limit import linear_limit

        linear_limit(PROTOCOL.x, PROTOCOL.y, steps=steps, lr=lr, alpha=PROTOCOL.alpha)
    dtype = V_.dtype(compute.dtype)
    device = V_.device("device", compute.device, dtype)
    spec = None if device.type == "cpu" else str(device)
    reference = (depths[-1], widths[-1], dims[-1]) if CASES[case]["limit"] == "reference" else None
    R_.require_count(seeds * len(depths) * len(widths) * len(dims), R_.MAX_CONFIGS,
                     f"seeds={seeds} x {len(depths) * len(widths) * len(dims)} cells make too many networks",
                     ("seeds", "depths", "widths", "dims"))
    base = ShapesPlan(case, depths, widths, dims, seeds, 1, steps, lr, step, fit_min,
                      V_.integer("seed", compute.seed, low=0), str(dtype).split(".")[-1],
                      BATCH_CAP if spec is None else GPU_BATCH_CAP, SMALL_BATCH if spec is None else GPU_SMALL_BATCH,
                      reference, spec)
    chunk = R_.fit_chunk(lambda n: dataclasses.replace(base, chunk=n).task_bytes(), seeds,
                         None if compute.chunk is None else V_.integer("chunk", compute.chunk, high=seeds),
                         DEFAULTS["chunk"],
                         "at the largest cell", ("depths", "widths", "dims"), device=spec, unit="run")
    plan = dataclasses.replace(base, chunk=chunk)
    from .memory import task_layer_steps

    R_.require_count(task_layer_steps(plan, depths[-1]), R_.MAX_TRAIN_STEPS, "layer passes of the deepest task",
                     ("depths", "widths", "dims", "chunk"))
    return plan


def shapes(case: str = DEFAULTS["case"], *, progress=None, store=None, **kw):
    """Run a shapes study (:func:`plan_shapes`' arguments) and return its :class:`~.result.ShapesResult`."""
    return plan_shapes(case=case, **kw).run(progress, store=store)
