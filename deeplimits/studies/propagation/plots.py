"""The figures of the signal-propagation studies (docs/propagation.md): stability curves, the
theory beside them, the criticality histograms and the (H, beta) phase diagram, with the
conventions of :mod:`deeplimits.plots` (``path=None, *, ax=None``; redrawn from a stored result)."""

from __future__ import annotations


import numpy as np

from ...errors import ParameterError
from ...plots import new_figure, save_figure

__all__ = ["plot_stability", "plot_histograms", "plot_theory", "plot_phase", "plot_boundary"]


def plot_stability(result, path: str | None = None, *, ax=None):
    """Median ``r_h`` and ``r_p`` against depth with quartile bands, one line per beta, and
    ``sqrt`` of the theory bounds on ``E r^2`` (dotted) where they apply.

    Args:
        result: a :class:`~deeplimits.studies.propagation.result.StabilityResult`.
        path: write the figure there (PNG) when given.
        ax: the Axes to draw into (one per panel), created when omitted.
    """
    fig, axes = new_figure(1, 2, (10, 4.2), path, ax)
    betas = sorted({r["beta"] for r in result.records})
    for ax, name, title in zip(axes[0], ("r_h", "r_p"), (r"$\|h_L - h_0\| / \|h_0\|$", r"$\|p_0 - p_L\| / \|p_L\|$")):
        for i, beta in enumerate(betas):
            recs = [r for r in result.records if r["beta"] == beta]
            L = np.array([r["depth"] for r in recs], dtype=float)
            med = np.array([r[name]["median"] for r in recs])
            color = f"C{i}"
            ax.plot(L, med, "o-", color=color, label=f"beta = {beta:g}")
            ax.fill_between(L, [r[name]["q25"] for r in recs], [r[name]["q75"] for r in recs], color=color, alpha=0.2)
            if recs[0]["theory_lower"] is not None:
                ax.plot(L, np.sqrt([r["theory_lower"] for r in recs]), ":", color=color)
                ax.plot(L, np.sqrt([r["theory_upper"] for r in recs]), ":", color=color)
        ax.set_yscale("log")
        ax.set_xlabel("depth L")
        ax.set_ylabel(title + " (median, quartiles)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, title="dotted: sqrt of bounds on E r^2" if result.records[0]["theory_lower"] is not None
                  else None, title_fontsize=7)
    fig.suptitle(result.label, fontsize=10)
    return save_figure(fig, path)


def plot_histograms(result, path: str | None = None, *, ax=None):
    """Histograms of ``||h_L||/||h_0||`` and ``||p_0||/||p_L||`` at the largest depth, one row
    per beta, with the fitted log-normal density and the p-value of the normality test of
    the logarithms."""
    if not result.samples:
        raise ParameterError("result", "the result has no samples: run the study with histograms=True")
    fig, axes = new_figure(len(result.samples), 2, (10, 3.6 * len(result.samples)), path, ax)
    for row, s in zip(axes, result.samples):
        rec = next(r for r in result.records if r["beta"] == s["beta"] and r["depth"] == s["depth"])
        for ax, key, fit, what in ((row[0], "norm_h", rec["lognormal_h"], r"$\|h_L\| / \|h_0\|$"),
                                   (row[1], "norm_p", rec["lognormal_p"], r"$\|p_0\| / \|p_L\|$")):
            x = np.asarray(s[key])
            x = x[(x > 0) & (x < 1e30)]
            ax.hist(x, bins=60, density=True, alpha=0.6, label=f"{len(x)} draws")
            if fit is not None:
                t = np.linspace(x.min(), x.max(), 400)
                mu, sg = fit["mu"], fit["sigma"]
                pdf = np.exp(-(np.log(t) - mu) ** 2 / (2 * sg ** 2)) / (t * sg * np.sqrt(2 * np.pi))
                ax.plot(t, pdf, "k-", label=f"log-normal fit: mu={mu:.3f}, sigma={sg:.3f}\n"
                                             f"normality of logs: p = {fit['pvalue']:.3g}")
            ax.set_xlabel(what)
            ax.set_title(f"beta = {s['beta']:g}, L = {s['depth']}", fontsize=9)
            ax.legend(fontsize=8)
    fig.suptitle(result.label, fontsize=10)
    return save_figure(fig, path)


