"""The (H, beta) phase diagram (Marion, Fermanian, Biau & Vert, JMLR 2025, §4): mean log10 r_h
and log10 r_p of res-3 with fractional weights over 51 H x 70 beta at L = 1000, the critical
scaling beta*(H) against max(H, 1/2), and the slope of r_h in depth per cell (docs/theory.md).

Run:  python examples/phase_diagram.py [OUT_DIR] [--small]     (about a minute on 2 CPU cores)
Writes OUT_DIR/phase.png (default docs/figures).
"""
import os
import sys

import deeplimits as dl

FIGURES = ["phase.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    if small:
        res = dl.phase_diagram([0.3, 0.8], [0.2, 0.6, 1.0], width=4, n_in=4, depth=40, draws=2, inputs=2)
    else:
        res = dl.phase_diagram()  # the published grid
    print(res.report())
    path = os.path.join(out, FIGURES[0])
    res.plot(path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
