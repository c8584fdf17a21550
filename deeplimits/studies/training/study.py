"""Training experiments as a resumable study (docs/training.md, "Grids, runs and the heat map").

A :class:`TrainPlan` is a grid of configurations ``(H, beta, lr, seed)`` of one residual
network trained on one data set (its task, the initial and the stored weights are in
:mod:`.trained`). The configurations that share ``beta`` train together as one
batched :class:`~deeplimits.training.ResidualNetwork` (``beta`` is a property of the module);
each sweep task trains a chunk of them, so a run store keeps every finished chunk (records and
trained weights, ``weights/<task>.pt``) and the same command resumes the others, in this process
or on a Dask cluster. The initial weights of configuration ``(H_i, seed_j)`` are drawn with the
generator seeded ``chunk_seed(seed, i * seeds + j)``: the same for every ``beta`` and learning
rate, so the best accuracy over the learning rates compares trainings of one initialisation.
All chunks see the mini-batches in one order (seeded by ``seed``).

The heat map (Marion, Fermanian, Biau & Vert, JMLR 2025, §4.2) is the best test accuracy over
the learning rates for each ``(H, beta)``; training fails well below the line
``beta = max(H, 1/2)``, where the network explodes at initialisation (docs/mathematics.md).
"""

from __future__ import annotations

import dataclasses
import os
from typing import ClassVar

import torch

from ... import _resources as R_
from ... import _validate as V_
from ...runs import Task, chunk_sizes
from ..plan import Plan, register_plan
from .grid import driver_axes, values as _values
from .memory import training_bytes
from .result import TrainGridResult
from ..settings import Compute, Execution, Grid, Network, Training, grouped
from ..sizes import configs_count, data_root, data_sizes
from .trained import WEIGHTS_DIR, load_trained, save_weights, weights_damage, weights_path  # noqa: F401 - registers the task

__all__ = ["TrainPlan", "TrainGridResult", "plan_training", "train_grid", "load_trained", "WEIGHTS_DIR",
           "critical_line"]


def critical_line(hurst: float | None) -> float:
    """The boundary ``beta = max(H, 1/2)`` between explosion and the trainable regimes
    (``1/2`` for i.i.d. weights, ``H = None``)."""
    return 0.5 if hurst is None else max(float(hurst), 0.5)


