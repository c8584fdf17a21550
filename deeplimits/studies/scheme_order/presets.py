"""The defaults of the scheme-order study and its calibration (``deeplimits order``,
docs/schemes.md), torch-free: the command line reads them for ``--help``."""

from __future__ import annotations

__all__ = ["DEFAULTS"]

DEFAULTS = dict(noise=1, depths=[8, 16, 32, 64, 128, 256, 512], draws=256, seed=0, dtype="float64", tables=200,
                pool_factor=None)
"""The scalar defaults of strong_order and calibrate (and of the command line)."""
