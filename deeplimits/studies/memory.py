"""What the memory models of the studies share. Each study keeps its model in its own package's
``memory`` module (:mod:`deeplimits.studies.convergence.memory`,
:mod:`deeplimits.studies.propagation.memory`, :mod:`deeplimits.studies.scaling.memory`, ...,
docs/adding-a-study.md): the peak bytes of one task, counted from the sizes alone (no allocation),
which the plans' ``estimate()`` report and their chunk rules fit to the machine
(:mod:`deeplimits._resources`), on top of :data:`INTERPRETER_BYTES`.

Every model counts bytes as ``entries x itemsize`` of the study's dtype (float64 for the
statistics computed in double precision). The training models add 64 MiB for the interpreter's
and the allocator's own, which their measured peaks include (tests/test_size_limits.py); the
draw models are compared with the growth of a task's memory, which does not
(tests/test_resources.py), and add nothing.
"""

from __future__ import annotations


__all__ = ["INTERPRETER_BYTES"]

INTERPRETER_BYTES = 64 << 20
"""The interpreter's and the allocator's own memory, added by the training models (see above)."""


