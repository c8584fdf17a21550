"""Matplotlib figures of result objects (they can always be redrawn from stored results)."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def plot_convergence(results: Sequence, ax=None, path: str | None = None):
    """Log-log plot of ``E max_k ||H_{k/L} - h_k||`` against depth with standard-error bars,
    one panel per result, and the theoretical slope drawn through the data's centre.

    Args:
        results: :class:`~deeplimits.convergence.ConvergenceResult` objects.
        ax: an axis (one result) or a sequence of axes; created when omitted.
        path: write the figure there (PNG) when given.
    Returns:
        The matplotlib figure.
    """
    import matplotlib

    if path is not None and ax is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = list(results)
    if ax is None:
        fig, axes = plt.subplots(1, len(results), figsize=(4.6 * len(results), 4.0), squeeze=False)
        axes = axes[0]
    else:
        axes = np.atleast_1d(ax)
        fig = axes[0].figure
    for a, r in zip(axes, results):
        L = np.asarray(r.depths, dtype=float)
        e = np.asarray(r.error)
        a.errorbar(L, e, yerr=1.96 * np.asarray(r.stderr), fmt="o-", capsize=3,
                   label=f"measured: rate {r.rate:.2f} [{r.rate_ci[0]:.2f}, {r.rate_ci[1]:.2f}]")
        a.loglog(L, np.asarray(r.terminal_error), "s--", alpha=0.6, label="terminal error")
        centre = np.exp(np.log(e).mean()) * (L / np.exp(np.log(L).mean())) ** (-r.theory_rate)
        asym = " (asymptotic)" if r.regime == "fbm" and r.width > 1 and not r.corrected else ""
        a.loglog(L, centre, "k:", label=f"theory: slope -{r.theory_rate:g}{asym}")
        a.set_xscale("log", base=2)
        a.set_xlabel("depth L")
        a.set_ylabel(r"$E\,\max_k \|H_{k/L} - h_k\|$")
        a.set_title(r.label, fontsize=9)
        a.legend(fontsize=8)
        a.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