def plot_theory(result, path: str | None = None, *, ax=None):
    """Each bound of docs/theory.md beside its measured counterpart, at the largest depth of
    each beta: (1) the empirical quantiles of ``r_h^2`` (circles) and ``r_p^2`` (squares)
    against the level ``1 - delta`` with the quantile bound ``2 L a^2 / delta`` (dotted), where
    it holds; (2) the quartiles of ``||h_L||/||h_0||`` and ``||p_0||/||p_L||`` per beta with the
    high-probability bounds (dotted, where their conditions hold); (3) the median ``r_h``
    (circles) and ``max_k ||h_k - h_0||/||h_0||`` (squares) against depth with the fitted laws.

    Args:
        result: a :class:`~deeplimits.studies.propagation.result.StabilityResult`.
        path: write the figure there (PNG) when given.
        ax: the Axes to draw into (one per panel), created when omitted.
    """
    fig, axes = new_figure(1, 3, (15, 4.4), path, ax)
    top = max(r["depth"] for r in result.records)
    last = [r for r in result.records if r["depth"] == top]
    _quantile_panel(axes[0][0], last, top)
    _norm_panel(axes[0][1], last, top, result.delta)
    _laws_panel(axes[0][2], result)
    fig.suptitle(result.label, fontsize=10)
    return save_figure(fig, path)


def _quantile_panel(ax, last, top):
    for i, r in enumerate(last):
        c, q = f"C{i}", r["quantiles"]
        if q is not None:
            ax.plot(q["levels"], q["r_h_sq"], "o-", color=c, label=f"beta = {r['beta']:g}")
            ax.plot(q["levels"], q["r_p_sq"], "s--", color=c, alpha=0.7)
            ax.plot(q["levels"], q["bound"], ":", color=c)
    ax.set_yscale("log")
    ax.set_xlabel(r"level $1 - \delta$")
    ax.set_ylabel(r"quantile of $r^2$")
    ax.set_title(f"L = {top}: quantiles of r_h^2 (o), r_p^2 (s); dotted: 2 L a^2 / delta", fontsize=9)
    if any(r["quantiles"] is not None for r in last):
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no quantile bound:\nneeds i.i.d. weights and L a^2 <= 1", ha="center", va="center",
                transform=ax.transAxes)


def _norm_panel(ax, last, top, delta):
    for i, r in enumerate(last):
        c = f"C{i}"
        for k, (key, m) in enumerate((("norm_ratio_h", "o"), ("norm_ratio_p", "s"))):
            st = r[key]
            ax.errorbar([i + (k - 0.5) * 0.2], [st["median"]], fmt=m, color=c, capsize=4,
                        yerr=[[st["median"] - st["q25"]], [st["q75"] - st["median"]]],
                        label=None if k or i else "quartiles: h (o), p (s)")
        if not r["hp_unmet"]["upper"]:  # res-3 with i.i.d. weights
            bounds = [r["hp_upper"]] + ([] if r["hp_unmet"]["lower"] else [r["hp_lower"]])
            ax.hlines([np.nan if b is None else b for b in bounds], i - 0.35, i + 0.35, colors=c, linestyles=":")
    ax.set_xticks(range(len(last)), [f"beta = {r['beta']:g}" for r in last])
    ax.set_yscale("log")
    ax.set_ylabel(r"$\|h_L\|/\|h_0\|$, $\|p_0\|/\|p_L\|$")
    ax.set_title(f"L = {top}: quartiles; dotted: bounds w.p. >= {1 - delta:g}", fontsize=9)
    ax.legend(fontsize=8)


