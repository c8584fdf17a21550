"""The memory model of the law study: the peak bytes of one chunk of draws, counted from the sizes alone."""

from __future__ import annotations

from ..memory import INTERPRETER_BYTES

__all__ = ["law_bytes", "fig2_bytes"]


def law_bytes(n: int, d: int, depths, fine: int, item: int, controls: bool = True, entries: int | None = None,
              phis: int = 4) -> int:
    """Peak bytes of a chunk of ``n`` draws of :func:`~.engine.simulate`: a segment's fine increments
    and their dyadic sums (``2 fine / min(depths)`` of ``n x E``, ``E = entries`` the numbers of one
    layer's weights, ``d^2`` for res-1), a layer's weights and their temporaries (six of ``n x E``),
    the states of every grid (``len(depths) + 3`` of ``n x d``, twice for the stack), the control
    variates and their gradients (``(4 + d) len(depths)`` of ``n x phis``), plus :data:`INTERPRETER_BYTES`."""
    seg, E = fine // min(depths), d * d if entries is None else entries
    total = (2 * seg + 6) * n * E + 2 * (len(depths) + 3) * n * d
    if controls:
        total += (4 + d) * len(depths) * n * phis
    return int(item * total) + INTERPRETER_BYTES


def fig2_bytes(n: int, d: int, item: int) -> int:
    """Peak bytes of a chunk of ``n`` draws of a res-3 layer (:mod:`.fig2`): its two weight matrices
    and their temporaries (four of ``n x d x d``) and the states, plus :data:`INTERPRETER_BYTES`."""
    return int(item * (4 * n * d * d + 8 * n * d)) + INTERPRETER_BYTES
