"""The scaling of trained convolutional residual networks with depth (``deeplimits scaling --arch
conv``; docs/weights.md, "Convolutional networks"): Cohen, Cont, Rossier & Xu (ICML 2021, §3.2)
train the networks of :class:`~deeplimits.training.ConvResidualNetwork` at a family of depths
and find a third regime, neither smooth nor rough: the largest ``delta_k`` barely shrinks with
depth (alpha about 0.1), the inner kernels ``A_k`` do not (beta about 0), a few layers carry the
weight.

One task per depth and seed (:mod:`.task`), resumable; the summary reads alpha off
the max spectral norm of ``delta`` (``max_k ||delta_k|| ~ L^-alpha``) and beta off that of ``A``
(``max_k ||A_k|| ~ L^-beta``, the number Cohen et al. report), the cumulative-sum beta of step 2
(:func:`~deeplimits.diagnostics.scaling_exponents`) beside it, with 95% intervals, and the verdict of the steps on ``A`` and on ``delta``
(:mod:`.result`).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Sequence

import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...runs import Task
from .._shared.conv import CONV_FLOPS_PER_SECOND, conv_flops
from ..plan import Plan, register_plan
from ..settings import Compute, Conv, Network, Training, grouped
from .result import ConvScalingResult, conv_exponents
from .task import conv_scaling_task  # noqa: F401 - registers the task

__all__ = ["ConvScalingPlan", "plan_conv_scaling"]

@register_plan
@dataclasses.dataclass(frozen=True)
class ConvScalingPlan(Plan):
    """A validated convolutional scaling experiment (from :func:`plan_conv_scaling`)."""

    study: ClassVar[str] = "scaling-conv"
    optional: ClassVar[tuple[str, ...]] = ("root", "device")

    dataset: str
    """``'digits'`` (8 x 8 images) or ``'cifar10'`` (files under ``root``)."""
    depths: tuple[int, ...]
    """The depths ``L`` (residual blocks; multiples of ``stages``)."""
    width: int
    """The stem's channels (stages of ``width, 2 width, ...``)."""
    stages: int
    """The stages of the layout."""
    seeds: int
    """Networks per depth (one task each)."""
    lr: float
    """SGD's initial learning rate (cosine schedule)."""
    epochs: int
    """Epochs of training."""
    batch_size: int
    """The mini-batch size."""
    momentum: float
    """SGD's momentum."""
    weight_decay: float
    """SGD's weight decay."""
    augment: bool
    """Random crops and horizontal flips."""
    padding: int
    """The crops' padding."""
    beta: float
    """The initial scale of ``delta``: entries of standard deviation ``L^-beta / sqrt(9 c)``."""
    seed: int
    """The base seed."""
    dtype: str
    """The dtype, by name."""
    root: str | None = None
    """The directory of the CIFAR-10 files."""
    device: str | None = None
    """Where the tasks run (``None``: the CPU)."""

    def layout(self, depth: int) -> dict:
        from ...training import conv_layout

        return conv_layout(depth, self.width, self.stages)

    def tasks(self) -> list:
        """One task per depth and seed, the seeds in turn."""
        base = {k: v for k, v in self.to_dict().items() if k not in ("depths", "study")}
        n = len(self.depths)
        return [Task(f"scaling-conv/seed-{s:03d}/depth-{L:06d}", "scaling-conv-depth",
                     {**base, "depth": L, "seed_index": s}, chunk_seed(self.seed, s * n + i))
                for s in range(self.seeds) for i, L in enumerate(self.depths)]

    def progress_units(self, task) -> int:
        return 1

    def flops(self) -> int:
        """The floating-point operations of every task: per epoch, forward and backward (three
        forward passes) on the training split, and the final evaluation on both splits."""
        from ...data.augment import IMAGE_SHAPES
        from ..sizes import data_sizes

        n_train, n_test, _, _ = data_sizes(self.dataset, self.root)
        per = sum(conv_flops(IMAGE_SHAPES[self.dataset], self.layout(L)) for L in self.depths)
        return self.seeds * per * (3 * n_train * self.epochs + n_train + n_test)

    def seconds(self) -> float:
        """The time of every task in one process, at :data:`CONV_FLOPS_PER_SECOND` (2 CPU cores)."""
        return self.flops() / CONV_FLOPS_PER_SECOND

    def estimate(self) -> R_.Estimate:
        """Peak memory of the deepest task, tasks and trained networks (no allocation)."""
        from ...training.train import train_steps
        from ..sizes import data_sizes

        steps = train_steps(data_sizes(self.dataset, self.root)[0], self.batch_size, self.epochs, max(self.depths))
        n = self.seeds * len(self.depths)
        return R_.Estimate(self.task_bytes(max(self.depths)), n, n, 1, steps, R_.available_memory(self.device),
                           "configuration")

    def task_bytes(self, depth: int) -> int:
        """Peak bytes of the task at ``depth`` (:func:`.memory.conv_scaling_bytes`)."""
        from .memory import conv_scaling_bytes

        return conv_scaling_bytes(self, depth)

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> ConvScalingResult:
        records = sorted((r for res in results for r in res["records"]), key=lambda r: (r["depth"], r["seed"]))
        fam = conv_exponents([r for r in records if r["finite"]])
        return ConvScalingResult(self, records, fam["exponents"], fam["verdicts"], seconds)


