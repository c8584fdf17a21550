"""What a stored task result must hold to be used: numbers of a stated shape, finite and within a
bound the statistics square without overflow (:meth:`deeplimits.studies.plan.Plan.result_damage`).
Each check returns why a value is unusable, or ``None``."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["numbers_of", "LARGEST"]

LARGEST = 1e150
"""The largest magnitude a stored number may have: its square and its products with another stay
finite in float64 (a sum of squares of many such numbers too)."""


def numbers_of(name: str, value, shape: tuple, *, low: float = -LARGEST) -> tuple[np.ndarray | None, str | None]:
    """``(array, None)`` when ``value`` is a list nested ``len(shape)`` deep of real numbers (a number
    for ``shape == ()``) of ``shape`` (``-1``: any length), finite, in ``[low, LARGEST]``; else
    ``(None, why)``."""
    wrong = f"{name} is not a table of numbers of shape {shape}"
    if not _plain(value, len(shape)):
        return None, wrong
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):  # ragged, or an integer beyond float64
        return None, wrong
    if arr.ndim != len(shape) or any(n not in (-1, m) for n, m in zip(shape, arr.shape)):
        return None, wrong
    if not np.isfinite(arr).all():
        return None, f"{name} holds numbers that are not finite"
    if (arr < low).any() or (arr > LARGEST).any():
        return None, f"{name} holds numbers outside [{low:g}, {LARGEST:g}]"
    return arr, None


def _plain(value, depth: int) -> bool:
    """Whether ``value`` is a list nested ``depth`` deep of real numbers (never strings or booleans)."""
    if depth == 0:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    return isinstance(value, list) and all(_plain(v, depth - 1) for v in value)