@register_plan
@dataclasses.dataclass(frozen=True)
class TrainPlan(Plan):
    """A validated training grid (from :func:`plan_training`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "train"
    optional: ClassVar[tuple[str, ...]] = ("length_scale", "stop_loss", "root", "device", "driver_options")

    dataset: str
    """The data set's name (:func:`deeplimits.data.load_dataset`)."""
    driver: str
    """The law of the initial weights."""
    hursts: tuple
    """The Hurst indices of the grid (``(None,)`` for a law without one)."""
    betas: tuple[float, ...]
    """The scaling exponents of the grid."""
    lrs: tuple[float, ...]
    """The learning rates of the grid."""
    seeds: int
    """Independent initialisations per grid point."""
    arch: str
    """The residual map."""
    activation: str
    """The activation's name."""
    bias: bool
    """Whether the networks have biases."""
    depth: int
    """The networks' depth ``L``."""
    width: int
    """The networks' width ``d``."""
    epochs: int
    """The epochs of training."""
    batch_size: int
    """The mini-batch size."""
    optimizer: str
    """``'adam'`` or ``'sgd'`` (batched, one learning rate per configuration)."""
    lr_decay_halfway: bool
    """Whether the learning rate is divided by 10 halfway through."""
    seed: int
    """The run's seed (data split and order, initial weights)."""
    dtype: str
    """The networks' dtype, by name."""
    chunk: int
    """Configurations per task."""
    save_weights: bool
    """Whether the trained weights are kept in the run directory."""
    length_scale: float | None = None
    """The RBF length scale of smooth weights (``None`` for other laws)."""
    stop_loss: float | None = None
    """Stop once every live configuration's training loss is at most this (``None``: never)."""
    root: str | None = None
    """The directory of the ``mnist`` / ``cifar10`` files."""
    device: str | None = None
    """Where the tasks run (``None``: the CPU)."""
    driver_options: dict | None = None
    """The other declared parameters of the driver (a registered law of your own), by name."""

    def driver_spec(self, hurst=None) -> dict:
        """The driver's spec at a point ``hurst`` of the H axis (:func:`~deeplimits.paths.driver_from_spec`):
        its name, ``length_scale``, ``hurst`` and its other declared parameters."""
        return {"driver": self.driver, "length_scale": self.length_scale, "hurst": hurst, **(self.driver_options or {})}

    def configs(self, beta_index: int | None = None) -> list[dict]:
        """The configurations ``{hurst, beta, lr, seed, init}`` in task order (``init``: the
        index of their initial weights)."""
        out = []
        for ib, beta in enumerate(self.betas):
            if beta_index is not None and ib != beta_index:
                continue
            for ih, hurst in enumerate(self.hursts):
                for s in range(self.seeds):
                    for lr in self.lrs:
                        out.append({"hurst": hurst, "beta": beta, "lr": lr, "seed": s, "init": ih * self.seeds + s})
        return out

    def tasks(self) -> list:
        """Per ``beta``, chunks of ``chunk`` configurations (one batched module each)."""
        spec = self.to_dict()
        base = {k: v for k, v in spec.items() if k not in ("hursts", "betas", "lrs", "seeds", "chunk", "study",
                                                           "driver_options")}
        base.update(self.driver_options or {})  # the driver's own parameters, read by its spec
        out = []
        for ib, beta in enumerate(self.betas):
            configs = self.configs(ib)
            start = 0
            for ic, n in enumerate(chunk_sizes(len(configs), self.chunk)):
                part = configs[start:start + n]
                start += n
                out.append(Task(f"train/beta-{ib:03d}/chunk-{ic:04d}", "train-chunk",
                                {**base, "beta": beta, "configs": part}, self.seed))
        return out

    def progress_units(self, task) -> int:
        """Configuration-epochs: a chunk reports each epoch as it trains (in this process)."""
        return len(task.params["configs"]) * self.epochs

    @property
    def n_configs(self) -> int:
        """The configurations of the grid, counted without listing them:
        ``len(hursts) x seeds x len(lrs) x len(betas)``."""
        return configs_count(self.hursts, self.seeds, self.lrs, self.betas)

    def steps(self) -> int:
        """The sequential layer passes of one task (:func:`~deeplimits.training.train.train_steps`):
        ``epochs x ceil(n_train / batch_size) x depth`` (and the evaluations of ``stop_loss``)."""
        from ...training.train import train_steps

        return train_steps(data_sizes(self.dataset, self.root)[0], self.batch_size, self.epochs, self.depth,
                           self.stop_loss)

    def estimate(self) -> R_.Estimate:
        """Peak memory of the largest task, tasks, configurations and layer passes per task."""
        per_beta = self.n_configs // len(self.betas)
        chunk = min(self.chunk, per_beta)
        return R_.Estimate(self.estimate_bytes(chunk), len(self.betas) * R_.tasks_of(per_beta, chunk), self.n_configs,
                           chunk, self.steps(), R_.available_memory(self.device), "configuration")

    def estimate_bytes(self, configs: int) -> int:
        """Peak bytes of a task training ``configs`` configurations (:func:`.memory.training_bytes`)."""
        return training_bytes(self, configs)

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> TrainGridResult:
        records = [r for res in results for r in res["records"]]
        weights = {t.key: {k: res[k] for k in ("weights", "weights_sha256") if k in res}
                   for t, res in zip(tasks, results) if res.get("weights")}
        return TrainGridResult(self, records, _best(records), seconds, weights)

    def keep(self, task, result, store):
        """Write the chunk's trained weights next to the store (atomically, before the store
        records the chunk) and keep the JSON part with the file's name and SHA-256."""
        state = result.pop("state", None)
        if store is not None and self.save_weights and state is not None:
            path = weights_path(store.directory, task.key)
            result["weights_sha256"] = save_weights(state, path)
            result["weights"] = os.path.relpath(path, store.directory)
        return result

    def damaged(self, store) -> list[tuple[str, str]]:
        """The finished chunks whose stored weights are missing or damaged (:func:`weights_damage`)."""
        out = []
        for key, result in store.results().items():
            why = weights_damage(store.directory, result) if isinstance(result, dict) else None
            if why is not None:
                out.append((key, why))
        return out


