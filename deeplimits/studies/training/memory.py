"""The memory models of the training grids (:mod:`deeplimits.studies.memory` holds the shared
:data:`~deeplimits.studies.memory.INTERPRETER_BYTES`): the peak bytes of one task, counted from the
sizes alone.

* :func:`training_bytes`: a chunk of configurations of a training grid (with :func:`init_bytes`,
  the initialisation of one configuration);
* :func:`conv_training_bytes`: a chunk of configurations of a convolutional grid (also the model of
  a task of :mod:`deeplimits.studies.scaling_conv`).
"""

from __future__ import annotations

import math

import torch

from ..memory import INTERPRETER_BYTES
from ..sizes import data_sizes

__all__ = ["training_bytes", "init_bytes", "conv_training_bytes", "ACTIVATIONS_PER_BLOCK"]


def training_bytes(plan, configs: int) -> int:
    """Peak bytes of a task training ``configs`` configurations: the larger of training
    (:func:`~deeplimits.training.train.train_bytes`: six copies of the parameters and the
    activations of one mini-batch) and initialisation (the parameters and the driver sample
    of one configuration's weights), plus the data set (its float64 arrays as loaded and
    split, its tensors) and :data:`INTERPRETER_BYTES`."""
    from ...paths import driver_from_spec
    from ...training.modules import activation_count, is_fused, parameter_count
    from ...training.train import train_bytes

    item = getattr(torch, plan.dtype).itemsize
    n_train, n_test, d_in, d_out = data_sizes(plan.dataset, plan.root)
    params = parameter_count(plan.arch, plan.depth, plan.width, d_in, d_out, configs=configs, bias=plan.bias)
    acts = activation_count(plan.arch, is_fused(plan.arch, plan.activation), plan.depth, plan.width,
                            min(plan.batch_size, n_train), configs)
    law = driver_from_spec(plan.driver_spec(plan.hursts[0]))  # the first H axis point's driver
    init = item * params + init_bytes(law, plan.arch, plan.bias, plan.depth, plan.width,
                                      getattr(torch, plan.dtype))
    data = (n_train + n_test) * (d_in + d_out) * (item + 16)
    return max(train_bytes(params, acts, item), init) + data + INTERPRETER_BYTES


def init_bytes(law, arch: str, bias: bool, depth: int, width: int, dtype: torch.dtype) -> int:
    """Peak bytes of drawing one configuration's residual weights (:func:`.trained.init_weights`)
    off the driver ``law`` (a :class:`~deeplimits.paths.Driver`): a sample per weight tensor of the
    block (``V``, ``W``; its optional ones, ``inside``'s bias, only with ``bias``:
    :meth:`~deeplimits.paths.Driver.sample_bytes`) and its
    layers read at once (the first ``depth`` of ``resolution`` when ``depth`` does not divide it)."""
    from ...training.init import resolution_for

    res = resolution_for(law, depth)
    layers = depth if res is None or res % depth == 0 else res
    from ...blocks import make_block

    block = make_block(arch)  # a res-* network's bias (outside the block) starts at 0
    shapes = [block.shape(nm, width) for nm in block.weights if bias or nm not in block.optional]
    return sum(law.sample_bytes(s, 1, res, dtype) + 2 * dtype.itemsize * layers * math.prod(s) for s in shapes)


ACTIVATIONS_PER_BLOCK = 8
"""Activations kept per block of a convolutional network, per image and per output channel and
pixel, for the backward pass (the two convolutions' inputs and outputs, the ReLUs, the skip and
the sum)."""


def conv_training_bytes(plan, configs: int) -> int:
    """Peak bytes of a task of ``configs`` configurations: four copies of the parameters (them,
    their gradient, the momentum and a temporary), :data:`ACTIVATIONS_PER_BLOCK` activations per
    block output on one mini-batch (and the stem's), the data set and the interpreter
    (``plan``: a :class:`~deeplimits.studies.training.conv.ConvTrainPlan`)."""
    from ...data.augment import IMAGE_SHAPES
    from ...training.conv import _blocks, conv_parameter_count

    item = getattr(torch, plan.dtype).itemsize
    n_train, n_test, d_in, _ = data_sizes(plan.dataset, plan.root)
    shape, lay = IMAGE_SHAPES[plan.dataset], plan.layout()
    params = conv_parameter_count(shape, 10, lay["blocks"], lay["stem"], lay["channels"], lay["strides"], configs)
    batch, (h, w), acts = min(plan.batch_size, n_train), shape[1:], 0
    for _, cout, stride, _ in _blocks(lay["stem"], lay["channels"], lay["strides"], lay["blocks"]):
        h, w = (h - 1) // stride + 1, (w - 1) // stride + 1
        acts += ACTIVATIONS_PER_BLOCK * cout * h * w
    acts = configs * batch * (acts + 2 * lay["stem"] * shape[1] * shape[2])
    data = (n_train + n_test) * (d_in + 1) * (item + 16)
    return item * (4 * params + acts) + data + INTERPRETER_BYTES