@grouped
def plan_conv_scaling(*, dataset: str = "digits", depths: Sequence[int] = (4, 6, 8, 11, 16, 23, 32), seeds: int = 1,
                      beta: float = 0.5, root=None, network: Network = Network(width=16),
                      training: Training = Training(lr=0.1, epochs=30, batch_size=128),
                      conv: Conv = Conv(stages=1, momentum=0.9, weight_decay=5e-4, augment=True, padding=None),
                      compute: Compute = Compute(seed=0, dtype=torch.float32, device=None)) -> ConvScalingPlan:
    """Validate a convolutional scaling experiment (every check before any work): ``dataset``
    ``'digits'`` or ``'cifar10'`` (read from ``root``); ``depths``: at least two distinct
    multiples of ``stages``, each at least 3 blocks; ``stages``: the last stage's grid at least
    3 x 3; ``lr`` > 0, ``momentum`` in [0, 1), ``weight_decay`` >= 0;
    ``padding``: the crops' (default :func:`~deeplimits.data.augment.default_padding`); ``beta``
    >= 0; the deepest task's memory within the machine's (or the device's). ``network``
    (``width``: the stem's channels), ``training`` (``lr``, ``epochs``, ``batch_size``), ``conv``
    (``stages``, ``momentum``, ``weight_decay``, ``augment``, ``padding``), ``compute`` (``seed``,
    ``dtype``, ``device``): groups of :mod:`deeplimits.studies.settings`, or their fields as keywords."""
    from ...data.augment import IMAGE_SHAPES, default_padding
    from ...training import conv_layout
    from ...training.train import seed_limit
    from ..sizes import data_root

    dataset = V_.choice("dataset", dataset, ("digits", "cifar10"))
    depths = tuple(V_.sequence("depths", depths, lambda L: V_.integer("depths", L), what="a list of depths >= 1"))
    if len(depths) < 2 or len(set(depths)) != len(depths):
        raise ParameterError("depths", f"depths must hold at least two distinct depths, got {list(depths)}")
    if min(depths) < 3:
        raise ParameterError("depths", f"depths must be at least 3 blocks (the diagnostics along depth), got {list(depths)}")
    width, stages = V_.integer("width", network.width), V_.integer("stages", conv.stages)
    for L in depths:
        conv_layout(L, width, stages)
    smallest = min(IMAGE_SHAPES[dataset][1:]) >> (stages - 1)
    if smallest < 3:
        raise ParameterError("stages", f"stages must leave a grid of at least 3 x 3 for the 3 x 3 kernels' norms "
                                       f"({dataset}'s images at {stages} stages end at {smallest} x {smallest})")
    epochs = V_.integer("epochs", training.epochs)
    seeds = V_.integer("seeds", seeds, high=seed_limit(epochs) + 1)  # seed s shuffles with seed + s: below 2^63
    dtype = compute.dtype
    dtype = getattr(torch, dtype) if dtype in ("float32", "float64") else dtype  # a preset names it
    plan = ConvScalingPlan(dataset=dataset, depths=tuple(sorted(depths)), width=width, stages=stages, seeds=seeds,
                           lr=V_.real("lr", training.lr, low=0.0, low_open=True), epochs=epochs,
                           batch_size=V_.integer("batch_size", training.batch_size),
                           momentum=V_.real("momentum", conv.momentum, low=0.0, high=1.0, high_open=True),
                           weight_decay=V_.real("weight_decay", conv.weight_decay, low=0.0),
                           augment=V_.flag("augment", conv.augment),
                           padding=(default_padding(IMAGE_SHAPES[dataset]) if conv.padding is None
                                    else V_.integer("padding", conv.padding, low=0)),
                           beta=V_.real("beta", beta, low=0.0),
                           seed=V_.integer("seed", compute.seed, low=0, high=seed_limit(epochs) - (seeds - 1)),
                           dtype=str(V_.dtype(dtype)).replace("torch.", ""), root=data_root(dataset, root),
                           device=V_.device_spec(compute.device, dtype))
    R_.require_count(seeds * len(depths), R_.MAX_CONFIGS, f"seeds={seeds} x {len(depths)} depths make too many "
                     "trained networks", ("seeds", "depths"))
    from ...training.train import require_train_steps
    from ..sizes import data_sizes

    require_train_steps(data_sizes(dataset, plan.root)[0], plan.batch_size, epochs, plan.depths[-1], None,
                        ("epochs", "depths"))  # the 2^28 layer passes per task, as the dense study
    R_.require_memory(plan.task_bytes(plan.depths[-1]), f"per task at depth={plan.depths[-1]}, width={width}",
                      ("depths", "width", "batch_size"), device=plan.device)
    return plan


ConvScalingResult.plan_type = ConvScalingPlan
