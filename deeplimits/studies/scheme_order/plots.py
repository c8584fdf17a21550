"""The figure of the scheme-order study's calibration (:class:`~.result.Calibration`), with the
conventions of :mod:`deeplimits.plots` (``path=None, *, ax=None``; redrawn from a stored result). A
strong order's own figure is its result's (:func:`deeplimits.studies.convergence.plots.plot_convergence`)."""

from __future__ import annotations

import numpy as np

from ...plots import new_figure, save_figure

__all__ = ["plot_calibration"]


def plot_calibration(cal, path: str | None = None, *, ax=None):
    """Per case, the share of correct tables told ``disagrees`` (the size, against the level) and
    told ``agrees`` (at the default margin), each with its 95% Wilson interval: one horizontal
    bar per case, the level a dashed line (``cal``: a :class:`~.result.Calibration`)."""
    rows = cal.row_objects()
    fig, axes = new_figure(1, 2, (10, 1.0 + 0.35 * len(rows)), path, ax)
    y = np.arange(len(rows))
    for a, verdict, title in ((axes[0, 0], "disagrees", "told disagrees (size)"),
                              (axes[0, 1], "agrees", "told agrees (correct order)")):
        v = np.array([r.interval("0.0", verdict) for r in rows], dtype=float).reshape(-1, 3)
        a.errorbar(100 * v[:, 0], y, xerr=100 * np.abs(v[:, 1:].T - v[:, 0]), fmt="o", capsize=3)
        if verdict == "disagrees":
            a.axvline(100 * cal.level, color="grey", ls="--", lw=0.8, label=f"level {cal.level:g}")
            a.legend(fontsize=7)
        a.set_yticks(y, [r.case for r in rows] if verdict == "disagrees" else [""] * len(rows), fontsize=7)
        a.set_xlabel("% of correct tables, 95% interval")
        a.set_title(title, fontsize=9)
        a.set_xlim(-2, 102)
        a.grid(True, axis="x", alpha=0.3)
    return save_figure(fig, path)
