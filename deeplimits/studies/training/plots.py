"""The figures of a training grid (docs/training.md): the heat map of its grid and the paths of
its trained weights along depth, with the conventions of :mod:`deeplimits.plots`
(``path=None, *, ax=None``; redrawn from a stored result)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...plots import floats_or_nan, new_figure, save_figure

from .rates import accuracy_by_rate

__all__ = ["plot_train_heatmap", "plot_weight_paths", "plot_accuracy_by_rate"]


def plot_train_heatmap(result, path: str | None = None, *, ax=None):
    """The best test accuracy over the learning rates per (H, beta) (Marion et al., JMLR 2025,
    §4.2), failed cells (every configuration non-finite) hatched, and the line
    ``beta = max(H, 1/2)`` drawn in. For i.i.d. or smooth weights (no H) one column."""
    fig, axes = new_figure(1, 1, (6.2, 4.8), path, ax)
    ax = axes[0][0]
    classification = result.classification
    key = "test_accuracy" if classification else "test_loss"
    hursts = sorted({b["hurst"] for b in result.best if b["hurst"] is not None})
    betas = sorted({b["beta"] for b in result.best})
    cols = hursts or [None]
    grid = np.full((len(betas), len(cols)), np.nan)
    for b in result.best:
        if b[key] is not None:
            grid[betas.index(b["beta"]), cols.index(b["hurst"])] = b[key]
    x = np.asarray(hursts, dtype=float) if hursts else np.array([0.5])
    y = np.asarray(betas, dtype=float)
    im = ax.pcolormesh(x, y, grid, cmap="viridis", vmin=0.0 if classification else None,
                       vmax=1.0 if classification else None, shading="nearest")
    fig.colorbar(im, ax=ax, label="best test accuracy" if classification else "best test loss")
    failed = np.isnan(grid)
    if failed.any():
        xx, yy = np.meshgrid(x, y)
        ax.plot(xx[failed], yy[failed], "rx", ms=6, label="no finite configuration")
    if hursts:
        line = np.linspace(min(x), max(x), 200)
        ax.plot(line, np.maximum(line, 0.5), "w--", lw=1.5, label=r"$\beta = \max(H, 1/2)$")
        ax.set_xlabel("Hurst index H")
    else:
        ax.axhline(0.5, color="w", ls="--", lw=1.5, label=r"$\beta = 1/2$")
        ax.set_xticks([])
    ax.set_ylabel(r"$\beta$")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"{result.arch}, {result.driver} weights, d={result.width}, L={result.depth}, {result.dataset}, "
                 f"{result.epochs} epochs", fontsize=9)
    return save_figure(fig, path)


def plot_weight_paths(panels: Sequence[dict], path: str | None = None, *, ax=None):
    """A weight coordinate against the layer index, at initialisation and after training, one
    panel per entry of ``panels`` (``label``, ``init``, ``trained``: values per layer)."""
    fig, axes = new_figure(1, len(panels), (4.2 * len(panels), 3.4), path, ax)
    for ax, p in zip(axes[0], panels):
        k = np.arange(1, len(p["trained"]) + 1)
        ax.plot(k, floats_or_nan(p["init"]), lw=0.8, color="0.6", label="initialisation")
        ax.plot(k, floats_or_nan(p["trained"]), lw=0.8, color="C0", alpha=0.8, label="after training")
        ax.set_xlabel("layer k")
        ax.set_title(p["label"], fontsize=9)
    axes[0][0].set_ylabel("weight coordinate")
    axes[0][0].legend(fontsize=7)
    return save_figure(fig, path)


def plot_accuracy_by_rate(result, path: str | None = None, *, ax=None):
    """The mean test accuracy over ``H`` (cells on or above the line) against ``beta``, one line per
    learning rate, with standard errors (:func:`accuracy_by_rate`)."""
    fig, axes = new_figure(1, 1, (6.2, 4.4), path, ax)
    ax = axes[0][0]
    for rec in accuracy_by_rate(result):
        se = np.nan_to_num(np.asarray(rec["se"], dtype=float))
        mark = "" if rec["falls"] is None else (" (falls)" if rec["falls"] else "")
        ax.errorbar(rec["betas"], rec["mean"], yerr=se, marker="o", ms=4, capsize=2, label=f"lr {rec['lr']:g}{mark}")
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(r"test accuracy, mean over $H$ with $\beta \geq \max(H, 1/2)$")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.set_title(f"one learning rate at a time: {result.arch}, {result.driver} weights, L={result.depth}, "
                 f"{result.dataset}", fontsize=9)
    return save_figure(fig, path)
