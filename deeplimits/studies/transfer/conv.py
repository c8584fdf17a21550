"""The transfer study on convolutional residual networks (docs/transfer.md, "Convolutional
ResNets"; Bordelon, Noci, Li, Hanin & Pehlevan, ICLR 2024, Fig. 1).

The networks are :class:`~deeplimits.training.ConvResidualNetwork` (Cohen et al.'s block, no
batch normalisation) with an explicit branch multiplier ``L^-beta``:
``h_{k+1} = ReLU(skip + L^-beta delta_k * ReLU(A_k * h_k))``, ``delta_k`` drawn at the size of
``beta = 0`` (so the multiplier, not the initial scale, carries the depth, as in the MLP study).
The stem, the shortcuts and the head stay at their random initial values; the kernels ``A_k``
and ``delta_k`` of the ``L`` blocks train with plain SGD or Adam at ``base x L^p``, no momentum,
schedule, weight decay or augmentation. As for the MLPs, one task trains ``variants x rates x
seeds`` configurations at once (grouped convolutions), ``chunk`` seeds per task; the summary,
the verdict and the figures are the study's (:mod:`.result`).
"""

from __future__ import annotations

import dataclasses
import itertools
import time
import types
from typing import ClassVar, Sequence

import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...runs import Task, register_task
from ..plan import register_plan
from ..settings import Compute, Conv, Training, grouped
from .presets import COORD_SAMPLES, CONV_PRESETS, DEFAULTS, by_setting, exponent_of, horizon_epochs, settings
from .conv_coords import conv_coordinate_check, train_configurations
from .study import TransferPlan

__all__ = ["ConvTransferPlan", "plan_conv_transfer", "plan_preset", "train_conv_grid", "GPU_FLOPS_PER_SECOND"]

_QUICK = CONV_PRESETS["conv"]

GPU_FLOPS_PER_SECOND = 5e12
"""The floating-point operations per second assumed for one data-centre GPU (an H100) on these
grouped float32 convolutions: a tenth of its dense float32 peak, not measured (the time
estimate's GPU rate)."""


def conv_net(params: dict, configs: int, image_shape, dtype, device):
    """The batched network of a task (``params``: the plan's fields and the task's depth):
    ``delta`` at the size of ``beta = 0``, the branch multiplied by ``L^-beta``, the stem, the
    shortcuts and the head frozen."""
    from ...training import ConvResidualNetwork, conv_layout

    lay = conv_layout(params["depth"], params["width"], params["stages"])
    net = ConvResidualNetwork(image_shape, 10, lay["blocks"], stem=lay["stem"], channels=lay["channels"],
                              strides=lay["strides"], configs=configs, beta=0.0, dtype=dtype, device=device)
    net.branch_multiplier = float(params["depth"]) ** -params["beta"]
    for name, p in net.named_parameters():
        p.requires_grad_(name.endswith((".A", ".delta")))
    return net


@torch.no_grad()
def _initialise(net, params: dict, seeds: Sequence[int], copies: int):
    """Configuration ``j * S + s`` holds seed ``seeds[s]``'s initial weights, for each of ``copies``."""
    for s, sd in enumerate(seeds):
        one = conv_net(params, 1, net.image_shape, net.stem.dtype, "cpu")
        one.reset_parameters(torch.Generator().manual_seed(sd))
        for p, q in zip(net.parameters(), one.parameters()):
            for j in range(copies):
                p[j * len(seeds) + s].copy_(q[0])


