"""The memory models of the propagation studies (:mod:`deeplimits.studies.memory` holds the shared
ones): the peak bytes of a chunk of draws of a stability study or of a Hurst index of a phase
study, counted from the sizes alone, and the bytes per draw of the stability studies' default
chunk rule. Like the other draw models they add nothing for the interpreter (tests/test_resources.py)."""

from __future__ import annotations

import math

__all__ = ["propagation_bytes", "default_draw_bytes", "weight_layout"]


def weight_layout(block, width: int, bias: bool = True) -> list[tuple[str, tuple[int, ...]]]:
    """``(name, shape)`` of each weight a propagation pass draws for ``block`` (a
    :class:`~deeplimits.blocks.Block` or its registered name) at ``width``, in its drawing order,
    the optional ones (``inside``'s bias) only with ``bias``; shapes checked
    (:meth:`~deeplimits.blocks.Block.shape`)."""
    from ...blocks import make_block

    block = make_block(block)
    return [(nm, block.shape(nm, width)) for nm in block.weights if bias or nm not in block.optional]


def _pow2_ceil(x: int) -> int:
    return 1 << (x - 1).bit_length()


def propagation_bytes(block, driver, width, n_in, depths, betas, inputs, n, item, bias: bool = True) -> int:
    """Peak bytes of :func:`~.core._run` on ``n`` draws of a network of ``block`` (a
    :class:`~deeplimits.blocks.Block` or its registered name; see :mod:`deeplimits._resources`).

    * weights: every layer of the deepest network is held (``top`` layers: ``max(depths)``, or
      its power-of-two ceiling for path drivers) for each weight name, ``d^2`` entries for a
      matrix and ``d`` for a vector, as the driver counts them (:meth:`~deeplimits.paths.Driver.held_bytes`:
      streamed laws add their blocks in flight; fractional weights keep their fGn and its scaled
      copy (2x), and the last name drawn peaks inside :func:`~deeplimits.paths.fgn`; smooth
      weights hold their spectral coefficients and one depth's layers at a time);
    * states: :func:`~.core._propagate` stores what the block keeps per layer for the backward pass
      (:meth:`~deeplimits.blocks.Block.kept_states`: ``h`` and its preactivation, or ``h`` alone), with
      ``len(betas) * inputs`` columns per running depth: ``sum(depths)`` column-layers for
      nested drivers (one pass), ``max(depths)`` otherwise (one pass per depth);
    * outputs ``h_L, p_0, p_L`` and their float64 ratios, ``A``, ``x``, ``h_0``.
    """
    ms = [math.prod(shape) for _, shape in weight_layout(block, width, bias)]
    top = _pow2_ceil(max(depths)) if driver.needs_resolution else max(depths)
    weights = driver.held_bytes([n * m for m in ms], top, item)
    cols = len(betas) * inputs
    from ...blocks import make_block

    states = make_block(block).kept_states() * n * cols * width * item * (sum(depths) if driver.nested else max(depths))
    outputs = n * len(depths) * cols * (width * (4 * item + 5 * 8) + 2 * item + 2 * 8)
    inputs_ = n * item * (width * n_in + inputs * n_in + 2 * inputs * width)
    return int(weights + states + outputs + inputs_)


def default_draw_bytes(block, driver, width, depths, betas, inputs, item, bias: bool = True) -> int:
    """The bytes per draw of the stability studies' default chunk rule (``TASK_BYTES`` of them per
    task, :func:`~.core._chunk`): the weights (four copies of fractional ones) and the stored
    states. Historical: the chunk is part of the spec and so of the seeds, hence kept as it was;
    :func:`propagation_bytes` is the model the chunk is then checked against."""
    nw = sum(math.prod(shape) for _, shape in weight_layout(block, width, bias))
    top = _pow2_ceil(max(depths)) if driver.needs_resolution else max(depths)
    return item * (top * nw * driver.held_copies
                   + max(depths) * len(depths) * len(betas) * inputs * width)
