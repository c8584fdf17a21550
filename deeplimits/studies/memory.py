"""The memory models of the studies, in one place (issue 22): the peak bytes of one task of each
study, counted from the sizes alone (no allocation), which the plans' ``estimate()`` report and
their chunk rules fit to the machine (:mod:`deeplimits._resources`).

* :func:`convergence_bytes`: a chunk of draws of a strong-error study;
* :func:`scheme_order_bytes`: a chunk of draws of :func:`~deeplimits.strong_order`;
* :func:`training_bytes`: a chunk of configurations of a training grid (with :func:`init_bytes`,
  the initialisation of one configuration).

A study in its own package keeps its model there, on top of :data:`INTERPRETER_BYTES`
(:mod:`deeplimits.studies.propagation.memory`, :mod:`deeplimits.studies.scaling.memory`,
:mod:`deeplimits.studies.trained_limit.memory`).

Every model counts bytes as ``entries x itemsize`` of the study's dtype (float64 for the
statistics computed in double precision). The training models add 64 MiB for the interpreter's
and the allocator's own, which their measured peaks include (tests/test_size_limits.py); the
draw models are compared with the growth of a task's memory, which does not
(tests/test_resources.py), and add nothing.
"""

from __future__ import annotations

import math

import torch

from ..networks import weight_names, weight_shape
from .sizes import data_sizes

__all__ = ["conv_training_bytes", "ACTIVATIONS_PER_BLOCK", "convergence_bytes", "scheme_order_bytes",
           "training_bytes", "init_bytes",
           "INTERPRETER_BYTES"]

INTERPRETER_BYTES = 64 << 20
"""The interpreter's and the allocator's own memory, added by the training models (see above)."""


def convergence_bytes(p, n: int, inputs: int, reference: int, depths, item: int, device=None) -> int:
    """Peak bytes of :func:`~.strong_error.run_chunk` on ``n`` draws (see :mod:`deeplimits._resources`).

    * each driver as it counts itself (:meth:`~deeplimits.paths.Driver.sweep_bytes`, ``n x entries``
      numbers): fractional weights hold the fGn of every entry on the finest grid, ``reference x n
      x d^2`` numbers, at its peak inside :func:`~deeplimits.paths.fgn`, then a chunk of scaled
      increments and its tree of pairwise sums; Brownian weights are streamed (blocks of
      ``_BLOCK_ELEMENTS`` numbers, the block in use, the one drawn ahead and their trees of pairwise
      sums); smooth weights hold their spectral coefficients (``2M`` per entry) and values at a
      chunk of times; each adds one accumulated increment per depth;
    * states: the reference, the input and a state and two error maps per depth, ``n x inputs x d``
      each; the adaptive ODE references keep the solution at ``reference + 1`` times.
    """
    total = 0
    for name, drv in p.drivers.items():
        total += drv.sweep_bytes(n * math.prod(p._weight_layout(name)[0]), reference, len(depths), item, device)
    per_state = item * n * inputs * p.width
    total += per_state * (4 * len(depths) + 10)
    if not p.rough:
        total += 3 * per_state * (reference + 1)
    return int(total)


def scheme_order_bytes(n: int, d: int, noise: int, reference: int, depths, item: int, driver,
                       milstein: bool = False, device=None) -> int:
    """Peak bytes of a chunk of :func:`~.scheme_order.strong_order` on ``n`` draws: the ``driver``
    (a :class:`~deeplimits.paths.Driver`) as :func:`convergence_bytes` counts it (``noise`` entries),
    the states (``4 len(depths) + 10`` of ``n x d``) and a step of a shipped scheme: its diffusion
    ``(n, d, noise)`` and the einsum over it (three of them), and for Milstein the derivatives
    ``(noise, n, d, noise)`` twice."""
    total = driver.sweep_bytes(n * noise, reference, len(depths), item, device)
    total += item * n * d * (4 * len(depths) + 10) + 3 * item * n * d * noise
    if milstein:
        total += 2 * item * noise * n * d * noise
    return int(total)


def training_bytes(plan, configs: int) -> int:
    """Peak bytes of a task training ``configs`` configurations: the larger of training
    (:func:`~deeplimits.training.train.train_bytes`: six copies of the parameters and the
    activations of one mini-batch) and initialisation (the parameters and the driver sample
    of one configuration's weights), plus the data set (its float64 arrays as loaded and
    split, its tensors) and :data:`INTERPRETER_BYTES`."""
    from ..paths import driver_from_spec
    from ..training.modules import activation_count, is_fused, parameter_count
    from ..training.train import train_bytes

    item = getattr(torch, plan.dtype).itemsize
    n_train, n_test, d_in, d_out = data_sizes(plan.dataset, plan.root)
    params = parameter_count(plan.arch, plan.depth, plan.width, d_in, d_out, configs=configs, bias=plan.bias)
    acts = activation_count(plan.arch, is_fused(plan.arch, plan.activation), plan.depth, plan.width,
                            min(plan.batch_size, n_train), configs)
    law = driver_from_spec({**plan.to_dict(), "hurst": plan.hursts[0]})  # the first H axis point's driver
    init = item * params + init_bytes(law, plan.arch, plan.bias, plan.depth, plan.width,
                                      getattr(torch, plan.dtype))
    data = (n_train + n_test) * (d_in + d_out) * (item + 16)
    return max(train_bytes(params, acts, item), init) + data + INTERPRETER_BYTES


def init_bytes(law, arch: str, bias: bool, depth: int, width: int, dtype: torch.dtype) -> int:
    """Peak bytes of drawing one configuration's residual weights (:func:`.trained.init_weights`)
    off the driver ``law`` (a :class:`~deeplimits.paths.Driver`): a sample per weight tensor (``V``,
    ``W``; the bias only for ``inside``, :meth:`~deeplimits.paths.Driver.sample_bytes`) and its
    layers read at once (the first ``depth`` of ``resolution`` when ``depth`` does not divide it)."""
    from ..training.init import resolution_for

    res = resolution_for(law, depth)
    layers = depth if res is None or res % depth == 0 else res
    shapes = [weight_shape(nm, width) for nm in weight_names(arch, bias)]  # a res-* network's bias starts at 0
    return sum(law.sample_bytes(s, 1, res, dtype) + 2 * dtype.itemsize * layers * math.prod(s) for s in shapes)


ACTIVATIONS_PER_BLOCK = 8
"""Activations kept per block of a convolutional network, per image and per output channel and
pixel, for the backward pass (the two convolutions' inputs and outputs, the ReLUs, the skip and
the sum)."""


def conv_training_bytes(plan, configs: int) -> int:
    """Peak bytes of a task of ``configs`` configurations: four copies of the parameters (them,
    their gradient, the momentum and a temporary), :data:`ACTIVATIONS_PER_BLOCK` activations per
    block output on one mini-batch (and the stem's), the data set and the interpreter
    (``plan``: a :class:`~deeplimits.studies.conv_training.ConvTrainPlan`)."""
    from ..data.augment import IMAGE_SHAPES
    from ..training.conv import _blocks, conv_parameter_count

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
