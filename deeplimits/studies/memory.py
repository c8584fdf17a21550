"""The memory models of the studies, in one place: the peak bytes of one task of each
study, counted from the sizes alone (no allocation), which the plans' ``estimate()`` report and
their chunk rules fit to the machine (:mod:`deeplimits._resources`).

* :func:`convergence_bytes`: a chunk of draws of a strong-error study.

A study in its own package keeps its model there, on top of :data:`INTERPRETER_BYTES`
(:mod:`deeplimits.studies.propagation.memory`, :mod:`deeplimits.studies.scaling.memory`,
:mod:`deeplimits.studies.trained_limit.memory`, :mod:`deeplimits.studies.training.memory`,
:mod:`deeplimits.studies.scheme_order.memory`).

Every model counts bytes as ``entries x itemsize`` of the study's dtype (float64 for the
statistics computed in double precision). The training models add 64 MiB for the interpreter's
and the allocator's own, which their measured peaks include (tests/test_size_limits.py); the
draw models are compared with the growth of a task's memory, which does not
(tests/test_resources.py), and add nothing.
"""

from __future__ import annotations

import math

__all__ = ["convergence_bytes", "INTERPRETER_BYTES"]

INTERPRETER_BYTES = 64 << 20
"""The interpreter's and the allocator's own memory, added by the training models (see above)."""


def convergence_bytes(p, n: int, inputs: int, reference: int, depths, item: int, device=None) -> int:
    """Peak bytes of :func:`~.strong_error.run_chunk` on ``n`` draws (see :mod:`deeplimits._resources`).

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
