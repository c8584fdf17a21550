"""The memory and time models of the transfer study: one task's peak bytes and every task's
seconds, counted from the sizes alone."""

from __future__ import annotations

import torch

from ..memory import INTERPRETER_BYTES
from .cases import COORD_SAMPLES

__all__ = ["transfer_bytes", "transfer_seconds"]


def transfer_bytes(plan) -> int:
    """Peak bytes of one task of a transfer study (``plan``: a
    :class:`~deeplimits.studies.transfer.study.TransferPlan`): the training state
    (:func:`~deeplimits.training.train.train_bytes`) of the largest grid at the deepest depth,
    the coordinate check's hidden states before and after (float64), the data, and
    :data:`INTERPRETER_BYTES`."""
    from ...training.modules import activation_count, parameter_count
    from ...training.train import train_bytes

    L, d = max(plan.depths), plan.width
    C = max(plan.configs(b, o) for b in plan.betas for o in plan.optimizers)
    item = getattr(torch, plan.dtype).itemsize
    params = parameter_count("res-1", L, d, 64, 10, configs=C)
    acts = activation_count("res-1", True, L, d, min(plan.batch_size, plan.samples), C)
    states = 2 * 8 * (L + 1) * plan.seeds * COORD_SAMPLES * d
    return train_bytes(params, acts, item) + states + 8 * 1797 * 64 + INTERPRETER_BYTES


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
    total = 0.0
    for b in plan.betas:
        for o in plan.optimizers:
            work = plan.configs(b, o) * plan.samples * plan.epochs * sum(plan.depths) * max(1.0, (plan.width / 16) ** 2)
            total += work * SECONDS_PER_CONFIG_SAMPLE_LAYER + len(plan.depths) * (batches * SECONDS_PER_BATCH + 1.0)
    return total