def _laws_panel(ax, result):
    for i, f in enumerate(result.fits):
        c = f"C{i}"
        recs = [r for r in result.records if r["beta"] == f["beta"]]
        L = np.array([r["depth"] for r in recs], dtype=float)
        med = {r["depth"]: r["r_h"]["median"] for r in recs}
        ax.plot(L, list(med.values()), "o", color=c, label=f"beta = {f['beta']:g}")
        if recs[0]["r_h_max"] is not None:
            ax.plot(L, [r["r_h_max"]["median"] for r in recs], "s", color=c, mfc="none")
        if f.get("growth_lambda") is not None:
            x = np.asarray(f["growth_depths"], dtype=float)
            ax.plot(x, np.exp(f["growth_intercept"] + f["growth_lambda"] * x ** f["growth_exponent"]), "--", color=c,
                    lw=1, label=f"exp({f['growth_lambda']:.3f} L^{f['growth_exponent']:.2g})")
        elif f["slope"] is not None:
            x = np.log(np.asarray(f["depths"], dtype=float))
            y = np.log([med[d] for d in f["depths"]]).mean() + f["slope"] * (x - x.mean())
            ax.plot(np.exp(x), np.exp(y), "-", color=c, lw=1, label=f"slope {f['slope']:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("depth L")
    ax.set_ylabel(r"median $r_h$ (o), $\max_k \|h_k - h_0\|/\|h_0\|$ (s)")
    ax.set_title("fitted laws", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if result.fits:
        ax.legend(fontsize=7)


def plot_phase(result, path: str | None = None, *, ax=None):
    """Heat maps of the mean ``log10 r_h`` and ``log10 r_p`` over (H, beta), with the measured
    critical scalings ``beta*(H)`` of the forward pass (``r_h``) and of the gradient (``r_p``) on
    both, and the prediction ``max(H, 1/2)`` drawn in; with the corrected network (``corrected``,
    res-1), a second row: its mean ``log10 r_h`` and its change from the plain network's."""
    slopes, fixed = result.slope_h is not None, result.log10_rh_corrected is not None
    fig, axes = new_figure(2 if fixed else 1, 3 if slopes else 2, (16.5 if slopes else 11, 9.2 if fixed else 4.6), path,
                        ax)
    H = np.asarray(result.hurst)
    b = np.asarray(result.beta)
    if slopes:
        _slope_panel(fig, axes[0][2], result, H, b)
    stars = (result.beta_star, result.beta_star_scaling, result.beta_star_p)
    for ax, grid, title in zip(axes[0], (result.log10_rh, result.log10_rp),
                               (r"mean $\log_{10} r_h$", r"mean $\log_{10} r_p$")):
        _heat_panel(fig, ax, result, H, b, grid, title, stars)
    if fixed:
        _heat_panel(fig, axes[1][0], result, H, b, result.log10_rh_corrected,
                    r"corrected network: mean $\log_{10} r_h$", (result.beta_star_corrected,
                                                                   result.beta_star_scaling_corrected, None))
        axes[1][0].plot(H, H, "m:", lw=1.5, label=r"$\beta = H$ (where the corrected network has its limit)")
        axes[1][0].legend(fontsize=7, loc="upper left")
        gap = np.asarray(result.log10_rh_corrected, dtype=float) - np.asarray(result.log10_rh, dtype=float)
        im = axes[1][1].pcolormesh(H, b, gap.T, cmap="PuOr", vmin=-0.5, vmax=0.5, shading="nearest")
        fig.colorbar(im, ax=axes[1][1], extend="both")
        axes[1][1].set_xlabel("Hurst index H")
        axes[1][1].set_ylabel(r"$\beta$")
        axes[1][1].set_title(r"corrected minus plain: mean $\log_{10} r_h$", fontsize=10)
        for extra in axes[1][2:]:
            extra.axis("off")
    fig.suptitle(f"{result.arch}, {result.activation}, d={result.width}, L={result.depth}, "
                 f"{result.draws} draws x {result.inputs} inputs per H", fontsize=10)
    return save_figure(fig, path)


def _heat_panel(fig, ax, result, H, b, grid, title, stars):
    """One heat map over (H, beta) with the prediction ``max(H, 1/2)`` and the estimates ``stars``
    of beta* (the crossing of ``log10 r_h`` with 0, the scaling estimate, the crossing of ``log10 r_p``)."""
    g = np.asarray(grid, dtype=float).T  # rows: beta, columns: H
    im = ax.pcolormesh(H, b, g, cmap="RdBu_r", vmin=-3, vmax=3, shading="nearest")
    fig.colorbar(im, ax=ax, extend="both")
    ax.plot(H, result.predicted, "k--", lw=1.5, label="predicted max(H, 1/2)")
    crossing, scaling, grads = (None if v is None else np.array([np.nan if x is None else x for x in v], dtype=float)
                                for v in stars)
    ax.plot(H, crossing, "ko", ms=3, label=r"$\beta^*$: mean $\log_{10} r_h = 0$")
    if scaling is not None:
        ax.plot(H, scaling, "g^", ms=3, label=rf"$\beta^*$: $r_h$ flat in depth ({result.short_depth} vs {result.depth})")
    if grads is not None and len(grads):  # the gradient's boundary, on both panels: it is not beta = H (docs/published.md)
        ax.plot(H, grads, "ws", ms=3, mec="k", label=r"$\beta^*$: mean $\log_{10} r_p = 0$")
    ax.set_xlabel("Hurst index H")
    ax.set_ylabel(r"$\beta$")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left")


def _slope_panel(fig, ax, result, H, b):
    """The measured log-log slope of ``r_h`` per cell minus the predicted ``max(H, 1/2) - beta``,
    drawn on the identity side ``beta > max(H, 1/2)`` (where the prediction is a power law)."""
    gap = np.array([[np.nan if s is None or beta <= rho else s - p for s, p, beta in zip(row, pred, b)]
                    for row, pred, rho in zip(result.slope_h, result.predicted_slope, result.predicted)], dtype=float)
    im = ax.pcolormesh(H, b, gap.T, cmap="PuOr", vmin=-0.5, vmax=0.5, shading="nearest")
    fig.colorbar(im, ax=ax, extend="both")
    ax.plot(H, result.predicted, "k--", lw=1.5, label="max(H, 1/2)")
    ax.set_xlabel("Hurst index H")
    ax.set_ylabel(r"$\beta$")
    ax.set_title(f"slope of log r_h on log L ({result.short_depth} to {result.depth}) minus max(H,1/2) - beta",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper left")


def plot_boundary(result, path: str | None = None):
    """Per Hurst index, the mean ``log10 r_p`` (solid) and ``log10 r_h`` (dashed) against beta,
    one colour per depth, the published colour scale's band ``|log10 r| < 1`` shaded, and
    ``beta = max(H, 1/2)``."""
    fig, axes = new_figure(1, len(result.hurst), (4.6 * len(result.hurst), 4.2), path, None)
    axes = axes[0]
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for ax, h, rp, rh, rec in zip(axes, result.hurst, result.log10_rp, result.log10_rh, result.summary()):
        rp, rh = np.asarray(rp).mean(0), np.asarray(rh).mean(0)
        ax.axhspan(-1, 1, color="0.92", zorder=0, label=r"$|\log_{10} r| < 1$ (the published colour scale)")
        for l, L in enumerate(result.depths):
            c = colours[l % len(colours)]
            ax.plot(result.beta, rp[l], "-", color=c, label=rf"$r_p$, $L = {L}$")
            ax.plot(result.beta, rh[l], "--", color=c, lw=1, label=rf"$r_h$, $L = {L}$")
            if rec["crossing_p"][l] is not None:
                ax.plot(rec["crossing_p"][l], 0, "o", color=c, ms=5)
        ax.axhline(0, color="k", lw=0.6)
        ax.axvline(rec["predicted"], color="k", ls=":", label=r"$\beta = \max(H, 1/2)$")
        ax.set_ylim(-3, 3)
        ax.set_xlabel(r"$\beta$")
        ax.set_ylabel(r"mean $\log_{10} r$")
        ax.set_title(f"H = {h:g}: r_p crosses 0 at " + ", ".join("-" if c is None else f"{c:.2f}"
                                                                 for c in rec["crossing_p"]), fontsize=9)
    axes[0].legend(fontsize=6, loc="lower left")
    fig.suptitle(f"{result.arch}, d = {result.width}, fractional V and W: the boundary of r_p across depths", fontsize=10)
    return save_figure(fig, path)