def train_conv_grid(data, params: dict, seeds: Sequence[int]) -> dict:
    """Train the grid of one ``(beta, optimizer, depth)`` and the seeds ``seeds`` (their
    generators' seeds) at once, and the coordinate check of each variant at the middle rate.
    ``params``: the plan's fields with ``beta``, ``optimizer`` and ``depth``. Returns the dict
    of :func:`~deeplimits.studies.transfer.study.train_grid` but ``roughness`` (the horizons: the
    training loss after each of :func:`~.presets.horizon_epochs`)."""
    beta, opt, L, lrs = params["beta"], params["optimizer"], params["depth"], params["lrs"]
    variants = [v for _, _, v in settings([beta], [opt])]
    exps = [exponent_of(beta, opt, v) for v in variants]
    S, K, dtype, device = len(seeds), len(lrs), data.x_train.dtype, data.x_train.device
    net = conv_net(params, len(variants) * K * S, params["image_shape"], dtype, device)
    _initialise(net, params, seeds, len(variants) * K)
    net0 = conv_net(params, S, params["image_shape"], dtype, device)
    _initialise(net0, params, seeds, 1)
    from ...training.losses import _evaluate

    initial = [float(v) for v in _evaluate(net0, data.x_train, data.y_train, "cross_entropy")[0]]
    rates = [2.0 ** lr * float(L) ** p for p in exps for lr in lrs for _ in range(S)]
    after = []
    flat = train_configurations(net, data, opt, rates, params["epochs"], params["batch_size"], params["seed"], after)

    def grid(x):  # variants x rates x seeds
        return by_setting(x, len(variants), K, S)

    loss = grid(flat)
    coords = {v: conv_coordinate_check(net0, data, optimizer=opt, lr=2.0 ** lrs[K // 2] * float(L) ** p,
                                       steps=DEFAULTS["coord_steps"], samples=COORD_SAMPLES)
              for v, p in zip(variants, exps)}
    return {"variants": variants, "exponents": exps, "loss": loss, "initial_loss": initial, "coords": coords,
            "loss_by_epoch": [grid(a) for a in after] + [loss], "horizon_epochs": horizon_epochs(params["epochs"])}


@register_plan
@dataclasses.dataclass(frozen=True)
class ConvTransferPlan(TransferPlan):
    """A validated transfer study of convolutional ResNets (from :func:`plan_conv_transfer`);
    the fields of :class:`~deeplimits.studies.transfer.study.TransferPlan` (``width``: the first
    stage's channels, ``depths``: residual blocks, ``samples``: training images) and these."""

    study: ClassVar[str] = "transfer-conv"
    optional: ClassVar[tuple[str, ...]] = ("root", "device")

    dataset: str = "digits"
    """``'digits'`` (8 x 8 images) or ``'cifar10'`` (the files under :attr:`root`)."""
    stages: int = 1
    """The stages of the layout (channels doubling, strides 1, 2, 2, ...)."""
    chunk: int = 1
    """Seeds per task (each task trains ``variants x rates x chunk`` configurations)."""
    root: str | None = None
    """The directory of the CIFAR-10 files."""

    def layout(self, depth: int) -> dict:
        """The layout at ``depth`` blocks (:func:`~deeplimits.training.conv_layout`)."""
        from ...training import conv_layout

        return conv_layout(depth, self.width, self.stages)

    def seed_groups(self) -> list[range]:
        """The seeds of each task, ``chunk`` at a time."""
        return [range(s, min(s + self.chunk, self.seeds)) for s in range(0, self.seeds, self.chunk)]

    def tasks(self) -> list:
        """One task per ``(beta, optimizer, depth)`` and group of seeds."""
        base = {k: v for k, v in self.to_dict().items() if k not in ("study", "depths", "betas", "optimizers")}
        out = []
        for i, (beta, opt, L) in enumerate(itertools.product(self.betas, self.optimizers, self.depths)):
            for g in self.seed_groups():
                out.append(Task(f"transfer-conv/beta-{beta:g}/{opt}/L-{L:05d}/seeds-{g[0]:03d}", "transfer-conv-grid",
                                {**base, "beta": beta, "optimizer": opt, "depth": L,
                                 "seed_ids": [chunk_seed(chunk_seed(self.seed, i), s) for s in g]}, self.seed))
        return out

    def merge(self, tasks: list, results: list) -> dict:
        """``{(beta, optimizer): {depth: result}}``, the seed groups of a depth joined in order."""
        by: dict = {}
        for t, r in zip(tasks, results):
            key, L = (t.params["beta"], t.params["optimizer"]), t.params["depth"]
            old = by.setdefault(key, {}).get(L)
            by[key][L] = r if old is None else _joined(old, r)
        return by

    def flops(self) -> int:
        """Floating-point operations of every task: per configuration, forward and backward
        (three forward passes) over the training images per epoch and the final evaluation."""
        from ...data.augment import IMAGE_SHAPES
        from .._shared.conv import conv_flops

        n = self.samples
        per = sum(conv_flops(IMAGE_SHAPES[self.dataset], self.layout(L)) for L in self.depths)
        configs = sum(self.configs(b, o) for b in self.betas for o in self.optimizers)
        return configs * per * (3 * n * self.epochs + n)

    def seconds(self) -> float:
        """The time in one process on 2 CPU cores, at
        :data:`~deeplimits.studies.scaling_conv.study.CONV_FLOPS_PER_SECOND`."""
        from ..scaling_conv.study import CONV_FLOPS_PER_SECOND

        return self.flops() / CONV_FLOPS_PER_SECOND

    def estimate(self) -> R_.Estimate:
        """Peak memory of one task, tasks, trained networks and one task's layer passes."""
        from ...training.train import train_steps

        C = max(self.configs(b, o) for b in self.betas for o in self.optimizers) // self.seeds * self.chunk
        n = sum(self.configs(b, o) for b in self.betas for o in self.optimizers) * len(self.depths)
        return R_.Estimate(self.task_bytes(), len(self.tasks()), n, C,
                           train_steps(self.samples, self.batch_size, self.epochs, max(self.depths)),
                           R_.available_memory(self.device), "configuration")

    def task_bytes(self, chunk: int | None = None) -> int:
        """Peak bytes of a task of ``chunk`` seeds (default :attr:`chunk`) at the deepest depth."""
        from .memory import conv_transfer_bytes

        return conv_transfer_bytes(self, chunk or self.chunk)


def _joined(a: dict, b: dict) -> dict:
    """Two results of one depth over consecutive groups of seeds, as one."""
    out = dict(a)
    out["loss"] = _seeds_joined(a["loss"], b["loss"])
    if "loss_by_epoch" in a and "loss_by_epoch" in b:  # the horizons, joined the same way
        out["loss_by_epoch"] = [_seeds_joined(x, y) for x, y in zip(a["loss_by_epoch"], b["loss_by_epoch"])]
    else:
        out.pop("loss_by_epoch", None)
        out.pop("horizon_epochs", None)
    out["initial_loss"] = a["initial_loss"] + b["initial_loss"]
    out["coords"] = {v: {k: a["coords"][v][k] + b["coords"][v][k] for k in a["coords"][v]} for v in a["coords"]}
    out["seconds"] = a.get("seconds", 0.0) + b.get("seconds", 0.0)
    return out


def _seeds_joined(a: list, b: list) -> list:
    """Two grids (variants x rates x seeds) over consecutive groups of seeds, as one."""
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


@register_task("transfer-conv-grid")
def conv_transfer_task(params: dict, seed: int) -> dict:
    """Sweep task: one ``(beta, optimizer, depth)`` and group of seeds (:func:`train_conv_grid`)."""
    from ...data.augment import IMAGE_SHAPES
    from .._shared.conv import conv_threads

    data = _images(params)
    t0 = time.perf_counter()
    with conv_threads({**params, "batch_size": min(params["batch_size"], params["samples"])}, data.x_train.device):
        out = train_conv_grid(data, {**params, "image_shape": IMAGE_SHAPES[params["dataset"]]}, params["seed_ids"])
    out["seconds"] = time.perf_counter() - t0
    return out


def _images(params: dict):
    """The data set (split by the plan's seed), its first ``samples`` training images."""
    from ...data import load_dataset

    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    d = load_dataset(params["dataset"], root=params.get("root"), seed=params["seed"], dtype=dtype, device=device)
    n = params["samples"]
    return types.SimpleNamespace(x_train=d.x_train[:n], y_train=d.y_train[:n], x_test=d.x_test, y_test=d.y_test,
                                 task="classification")


@grouped
def plan_conv_transfer(*, dataset: str = _QUICK["dataset"], root=None, depths: Sequence[int] = tuple(_QUICK["depths"]),
                       betas: Sequence[float] = tuple(DEFAULTS["betas"]),
                       optimizers: Sequence[str] = tuple(DEFAULTS["optimizers"]),
                       lrs: Sequence[int] = tuple(_QUICK["lrs"]), seeds: int = _QUICK["seeds"],
                       width: int = _QUICK["width"], samples: int | None = _QUICK["samples"],
                       training: Training = Training(epochs=_QUICK["epochs"], batch_size=DEFAULTS["batch_size"]),
                       conv: Conv = Conv(stages=_QUICK["stages"]),
                       compute: Compute = Compute(seed=0, dtype=torch.float32, device=None, chunk=None)
                       ) -> ConvTransferPlan:
    """Validate a transfer study of convolutional ResNets (every check before any work).
    ``dataset``: ``'digits'`` or ``'cifar10'`` (read from ``root``, nothing downloaded);
    ``depths``: at least three distinct multiples of ``stages``; ``samples``: training images
    (``None``: all); ``chunk``: seeds per task (``None``: as many as fit in memory); the others
    as for :func:`~deeplimits.studies.transfer.study.plan_transfer`. Presets:
    :data:`~.cases.CONV_PRESETS`."""
    from ...data.augment import IMAGE_SHAPES
    from ...training import conv_layout
    from ..sizes import data_root, data_sizes

    dataset = V_.choice("dataset", dataset, ("digits", "cifar10"))
    stages = V_.integer("stages", conv.stages, high=8)
    if min(IMAGE_SHAPES[dataset][1:]) >> (stages - 1) < 2:
        raise ParameterError("stages", f"stages must leave a grid of at least 2 x 2 ({dataset}: at most "
                                       f"{min(IMAGE_SHAPES[dataset][1:]).bit_length() - 1}), got {stages}")
    root = data_root(dataset, root)
    n_train = data_sizes(dataset, root)[0]
    samples = n_train if samples is None else V_.integer("samples", samples, low=2, high=n_train)
    from .study import plan_transfer

    dense = plan_transfer(depths=depths, betas=betas, optimizers=optimizers, lrs=lrs, seeds=seeds, width=width,
                          epochs=training.epochs, batch_size=training.batch_size, samples=2, seed=compute.seed,
                          dtype=compute.dtype, device=compute.device)  # the shared checks (the MLP's memory, tiny)
    for L in dense.depths:
        if L % stages:
            raise ParameterError("depths", f"depths must be multiples of the {stages} stages (blocks per stage), got {L}")
        conv_layout(L, dense.width, stages)
    from ...training.train import require_train_steps

    require_train_steps(samples, dense.batch_size, dense.epochs, max(dense.depths), None,
                        ("epochs", "depths", "batch_size"), names=("epochs", "depth"))
    fields = {f.name: getattr(dense, f.name) for f in dataclasses.fields(TransferPlan)}
    plan = ConvTransferPlan(**{**fields, "samples": samples}, dataset=dataset, stages=stages, root=root)
    chunk = None if compute.chunk is None else V_.integer("chunk", compute.chunk, high=plan.seeds)
    chunk = R_.fit_chunk(plan.task_bytes, plan.seeds, chunk, plan.seeds,
                         f"(L={max(plan.depths)} blocks, width {plan.width}, batch {plan.batch_size})",
                         ("depths", "width", "batch_size", "lrs"), device=plan.device, unit="seed")
    return dataclasses.replace(plan, chunk=chunk)


def plan_preset(name: str, **overrides):
    """The plan of the preset ``name`` (:data:`~.cases.PRESETS`: MLPs,
    :func:`~deeplimits.studies.transfer.study.plan_transfer`; :data:`~.cases.CONV_PRESETS`:
    convolutional ResNets, :func:`plan_conv_transfer`), its values replaced by ``overrides``:
    ``plan_preset("published", root="~/data", device="cuda")``."""
    from .presets import PRESETS
    from .study import plan_transfer

    name = V_.choice("preset", name, (*PRESETS, *CONV_PRESETS))
    if name in PRESETS:
        return plan_transfer(**{**PRESETS[name], **overrides})
    return plan_conv_transfer(**{**CONV_PRESETS[name], **overrides})
