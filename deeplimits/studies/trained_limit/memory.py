"""The memory model of the trained-limit study (:mod:`deeplimits.studies.memory` holds the
shared ones): the peak bytes of one task, counted from the sizes alone."""

from __future__ import annotations

import torch

from ..memory import INTERPRETER_BYTES

__all__ = ["trained_limit_bytes"]


def trained_limit_bytes(plan) -> int:
    """Peak bytes of one task of a trained-limit study (``plan``: a
    :class:`~deeplimits.studies.trained_limit.study.TrainedLimitPlan`): the reference's training state
    (:func:`~deeplimits.training.train.train_bytes` of ``chunk`` configurations at depth
    ``reference``) and its snapshots on the grid of the finest depth (weights and states in
    float64, one per checkpoint and epoch 0), plus :data:`INTERPRETER_BYTES`."""
    import math

    from ...blocks import make_block
    from ...training.modules import activation_count, is_fused, parameter_count
    from ...training.train import train_bytes

    d, C, R, F, n = plan.width, plan.chunk, plan.reference, max(plan.depths), plan.n_train()
    entries = {a: sum(math.prod(b.shape(nm, d)) for nm in b.required)
               for a, b in ((plan.family(c)["arch"], make_block(plan.family(c)["arch"])) for c in plan.cases)}
    arch = max(entries, key=entries.get)  # the case whose layers hold the most numbers
    item = getattr(torch, plan.dtype).itemsize
    params = parameter_count(arch, R, d, d, d, configs=C)
    acts = max(activation_count(plan.family(c)["arch"], is_fused(plan.family(c)["arch"], plan.family(c)["activation"]), R, d,
                                min(plan.batch_size or n, n), C) for c in plan.cases)
    snaps = (len(plan.checkpoints) + 2) * 8 * C * ((F + 1) * n * d + F * entries[arch])
    return train_bytes(params, acts, item) + snaps + INTERPRETER_BYTES
