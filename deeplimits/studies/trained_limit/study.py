"""The limit of trained networks across depths (docs/trained-limit.md; Sander, Ablin & Peyré,
NeurIPS 2022; Marion, Wu, Sander & Biau, ICLR 2024).

For each case (:data:`CASES`: an architecture, an activation, a driver, ``beta``), a family of
depths and a reference depth read their residual weights off ONE driver sample per seed
(:mod:`deeplimits.training.family`), are trained on the same data (Cohen et al.'s synthetic
regression task, squared loss) for the same number of steps with the depth-scaled learning rate
(:data:`~deeplimits.training.family.LR_RULE`), and the weight and hidden-state distances of
every depth to the reference (:mod:`deeplimits.diagnostics.trained_pair`) are measured before
training, at checkpoints and after it. Full-batch gradient descent is the default (the theory's
setting); Adam and mini-batches are labelled variants. One task per case and chunk of seeds,
stored and resumable, in this process or on Dask like every study (docs/sweeps.md).
"""

from __future__ import annotations

import dataclasses
import time
from typing import ClassVar, Mapping, Sequence

import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...runs import Task, chunk_sizes, register_task
from ..plan import Plan, register_plan
from ..settings import Compute, Network, Training, grouped
from .._shared import families as F_
from .._shared.families import FAMILY_KEYS, device_field, family, family_args, train_depth_family
from .presets import CASES, DEFAULT_PRESET, DEFAULTS, PRESETS
from .result import TrainedLimitResult, summarise_case

__all__ = ["CASES", "PRESETS", "FAMILY_KEYS", "TrainedLimitPlan", "plan_trained_limit", "train_depth_family"]

_CPU = PRESETS[DEFAULT_PRESET]  # the defaults of plan_trained_limit: the command's default preset


@register_plan
@dataclasses.dataclass(frozen=True)
class TrainedLimitPlan(Plan):
    """A validated trained-limit study (from :func:`plan_trained_limit`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "trained-limit"
    optional: ClassVar[tuple[str, ...]] = ("batch_size", "length_scale", "device", "families")

    cases: tuple[str, ...]
    """Names of :data:`CASES` or of :attr:`families`, one family each."""
    depths: tuple[int, ...]
    """The depths ``L`` of the family (at least two, each dividing :attr:`reference`)."""
    reference: int
    """The reference depth ``R``, deeper than every depth of the family."""
    width: int
    """The width ``d`` of the networks and of the synthetic data."""
    samples: int
    """Samples of the synthetic task (80% for training)."""
    seeds: int
    """Driver samples (independent families) per case."""
    chunk: int
    """Seeds per task."""
    epochs: int
    """Training epochs (full batch: one step each)."""
    lr: float
    """The learning rate before the depth scaling (:data:`~deeplimits.training.family.LR_RULE`)."""
    optimizer: str
    """``'sgd'`` (gradient descent; with :attr:`batch_size`, mini-batch SGD) or ``'adam'``."""
    checkpoints: tuple[int, ...]
    """The epochs after which the distances are measured along training (and after the last)."""
    seed: int
    """The base seed (the task seeds, the data, the mini-batches)."""
    dtype: str
    """``'float32'`` or ``'float64'``."""
    batch_size: int | None = None
    """``None``: the full batch (gradient descent); else mini-batch SGD, a labelled variant."""
    length_scale: float | None = None
    """The smooth driver's length scale (``None``: its default)."""
    device: str | None = None
    """Where the tasks run (``None``: the CPU)."""
    families: dict | None = None
    """The cases of your own, by name: families (:data:`FAMILY_KEYS`, ``theory``, ``label``) of a
    registered block and driver (``None``: none)."""

    def family(self, case: str) -> dict:
        """The family of ``case``: one of :data:`CASES`, or of :attr:`families`."""
        return (self.families or {}).get(case) or CASES[case]

    def tasks(self) -> list:
        base = {k: v for k, v in self.to_dict().items() if k not in ("cases", "study", "chunk", "seeds", "families")}
        out, i = [], 0
        for case in self.cases:
            first = 0
            own = {"family": self.families[case]} if case in (self.families or {}) else {}
            for n in chunk_sizes(self.seeds, self.chunk):
                out.append(Task(f"trained-limit/{case}/seeds-{first:05d}", "trained-limit-family",
                                {**base, "case": case, **own, "seeds": n, "first_seed": first}, chunk_seed(self.seed, i)))
                first, i = first + n, i + 1
        return out

    def progress_units(self, task) -> int:
        return task.params["seeds"]

    def n_train(self) -> int:
        """The training inputs: :attr:`samples` less the 20% test split."""
        from ...data.base import DEFAULT_TEST_FRACTION

        return self.samples - int(round(DEFAULT_TEST_FRACTION * self.samples))

    def estimate(self) -> R_.Estimate:
        """Peak memory of one task (a case and a chunk of seeds), tasks, trained networks and the
        reference's layer passes (no allocation)."""
        from ...training.train import train_steps

        batch = self.batch_size or self.n_train()
        n = len(self.cases) * self.seeds * (len(self.depths) + 1)
        return R_.Estimate(self.task_bytes(), len(self.cases) * R_.tasks_of(self.seeds, self.chunk), n, self.chunk,
                           train_steps(self.n_train(), batch, self.epochs, self.reference),
                           R_.available_memory(self.device), "seed")

    def task_bytes(self) -> int:
        """Peak bytes of one task (:func:`.memory.trained_limit_bytes`)."""
        from .memory import trained_limit_bytes

        return trained_limit_bytes(self)

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> TrainedLimitResult:
        by_case: dict = {}
        for t, r in zip(tasks, results):
            by_case.setdefault(t.params["case"], []).extend(r["records"])
        cases = [summarise_case(name, self.family(name), by_case[name], self.depths, self.reference)
                 for name in self.cases if name in by_case]
        return TrainedLimitResult(self, cases, seconds)


