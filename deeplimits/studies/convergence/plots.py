"""The figure of a strong-error study (docs/convergence.md), with the conventions of
:mod:`deeplimits.plots` (``path=None, *, ax=None``; redrawn from a stored result)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...plots import floats_or_nan, new_figure, save_figure

__all__ = ["plot_convergence"]


def plot_convergence(results: Sequence, path: str | None = None, *, ax=None):
    """Log-log plot of ``E max_k ||H_{k/L} - h_k||`` against depth with standard-error bars,
    one panel per result, with the fitted error expansion and its leading term (the asymptote)
    when the result has a tested fit (:attr:`ConvergenceResult.fit`), else the theoretical
    slope drawn through the data's centre.

    Args:
        results: :class:`~deeplimits.studies.convergence.result.ConvergenceResult` objects.
        path: write the figure there (PNG) when given.
        ax: an Axes (one result) or one Axes per result, to draw into; created when omitted.
    Returns:
        The matplotlib figure.
    """
    results = list(results)
    fig, axes = new_figure(1, len(results), (4.6 * len(results), 5.2), path, ax)
    axes = axes[0]
    for a, r in zip(axes, results):
        L = np.asarray(r.depths, dtype=float)
        e = floats_or_nan(r.error)
        ok = np.isfinite(e) & (e > 0)  # missing errors (every draw blew up) are not drawn
        rate = f"rate {_fmt(r.rate)} [{_fmt(r.rate_ci[0])}, {_fmt(r.rate_ci[1])}]"
        if ok.any():
            a.errorbar(L[ok], e[ok], yerr=1.96 * np.nan_to_num(floats_or_nan(r.stderr)[ok]), fmt="o-", capsize=3,
                       label=f"measured: {rate}")
            t = floats_or_nan(r.terminal_error)
            tok = np.isfinite(t) & (t > 0)
            a.plot(L[tok], t[tok], "s--", alpha=0.6, label="terminal error")
            fit = r.fit
            if fit is not None and fit.pvalue == fit.pvalue:  # the fitted expansion and its asymptote
                # drawn on to where the leading term takes over (at most 64 times the deepest depth)
                top = L.max() * min(64.0, max(1.0, 4 * fit.dominant_from / L.max()))
                grid = np.geomspace(L.min(), top, 96)
                a.plot(grid, fit.value(grid), "k-", lw=1, label=f"fit {fit.law_text}:\n{r.verdict}")
                a.plot(grid, fit.asymptote(grid), "k:", label=f"its leading term {fit.terms[0].text}")
                if L.max() < fit.dominant_from < top:
                    a.axvline(fit.dominant_from, color="grey", lw=0.8, ls="--",
                              label=f"{fit.terms[0].text} dominates from L = {fit.dominant_from:.0f}")
            else:
                power = getattr(r, "theory_log_power", 0.0) or 0.0
                law = L ** (-r.theory_rate) * np.log(L) ** power  # the declared order, through the data's centre
                centre = law * np.exp(np.log(e[ok]).mean() - np.log(law[ok]).mean())
                log = f" (log L)^{power:g}" if power else ""
                a.plot(L, centre, "k:", label=f"theory: L^-{r.theory_rate:g}{log}")
            a.set_yscale("log")
        else:
            a.text(0.5, 0.5, f"no finite errors:\n{r.nonfinite} of {r.draws} draws blew up", ha="center",
                   va="center", transform=a.transAxes)
            a.set_xlim(L.min() / 1.5, L.max() * 1.5)
        a.set_xscale("log", base=2)
        a.set_xlabel("depth L")
        a.set_ylabel(r"$E\,\max_k \|H_{k/L} - h_k\|$")
        a.set_title(r.label, fontsize=9)
        if ok.any():  # below the panel, where it covers no point
            a.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15))
        a.grid(True, which="both", alpha=0.3)
    return save_figure(fig, path, results)


def _fmt(x) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{x:.2f}"

