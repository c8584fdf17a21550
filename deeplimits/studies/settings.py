"""The settings groups of the studies: value objects in place of wide signatures.

A plan function takes its settings by group: ``plan_training("digits", network=Network(arch="res-2",
depth=8), training=Training(epochs=2), compute=Compute(seed=1))``; a field left unset takes the
study's default (its signature shows the study's groups of defaults), and a study refuses a
field it does not take (one line naming it). For compatibility the fields are also accepted as
flat keywords (``plan_training(arch="res-2", depth=8, epochs=2)``), never both for one field
(:func:`~deeplimits._settings.grouped`). A study's convenience function runs its plan with an
:class:`Execution`: ``train_grid(..., execution=Execution(store=store, workers=2))`` is
``Execution(store=store, workers=2).run(plan_training(...))``.

The groups: :class:`Network` (the networks), :class:`Training` (how they train),
:class:`Decision` (the margin of an agreement, the budget of a run sized to decide),
:class:`Grid` (a training grid), :class:`Conv` (convolutional networks and their protocol),
:class:`ScalingProtocol` (the scaling experiment's published protocol), :class:`Compute` (seed,
dtype, device, chunk) and :class:`Execution` (how a plan's tasks run). Torch-free.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from .._settings import DEFAULT, REQUIRED, Group, Training, defaults, group, grouped

__all__ = ["DEFAULT", "REQUIRED", "Group", "grouped", "group", "defaults", "Network", "Training", "Grid", "Conv",
           "ScalingProtocol", "Compute", "Execution", "Decision"]


@dataclasses.dataclass(frozen=True, repr=False)
class Network(Group):
    """The networks of a study (a field left at :data:`DEFAULT` takes the study's default)."""

    arch: str | None = DEFAULT
    """The residual map: a registered block's name (``'res-1'``, ``'res-2'``, ``'res-3'``, ``'inside'``, or
    one of your own)."""
    activation: object = DEFAULT
    """The activation, by name (``None``: the architecture's default)."""
    bias: bool | None = DEFAULT
    """Whether the networks have biases."""
    depth: int = DEFAULT
    """The depth ``L`` (residual blocks of a convolutional network)."""
    width: int | None = DEFAULT
    """The width ``d`` (a convolutional network's stem channels)."""


@dataclasses.dataclass(frozen=True, repr=False)
class Decision(Group):
    """How a verdict is decided (docs/schemes.md, "A run sized to decide")."""

    margin: float = DEFAULT
    """An ``agrees`` needs the leading exponent within this of the declared one (default 0.1)."""
    budget: float | None = DEFAULT
    """Seconds a run may grow its draws in stages until the verdict is decided (``None``: one run)."""


@dataclasses.dataclass(frozen=True, repr=False)
class Grid(Group):
    """The grid of a training study: ``(H, beta, lr, seed)`` configurations."""

    hursts: tuple | None = DEFAULT
    """The Hurst indices (fractional weights only; ``None`` for the other laws)."""
    betas: tuple = DEFAULT
    """The scaling exponents ``beta``."""
    lrs: tuple = DEFAULT
    """The learning rates."""
    seeds: int = DEFAULT
    """Independent initialisations per grid point."""


@dataclasses.dataclass(frozen=True, repr=False)
class Conv(Group):
    """Convolutional residual networks and the published protocol of Cohen et al. (ICML 2021, §3.2)."""

    stages: int = DEFAULT
    """The stages of the layout (channels doubling, strides 1, 2, 2, ...)."""
    momentum: float = DEFAULT
    """SGD's momentum, in [0, 1)."""
    weight_decay: float = DEFAULT
    """SGD's L2 weight decay, >= 0."""
    augment: bool = DEFAULT
    """Random crops and horizontal flips."""
    padding: int | None = DEFAULT
    """The crops' zero padding in pixels (``None``: :func:`~deeplimits.data.augment.default_padding`)."""


@dataclasses.dataclass(frozen=True, repr=False)
class ScalingProtocol(Group):
    """The training protocol of the scaling experiment (:func:`~deeplimits.studies.scaling.study.plan_scaling`):
    the published code's choices and the paper's."""

    loss: str = DEFAULT
    """``'mse'`` (``torch.nn.MSELoss()``) or ``'squared'``: the convention of ``stop_loss``."""
    init_scale: float = DEFAULT
    """The initial weights' scale (entries of order ``init_scale / (L d)``)."""
    init_method: str = DEFAULT
    """``'xavier-depth'`` or ``'xavier'`` (without the ``1/L``)."""
    delta_init: str | None = DEFAULT
    """``'constant'`` (``1/L``) or ``'normal'`` (``N(0, 1/L^2)`` per layer); ``None``: the published code's."""
    bias_init: str = DEFAULT
    """``'zero'`` or ``'normal'``."""
    inputs: str = DEFAULT
    """The synthetic task's inputs, ``'cube'`` or ``'sphere'``."""
    angle_start: int = DEFAULT
    """The synthetic task's first angle index, 1 or 0."""
    batches: str = DEFAULT
    """``'shuffled'``, ``'published'`` or ``'collapsed'``."""
    stop_rule: str = DEFAULT
    """``'evaluated'`` or ``'running'``."""


@dataclasses.dataclass(frozen=True, repr=False)
class Compute(Group):
    """How a study computes: its seed, dtype, device and task size."""

    seed: int = DEFAULT
    """The base seed."""
    dtype: object = DEFAULT
    """``torch.float32`` or ``torch.float64`` (or their names)."""
    device: object = DEFAULT
    """Where the tasks run (``None``: the CPU)."""
    chunk: int | None = DEFAULT
    """Draws or configurations per task (``None``: as many as fit in memory)."""


@dataclasses.dataclass(frozen=True, repr=False)
class Execution(Group):
    """How a plan's tasks run (the arguments of :meth:`~deeplimits.studies.plan.Plan.run`)."""

    progress: Callable[[int], None] | None = None
    """Called with the units of work done (``None``: no report)."""
    store: object = None
    """A :class:`~deeplimits.runs.RunStore`: finished tasks are kept there and not run again."""
    workers: int | None = None
    """Local Dask workers (``None``: this process)."""
    scheduler: str | None = None
    """The address of a running Dask scheduler."""
    timeout: float | None = None
    """Seconds to wait for the Dask cluster."""

    def run(self, plan):
        """Run ``plan`` (:meth:`~deeplimits.studies.plan.Plan.run`) this way and return its result."""
        return plan.run(self.progress, store=self.store, workers=self.workers, scheduler=self.scheduler,
                        timeout=self.timeout)
