"""The memory model of the law study: the peak bytes of one chunk of draws, counted from the sizes alone."""

from __future__ import annotations

from ..memory import INTERPRETER_BYTES

__all__ = ["law_bytes", "fig2_bytes"]


def law_bytes(n: int, d: int, depths, fine: int, item: int, controls: bool = True) -> int:
    """Peak bytes of a chunk of ``n`` draws of :func:`~.engine.simulate`: a segment's fine increments
    and their dyadic sums (``2 fine / min(depths)`` of ``n x d x d``), a layer's weights and their
    temporaries (six of ``n x d x d``), the states of every grid (``len(depths) + 3`` of ``n x d``,
    twice for the stack), the control variates and their gradients (``(4 + d) len(depths)`` of
    ``n x 4``), plus :data:`INTERPRETER_BYTES`."""
    seg = fine // min(depths)
    total = (2 * seg + 6) * n * d * d + 2 * (len(depths) + 3) * n * d
    if controls:
        total += (4 + d) * len(depths) * n * 4
    return int(item * total) + INTERPRETER_BYTES


def fig2_bytes(n: int, d: int, item: int) -> int:
    """Peak bytes of a chunk of ``n`` draws of a res-3 layer (:mod:`.fig2`): its two weight matrices
    and their temporaries (four of ``n x d x d``) and the states, plus :data:`INTERPRETER_BYTES`."""
    return int(item * (4 * n * d * d + 8 * n * d)) + INTERPRETER_BYTES
