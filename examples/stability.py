"""Stability curves at initialisation (Marion, Fermanian, Biau & Vert, JMLR 2025, §4): the
published i.i.d. protocol (res-3, d = 40, depths 10..1000, beta in {1/4, 1/2, 1}, 50 draws),
with each bound beside its measured counterpart (docs/theory.md).

Run:  python examples/stability.py [OUT_DIR] [--small]     (a few seconds on 2 CPU cores)
Writes OUT_DIR/stability.png and OUT_DIR/theory.png (default docs/figures).
"""
import os
import sys

import deeplimits as dl
from deeplimits.studies import STABILITY_PRESETS

FIGURES = ["stability.png", "theory.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    kw = {k: v for k, v in STABILITY_PRESETS["iid"].items()}
    if small:
        kw.update(width=4, n_in=4, depths=[4, 16], draws=4)
    res = dl.stability(**kw)
    print(res.report())
    paths = [os.path.join(out, f) for f in FIGURES]
    res.plot(paths[0])
    res.plot_theory(paths[1])
    return paths


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
