"""The memory model of the scaling study of convolutional networks (:mod:`deeplimits.studies.memory`
holds what the models share): the peak bytes of one depth's task, counted from the sizes alone."""

from __future__ import annotations

__all__ = ["conv_scaling_bytes"]


def conv_scaling_bytes(plan, depth: int) -> int:
    """Peak bytes of the task of ``plan`` (a :class:`~.study.ConvScalingPlan`) at ``depth``: the
    training of one convolutional network (:func:`~deeplimits.studies.training.memory.conv_training_bytes`)."""
    from .._shared.conv import Sized
    from ..training.memory import conv_training_bytes

    return conv_training_bytes(Sized(plan, depth), 1)
