"""The figure of a trained-limit study (docs/trained-limit.md), with the conventions of
:mod:`deeplimits.plots` (``path=None, *, ax=None``; redrawn from a stored result)."""

from __future__ import annotations

import numpy as np

from ...plots import floats_or_nan, new_figure, save_figure

__all__ = ["plot_trained_limit", "plot_cases"]


def plot_trained_limit(result, path: str | None = None, *, ax=None):
    """One column per case. Top: the mean weight distance ``max_k ||A^(L)_k - A^(ref)(k/L)||``
    and hidden-state distance ``sup_k ||h^(L)_k - h^(ref)_(k/L)||`` against the depth, at
    initialisation (dashed) and after training (solid), log-log, with the slope ``L^-1`` drawn
    through the trained states where the theory states rate 1. Bottom: the hidden-state
    distance of every depth against the training time ``lr x steps`` (Marion et al. 2024, Fig. 1).

    Args:
        result: a :class:`~deeplimits.studies.trained_limit.result.TrainedLimitResult`.
        path: write the figure there (PNG) when given.
        ax: ``2 x cases`` Axes (top row first) to draw into; created when omitted.
    Returns:
        The matplotlib figure.
    """
    return plot_cases(result.cases, path, ax=ax, carried=[result])


def plot_cases(cases, path: str | None = None, *, ax=None, carried=()):
    """:func:`plot_trained_limit` of the case summaries ``cases`` (one column each); a PNG carries
    the results ``carried`` (the result the cases are read from, :mod:`deeplimits._figure_data`)."""
    fig, axes = new_figure(2, len(cases), (4.4 * len(cases), 9.0), path, ax)
    for j, c in enumerate(cases):
        _depth_panel(axes[0][j], c)
        _time_panel(axes[1][j], c)
    return save_figure(fig, path, carried)


def _depth_panel(a, c):
    L = np.asarray(c["depths"], dtype=float)
    for key, colour, name in (("weight_distance", "C0", "weights"), ("state_distance", "C3", "states")):
        q = c[key]
        for i, style, when in ((0, "--", "init"), (-1, "-", "trained")):
            y = floats_or_nan(q["mean"][i])
            if np.all(~np.isfinite(y) | (y <= 0)):
                continue  # zero at every depth (one path): nothing on a log scale
            rate = q["rate"][i]
            tag = "" if rate is None or not np.isfinite(rate) else f", rate {rate:.2f}"
            a.loglog(L, y, style, color=colour, marker="o", ms=3, label=f"{name} {when}{tag}")
    if c["theory"] is not None:
        y = floats_or_nan(c["state_distance"]["mean"][-1])
        mid = len(L) // 2
        if np.isfinite(y[mid]) and y[mid] > 0:
            a.loglog(L, y[mid] * (L / L[mid]) ** -c["theory"], "k:", label=f"L^-{c['theory']:g}")
    a.set_title(f"{c['case']}: {c['verdict']}", fontsize=9)
    a.set_xlabel("depth L")
    a.set_ylabel("distance to the reference")
    a.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))  # below: it covers no point


def _time_panel(a, c):
    t = np.asarray(c["times"], dtype=float)
    rows = np.asarray([floats_or_nan(m) for m in c["state_distance"]["mean"]])  # (epochs, depths)
    for j, L in enumerate(c["depths"]):
        a.plot(t, rows[:, j], marker="o", ms=3, label=f"L = {L}")
    a.set_yscale("log")
    a.set_xlabel("training time lr x steps")
    a.set_ylabel("sup_k |h_k - h_ref(k/L)|")
    a.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.2))
