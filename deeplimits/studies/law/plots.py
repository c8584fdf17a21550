"""The figure of a law study (docs/law.md), with the conventions of :mod:`deeplimits.plots`
(``path=None, *, ax=None``; redrawn from a stored result)."""

from __future__ import annotations

import textwrap

import numpy as np

from ...plots import new_figure, save_figure

__all__ = ["plot_law"]


def plot_law(result, path: str | None = None, *, ax=None):
    """One panel per test function: ``|E phi(h_L) - E phi(H_1)|`` against ``L`` on log-log axes with
    its 95% error bars (hollow where the error is negative), the fitted ``|a/L + b/L^2 (+ ...)|`` and the
    Richardson errors ``|2 e(2L) - e(L)|``; a last panel: the distances between the laws of
    ``|h_L|/|h_0|`` and the SDE's against ``L``, with the Monte Carlo floor.

    Args:
        result: a :class:`~deeplimits.studies.law.result.LawResult`.
        path: write the figure there (PNG) when given.
        ax: ``len(phis) + 1`` Axes to draw into; created when omitted.
    Returns:
        The matplotlib figure.
    """
    from .phis import phi_text

    n = len(result.phis) + 1
    fig, axes = new_figure(1, n, (3.6 * n, 3.6), path, ax)
    axes = np.ravel(axes)
    L = np.asarray(result.spec["depths"], dtype=float)
    for a, q in zip(axes, result.phis):
        _phi_panel(a, q, L, phi_text(q["phi"]))
    _distance_panel(axes[-1], result.distances)
    fig.suptitle(f"{result.spec['law']} weights, d = {result.spec['width']}: {result.verdict} (every test function, "
                 "one rate; each panel: the function alone)", fontsize=10)
    return save_figure(fig, path, [result])


def _depth_axis(a, L) -> None:
    """The depths as the x ticks of a log axis, without minor labels."""
    from matplotlib.ticker import NullFormatter

    a.set_xticks(L)
    a.set_xticklabels([f"{x:g}" for x in L])
    a.xaxis.set_minor_formatter(NullFormatter())
    a.set_xlabel("depth L")


def _phi_panel(a, q, L, title):
    e, se = np.asarray(q["error"], dtype=float), np.asarray(q["se"], dtype=float)
    neg = e < 0
    a.errorbar(L, np.abs(e), yerr=1.96 * se, fmt="none", ecolor="C0", alpha=0.6)
    a.loglog(L[~neg], np.abs(e[~neg]), "o", color="C0", label="|weak error|")
    a.loglog(L[neg], np.abs(e[neg]), "o", mfc="none", color="C0")
    fine = np.geomspace(L[0], L[-1], 50)
    coef = np.asarray(q["fit"]["coefficients"][0], dtype=float)
    if np.all(np.isfinite(coef)):
        curve = sum(c / fine ** (i + 1) for i, c in enumerate(coef))
        a.loglog(fine, np.abs(curve), "-", color="C1", label="fit a/L + b/L^2" + (" + ..." if len(coef) > 2 else ""))
    r = q["richardson"]
    R = np.abs(np.asarray(r["error"], dtype=float))
    a.loglog(L[:-1], np.where(R > 0, R, np.nan), "s", color="C2", ms=4, label="Richardson")
    from .report import short_name

    rate = q["fit"]["rate"]  # None in a stored result where the fit gave none (NaN)
    rate = "" if rate is None or not np.isfinite(rate) else f", rate {rate:.2f}"
    a.set_title(textwrap.fill(short_name(title), 42) + f"\nalone: {q['fit']['verdict']}{rate}", fontsize=8)
    _depth_axis(a, L)
    a.legend(fontsize=6)


def _distance_panel(a, d):
    L = np.asarray(d["depths"], dtype=float)
    for key, colour, name in (("w1", "C0", "W1"), ("ks", "C3", "Kolmogorov")):
        y, ci = np.asarray(d[key]), np.asarray(d[key + "_ci"])
        bars = np.clip([y - ci[:, 0], ci[:, 1] - y], 0.0, None)  # a bootstrap interval need not hold its estimate
        a.errorbar(L, y, yerr=bars, fmt="o-", color=colour, ms=3, label=name)
        a.axhline(d["floor_" + key], color=colour, ls=":", lw=1)
    a.set_xscale("log")
    a.set_yscale("log")
    _depth_axis(a, L)
    a.set_title("|h_L|/|h_0| against the SDE's\n(dotted: the Monte Carlo floor)", fontsize=8)
    a.legend(fontsize=6)