TrainedLimitResult.plan_type = TrainedLimitPlan


@register_task("trained-limit-family")
def trained_limit_task(params: dict, seed: int) -> dict:
    """Sweep task: one case, one chunk of seeds: the family trained and measured, on one thread
    (:func:`~deeplimits._random.single_threaded_torch`)."""
    from ...data import load_dataset
    from ..._random import single_threaded_torch

    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    data = load_dataset("synthetic", seed=params["seed"], dtype=dtype, n=params["samples"], dim=params["width"],
                        device=device)
    t0 = time.perf_counter()
    with single_threaded_torch():  # small products: threads only wait on each other (tasks run in parallel instead)
        out = train_depth_family(params.get("family") or params["case"], data, depths=params["depths"],
                                 reference=params["reference"],
                                 seeds=params["seeds"], epochs=params["epochs"], lr=params["lr"],
                                 optimizer=params["optimizer"], batch_size=params.get("batch_size"),
                                 checkpoints=params["checkpoints"], length_scale=params.get("length_scale"),
                                 seed=seed, shuffle_seed=params["seed"], first_seed=params["first_seed"])
    out["seconds"] = time.perf_counter() - t0
    return out


def _cases(cases) -> tuple[tuple[str, ...], dict]:
    """The names of ``cases`` (names of :data:`CASES`, or families of your own, each a mapping of
    :data:`FAMILY_KEYS` with a ``name`` not among :data:`CASES`, and ``theory``, ``label`` when
    given) and the families of your own by name (checked: :func:`~.._shared.families.family`)."""
    names, families = [], {}
    for c in V_.sequence("cases", cases, what="a list of cases"):
        if isinstance(c, Mapping):
            name = c.get("name")
            if not isinstance(name, str) or not name or name in CASES:
                raise ParameterError("cases", f"cases: a case of your own needs a 'name' not among "
                                              f"{', '.join(CASES)}, got {name!r}")
            fam = family({k: v for k, v in c.items() if k != "name"})
            families[name] = {**fam, "theory": fam.get("theory"), "label": str(fam.get("label") or name)}
            names.append(name)
        else:
            names.append(V_.choice("cases", c, tuple(CASES)))
    return tuple(names), families


