"""The presets of the scaling study (torch-free: ``deeplimits scaling --help`` reads them)."""

from __future__ import annotations

__all__ = ["ARCH"]

ARCH = "inside"
"""The block of the published experiment, ``h + delta_k sigma(W_k h + b_k)`` (a plan of another
registered block records it as ``arch``)."""
