"""The figure of convolution kernels along depth, as Cohen, Cont, Rossier & Xu (ICML 2021, §3.2,
Figs. 7-8) draw their convolutional networks' weights, from
:class:`~deeplimits.diagnostics.ConvWeightDiagnostics` alone (a stored run or ``deeplimits
weights --json`` can be redrawn):

* top row, one panel per kernel name (``delta``, ``A``, ...): the spectral norm of every layer's
  convolution against ``k / L``, one line per depth, stage boundaries dotted (Fig. 7);
* bottom row: against the depth on log-log axes, the max norm, the root sum of squares and the
  beta-scaled increment norm ``L^beta max_k ||A_{k+1} - A_k||``, each with its fitted slope and
  the verdict of :func:`~deeplimits.diagnostics.scaling_exponents` (Fig. 8).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ...errors import ParameterError
from ...plots import new_figure, save_figure

__all__ = ["plot_conv_scaling"]


def _families(families) -> dict:
    from ...diagnostics import ConvWeightDiagnostics

    if not isinstance(families, Mapping) or not families:
        raise ParameterError("families", "families must map a kernel name to a list of ConvWeightDiagnostics (one per "
                                         f"depth), got {type(families).__name__}")
    out = {}
    for name, fam in families.items():
        fam = list(fam) if isinstance(fam, (list, tuple)) else None
        if not fam or not all(isinstance(d, ConvWeightDiagnostics) for d in fam):
            raise ParameterError("families", f"families[{name!r}] must be a non-empty list of ConvWeightDiagnostics")
        out[str(name)] = sorted(fam, key=lambda d: d.depth)
    return out


def _layer_panel(ax, name: str, fam: list) -> None:
    """Fig. 7: the per-layer spectral norms along depth, one line per depth."""
    for d in fam:
        norms = np.array([v for stage in d.norms for v in stage], dtype=float)
        t = np.arange(1, len(norms) + 1) / len(norms)
        ax.plot(t, norms, lw=0.8, label=f"L = {d.depth}")
    deepest = fam[-1]
    for edge in np.cumsum(deepest.stage_layers)[:-1]:
        ax.axvline(edge / deepest.depth, color="0.7", lw=0.6, ls=":")
    ax.set_xlabel("k / L")
    ax.set_ylabel(f"||{name}_k|| (spectral)")
    ax.set_title(f"Fig. 7: {name} along depth", fontsize=9)
    ax.legend(fontsize=6, ncol=2)


def _scaling_panel(ax, name: str, fam: list) -> None:
    """Fig. 8: the max norm, the root sum of squares and the scaled increments against the depth."""
    from ...diagnostics import scaling_exponents

    L = np.array([d.depth for d in fam], dtype=float)
    fit = scaling_exponents(fam) if len(set(L.tolist())) > 1 else None
    e = fit.exponents if fit else {}
    beta = e.get("beta", {}).get("value", math.nan)
    raw = np.array([d.increment_norm / float(d.depth) ** d.beta for d in fam])
    scaled = raw * L ** (beta if math.isfinite(beta) else 0.0)
    for y, key, label, style in ((np.array([d.max_norm for d in fam]), "max_norm", f"max_k ||{name}_k||", "o-"),
                                 (np.array([d.rss for d in fam]), "rss", "root sum of squares", "s-"),
                                 (scaled, "scaled_increments", f"L^beta max_k ||{name}_(k+1) - {name}_k||", "^-")):
        ok = np.isfinite(y) & (y > 0)
        if not ok.any():
            continue
        slope = e.get(key, {}).get("value", math.nan)
        ax.loglog(L[ok], y[ok], style, label=label + (f": L^{slope:.2f}" if math.isfinite(slope) else ""))
        if math.isfinite(slope):
            law = L ** slope
            ax.loglog(L, law * np.exp(np.mean(np.log(y[ok]) - np.log(law[ok]))), "k:", lw=0.8)
    ax.set_xlabel("depth L")
    verdict = f": {fit.hypothesis}" if fit else ""
    # beta of this kernel's own cumulative sum (for delta the report's alpha is its max norm's slope)
    ax.set_title(f"Fig. 8: {name}, beta (cumulative sum) {beta:.2f}{verdict}", fontsize=9)
    ax.legend(fontsize=6)


def plot_conv_scaling(families, path: str | None = None, *, ax=None, results=()):
    """The two rows of the module docstring for ``families`` (``{name: [ConvWeightDiagnostics, one
    per depth]}``, at most four names drawn), written to ``path`` when given (``ax``: ``2 x n``
    matplotlib Axes to draw into instead of a new figure; ``results``: those the families come from,
    carried by the PNG with what they read, :mod:`deeplimits._figure_data`)."""
    families = dict(list(_families(families).items())[:4])
    n = len(families)
    fig, axes = new_figure(2, n, (4.6 * n, 7.2), path, ax)
    for j, (name, fam) in enumerate(families.items()):
        _layer_panel(axes[0][j], name, fam)
        _scaling_panel(axes[1][j], name, fam)
    return save_figure(fig, path, results)
