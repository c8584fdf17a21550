"""Stability curves with smooth weights (Marion, Fermanian, Biau & Vert, JMLR 2025, §3.2, Figs. 4
and 5): res-3 with smooth (RBF Gaussian process) weights, d = 40, depths 10..1000, beta in
{1/2, 1, 2}, 50 draws: the median r_h (Fig. 4) and r_p (Fig. 5) with quartile bands against the
depth; explosion at beta = 1/2, a non-trivial limit at beta = 1, the identity at beta = 2
(docs/published.md).

Run:  python examples/smooth_stability.py [OUT_DIR] [--small]     (a few seconds on 2 CPU cores)
Writes OUT_DIR/stability_smooth.png (default docs/figures).
"""
import os
import sys

import deeplimits as dl
from deeplimits.studies import STABILITY_PRESETS

FIGURES = ["stability_smooth.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    kw = dict(STABILITY_PRESETS["smooth"])
    if small:
        kw.update(width=4, n_in=4, depths=[4, 16], draws=4)
    res = dl.stability(**kw)
    print(res.report())
    path = os.path.join(out, FIGURES[0])
    res.plot(path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