@grouped
def plan_trained_limit(*, cases: Sequence[str] = tuple(_CPU["cases"]), depths: Sequence[int] = tuple(_CPU["depths"]),
                       reference: int = _CPU["reference"], samples: int = DEFAULTS["samples"],
                       seeds: int = DEFAULTS["seeds"], checkpoints: int = DEFAULTS["checkpoints"],
                       length_scale: float | None = None, network: Network = Network(width=DEFAULTS["width"]),
                       training: Training = Training(epochs=DEFAULTS["epochs"], lr=DEFAULTS["lr"],
                                                     optimizer=DEFAULTS["optimizer"], batch_size=None),
                       compute: Compute = Compute(seed=DEFAULTS["seed"], dtype=torch.float64, chunk=None,
                                                  device=None)) -> TrainedLimitPlan:
    """Validate a trained-limit study (every check before any work). ``cases``: names of
    :data:`CASES`, or cases of your own (mappings with a ``name``, the :data:`FAMILY_KEYS` of a
    registered block and driver, and ``theory``, the rate a theorem states, and ``label`` when
    given; docs/trained-limit.md, "Bring your own"); ``depths``: at least two distinct depths, each dividing ``reference`` (the
    reference is deeper than all of them); ``optimizer``: ``'sgd'`` (full-batch gradient descent
    unless ``batch_size`` is given: then mini-batch SGD, a labelled variant) or ``'adam'`` (a
    labelled variant); ``lr`` > 0 is scaled with depth by
    :data:`~deeplimits.training.family.LR_RULE`; ``checkpoints``: measurements along training
    (besides epoch 0); ``chunk``: seeds per task (default all). Sizes (``ResourceError``): the
    trained networks at most :data:`~deeplimits._resources.MAX_CONFIGS`, the reference's layer
    passes at most :data:`~deeplimits._resources.MAX_TRAIN_STEPS`, a task's memory
    (:meth:`TrainedLimitPlan.task_bytes`) within the machine's. Groups
    (:mod:`deeplimits.studies.settings`, or their fields as keywords): ``network`` (``width``),
    ``training`` (``epochs``, ``lr``, ``optimizer``, ``batch_size``), ``compute`` (``seed``,
    ``dtype``, ``chunk``, ``device``)."""
    from ...training.train import require_train_steps, seed_limit

    width, epochs, lr, optimizer, batch_size = network.width, training.epochs, training.lr, training.optimizer, \
        training.batch_size
    seed, dtype, chunk, device = compute.seed, compute.dtype, compute.chunk, compute.device

    cases, families = _cases(cases)
    if not cases or len(set(cases)) != len(cases):
        raise ParameterError("cases", f"cases must be a non-empty list of distinct cases of {', '.join(CASES)}, got "
                                      f"{list(cases)}")
    for case in cases:
        _, depths, reference = family_args(families.get(case, case), depths, reference)
    seeds = V_.integer("seeds", seeds)
    epochs = V_.integer("epochs", epochs)
    plan = TrainedLimitPlan(cases, depths, reference, V_.integer("width", width, high=10 ** 4),
                            V_.integer("samples", samples, low=3, high=10 ** 7), seeds,
                            seeds if chunk is None else V_.integer("chunk", chunk, high=seeds), epochs,
                            V_.real("lr", lr, low=0.0, low_open=True), V_.choice("optimizer", optimizer, ("sgd", "adam")),
                            F_.checkpoints(epochs, min(epochs, V_.integer("checkpoints", checkpoints,
                                                                          high=max(epochs, DEFAULTS["checkpoints"])))),
                            V_.integer("seed", seed, low=0, high=seed_limit(epochs)), str(V_.dtype(dtype)).split(".")[-1],
                            None if batch_size is None else V_.integer("batch_size", batch_size),
                            None if length_scale is None else V_.length_scale(length_scale), device_field(device, dtype),
                            families or None)
    R_.require_count(seeds * len(cases) * (len(depths) + 1), R_.MAX_CONFIGS,
                     f"seeds={seeds} x {len(cases)} cases x {len(depths) + 1} depths make too many trained networks",
                     ("seeds", "cases", "depths"))
    require_train_steps(plan.n_train(), plan.batch_size or plan.n_train(), epochs, reference, None,
                        ("epochs", "reference", "batch_size"), names=("epochs", "reference"))
    R_.require_memory(plan.task_bytes(), f"per task at reference={reference}, width={plan.width}, chunk={plan.chunk}",
                      ("reference", "width", "chunk", "samples"), device=plan.device)
    return plan


