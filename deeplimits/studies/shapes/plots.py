"""The figure of a shapes study (docs/shapes.md), with the conventions of :mod:`deeplimits.plots`
(``path=None, *, ax=None``; redrawn from a stored result)."""

from __future__ import annotations

import math

import numpy as np

from ...plots import new_figure, save_figure

__all__ = ["plot_shapes"]


def _law(result):
    from .fit import law_value

    p = result.law["params"]
    return (lambda L, M, D: law_value("hidden", p, L, M, D)) if all(map(math.isfinite, p)) else None


def _series(ax, result, fixed: dict, axis: str, by: str, law):
    """Error against ``axis`` with the others fixed (``fixed``), one series per value of ``by``, the
    fitted law dashed through each."""
    k = result.spec["step"]
    cells = [c for c in result.cells if all(c[n] == v for n, v in fixed.items())]
    for i, value in enumerate(sorted({c[by] for c in cells})):
        row = sorted((c for c in cells if c[by] == value), key=lambda c: c[axis])
        x = np.array([c[axis] for c in row], dtype=float)
        y = np.array([c["hidden"][k] for c in row], dtype=float)
        se = np.array([c["hidden_se"][k] for c in row], dtype=float)
        ax.errorbar(x, y, yerr=se, fmt="o", ms=3, color=f"C{i % 10}", label=f"{by} = {value}")
        if law is not None and len(x):
            grid = np.geomspace(x.min(), x.max(), 40)
            shape = {**fixed, by: value, axis: grid}
            ax.plot(grid, law(shape["L"], shape["M"], shape["D"]), "--", color=f"C{i % 10}", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(axis)
    ax.set_title(", ".join(f"{n} = {v}" for n, v in fixed.items()), fontsize=9)
    ax.legend(fontsize=6, ncol=2)


def _envelope(ax, result):
    k = result.spec["step"]
    P = np.array([c["L"] * c["M"] * c["D"] for c in result.cells], dtype=float)
    e = np.array([c["hidden"][k] for c in result.cells], dtype=float)
    ax.loglog(P, e, ".", ms=4, color="C0", label="cells")
    const = result.law.get("envelope", {}).get("constant", math.nan)
    if math.isfinite(const) and len(P):
        grid = np.geomspace(P.min(), P.max(), 40)
        ax.loglog(grid, const * grid ** (-1 / 6), "k-", label=f"{const:.2g} P^(-1/6) (best shape, fitted law)")
    ax.set_xlabel("P = L M D")
    ax.set_title("error against parameters", fontsize=9)
    ax.legend(fontsize=7)


def plot_shapes(result, path: str | None = None, *, ax=None):
    """Four panels of the hidden-state error at the fitted step (means over runs with standard errors,
    the fitted law dashed): against ``D`` at the deepest ``L`` (one series per ``M``), against ``L``
    at the middle ``D`` (per ``M``), against ``M`` at the deepest ``L`` (per ``D``), and every cell
    against ``P = L M D`` with the envelope ``constant x P^(-1/6)`` of the best shapes.

    Args:
        result: a :class:`~deeplimits.studies.shapes.result.ShapesResult`.
        path: write the figure there (PNG) when given.
        ax: four Axes (a 1 x 4 row) to draw into; created when omitted.
    Returns:
        The matplotlib figure.
    """
    fig, axes = new_figure(1, 4, (18, 4.2), path, ax)
    s, law = result.spec, _law(result)
    L, D = max(s["depths"]), sorted(s["dims"])[len(s["dims"]) // 2]
    _series(axes[0][0], result, {"L": L}, "D", "M", law)
    _series(axes[0][1], result, {"D": D}, "L", "M", law)
    _series(axes[0][2], result, {"L": L}, "M", "D", law)
    _envelope(axes[0][3], result)
    axes[0][0].set_ylabel(f"hidden-state error after {s['step']} steps")
    fig.suptitle(f"shapes ({s['case']}): {result.swap['verdict']} (L <-> M), {result.ushape['verdict']} (U in D)",
                 fontsize=10)
    return save_figure(fig, path, [result])
