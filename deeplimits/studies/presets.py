"""What the presets of the studies share, torch-free: the grids they are built from
(:func:`linspace`, :func:`geometric_depths`) and the defaults of ``deeplimits weights``, which is
not a study (:data:`CONV_GRID`, :data:`WEIGHTS_DEFAULTS`). Each study keeps its presets and the
scalar defaults of its plan function in its own package's ``presets`` module
(:mod:`deeplimits.studies.convergence.presets`, :mod:`deeplimits.studies.propagation.presets`, ...,
docs/adding-a-study.md), which the command line reads for ``--help`` (tests/test_layout.py checks
that every default it prints is read from them or from the option declarations,
:mod:`deeplimits.options`; tests/test_cli_thin.py checks them against the signatures).
"""

from __future__ import annotations

__all__ = ["linspace", "geometric_depths", "CONV_GRID", "WEIGHTS_DEFAULTS"]


def linspace(start: float, stop: float, count: int) -> list[float]:
    """``count`` evenly spaced values from ``start`` to ``stop``: ``numpy.linspace`` in plain
    Python, value for value (``start + i * step``, the last value ``stop`` exactly)."""
    if count == 1:
        return [float(start)]
    step = (stop - start) / (count - 1)
    values = [start + i * step for i in range(count)]
    values[-1] = stop
    return [float(v) for v in values]


def geometric_depths(first: int, last: int) -> list[int]:
    """The published family ``floor(1.2^n)`` for ``n = first..last`` (``n = 13``: 10, ``n = 50``: 9100)."""
    return sorted({int(1.2 ** n) for n in range(first, last + 1)})


#: ``deeplimits weights``: the N x N grid of the spectral norms of convolution kernels when the
#: source gives none (docs/weights.md: within 2% of the norm on the infinite grid for 3x3 kernels)
CONV_GRID = 16

#: the scalar defaults of ``deeplimits weights`` (:func:`~deeplimits.diagnostics.weight_diagnostics`)
WEIGHTS_DEFAULTS = dict(beta=0.0)
