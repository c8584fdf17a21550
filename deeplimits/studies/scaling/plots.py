"""The figures of the scaling experiment (Cohen, Cont, Rossier & Xu, ICML 2021, Figs. 2-6), drawn
from a :class:`~deeplimits.studies.ScalingResult` alone (so a stored run can be redrawn):

* Fig. 2: ``max |delta|`` (alpha) and the cumulative-sum norm of the weights (``1 - beta``)
  against the depth;
* Fig. 3: the beta-scaled increment norm (``-nu``) and the root sum of squares;
* Fig. 4: ``delta_k`` along depth at the deepest depth (one per layer: its sign), or three
  entries of ``W_k`` for one shared ``delta``;
* Fig. 5: the noise part: its Hurst index and quadratic variation against the depth;
* Fig. 6: the loss of the network rebuilt from the trend over the original's (log axis; the
  verdict's kept and lost levels dotted and dashed).
"""

from __future__ import annotations

import math

import numpy as np

from ...plots import new_figure, save_figure

__all__ = ["plot_scaling"]


def _num(v) -> float:
    return math.nan if v is None else float(v)


def _family(result):
    """Depths and per-depth medians over seeds of the first learning rate's records: the judged
    weights' diagnostics (``|delta| W`` with one delta per layer, else ``W``) and the rest."""
    lr = result.records[0]["lr"] if result.records else None
    rs = [r for r in result.records if r["lr"] == lr]
    key = "effective" if rs and "effective" in rs[0] else "W"
    depths = sorted({r["depth"] for r in rs})

    def med(get):
        out = []
        for L in depths:
            v = [x for x in (_num(get(r)) for r in rs if r["depth"] == L) if math.isfinite(x)]
            out.append(float(np.median(v)) if v else math.nan)
        return np.array(out)
    return np.array(depths, dtype=float), key, med


def _fit_line(ax, L, y, e: dict | None, sign: float, label: str, style: str):
    ok = np.isfinite(y) & (y > 0)
    if not ok.any():
        return
    value = None if not e else e.get("value")
    text = label if value is None or not math.isfinite(value) else f"{label}: {value:.2f}"
    ax.loglog(L[ok], y[ok], style, label=text)
    if value is not None and math.isfinite(value):
        law = L ** (sign * value)
        ax.loglog(L, law * np.exp(np.mean(np.log(y[ok]) - np.log(law[ok]))), "k:", lw=0.8)


def _exponent_panels(axes, result, L, key, med):
    e, judged = result.exponents, (result.families[0]["judged"] if result.families else {})
    name = "|delta| W" if key == "effective" else "W"
    ax = axes[0]
    _fit_line(ax, L, med(lambda r: abs(r["delta"])), e.get("alpha"), -1, "max |delta|, alpha", "o-")
    _fit_line(ax, L, med(lambda r: r[key]["cumsum_norm"]), {"value": 1 - judged.get("beta", {}).get("value", math.nan)},
              1, f"max_k |sum_j<k {name}_j|, 1 - beta", "s-")
    ax.set_title("Fig. 2: alpha (step 1) and beta (step 2)", fontsize=9)
    ax = axes[1]
    beta = judged.get("beta", {}).get("value", math.nan)
    scaled = med(lambda r: r[key]["increment_norm"]) * L ** (beta if math.isfinite(beta) else 0.0)
    _fit_line(ax, L, scaled, judged.get("scaled_increments"), 1, f"L^beta max_k |d{name}_k|", "o-")
    _fit_line(ax, L, med(lambda r: r[key]["rss"]), judged.get("rss"), 1, "root sum of squares", "s-")
    ax.set_title("Fig. 3: beta-scaled increments (step 3), RSS (step 5)", fontsize=9)


def _path_panel(ax, result):
    paths = result.paths or {}
    delta, W = paths.get("delta"), paths.get("W") or []
    if delta:
        d = np.asarray(delta, dtype=float)
        ax.plot(np.arange(1, len(d) + 1) / len(d), d, lw=0.8)
        ax.axhline(0.0, color="0.6", lw=0.8)
        ax.set_ylabel("delta_k")
        ax.set_title(f"Fig. 4: delta_k along depth (L = {len(d)})", fontsize=9)
    else:
        for w in W:
            a = np.asarray(w, dtype=float)
            ax.plot(np.arange(1, len(a) + 1) / len(a), a, lw=0.8)
        ax.set_ylabel("W_k entries")
        ax.set_title(f"Fig. 4: three entries of W_k (L = {len(W[0]) if W else 0})", fontsize=9)
    ax.set_xlabel("k / L")


def plot_scaling(result, path: str | None = None, *, ax=None):
    """The six panels of the module docstring for ``result`` (written to ``path`` when given;
    ``ax``: six matplotlib Axes to draw into instead of a new figure)."""
    from ...diagnostics.verdict import verdict_line

    fig, axes = new_figure(2, 3, (14, 7.6), path, ax)
    L, key, med = _family(result)
    _exponent_panels(axes[0], result, L, key, med)
    _path_panel(axes[0][2], result)
    ax = axes[1][0]
    ax.semilogx(L, med(lambda r: r[key]["noise_hurst"]), "o-", label="Hurst index of the noise part")
    ax.semilogx(L, med(lambda r: r[key]["hurst"]), "s-", label="Hurst index of the weights")
    ax.axhline(0.5, color="0.6", lw=0.8)
    ax.set_title("Fig. 5: the noise part (step 4)", fontsize=9)
    ax = axes[1][1]
    ax.loglog(L, med(lambda r: r["trend_ratio"]), "o-")  # log: a rebuilt network that blows up is a ratio of 1e12
    for level, style in ((1.0, "-"), (1.5, ":"), (3.0, "--")):  # equal; kept (at most 1.5); lost (at least 3)
        ax.axhline(level, color="0.6", lw=0.8, ls=style)
    ax.set_ylabel("loss of the trend / loss")
    ax.set_title("Fig. 6: the network rebuilt from the trend", fontsize=9)
    ax = axes[1][2]
    ax.loglog(L, med(lambda r: r[key]["noise_qv"]), "o-", label="sum_k |N_k|^2 (noise part)")
    ax.loglog(L, med(lambda r: r[key]["quadratic_variation"]), "s-", label="sum_k |dW_k|^2")
    ax.set_title("quadratic variations", fontsize=9)
    for ax in (axes[0][0], axes[0][1], axes[1][0], axes[1][1], axes[1][2]):
        ax.set_xlabel("depth L")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle(f"inside model, {result.activation}, delta {result.delta_mode}, d={result.width}: "
                 + verdict_line(result.hypothesis), fontsize=10)
    return save_figure(fig, path, [result])
