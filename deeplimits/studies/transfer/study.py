"""Which residual scaling lets a learning rate transfer across depth (docs/transfer.md;
Yang, Yu, Zhu & Hayou, ICLR 2024; Bordelon, Noci, Li, Hanin & Pehlevan, ICLR 2024).

For each branch scaling ``beta``, optimiser and depth ``L``, res-1 (tanh) residual MLPs
``h_{k+1} = h_k + L^-beta V_{k+1} tanh(h_k)`` are trained on a bundled task over a grid of base
learning rates (powers of 2) and seeds, all at once: ONE
:class:`~deeplimits.training.ResidualNetwork` holds ``variants x rates x seeds`` configurations,
each seed's initial weights shared by every rate and variant. The residual blocks train at
``base x L^p`` (``p`` the predicted exponent, :func:`~.cases.predicted_exponent`, or 0 for the
variant not rescaled); the embedding and the readout stay at their random initial values, so
every trained weight sits in the ``L`` blocks the heuristic is about. A short full-batch run
beside it measures the coordinate check (:mod:`.coords`). One task per ``(beta, optimiser,
depth)``, stored and resumable like every study (docs/sweeps.md).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from typing import ClassVar, Sequence

import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...runs import Task, register_task
from ..plan import Plan, register_plan
from ..settings import REQUIRED, Compute, Network, Training, grouped
from .._shared.families import device_field
from .presets import (COORD_SAMPLES, DEFAULT_PRESET, DEFAULTS, OPTIMIZERS, PRESETS, by_setting, exponent_of,
                      horizon_epochs, settings)
from .limit import check_limit
from .result import TransferResult

__all__ = ["TransferPlan", "plan_transfer", "train_grid"]

_CPU = PRESETS[DEFAULT_PRESET]


def _initial_net(L: int, width: int, classes: int, data, beta: float, seeds: int, generator, block=None) -> object:
    """``seeds`` networks of depth ``L`` drawn from ``generator`` (embedding and readout frozen) of
    ``block`` (``(arch, activation)``; ``None``: res-1 tanh)."""
    from ...training import ResidualNetwork

    arch, activation = block or (DEFAULTS["arch"], DEFAULTS["activation"])
    net = ResidualNetwork(arch, L, width, data.x_train.shape[1], classes, configs=seeds, beta=beta,
                          activation=activation, dtype=data.x_train.dtype, device=data.x_train.device)
    net.reset_parameters(generator)
    return net


@grouped
def train_grid(data, *, depth: int, beta: float, optimizer: str, lrs: Sequence[int], seeds: int, width: int,
               coord_steps: int, seed: int = 0, shuffle_seed: int = 0, block: tuple | None = None,
               training: Training = Training(epochs=REQUIRED, batch_size=REQUIRED)) -> dict:
    """Train the grid of one ``(beta, optimizer, depth)``: every variant x base rate ``2^lrs[i]``
    x seed in one network (``data``: a classification :class:`~deeplimits.data.Dataset`; ``block``:
    ``(arch, activation)`` of a registered block, res-1 tanh by default; ``training``: ``epochs``
    and ``batch_size``, or those fields as keywords), and
    the coordinate check of each variant at the base rate ``2^lrs[middle]``.

    Returns ``{'variants', 'exponents', 'loss' (variants x rates x seeds final training losses,
    ``None`` where training blew up), 'initial_loss' (per seed), 'coords' (per variant, from
    :func:`~.coords.coordinate_check`), 'roughness' (as 'loss': :func:`~.coords.roughness` of the
    trained blocks), 'loss_by_epoch' (as 'loss', the training loss on the whole training set after each epoch of
    'horizon_epochs' (:func:`~.presets.horizon_epochs`), the optimum's horizons; after the last,
    'loss' itself)}``."""
    from ...training import evaluate, train
    from .coords import coordinate_check, roughness, tiled

    variants = [v for b, o, v in settings([beta], [optimizer])]
    exps = [exponent_of(beta, optimizer, v) for v in variants]
    classes = int(data.y_train.max()) + 1
    g = torch.Generator().manual_seed(seed)
    epochs, batch_size = training.epochs, training.batch_size
    net0 = _initial_net(depth, width, classes, data, beta, seeds, g, block)
    initial = evaluate(net0, data.x_train, data.y_train, "cross_entropy")[0]
    K = len(lrs)
    net = tiled(net0, len(variants) * K)
    rates = [2.0 ** lr * float(depth) ** p for p in exps for lr in lrs for _ in range(seeds)]
    horizons, after = horizon_epochs(epochs), []  # the training loss on the whole training set at each horizon

    def read(record):  # after the last epoch the records' own loss is the horizon's
        if record["epoch"] + 1 in horizons[:-1]:
            losses = evaluate(net, data.x_train, data.y_train, "cross_entropy")[0].tolist()
            after.append([float(x) if f and math.isfinite(x) else None for x, f in zip(losses, record["finite"])])

    res = train(net, data, optimizer=optimizer, lr=rates, epochs=epochs, batch_size=batch_size, loss="cross_entropy",
                lr_decay_halfway=False, seed=shuffle_seed, callbacks=read)
    flat = [r["train_loss"] if r["finite"] else None for r in res.records]
    first = net.block.required[0]  # the block's first weight (V of res-1)
    rough = [r if f is not None else None for r, f in zip(roughness(getattr(net, first), getattr(net0, first)), flat)]
    def grid(x):  # variants x rates x seeds
        return by_setting(x, len(variants), K, seeds)

    loss, rough = grid(flat), grid(rough)
    coords = {v: coordinate_check(net0, data, optimizer=optimizer, lr=2.0 ** lrs[K // 2] * float(depth) ** p,
                                  steps=coord_steps, samples=COORD_SAMPLES)
              for v, p in zip(variants, exps)}
    return {"variants": variants, "exponents": exps, "loss": loss, "initial_loss": [float(v) for v in initial],
            "coords": coords, "roughness": rough, "loss_by_epoch": [grid(e) for e in after] + [loss],
            "horizon_epochs": horizons}


@register_plan
@dataclasses.dataclass(frozen=True)
class TransferPlan(Plan):
    """A validated learning-rate transfer study (from :func:`plan_transfer`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "transfer"
    optional: ClassVar[tuple[str, ...]] = ("device", "limit", "arch", "activation", "model", "data", "data_sha256")

    depths: tuple[int, ...]
    """The depths ``L`` (at least three, increasing)."""
    betas: tuple[float, ...]
    """The branch scalings ``L^-beta``."""
    optimizers: tuple[str, ...]
    """``'sgd'`` and/or ``'adam'``."""
    lrs: tuple[int, ...]
    """The base learning rates, as powers of 2 (``2^lrs[i]``), increasing by 1."""
    seeds: int
    """Independent initialisations per depth (each trained at every rate)."""
    width: int
    """The width ``d`` of the residual stream."""
    epochs: int
    """Passes over the training samples (mini-batches of :attr:`batch_size`)."""
    batch_size: int
    """The mini-batch size."""
    samples: int
    """Training samples of the digits task (at most its 1437)."""
    coord_steps: int
    """Full-batch steps of the coordinate check."""
    seed: int
    """The base seed (the task seeds, the split of the data, the mini-batches)."""
    dtype: str
    """``'float32'`` or ``'float64'``."""
    device: str | None = None
    """Where the tasks run (``None``: the CPU)."""
    limit: int | None = None
    """The reference depth of the limit beside it (:mod:`.limit`; ``None``: not run)."""
    arch: str | None = None
    """A registered block the networks are made of (``None``: res-1)."""
    activation: str | None = None
    """Its activation (``None``: tanh)."""
    model: str | None = None
    """The name of a user's network factory (:class:`~.user.TransferNetwork`; ``None``: the study's own)."""
    data: str | None = None
    """The name of a user's data set (:class:`~.user.TransferData`; ``None``: the bundled digits)."""
    data_sha256: str | None = None
    """The SHA-256 of the user's data set (a resumed run on changed data is refused)."""

    def tasks(self) -> list:
        base = {k: v for k, v in self.to_dict().items() if k not in ("study", "depths", "betas", "optimizers")}
        out = []
        for i, (beta, opt, L) in enumerate(itertools.product(self.betas, self.optimizers, self.depths)):
            out.append(Task(f"transfer/beta-{beta:g}/{opt}/L-{L:05d}", "transfer-grid",
                            {**base, "beta": beta, "optimizer": opt, "depth": L}, chunk_seed(self.seed, i)))
        return out

    def progress_units(self, task) -> int:
        return 1

    def configs(self, beta: float, optimizer: str) -> int:
        """Configurations trained at once in a task of ``(beta, optimizer)``."""
        return len(settings([beta], [optimizer])) * len(self.lrs) * self.seeds

    def estimate(self) -> R_.Estimate:
        """Peak memory of one task, tasks, trained networks and one task's layer passes (no allocation)."""
        from ...training.train import train_steps

        from .limit import limit_settings

        C = max(self.configs(b, o) for b in self.betas for o in self.optimizers)
        n = sum(self.configs(b, o) for b in self.betas for o in self.optimizers) * len(self.depths)
        extra = len(limit_settings(self))  # the limit families: a task each, every depth and the reference
        return R_.Estimate(self.task_bytes(), len(self.betas) * len(self.optimizers) * len(self.depths) + extra,
                           n + extra * self.seeds * (len(self.depths) + 1), C,
                           train_steps(self.samples, self.batch_size, self.epochs, max(*self.depths, self.limit or 0)),
                           R_.available_memory(self.device), "configuration")

    def seconds(self) -> float:
        """The time of every task in one process on 2 CPU cores (:func:`.memory.transfer_seconds`)."""
        from .memory import limit_seconds, transfer_seconds

        return transfer_seconds(self) + limit_seconds(self)

    def task_bytes(self) -> int:
        """Peak bytes of one task (:func:`.memory.transfer_task_bytes`)."""
        from .memory import transfer_task_bytes

        return transfer_task_bytes(self)

    def merge(self, tasks: list, results: list) -> dict:
        """``{(beta, optimizer): {depth: result}}`` of the tasks' results."""
        by: dict = {}
        for t, r in zip(tasks, results):
            by.setdefault((t.params["beta"], t.params["optimizer"]), {})[t.params["depth"]] = r
        return by

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> TransferResult:
        from .result import summarise_setting

        by = self.merge(tasks, results)
        rows = [summarise_setting(b, o, v, by[(b, o)], self.lrs) for b, o, v in settings(self.betas, self.optimizers)
                if (b, o) in by]
        return TransferResult(self, rows, seconds)

    def run(self, progress=None, *, store=None, workers=None, scheduler=None, timeout=None):
        """The grids (:meth:`Plan.run <deeplimits.studies.plan.Plan.run>`), then with :attr:`limit`
        the limit family of each setting at its transferred rate (:func:`.limit.run_limit`)."""
        from .limit import run_limit

        result = super().run(progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout)
        return run_limit(self, result, progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout)

    def stored_units(self, store) -> int:
        """The grids and the limit tasks already finished in ``store``."""
        from .limit import stored_limits

        return super().stored_units(store) + stored_limits(self, store)

    def stored_result(self, done: dict, seconds: dict):
        """The grids' result with the limit tasks finished among ``done`` (:func:`.limit.attach_stored`)."""
        from .limit import attach_stored

        result = super().stored_result(done, seconds)
        return result if result is None else attach_stored(self, result, done, seconds)


@register_task("transfer-grid")
def transfer_task(params: dict, seed: int) -> dict:
    """Sweep task: one ``(beta, optimizer, depth)``: its grid trained (:func:`train_grid`) on one thread."""
    from ..._random import single_threaded_torch

    data = _data(params)
    t0 = time.perf_counter()
    kw = dict(depth=params["depth"], beta=params["beta"], optimizer=params["optimizer"], lrs=params["lrs"],
              seeds=params["seeds"], epochs=params["epochs"], batch_size=params["batch_size"],
              coord_steps=params["coord_steps"], seed=seed, shuffle_seed=params["seed"])
    with single_threaded_torch():  # small products: threads only wait on each other
        if params.get("model"):
            from .batched import train_user_grid
            from .user import registered_network

            out = train_user_grid(registered_network(params["model"]), data, **kw)
        else:
            block = (params["arch"], params.get("activation")) if params.get("arch") else None
            out = train_grid(data, width=params["width"], block=block, **kw)
    out["seconds"] = time.perf_counter() - t0
    return out


@register_task("transfer-limit")
def transfer_limit_task(params: dict, seed: int) -> dict:
    """Sweep task: one setting's limit family (:func:`.limit.train_limit`) on the grid's data, in float64."""
    from .limit import train_limit

    return train_limit(_data({**params, "dtype": "float64"}), params, seed)


def _data(params: dict):
    """The digits task (split by the plan's seed), or the user's data set of the plan
    (:func:`~.user.registered_data`), its first ``samples`` training samples."""
    import types

    from ...data import load_dataset

    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    if params.get("data"):
        from .user import registered_data

        u = registered_data(params["data"], params["data_sha256"])
        d = types.SimpleNamespace(**{k: getattr(u, k).to(device, dtype if k.startswith("x") else torch.int64)
                                     for k in ("x_train", "y_train", "x_test", "y_test")})
    else:
        d = load_dataset("digits", seed=params["seed"], dtype=dtype, device=device)
    n = params["samples"]
    return types.SimpleNamespace(x_train=d.x_train[:n], y_train=d.y_train[:n], x_test=d.x_test, y_test=d.y_test,
                                 task="classification")


def _grid(lrs) -> tuple[int, ...]:
    """``lrs``: ``[low, high]`` powers of 2 (``low < high``, integers within [-40, 40]) -> every integer between."""
    pair = V_.sequence("lrs", lrs, lambda v: V_.integer("lrs", v, low=-40, high=40),
                       what="a pair low,high of powers of 2")
    if len(pair) != 2 or pair[0] + 2 > pair[1]:
        raise ParameterError("lrs", "lrs must be a pair low,high of powers of 2 with low + 2 <= high, got "
                                    f"{list(pair)}")
    return tuple(range(pair[0], pair[1] + 1))


TransferResult.plan_type = TransferPlan


@grouped
def plan_transfer(*, depths: Sequence[int] = tuple(_CPU["depths"]), betas: Sequence[float] = tuple(DEFAULTS["betas"]),
                  optimizers: Sequence[str] = tuple(DEFAULTS["optimizers"]), lrs: Sequence[int] = tuple(_CPU["lrs"]),
                  seeds: int = _CPU["seeds"], samples: int = _CPU["samples"], limit: int | None = None,
                  model=None, data=None,
                  network: Network = Network(arch=DEFAULTS["arch"], activation=DEFAULTS["activation"],
                                             width=_CPU["width"]),
                  training: Training = Training(epochs=_CPU["epochs"], batch_size=DEFAULTS["batch_size"]),
                  compute: Compute = Compute(seed=DEFAULTS["seed"], dtype=torch.float32, device=None)) -> TransferPlan:
    """Validate a transfer study (every check before any work). ``depths``: at least three
    distinct depths; ``betas``: reals in [0, 2]; ``optimizers``: of :data:`~.cases.OPTIMIZERS`;
    ``lrs``: ``(low, high)``, the base rates ``2^low, ..., 2^high`` (at least three); ``samples``:
    training samples (at most the data's: 1437 of digits); ``limit``: ``None``, or the reference
    depth of the limit beside it (:func:`.limit.check_limit`; the study's own networks and
    registered blocks); ``model``: a user's :class:`~.user.TransferNetwork` (a factory
    ``make(depth, beta)``, checked: :func:`~.user.check_network`) instead of the study's networks;
    ``data``: a user's classification data (tensors, a ``Dataset``, a :class:`~.user.TransferData`:
    :func:`~.user.transfer_data`) instead of digits; ``network``: ``arch`` (a registered block,
    res-1 by default), its ``activation`` (tanh) and ``width``; ``training``: ``epochs``,
    ``batch_size``; ``compute``: ``seed``, ``dtype``, ``device`` (groups of
    :mod:`deeplimits.studies.settings`, or their fields as keywords). Sizes: the trained networks
    at most :data:`~deeplimits._resources.MAX_CONFIGS`, a task's memory within the machine's."""
    from ...training.train import require_train_steps, seed_limit
    from .user import own_objects

    seed, dtype, device = compute.seed, compute.dtype, compute.device
    depths = tuple(sorted(V_.sequence("depths", depths, lambda L: V_.integer("depths", L, high=10 ** 5),
                                      what="a list of depths")))
    if len(set(depths)) < 3 or len(set(depths)) != len(depths):
        raise ParameterError("depths", f"depths must hold at least three distinct depths, got {list(depths)}")
    betas = tuple(V_.sequence("betas", betas, lambda b: V_.real("betas", b, low=0.0, high=2.0), what="a list of betas"))
    optimizers = tuple(V_.sequence("optimizers", optimizers, lambda o: V_.choice("optimizers", o, OPTIMIZERS),
                                   what="a list of optimizers"))
    for name, v in (("betas", betas), ("optimizers", optimizers)):
        if not v or len(set(v)) != len(v):
            raise ParameterError(name, f"{name} must be a non-empty list of distinct values, got {list(v)}")
    epochs, width = V_.integer("epochs", training.epochs, high=10 ** 4), V_.integer("width", network.width, high=10 ** 4)
    own = own_objects(model, data, network, width, depths, betas, limit)
    plan = TransferPlan(depths, betas, optimizers, _grid(lrs), V_.integer("seeds", seeds, low=2, high=10 ** 4), width,
                        epochs, V_.integer("batch_size", training.batch_size, high=10 ** 7),
                        V_.integer("samples", samples, low=2, high=own.pop("most_samples")), DEFAULTS["coord_steps"],
                        V_.integer("seed", seed, low=0, high=seed_limit(epochs)), str(V_.dtype(dtype)).split(".")[-1],
                        device_field(device, dtype), check_limit(limit, depths, betas), **own)
    C = max(plan.configs(b, o) for b in betas for o in optimizers)
    R_.require_count(C * len(depths) * len(betas) * len(optimizers), R_.MAX_CONFIGS,
                     "the grid makes too many trained networks", ("lrs", "seeds", "depths", "betas"))
    require_train_steps(plan.samples, plan.batch_size, epochs, max(depths), None, ("epochs", "depths", "batch_size"),
                        names=("epochs", "depth"))
    R_.require_memory(plan.task_bytes(), f"per task at depth={max(depths)}, width={plan.width}, {C} configurations",
                      ("depths", "width", "lrs", "seeds", "batch_size"), device=plan.device)
    return plan
