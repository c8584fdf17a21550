"""The memory and time models of the shapes study (docs/shapes.md, "Cost"): the peak bytes of one
task and its seconds, counted from the sizes alone (no allocation), and the cost of one training step.

A batch of ``B`` networks of depth ``L`` padded to ``(D, M)`` holds its parameters ``2 B L D M``
(``U``, ``V``: trained in place, layer by layer), its states and pre-activations for the backward
pass and the target paths of one step (``(L + 1) B D`` each, twice for the error's difference),
the pre-activations ``L B M``, and per layer a few vectors; a padded slot's weights are drawn into
one slot-sized block before they are copied in (an unpadded slot is drawn in place). The tanh
reference network of every run of the chunk is held beside them, with its states at every step.
"""

from __future__ import annotations

__all__ = ["batch_entries", "step_bytes", "task_bytes", "task_seconds", "task_layer_steps", "gpu_seconds",
           "SECONDS_PER_ENTRY_STEP", "SECONDS_PER_LAYER_STEP", "SECONDS_PER_DRAW", "GPU_BYTES_PER_SECOND",
           "GPU_SECONDS_PER_LAYER_STEP"]

SECONDS_PER_ENTRY_STEP = 7e-9
"""CPU seconds per padded entry ``(slot, layer, d, m)`` of a batch and recorded step, forward and
backward with the update, float64 on one thread (benchmarks/bench_shapes.py; float32 about half)."""
SECONDS_PER_LAYER_STEP = 3.5e-5
"""CPU seconds of a batch's fixed work per layer and pass (forward, or backward with the update)."""
SECONDS_PER_DRAW = 1e-8
"""CPU seconds per weight drawn."""
GPU_BYTES_PER_SECOND = 1.5e12
"""An assumed rate of one GPU on these batched matrix-vector products (memory-bound: a few passes over
the parameters per step), in bytes per second."""
GPU_SECONDS_PER_LAYER_STEP = 1.5e-4
"""An assumed fixed cost of a batch per layer and pass on a GPU (its kernel launches)."""


def batch_entries(batch) -> tuple[int, int, int]:
    """``(slots, max D, max M)`` of a batch of slots ``(M, D, run)`` (:func:`~.task.batches`)."""
    return len(batch), max(d for _, d, _ in batch), max(m for m, _, _ in batch)


def step_bytes(depth: int, slots: int, dim: int, width: int, item: int, padded: bool = True) -> int:
    """Peak bytes of training one batch (module docstring), in ``item``-byte numbers."""
    params = 2 * slots * depth * dim * width
    states = 4 * (depth + 1) * slots * dim + depth * slots * width + 8 * slots * (dim + width)
    draw = depth * dim * width if padded else 0
    return item * (params + states + draw)


def _reference_bytes(plan, item: int) -> int:
    if plan.reference is None:
        return 0
    L, M, D = plan.reference
    return step_bytes(L, plan.chunk, D, M, item, padded=False) + item * plan.steps * (L + 1) * plan.chunk * D


def task_bytes(plan) -> int:
    """Peak bytes of the plan's largest task: its largest batch (:func:`~.task.batches`) and, for the
    tanh case, the reference networks of a chunk of runs, plus the interpreter's."""
    import torch

    from ..memory import INTERPRETER_BYTES
    from .task import batches

    item = getattr(torch, plan.dtype).itemsize
    worst = 0
    for L in plan.depths:
        for batch in batches(plan.widths, plan.dims, plan.chunk, L, plan.cap, plan.small):
            slots, D, M = batch_entries(batch)
            padded = any((m, d) != (M, D) for m, d, _ in batch)
            worst = max(worst, step_bytes(L, slots, D, M, item, padded=padded))
    return worst + _reference_bytes(plan, item) + INTERPRETER_BYTES


def task_layer_steps(plan, depth: int) -> int:
    """Sequential layer passes of one task at ``depth``: forward and backward, every recorded step, every batch."""
    from .task import batches

    return 2 * plan.steps * depth * len(batches(plan.widths, plan.dims, plan.chunk, depth, plan.cap, plan.small))


def task_seconds(plan, depth: int, runs: int, rates: tuple | None = None) -> float:
    """Seconds of one task at ``depth`` for ``runs`` runs, the tanh reference included: ``rates``
    ``(per entry and step, per layer and pass, per weight drawn)``, by default the CPU's on one thread
    (:data:`SECONDS_PER_ENTRY_STEP` halved in float32, :data:`SECONDS_PER_LAYER_STEP`, :data:`SECONDS_PER_DRAW`)."""
    from .task import batches

    f32 = 0.5 if plan.dtype == "float32" else 1.0
    entry, layer, draw = rates or (SECONDS_PER_ENTRY_STEP * f32, SECONDS_PER_LAYER_STEP, SECONDS_PER_DRAW)
    cells = [(depth, batch_entries(b), sum(m * d for m, d, _ in b))
             for b in batches(plan.widths, plan.dims, runs, depth, plan.cap, plan.small)]
    if plan.reference is not None:
        L, M, D = plan.reference
        cells.append((L, (runs, D, M), runs * M * D))
    return sum(plan.steps * (entry * L * slots * D * M + 2 * layer * L) + draw * 2 * L * n
               for L, (slots, D, M), n in cells)


def gpu_seconds(plan) -> float:
    """The plan's time on one GPU at :data:`GPU_BYTES_PER_SECOND` (eight passes over the parameters per
    step) and :data:`GPU_SECONDS_PER_LAYER_STEP`, batched as on a GPU: an estimate, not a measurement."""
    import dataclasses

    import torch

    from .task import GPU_BATCH_CAP, GPU_SMALL_BATCH

    plan = dataclasses.replace(plan, cap=GPU_BATCH_CAP, small=GPU_SMALL_BATCH)
    item = getattr(torch, plan.dtype).itemsize
    total = 0.0
    for L in plan.depths:
        for first, runs in plan.chunks():
            total += task_seconds(plan, L, runs, (8 * item / GPU_BYTES_PER_SECOND, GPU_SECONDS_PER_LAYER_STEP, 0.0))
    return total
