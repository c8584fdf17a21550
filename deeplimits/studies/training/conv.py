"""Training grids of convolutional residual networks (``deeplimits train --arch conv``;
docs/training.md, "Convolutional networks"): the grid of :mod:`.study` (driver, Hurst
indices, betas, learning rates, seeds), resumable the same way (one task per chunk of
configurations of one ``beta``, trained as one batched
:class:`~deeplimits.training.ConvResidualNetwork`, its trained weights stored in the run
directory), with the published protocol of Cohen, Cont, Rossier & Xu (ICML 2021, §3.2):
cross-entropy, SGD with momentum 0.9 and weight decay 5e-4, a cosine schedule, random crops and
horizontal flips (:func:`~deeplimits.training.conv_train.train_conv`).

The layout is :func:`~deeplimits.training.conv_layout` ``(depth, width, stages)``: ``depth``
residual blocks spread evenly over ``stages`` stages of ``width, 2 width, ...`` channels
(``width = 64``, four stages: the published ResNet-18 layout, ``depth = 8``).
"""

from __future__ import annotations

import dataclasses
import time
from typing import ClassVar

import torch

from ... import _validate as V_
from ..._random import chunk_seed, io_seed, single_threaded_torch
from ...errors import ParameterError
from ...runs import register_task
from .memory import conv_training_bytes
from .._shared.conv import conv_threads
from ..plan import register_plan
from ..settings import Compute, Conv, Grid, Network, Training, grouped
from .trained import chunk_output
from .result import ConvTrainGridResult
from .study import TrainPlan, _best, plan_training

__all__ = ["ConvTrainPlan", "ConvTrainGridResult", "plan_conv_training", "conv_train_task", "conv_network",
           "init_conv_weights", "conv_training_bytes"]


@register_plan
@dataclasses.dataclass(frozen=True)
class ConvTrainPlan(TrainPlan):
    """A validated grid of convolutional networks (from :func:`plan_conv_training`). ``width`` is
    the stem's channels (and the first stage's), ``depth`` the number of residual blocks;
    ``activation`` is ``'relu'``, ``bias`` False (no bias in the blocks), ``optimizer``
    ``'sgd'`` and ``lr_decay_halfway`` False (the cosine schedule)."""

    study: ClassVar[str] = "train-conv"
    momentum: float = 0.9
    """SGD's momentum."""
    weight_decay: float = 5e-4
    """SGD's L2 weight decay."""
    augment: bool = True
    """Random crops and horizontal flips."""
    padding: int = 4
    """The crops' zero padding, in pixels."""
    stages: int = 4
    """The stages of the layout (channels doubling, strides 1, 2, 2, ...)."""

    def layout(self) -> dict:
        """The network's layout (:func:`~deeplimits.training.conv_layout`)."""
        from ...training import conv_layout

        return conv_layout(self.depth, self.width, self.stages)

    def tasks(self) -> list:
        """The chunks of :meth:`TrainPlan.tasks`, run by the convolutional task."""
        return [dataclasses.replace(t, fn="train-conv-chunk") for t in super().tasks()]

    def estimate_bytes(self, configs: int) -> int:
        """Peak bytes of a task training ``configs`` configurations (:func:`conv_training_bytes`)."""
        return conv_training_bytes(self, configs)

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> "ConvTrainGridResult":
        plain = super().summarise(tasks, results, seconds)
        return ConvTrainGridResult(self, plain.records, _best(plain.records), plain.seconds, plain.weights)


ConvTrainGridResult.plan_type = ConvTrainPlan


