"""The memory model of the scaling study (:mod:`deeplimits.studies.memory` holds the shared
ones): the peak bytes of one depth's task, counted from the sizes alone."""

from __future__ import annotations

import torch

from ..memory import INTERPRETER_BYTES
from .presets import ARCH

__all__ = ["scaling_bytes"]


def scaling_bytes(plan, depth: int) -> int:
    """Peak bytes of :func:`~.task.scaling_task` at ``depth``, from the sizes alone: the data set
    (the synthetic points are drawn and their targets computed in float64, then split and
    converted: about six float64 copies) and the largest of its phases, each on top of the
    parameters (:func:`~deeplimits.training.modules.parameter_count`) and, after training,
    their gradients: training (:func:`~deeplimits.training.train.train_bytes`), the
    network rebuilt from the trend of its weights (a copy of the parameters and
    :func:`~deeplimits.diagnostics.trend_bytes` of ``W``, ``b``), the own-ODE error on up to
    256 inputs (:func:`~deeplimits.diagnostics.pair.own_ode_error_bytes`) and the weight
    diagnostics of one configuration (:func:`~deeplimits.diagnostics.measures.diagnostics_bytes`)
    beside the copies of ``W`` and ``|delta| W`` on the CPU; plus :data:`INTERPRETER_BYTES`.
    Every learning rate of the plan is a configuration of the task."""
    from ...diagnostics.measures import diagnostics_bytes
    from ...diagnostics.pair import own_ode_error_bytes
    from ...diagnostics.trend import trend_bytes
    from ...training.modules import activation_count, is_fused, parameter_count
    from ...training.train import train_bytes

    item = getattr(torch, plan.dtype).itemsize
    n_train, n_test, d_in, d_out = plan.data_sizes()
    L, d, C = depth, plan.width, len(plan.lr)
    arch = plan.arch or ARCH
    params = parameter_count(arch, L, d, d_in, d_out, configs=C, bias=True, delta=plan.delta)
    acts = activation_count(arch, is_fused(arch, plan.activation), L, d, min(plan.batch_size, n_train), C)
    kept = 2 * item * params  # the trained parameters and their last gradient
    trend = sum(trend_bytes((L, C, *s), item) for s in ((d, d), (d,))) if L >= 3 else 0
    phases = (train_bytes(params, acts, item),
              kept + item * params + trend,
              kept + own_ode_error_bytes(L, C, min(256, n_train), d, item),
              kept + 4 * L * C * d * d + diagnostics_bytes((L, d, d)))  # float32 copies of W, |delta| W
    data = (n_train + n_test) * (d_in + d_out) * (48 if plan.dataset == "synthetic" else item + 16)
    return data + max(phases) + INTERPRETER_BYTES