def _best(records: list[dict]) -> list[dict]:
    groups: dict = {}
    for r in records:
        groups.setdefault((r["hurst"], r["beta"]), []).append(r)
    out = []
    for (hurst, beta), rs in groups.items():
        live = [r for r in rs if r["finite"]]
        if any(r["test_accuracy"] is not None for r in live):
            top = max((r for r in live if r["test_accuracy"] is not None), key=lambda r: r["test_accuracy"])
        elif live:
            top = min(live, key=lambda r: r["test_loss"])
        else:
            top = None
        keep = ("lr", "seed", "train_loss", "test_loss", "train_accuracy", "test_accuracy")
        out.append({"hurst": hurst, "beta": beta, "line": critical_line(hurst),
                    **{k: (None if top is None else top[k]) for k in keep},
                    "finite": len(live), "configs": len(rs)})
    return out


TrainGridResult.plan_type = TrainPlan


@grouped
def plan_training(dataset: str = "digits", driver: str = "gaussian", *,
                  grid: Grid = Grid(hursts=None, betas=(0.5,), lrs=(1e-2,), seeds=1),
                  network: Network = Network(arch="res-1", activation=None, bias=True, depth=64, width=30),
                  training: Training = Training(epochs=10, batch_size=128, optimizer="adam", lr_decay_halfway=True,
                                                stop_loss=None),
                  compute: Compute = Compute(seed=0, dtype=torch.float32, chunk=None, device=None),
                  length_scale: float | None = None, save_weights: bool = True, root=None) -> TrainPlan:
    """Validate a training grid (every check, before any work) and return it as a
    :class:`TrainPlan`.

    ``grid``: the Hurst indices (``driver='fractional'`` only), betas, learning rates and
    ``seeds`` independent initialisations per point; ``network``: the
    :class:`~deeplimits.training.ResidualNetwork` (``arch``, ``activation``, ``bias``, ``depth``,
    ``width``); ``training``: ``epochs``, ``batch_size``, ``optimizer``, ``lr_decay_halfway``,
    ``stop_loss`` as for :func:`deeplimits.training.train`; ``compute``: the run's ``seed`` (data
    split and order, initial weights), the networks' ``dtype``, the ``device`` the tasks run on,
    ``chunk`` configurations per task (default: every configuration of a ``beta`` that fits in
    memory); ``length_scale``: the RBF length scale of smooth weights; ``save_weights``: keep
    the trained weights in the run directory; ``root``: the directory of the ``mnist`` /
    ``cifar10`` files. Groups from :mod:`deeplimits.studies.settings` (a field left unset takes
    the default shown), or their fields as keywords (``plan_training(depth=8, epochs=2)``).

    Sizes are checked before any list, file or store is made (``ResourceError``, one line
    naming the parameters to change): at most :data:`~deeplimits._resources.MAX_CONFIGS`
    configurations (``len(hursts) x seeds x len(lrs) x len(betas)``, counted); at most
    :data:`~deeplimits._resources.MAX_TRAIN_STEPS` layer passes per task
    (:meth:`TrainPlan.steps`); one configuration within the memory of the machine or the
    device (:meth:`TrainPlan.estimate_bytes`), the default chunk lowered until it fits."""
    from ...blocks import recorded_block
    from ...data.base import dataset_names
    from ...training.train import OPTIMISERS, require_train_steps, seed_limit

    dataset = V_.choice("dataset", dataset, dataset_names())
    driver, hursts, length_scale, driver_options = driver_axes(driver, grid.hursts, length_scale,
                                                               {f.name for f in dataclasses.fields(TrainPlan)})
    betas = _values("betas", grid.betas, lambda b: V_.real("betas", b, low=0.0))
    lrs = _values("lrs", grid.lrs, lambda r: V_.real("lrs", r, low=0.0, low_open=True))
    seeds = V_.integer("seeds", grid.seeds)
    R_.require_count(configs_count(hursts, seeds, lrs, betas), R_.MAX_CONFIGS,
                     f"configurations (hursts x seeds x lrs x betas = {len(hursts)} x {seeds} x {len(lrs)} x "
                     f"{len(betas)})", ("seeds", "lrs", "betas") + (("hursts",) if hursts[0] is not None else ()))
    block = recorded_block(network.arch, network.activation).check(V_.integer("width", network.width))
    arch, act = block.name, block.activation.name
    bias = V_.flag("bias", network.bias)
    depth, width = V_.integer("depth", network.depth), V_.integer("width", network.width)
    epochs, batch_size = V_.integer("epochs", training.epochs), V_.integer("batch_size", training.batch_size)
    optimizer = V_.choice("optimizer", training.optimizer, tuple(OPTIMISERS))
    lr_decay_halfway = V_.flag("lr_decay_halfway", training.lr_decay_halfway)
    stop_loss = None if training.stop_loss is None else V_.real("stop_loss", training.stop_loss, low=0.0)
    seed = V_.integer("seed", compute.seed, low=0, high=seed_limit(epochs))  # the shuffling seeds of train()
    dtype = V_.dtype(compute.dtype)
    save_weights = V_.flag("save_weights", save_weights)
    device = V_.device_spec(compute.device, dtype)
    root = data_root(dataset, root)
    require_train_steps(data_sizes(dataset, root)[0], batch_size, epochs, depth, stop_loss, ("epochs", "depth"))
    per_beta = len(hursts) * seeds * len(lrs)
    plan = TrainPlan(dataset, driver, tuple(hursts), tuple(betas), tuple(lrs), seeds, arch, act, bias, depth, width,
                     epochs, batch_size, optimizer, lr_decay_halfway, seed, str(dtype).replace("torch.", ""),
                     1, save_weights, length_scale, stop_loss, root,
                     device, driver_options)
    chunk = R_.fit_chunk(plan.estimate_bytes, per_beta, None if compute.chunk is None else V_.integer("chunk", compute.chunk),
                         per_beta, f"(L={depth}, d={width}, batch {batch_size})",
                         ("depth", "width", "batch_size"), device=device, unit="configuration")
    return dataclasses.replace(plan, chunk=chunk)


