"""Fractional Brownian paths at H = 0.2, 0.5 and 0.8 (Marion, Fermanian, Biau & Vert, JMLR 2025,
Fig. 6; docs/published.md): one path of 1000 steps per Hurst index, drawn by the fractional driver's
exact sampler (circulant embedding, docs/mathematics.md), and, measured on 200 paths of each, the
discrete-variation estimate of the Hurst index (the one the trained-weight diagnostics use,
deeplimits.diagnostics.hurst_index): its median and 95% range over the paths beside H.

Run:  python examples/fbm_paths.py [OUT_DIR] [--small]     (about a second on 2 CPU cores)
Writes OUT_DIR/fbm_paths.png (default docs/figures).
"""
import os
import sys

import numpy as np
import torch

from deeplimits.diagnostics import hurst_index
from deeplimits.paths import fgn
from deeplimits.plots import new_figure, save_figure

FIGURES = ["fbm_paths.png"]
HURSTS = (0.2, 0.5, 0.8)


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    steps, paths = (64, 20) if small else (1000, 200)
    g = torch.Generator().manual_seed(0)
    path = os.path.join(out, FIGURES[0])
    fig, axes = new_figure(1, len(HURSTS), (13.5, 3.6), path)
    for ax, h in zip(axes[0], HURSTS):
        noise = fgn(steps, h, (paths,), generator=g).T  # (steps, paths): unit-variance fGn, time first
        est = hurst_index(noise).numpy()  # the discrete-variation estimate of each path's Hurst index
        lo, med, hi = np.quantile(est, [0.025, 0.5, 0.975])
        x = np.concatenate([[0.0], np.cumsum(noise[:, 0].numpy())]) * steps ** -h  # B^H on k / steps
        ax.plot(np.linspace(0, 1, steps + 1), x, lw=0.8)
        ax.set_title(f"H = {h}: estimated {med:.3f} [{lo:.3f}, {hi:.3f}] over {paths} paths", fontsize=9)
        ax.set_xlabel("t")
        print(f"H = {h}: discrete-variation estimate, median {med:.3f}, 95% of {paths} paths in [{lo:.3f}, {hi:.3f}]")
    axes[0][0].set_ylabel(r"$B^H_t$")
    save_figure(fig, path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
