"""The figures of a transfer study (docs/transfer.md), with the conventions of
:mod:`deeplimits.plots` (``path=None, *, ax=None``; redrawn from a stored result)."""

from __future__ import annotations

import numpy as np

from ...plots import floats_or_nan, new_figure, save_figure

__all__ = ["plot_transfer", "plot_coordinates", "plot_optimum"]


def _title(r: dict) -> str:
    return f"beta {r['beta']:g}, {r['optimizer']}, {r['variant']} (p={r['exponent']:g})\n{r['verdict']}"


def _panels(n: int, path, ax, height: float = 3.0):
    """A figure of ``n`` panels, at most four a row: ``(figure, flat list of Axes)``."""
    cols = min(4, n)
    fig, axes = new_figure(-(-n // cols), cols, (3.6 * cols, height * -(-n // cols)), path, ax)
    return fig, list(np.asarray(axes, dtype=object).reshape(-1))


def _depth_axis(a, depths) -> None:
    """A log2 depth axis labelled at the depths themselves (no minor labels to overlap)."""
    from matplotlib.ticker import NullFormatter, NullLocator

    a.set_xscale("log", base=2)
    a.set_xticks(depths, [str(L) for L in depths])
    a.xaxis.set_minor_locator(NullLocator())
    a.xaxis.set_minor_formatter(NullFormatter())
    a.set_xlabel("depth L")


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
    fig, flat = _panels(len(rows), path, ax)
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
    return save_figure(fig, path, [result])


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

    rows = -(-len(result.settings) // 2)  # the legend, two columns of settings, below the panels
    fig, axes = new_figure(1, 2, (11, 4.0 + 0.16 * rows), path, ax)
    for a, (key, what) in zip(axes[0], QUANTITIES.items()):
        for r in result.settings:
            c = r["coords"][key]
            slope = "" if c["slope"] is None else f": L^{c['slope']:.2f}"
            style = "-" if r["variant"] == "rescaled" else "--"
            a.plot(r["depths"], floats_or_nan(c["mean"]), style, marker="o", ms=3,
                   label=f"beta {r['beta']:g} {r['optimizer']} {r['variant']}{slope}")
        a.set_yscale("log")
        _depth_axis(a, result.settings[0]["depths"])
        a.set_ylabel({"h_L": "mean |Δh_L|", "block": "relative update of a block"}[key])
        a.set_title(f"{what}, after {result.spec['coord_steps']} steps", fontsize=8)
        a.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    return save_figure(fig, path, [result])


def plot_optimum(result, path: str | None = None, *, ax=None):
    """The study's question in one picture: per setting, the optimal learning rate of the blocks
    (``log2`` of the base optimum times ``L^p``, with its 90% bootstrap interval; an optimum on the
    grid's edge hollow) against depth, its fitted line ``L^(p + s)`` and the prediction, drawn
    through the same centre. Arguments and return value as :func:`plot_transfer`'s (one Axes per
    setting)."""
    rows = result.settings
    fig, flat = _panels(len(rows), path, ax, height=3.2)
    for a, r in zip(flat, rows):
        a.set_title(_title(r), fontsize=8)
        _depth_axis(a, r["depths"])
        a.set_ylabel("log2 optimal learning rate")
        if "optimum" not in r:
            a.text(0.5, 0.5, "no optimum: too few depths", ha="center", va="center", transform=a.transAxes)
            continue
        lx = np.log2(np.asarray(r["depths"], dtype=float))
        y = np.asarray(r["optimum"]) + r["exponent"] * lx
        ci = np.asarray(r["optimum_ci"]) + r["exponent"] * lx[:, None]
        edge = np.asarray(r["edge"], dtype=bool)
        err = np.clip([y - ci[:, 0], ci[:, 1] - y], 0.0, None)
        a.errorbar(2 ** lx[~edge], y[~edge], yerr=err[:, ~edge], fmt="o", color="C0", ms=4, capsize=2,
                   label="optimum (90% interval)")
        if edge.any():
            a.plot(2 ** lx[edge], y[edge], "o", mfc="none", color="C0", label="on the grid's edge")
        (lo, hi), centre = r["slope_ci"], (lx.mean(), y.mean())
        a.plot(2 ** lx, centre[1] + r["rate_exponent"] * (lx - centre[0]), "k-", lw=1,
               label=f"fit L^{r['rate_exponent']:.2f} [{lo + r['exponent']:.2f}, {hi + r['exponent']:.2f}]")
        a.plot(2 ** lx, centre[1] + r["predicted"] * (lx - centre[0]), "r--", lw=1, label=f"predicted L^{r['predicted']:g}")
        a.legend(fontsize=6)
    for a in flat[len(rows):]:
        a.set_visible(False)
    return save_figure(fig, path, [result])
