"""Smooth weights on linear res-1 (Marion, Fermanian, Biau & Vert, JMLR 2025, Prop. 14: the
smooth-weights result on linear res-1, h + L^-beta V(k/L) h): d = 40, depths 10..1000, beta in
{1/2, 1, 2}, 50 draws. At beta = 2 the network is the identity (r_h ~ L^(1-beta)), at beta = 1 it
has the neural-ODE limit dH = V(t) H dt, and below beta = 1 it explodes: h_L is the Euler scheme of
dH/dt = T V(t) H with T = L^(1-beta) large, whose solution follows the most unstable eigendirection of
V(t) (the adiabatic limit): log ||h_L|| / ||h_0|| grows like lambda T, lambda the integral over [0, 1]
of the largest real part of V(t)'s eigenvalues (per draw; not of the integral of V, which would hold
for a small T). The fitted growth law is printed beside the median of that lambda over 2000 draws
of V (docs/published.md).

Run:  python examples/linear_res1.py [OUT_DIR] [--small]     (about 5 minutes on 2 loaded CPU cores,
most of it the 2000 eigenvalue draws)
Writes OUT_DIR/linear_res1.png (default docs/figures).
"""
import os
import sys

import numpy as np
import torch

import deeplimits as dl
from deeplimits.studies import STABILITY_PRESETS

FIGURES = ["linear_res1.png"]


def adiabatic_growth(width: int, draws: int, seed: int = 0) -> np.ndarray:
    """Per draw of the smooth driver's V (entries of variance 1/d), the integral over [0, 1] of the
    largest real part of the eigenvalues of V(t) (trapezoid rule on 201 points: the length scale 0.1
    spans 20 of them), in chunks of 50 draws."""
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, 201, dtype=torch.float64)
    out = []
    for n in [min(50, draws - s) for s in range(0, draws, 50)]:
        sample = dl.SmoothDriver().sample((width, width), draws=n, generator=g)
        top = torch.linalg.eigvals(sample.at(t)).real.amax(-1)  # (times, n)
        out.append(torch.trapezoid(top, t, dim=0))
    return torch.cat(out).numpy()


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    kw = {**STABILITY_PRESETS["smooth"], "arch": "res-1", "activation": "identity"}
    if small:
        kw.update(width=4, n_in=4, depths=[4, 16, 64], draws=4)
    res = dl.stability(**kw)
    print(res.report())
    lam = adiabatic_growth(kw["width"], 50 if small else 2000)
    lo, med, hi = np.quantile(lam, [0.25, 0.5, 0.75])
    print(f"predicted growth at beta < 1: lambda = int_0^1 max Re eig V(t) dt, median {med:.3f} over {lam.size} draws "
          f"(quartiles {lo:.3f}, {hi:.3f})")
    path = os.path.join(out, FIGURES[0])
    res.plot(path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