@grouped
def plan_conv_training(dataset: str = "digits", driver: str = "gaussian", *,
                       grid: Grid = Grid(hursts=None, betas=(0.5,), lrs=(0.1,), seeds=1),
                       network: Network = Network(depth=8, width=16), training: Training = Training(epochs=10,
                                                                                                 batch_size=128),
                       conv: Conv = Conv(stages=4, momentum=0.9, weight_decay=5e-4, augment=True, padding=None),
                       compute: Compute = Compute(seed=0, dtype=torch.float32, chunk=None, device=None),
                       length_scale: float | None = None, save_weights: bool = True, root=None) -> ConvTrainPlan:
    """Validate a grid of convolutional networks (every check before any work, as
    :func:`~deeplimits.studies.training.plan_training`) and return it.

    ``dataset``: an image data set (``digits``, ``mnist``, ``cifar10``; ``root`` for the files);
    ``network``: ``depth`` residual blocks, a multiple of ``conv.stages``, ``width`` the stem's
    channels; ``grid.lrs``: initial learning rates of the cosine schedule (published 0.1);
    ``conv``: ``momentum`` in [0, 1), ``weight_decay`` >= 0, ``augment``, ``padding`` the crops'
    padding (default :func:`~deeplimits.data.augment.default_padding`: 4 for CIFAR-10, 1 for the
    8 x 8 digits). The other arguments as for ``plan_training`` (groups of
    :mod:`deeplimits.studies.settings`, or their fields as keywords)."""
    from ...data.augment import IMAGE_SHAPES, default_padding
    from ...training import conv_layout

    if dataset not in IMAGE_SHAPES:
        raise ParameterError("dataset", f"dataset must be an image data set for arch 'conv' "
                                        f"({', '.join(IMAGE_SHAPES)}), got {dataset!r}")
    depth, width, stages = network.depth, network.width, conv.stages
    conv_layout(depth, width, stages)  # depth a multiple of the stages
    momentum = V_.real("momentum", conv.momentum, low=0.0, high=1.0, high_open=True)
    weight_decay = V_.real("weight_decay", conv.weight_decay, low=0.0)
    augment = V_.flag("augment", conv.augment)
    padding = (default_padding(IMAGE_SHAPES[dataset]) if conv.padding is None
               else V_.integer("padding", conv.padding, low=0))
    dense = plan_training(dataset, driver, grid=grid,
                          network=Network(arch="res-1", activation="relu", bias=False, depth=depth, width=width),
                          training=dataclasses.replace(training, optimizer="sgd", lr_decay_halfway=False),
                          compute=dataclasses.replace(compute, chunk=1), length_scale=length_scale,
                          save_weights=save_weights, root=root)  # the grid's checks; its memory model is replaced below
    fields = {f.name: getattr(dense, f.name) for f in dataclasses.fields(TrainPlan)}
    plan = ConvTrainPlan(**{**fields, "arch": "conv"}, momentum=momentum, weight_decay=weight_decay,
                         augment=augment, padding=padding, stages=stages)
    from ... import _resources as R_

    per_beta = plan.n_configs // len(plan.betas)
    chunk = None if compute.chunk is None else V_.integer("chunk", compute.chunk)
    chunk = R_.fit_chunk(plan.estimate_bytes, per_beta, chunk, per_beta,
                         f"(L={depth} blocks, width {width}, batch {training.batch_size})",
                         ("depth", "width", "batch_size"), device=plan.device, unit="configuration")
    return dataclasses.replace(plan, chunk=chunk)


def conv_network(params: dict, configs: int, data_shape, dtype, device):
    """The batched network of a task's parameters (the plan's layout)."""
    from ...training import ConvResidualNetwork, conv_layout

    lay = conv_layout(params["depth"], params["width"], params.get("stages", 4))
    return ConvResidualNetwork(data_shape, 10, lay["blocks"], stem=lay["stem"], channels=lay["channels"],
                               strides=lay["strides"], configs=configs, beta=params["beta"], dtype=dtype,
                               device=device)


@torch.no_grad()
def init_conv_weights(net, params: dict, configs: list[dict], seed: int):
    """Configuration ``c`` reads ``A`` and ``delta`` off its driver with the generator seeded
    ``chunk_seed(seed, init)`` and its stem, shortcuts and head from ``io_seed(seed, init)``: one
    initialisation is the same network for every learning rate (and ``beta`` but for the scale
    of ``delta``)."""
    from ...paths import driver_from_spec
    from ...training import init_from_driver

    for c, cfg in enumerate(configs):
        g = torch.Generator().manual_seed(chunk_seed(seed, cfg["init"]))
        init_from_driver(net, driver_from_spec({**params, "hurst": cfg["hurst"]}), generator=g, config=c)
        g_io = torch.Generator().manual_seed(io_seed(seed, cfg["init"]))
        for name, p in net.named_parameters():
            if name.endswith((".A", ".delta")):
                continue
            z = torch.randn(p.shape[1:], generator=g_io, dtype=p.dtype)
            p[c].copy_(0.0 * z if name == "head_bias" else z * net.initial_std(name, p))


@register_task("train-conv-chunk", reports_progress=True)
def conv_train_task(params: dict, seed: int, progress=None) -> dict:
    """Sweep task: train one chunk of configurations as one batched convolutional network."""
    from ...data import load_dataset
    from ...data.augment import IMAGE_SHAPES
    from ...training.conv_train import train_conv

    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    data = load_dataset(params["dataset"], root=params.get("root"), seed=seed, dtype=dtype, device=device)
    configs = params["configs"]
    net = conv_network(params, len(configs), IMAGE_SHAPES[params["dataset"]], dtype, device)
    init_conv_weights(net, params, configs, seed)
    t0 = time.perf_counter()
    with conv_threads(params, device):
        res = train_conv(net, data, lr=torch.tensor([c["lr"] for c in configs]), epochs=params["epochs"],
                         batch_size=params["batch_size"], momentum=params["momentum"],
                         weight_decay=params["weight_decay"], augment=params["augment"], padding=params["padding"],
                         seed=seed, progress=None if progress is None else (lambda n: progress(n * len(configs))))
    return chunk_output(params, configs, res, time.perf_counter() - t0, net)
