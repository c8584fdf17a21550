"""The memory model of the strong-error study (:mod:`deeplimits.studies.memory` holds what the
models share): the peak bytes of one chunk of draws, counted from the sizes alone."""

from __future__ import annotations

import math

__all__ = ["convergence_bytes"]


def convergence_bytes(p, n: int, inputs: int, reference: int, depths, item: int, device=None) -> int:
    """Peak bytes of :func:`~deeplimits.studies.strong_error.run_chunk` on ``n`` draws (see :mod:`deeplimits._resources`).

    * each driver as it counts itself (:meth:`~deeplimits.paths.Driver.sweep_bytes`, ``n x entries``
      numbers): fractional weights hold the fGn of every entry on the finest grid, ``reference x n
      x d^2`` numbers, at its peak inside :func:`~deeplimits.paths.fgn`, then a chunk of scaled
      increments and its tree of pairwise sums; Brownian weights are streamed (blocks of
      ``_BLOCK_ELEMENTS`` numbers, the block in use, the one drawn ahead and their trees of pairwise
      sums); smooth weights hold their spectral coefficients (``2M`` per entry) and values at a
      chunk of times; each adds one accumulated increment per depth;
    * states: the reference, the input and a state and two error maps per depth, ``n x inputs x d``
      each; the adaptive ODE references keep the solution at ``reference + 1`` times.
    """
    total = 0
    for name, drv in p.drivers.items():
        total += drv.sweep_bytes(n * math.prod(p._weight_layout(name)[0]), reference, len(depths), item, device)
    per_state = item * n * inputs * p.width
    total += per_state * (4 * len(depths) + 10)
    if not p.rough:
        total += 3 * per_state * (reference + 1)
    return int(total)

