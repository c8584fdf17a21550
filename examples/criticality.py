"""The distributions at criticality (Marion, Fermanian, Biau & Vert, JMLR 2025, §4): histograms
of ||h_L|| / ||h_0|| and ||p_0|| / ||p_L|| for res-3 at beta = 1/2, L = 1000, d = 100, with
their log-normal fits and a normality test of the logarithms (docs/theory.md).

Run:  python examples/criticality.py [OUT_DIR] [--small]     (about 55 s on 2 CPU cores: 1000
draws; the published 10^4 draws are `deeplimits stability --preset criticality`)
Writes OUT_DIR/criticality.png (default docs/figures).
"""
import os
import sys

import deeplimits as dl
from deeplimits.studies import STABILITY_PRESETS

FIGURES = ["criticality.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    kw = {**STABILITY_PRESETS["criticality"], "draws": 1000}
    if small:
        kw.update(width=8, n_in=4, depths=[20], draws=40)
    res = dl.stability(**kw)
    print(res.report())
    path = os.path.join(out, FIGURES[0])
    res.plot_histograms(path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
