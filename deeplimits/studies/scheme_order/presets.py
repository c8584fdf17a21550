"""The defaults of the scheme-order study and its calibration (``deeplimits order``,
docs/schemes.md), torch-free: the command line reads them for ``--help``."""

from __future__ import annotations

from typing import Sequence

from ..convergence.presets import REFERENCE_REFINEMENT

__all__ = ["DEFAULTS", "default_reference"]

DEFAULTS = dict(noise=1, depths=[8, 16, 32, 64, 128, 256, 512], draws=256, seed=0, dtype="float64", tables=200,
                pool_factor=None)
"""The scalar defaults of strong_order and calibrate (and of the command line)."""


def default_reference(depths: Sequence[int], exact) -> int:
    """The finest grid when none is given, chosen from the problem: ``2 * max(depths)`` when an
    exact solution is read at the grid points (a finer grid resolves nothing the deepest depth
    reads: only the path's increments on the depths' grids enter), else ``REFERENCE_REFINEMENT *
    max(depths)`` (:mod:`~deeplimits.studies.convergence.presets`) for the nested reference, the
    scheme on the finer grid (as the convergence study's references, ``convergence.study._reference``)."""
    return (2 if exact is not None else REFERENCE_REFINEMENT) * max(depths)