@grouped
def train_grid(dataset: str = "digits", driver: str = "gaussian", *, execution: Execution = Execution(),
               **settings) -> TrainGridResult:
    """Train a grid of residual networks initialised from ``driver`` and summarise it:
    ``execution.run(plan_training(dataset, driver, **settings))``.

    Args:
        dataset: a :func:`deeplimits.data.load_dataset` name (``root``: the directory of the
            ``mnist`` / ``cifar10`` files).
        driver: ``'gaussian'``, ``'uniform'``, ``'rademacher'`` (i.i.d.), ``'fractional'``
            (with the grid's ``hursts``), ``'smooth'`` (``length_scale``), or a registered law of
            your own (a name, or a :class:`~deeplimits.paths.Driver` whose class is registered).
        execution: how the tasks run (:class:`~deeplimits.studies.settings.Execution`: ``progress``,
            called with the units of work done, epochs of configurations; ``store``, ``workers``,
            ``scheduler``, ``timeout``: a run store and an executor, docs/sweeps.md).
        **settings: the arguments of :func:`plan_training`: its groups (``grid``, ``network``,
            ``training``, ``compute``: :mod:`deeplimits.studies.settings`), ``length_scale``,
            ``save_weights``, ``root``, or the groups' fields as keywords.

    Returns:
        A :class:`TrainGridResult`.
    """
    return execution.run(plan_training(dataset, driver, **settings))
