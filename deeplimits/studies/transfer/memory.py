"""The memory and time models of the transfer study: one task's peak bytes and every task's
seconds, counted from the sizes alone."""

from __future__ import annotations

import torch

from ..memory import INTERPRETER_BYTES
from .presets import COORD_SAMPLES, DEFAULTS

__all__ = ["transfer_bytes", "transfer_seconds", "limit_seconds", "limit_bytes", "transfer_task_bytes", "conv_transfer_bytes"]


def transfer_bytes(plan) -> int:
    """Peak bytes of one task of a transfer study (``plan``: a
    :class:`~deeplimits.studies.transfer.study.TransferPlan`): the training state
    (:func:`~deeplimits.training.train.train_bytes`) of the largest grid at the deepest depth,
    the coordinate check's hidden states before and after (float64), the data, and
    :data:`INTERPRETER_BYTES`."""
    from ...training.modules import activation_count, is_fused, parameter_count
    from ...training.train import train_bytes

    L, d = max(plan.depths), plan.width
    C = max(plan.configs(b, o) for b in plan.betas for o in plan.optimizers)
    item = getattr(torch, plan.dtype).itemsize
    n_in, classes, n = _data_sizes(plan)
    batch = min(plan.batch_size, plan.samples)
    if plan.model is not None:  # a user's module: its numbers, eight activations of each block's width per layer
        from .user import module_sizes

        per, d = module_sizes(plan, L)
        params, acts = C * per, 8 * C * batch * d * L
    else:
        arch, act = plan.arch or DEFAULTS["arch"], plan.activation or DEFAULTS["activation"]
        params = parameter_count(arch, L, d, n_in, classes, configs=C)
        acts = activation_count(arch, is_fused(arch, act), L, d, batch, C)
    states = 2 * 8 * (L + 1) * plan.seeds * COORD_SAMPLES * d
    return train_bytes(params, acts, item) + states + 8 * n * n_in + INTERPRETER_BYTES


def _data_sizes(plan) -> tuple[int, int, int]:
    """``(features, classes, samples)`` of the plan's data: the user's, or digits' 64, 10 and 1797."""
    if plan.data is None:
        return 64, 10, 1797
    from .user import registered_data

    d = registered_data(plan.data, plan.data_sha256)
    return d.x_train.shape[1], d.classes, len(d.x_train) + len(d.x_test)


#: CPU seconds per configuration-sample through one layer, forward and backward (measured with
#: the cpu preset on 2 shared cores, benchmarks/RESULTS.md)
SECONDS_PER_CONFIG_SAMPLE_LAYER = 6e-8
#: seconds per mini-batch step besides the layers (the loop, the optimiser, the records)
SECONDS_PER_BATCH = 2e-3


def transfer_seconds(plan) -> float:
    """Seconds of every task in one process: per task, its configurations x training samples x
    depth x epochs at :data:`SECONDS_PER_CONFIG_SAMPLE_LAYER` (width ``d`` scaled from 16 by
    ``(d / 16)^2``) plus :data:`SECONDS_PER_BATCH` per mini-batch and a second of set-up."""
    batches = -(-plan.samples // plan.batch_size) * plan.epochs
    total, width = 0.0, plan.width
    if plan.model is not None:  # a user's module: the width of its blocks
        from .user import module_sizes

        width = module_sizes(plan, min(plan.depths))[1]
    for b in plan.betas:
        for o in plan.optimizers:
            work = plan.configs(b, o) * plan.samples * plan.epochs * sum(plan.depths) * max(1.0, (width / 16) ** 2)
            total += work * SECONDS_PER_CONFIG_SAMPLE_LAYER + len(plan.depths) * (batches * SECONDS_PER_BATCH + 1.0)
    return total


def limit_bytes(plan) -> int:
    """Peak bytes of one limit task: the reference's training state at the plan's seeds, and the
    snapshots (before training and at each of :func:`limit_checkpoints`) of the weights and
    states on the finest depth's grid of the reference and of the deepest member, all held at
    once, and four temporaries of the distances (float64; the cpu preset with ``limit = 512``:
    1753 MiB measured for one task in a process of its own, 1796 MiB for the whole run)."""
    from ...training.modules import activation_count, is_fused, parameter_count
    from ...training.train import train_bytes
    from .limit import limit_checkpoints

    if plan.limit is None:
        return 0
    R, d, S, F, n = plan.limit, plan.width, plan.seeds, max(plan.depths), plan.samples
    arch, act = plan.arch or DEFAULTS["arch"], plan.activation or DEFAULTS["activation"]
    n_in, classes, _ = _data_sizes(plan)
    params = parameter_count(arch, R, d, n_in, classes, configs=S)
    acts = activation_count(arch, is_fused(arch, act), R, d, min(plan.batch_size, n), S)
    snaps = (2 * len(limit_checkpoints(plan.epochs)) + 6) * 8 * S * ((F + 1) * n * d + F * d * d)
    return train_bytes(params, acts, torch.float64.itemsize) + snaps + INTERPRETER_BYTES


def transfer_task_bytes(plan) -> int:
    """Peak bytes of the largest task of a transfer plan: a grid (:func:`transfer_bytes`) or, with
    ``limit``, a family trained for the limit beside it (:func:`limit_bytes`)."""
    return max(transfer_bytes(plan), limit_bytes(plan))


def conv_transfer_bytes(plan, chunk: int) -> int:
    """Peak bytes of a task of the convolutional transfer study with ``chunk`` seeds at the deepest
    depth (:func:`~deeplimits.studies.training.memory.conv_training_bytes` of its configurations)."""
    from .._shared.conv import Sized
    from ..training.memory import conv_training_bytes

    per_seed = max(plan.configs(b, o) for b in plan.betas for o in plan.optimizers) // plan.seeds
    return conv_training_bytes(Sized(plan, max(plan.depths)), per_seed * chunk)


def limit_seconds(plan) -> float:
    """Seconds of the limit tasks in one process on 2 CPU cores, by the grid's rates
    (:func:`transfer_seconds`): every depth and the reference trained once per seed, a second of set-up each."""
    from .limit import limit_settings

    batches = -(-plan.samples // plan.batch_size) * plan.epochs
    layers = sum(plan.depths) + (plan.limit or 0)
    work = plan.seeds * plan.samples * plan.epochs * layers * max(1.0, (plan.width / 16) ** 2)
    per = work * SECONDS_PER_CONFIG_SAMPLE_LAYER + (len(plan.depths) + 1) * (batches * SECONDS_PER_BATCH + 1.0)
    return len(limit_settings(plan)) * per
