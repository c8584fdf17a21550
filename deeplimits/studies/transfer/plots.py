"""The figures of a transfer study (docs/transfer.md), with the conventions of
:mod:`deeplimits.plots` (``path=None, *, ax=None``; redrawn from a stored result)."""

from __future__ import annotations

import numpy as np

from ...plots import floats_or_nan, new_figure, save_figure

__all__ = ["plot_transfer", "plot_coordinates"]


def _title(r: dict) -> str:
    return f"beta {r['beta']:g}, {r['optimizer']}, {r['variant']} (p={r['exponent']:g})\n{r['verdict']}"


def plot_transfer(result, path: str | None = None, *, ax=None):
    """Bordelon et al. (ICLR 2024) Fig. 1 for MLPs: one panel per ``(beta, optimiser, variant)``,
    the final training loss (geometric mean over seeds) against the base learning rate, one curve
    per depth, the optimum of each depth marked; the curves line up when the rate transfers.

    Args:
        result: a :class:`~deeplimits.studies.transfer.result.TransferResult`.
        path: write the figure there (PNG) when given.
        ax: one Axes per setting to draw into; created when omitted.
    Returns:
        The matplotlib figure.
    """
    rows = result.settings
    cols = min(4, len(rows))
    nrows = -(-len(rows) // cols)
    fig, axes = new_figure(nrows, cols, (3.6 * cols, 3.0 * nrows), path, ax)
    flat = list(np.asarray(axes, dtype=object).reshape(-1))
    for a, r in zip(flat, rows):
        lr = np.asarray(r["lrs"], dtype=float)
        for j, L in enumerate(r["depths"]):
            line, = a.semilogy(lr, floats_or_nan(r["curves"][j]), marker="o", ms=2, lw=1, label=f"L={L}")
            if "optimum" in r and not r["edge"][j]:
                a.axvline(r["optimum"][j], color=line.get_color(), ls=":", lw=0.8)
        a.set_title(_title(r), fontsize=8)
        a.set_xlabel("log2 base learning rate")
        a.set_ylabel("final training loss")
        a.legend(fontsize=6)
    for a in flat[len(rows):]:
        a.set_visible(False)
    return save_figure(fig, path)


def plot_coordinates(result, path: str | None = None, *, ax=None):
    """The coordinate check: per quantity (``mean |Δh_L|`` and each block's relative update after a
    few steps, :data:`~deeplimits.studies.transfer.coords.QUANTITIES`), its size against depth, log-log,
    one line per setting; flat under the scaling
    that keeps a step of order one.

    Args:
        result: a :class:`~deeplimits.studies.transfer.result.TransferResult`.
        path: write the figure there (PNG) when given.
        ax: two Axes to draw into; created when omitted.
    Returns:
        The matplotlib figure.
    """
    from .coords import QUANTITIES

    fig, axes = new_figure(1, 2, (11, 4.2), path, ax)
    for a, (key, what) in zip(axes[0], QUANTITIES.items()):
        for r in result.settings:
            c = r["coords"][key]
            slope = "" if c["slope"] is None else f": L^{c['slope']:.2f}"
            style = "-" if r["variant"] == "rescaled" else "--"
            a.loglog(r["depths"], floats_or_nan(c["mean"]), style, marker="o", ms=3,
                     label=f"beta {r['beta']:g} {r['optimizer']} {r['variant']}{slope}")
        a.set_xlabel("depth L")
        a.set_ylabel({"h_L": "mean |Δh_L|", "block": "relative update of a block"}[key])
        a.set_title(f"{what}, after {result.spec['coord_steps']} steps", fontsize=8)
        a.legend(fontsize=6)
    return save_figure(fig, path)
