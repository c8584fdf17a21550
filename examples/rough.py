"""The rough regime, the whole study: the CPU preset (docs/convergence.md, "Rough weights";
benchmarks/RESULTS.md has its timing):

* width 1, the exact (Doss-Sussmann) reference, sigma = tanh and identity, H = 0.45, 0.40, 0.35,
  depths 8..2048: the corrected network (``--draws`` draws), its fitted leading exponent against
  2H - 1/2 and the verdict, and the plain Euler network (the ablation, a quarter of the draws);
* width 4, H = 0.4, depths 8..256 against the corrected scheme on the least grid the regime
  accepts (128 times the deepest depth), the rate with its interval and the verdict, and the
  reference's own error measured: the network at the reference's depth against a grid 4 times finer
  again (a partial fluctuation: seen between sqrt(1 - 4^-0.6) = 0.79 and sqrt(1 + 4^-0.6) = 1.18
  times it), beside the deepest depth's error;
* the phase diagram of res-1 beside its corrected network on the same weights (width 4, L = 1000),
  for H from 0.05 to 0.95.

Prints the Markdown tables and the timings, and writes OUT_DIR/rough.png and phase_rough.png
(default docs/figures). Run from the repository root (about 2 minutes on 2 CPU cores):

    python examples/rough.py [OUT_DIR] [--small]
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import torch

import deeplimits as dl
from deeplimits.studies.presets import linspace
from deeplimits.studies.strong_error import run_chunk

FIGURES = ["rough.png", "phase_rough.png"]
HURSTS = (0.45, 0.4, 0.35)
FULL = dict(depths=[8, 16, 32, 64, 128, 256, 512, 1024, 2048], draws=1024, wide=[8, 16, 32, 64, 128, 256],
            own=32, hursts=linspace(0.05, 0.95, 19), betas=linspace(0, 1.3, 27), depth=1000, phase_draws=5, inputs=10)
SMALL = dict(depths=[8, 16, 32], draws=16, wide=[8, 16], own=4, hursts=[0.3, 0.4], betas=[0.2, 0.6], depth=40,
             phase_draws=1, inputs=2)


def scalar(depths, draws, seed):
    """The width-1 runs: ``{(activation, H, corrected): result}``."""
    out = {}
    for act in ("tanh", "identity"):
        for h in HURSTS:
            for corrected in (True, False):
                out[act, h, corrected] = dl.strong_convergence(
                    "rough", hurst=h, width=1, activation=act, depths=depths, draws=draws if corrected else draws // 4,
                    seed=seed, correction=corrected)
    return out


def wide(depths, draws, own, seed):
    """Width 4 at H = 0.4 and the reference's own error (``2 * own`` draws): ``(result, own error, its
    standard error)``."""
    res = dl.strong_convergence("rough", hurst=0.4, width=4, depths=depths, draws=draws, seed=seed)
    pair = dl.pair("rough", width=4, hurst=0.4)
    errs = np.concatenate([run_chunk(pair, [res.reference], 4 * res.reference, own, 1, seed + 1 + c, torch.float64)[0]
                           for c in range(2)])
    return res, float(errs.mean()), float(errs.std(ddof=1) / np.sqrt(len(errs)))


def figure(runs, path):
    """The errors of both networks against the depth, per H (tanh solid, identity dashed), with the
    fitted leading terms of the corrected network."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    for (act, h, corrected), r in runs.items():
        L = np.asarray(r.depths, dtype=float)
        ax = axes[0 if corrected else 1]
        color = {0.45: "C0", 0.4: "C1", 0.35: "C2"}[h]
        style = "o-" if act == "tanh" else "s--"
        ax.errorbar(L, r.error, yerr=1.96 * np.nan_to_num(np.asarray(r.stderr, dtype=float)), fmt=style, color=color,
                    ms=4, capsize=2,
                    label=f"H = {h:g}, {act}" + (f": {r.verdict}" if corrected else ""))
        if corrected and r.fit is not None:
            ax.plot(L, r.fit.asymptote(L), ":", color=color, lw=1)
    axes[0].set_title("corrected (Liu-Tindel) network: dotted, the fitted $c_0 L^{-(2H-1/2)}$", fontsize=10)
    axes[1].set_title("plain Euler network (the ablation): no limit", fontsize=10)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("depth L")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel(r"$\mathbb{E}\,\max_k |H_{k/L} - h_k|$ (95% intervals)")
    fig.suptitle("rough weights: res-1, d = 1, fractional V, beta = H, against the exact (Doss-Sussmann) solution",
                 fontsize=10)
    from deeplimits.plots import save_figure

    # the figure carries the corrected networks' results and the verdicts it shows (docs/gallery.md)
    save_figure(fig, path, [r for (_, _, corrected), r in runs.items() if corrected])


def table(runs):
    lines = ["| sigma | H | 2H - 1/2 | corrected: leading exponent [95% profile] | single slope | verdict | "
             "plain: error at 8 -> 2048 | verdict |", "|---|---|---|---|---|---|---|---|"]
    for act in ("tanh", "identity"):
        for h in HURSTS:
            c, p = runs[act, h, True], runs[act, h, False]
            lines.append(f"| {act} | {h:g} | {2 * h - 0.5:.2f} | {exponent(c)} | {c.rate:.3f} | {c.verdict} | "
                         f"{p.error[0]:.3f} -> {p.error[-1]:.3f} | {p.verdict} |")
    return "\n".join(lines)


def exponent(r) -> str:
    """The fitted leading exponent with its 95% profile interval (``-`` without one)."""
    if r.fit is None or r.fit.best_exponent is None:
        return "-"
    lo, hi = r.fit.exponent_ci
    return f"{r.fit.best_exponent:.3f} [{lo:.3f}, {hi:.3f}]"


def main(out: str = os.path.join("docs", "figures"), small: bool = False, seed: int = 0) -> list[str]:
    size = SMALL if small else FULL
    t0 = time.perf_counter()
    runs = scalar(size["depths"], size["draws"], seed)
    t1 = time.perf_counter()
    print(table(runs))
    print(f"\nwidth 1: {t1 - t0:.1f} s")
    res, own, own_se = wide(size["wide"], size["draws"] // 2, size["own"], seed)
    t2 = time.perf_counter()
    print(f"\nwidth 4, H = 0.4, depths {res.depths[0]}..{res.depths[-1]}, reference {res.reference}, {res.draws} "
          f"draws: leading exponent {exponent(res)} (theory 0.3), single slope {res.rate:.3f} [{res.rate_ci[0]:.3f}, "
          f"{res.rate_ci[1]:.3f}], verdict {res.verdict}; error at depth {res.depths[-1]}: {res.error[-1]:.4f} "
          f"+- {res.stderr[-1]:.4f}; the reference's own error (depth {res.reference} against {4 * res.reference}, "
          f"{2 * size['own']} draws): {own:.4f} +- {own_se:.4f}, at most {own / 0.79:.4f} "
          f"({own / 0.79 / res.error[-1]:.2f} of the deepest depth's) ({t2 - t1:.1f} s)")
    ph = dl.phase_diagram(size["hursts"], size["betas"], arch="res-1", draws=size["phase_draws"],
                          inputs=size["inputs"], width=4, depth=size["depth"], corrected=True)
    t3 = time.perf_counter()
    print(f"\n{ph.report()}\n(phase: {t3 - t2:.1f} s)")
    os.makedirs(out, exist_ok=True)
    paths = [os.path.join(out, name) for name in FIGURES]
    figure(runs, paths[0])
    ph.plot(paths[1])
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return paths


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
