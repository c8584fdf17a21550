"""What the convolutional studies share (training grids, scaling, transfer): the floating-point
operations of a pass (:func:`conv_flops`) and their rate on this machine, a plan read at one depth
by a memory model (:class:`Sized`), and one intra-op thread for small activations (:func:`conv_threads`)."""

from __future__ import annotations

import dataclasses

import torch

from ..._random import single_threaded_torch

__all__ = ["CONV_FLOPS_PER_SECOND", "conv_flops", "Sized", "ONE_THREAD_BELOW", "conv_threads"]

CONV_FLOPS_PER_SECOND = 1.5e10
"""The floating-point operations per second of the conv training tasks on the project's 2-core
CPU under load, one thread: 1.8e10 measured over the cpu preset's tasks at 15 epochs (3.93e12
operations in 213 s; benchmarks/RESULTS.md), rounded down: the time estimate's rate."""


def conv_flops(image_shape, layout: dict) -> int:
    """The floating-point operations of one forward pass of one image (two per multiply-add)."""
    from ...training.conv import _blocks

    c, h, w = image_shape
    flops = 2 * layout["stem"] * c * 9 * h * w
    for cin, cout, stride, _ in _blocks(layout["stem"], layout["channels"], layout["strides"], layout["blocks"]):
        h, w = (h - 1) // stride + 1, (w - 1) // stride + 1
        flops += 2 * h * w * cout * (9 * cin + 9 * cout + (cin if (cin != cout or stride != 1) else 0))
    return flops


@dataclasses.dataclass(frozen=True)
class Sized:
    """The fields of a training plan that its memory model reads, at one depth."""

    plan: object
    """The plan (a convolutional training or scaling plan)."""
    depth: int
    """The depth its memory model is read at."""

    def __getattr__(self, name):
        return getattr(self.plan, name)

    def layout(self):
        """The plan's layout at :attr:`depth`."""
        return self.plan.layout(self.depth)


ONE_THREAD_BELOW = 1 << 17
"""Numbers per activation (batch x stem channels x pixels) below which a CPU task runs on one
thread: 16 channels on 8 x 8 digits trained 2 to 8 times faster on one thread than on two on
the project's shared 2-core machine (benchmarks/RESULTS.md)."""


def conv_threads(params: dict, device):
    """One intra-op thread on the CPU for small activations (:data:`ONE_THREAD_BELOW`)."""
    from ...data.augment import IMAGE_SHAPES

    _, h, w = IMAGE_SHAPES[params["dataset"]]
    numbers = params["batch_size"] * params["width"] * h * w
    return single_threaded_torch(torch.device(device).type == "cpu" and numbers < ONE_THREAD_BELOW)
