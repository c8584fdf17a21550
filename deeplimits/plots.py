"""The figure conventions every study's ``plots`` module follows (a figure is always redrawn from a
stored result): :func:`new_figure`, :func:`save_figure`, :func:`floats_or_nan`, and the figure of
``deeplimits weights`` (:func:`plot_weight_coordinates`). The studies' figures live in their own
packages (``deeplimits.studies.<study>.plots``, docs/adding-a-study.md).

Every figure function, and every result's ``plot`` method, takes ``path=None, *, ax=None``:
``path`` writes the figure there (PNG) and releases it; ``ax`` draws into your own matplotlib
Axes (one for a one-panel figure, else one per panel, in reading order) instead of a new figure.
The figure is returned either way."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ._figures import DPI, fast_layout, new_figure, save_figure  # noqa: F401 - the figure helpers, shared


def floats_or_nan(x) -> np.ndarray:
    """A float array with missing values (``None``) as NaN."""
    return np.array([np.nan if v is None else v for v in np.ravel(np.asarray(x, dtype=object))],
                    dtype=float).reshape(np.shape(x))


def plot_weight_coordinates(tensors: Sequence, path: str | None = None, coordinates: int = 3, *, ax=None):
    """The first ``coordinates`` entries of each ``(name, A)``, ``A`` of shape ``(L, ...)``,
    against ``k / L``: one panel per tensor (at most six)."""
    tensors = list(tensors)[:6]
    fig, axes = new_figure(1, len(tensors), (4.2 * len(tensors), 3.4), path, ax)
    for ax, (name, A) in zip(axes[0], tensors):
        a = np.asarray(A.detach().cpu().double().reshape(A.shape[0], -1) if hasattr(A, "detach") else A,
                       dtype=float).reshape(len(A), -1)
        t = np.arange(1, len(a) + 1) / len(a)
        for j in range(min(coordinates, a.shape[1])):
            ax.plot(t, a[:, j], lw=0.8)
        ax.set_xlabel("k / L")
        ax.set_title(f"{name} (L = {len(a)})", fontsize=9)
    axes[0][0].set_ylabel("weight coordinate")
    return save_figure(fig, path)
