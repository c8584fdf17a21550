"""The inside model at initialisation (Marion, Fermanian, Biau & Vert, JMLR 2025, Appendix D,
Figs. 10-14): h + L^-beta tanh(W h), without bias, d = 40. With i.i.d. uniform weights (depths
10..1000, beta in {1/4, 1/2, 1}, 50 draws) the median r_h (Fig. 10) and r_p (Fig. 11) against the
depth; the distributions of ||h_L|| / ||h_0|| and ||p_0|| / ||p_L|| at beta = 1/2, L = 1000,
d = 100 (Fig. 12; 1000 draws here, the published 10^4 are `deeplimits stability --preset
criticality-inside`); with smooth weights (beta in {1/2, 1, 2}) r_h and r_p again (Figs. 13, 14)
(docs/published.md).

Run:  python examples/inside_model.py [OUT_DIR] [--small]     (about 2 minutes on 2 CPU cores)
Writes OUT_DIR/stability_inside.png, OUT_DIR/criticality_inside.png and
OUT_DIR/stability_inside_smooth.png (default docs/figures).
"""
import os
import sys

import deeplimits as dl
from deeplimits.studies import STABILITY_PRESETS

FIGURES = ["stability_inside.png", "criticality_inside.png", "stability_inside_smooth.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    paths = [os.path.join(out, f) for f in FIGURES]
    tiny = dict(width=4, n_in=4, depths=[4, 16], draws=4) if small else {}
    for preset, path in (("iid-inside", paths[0]), ("smooth-inside", paths[2])):
        res = dl.stability(**{**STABILITY_PRESETS[preset], **tiny})
        print(res.report())
        res.plot(path)
    kw = {**STABILITY_PRESETS["criticality-inside"], "draws": 1000}
    if small:
        kw.update(width=8, n_in=4, depths=[20], draws=40)
    res = dl.stability(**kw)
    print(res.report())
    res.plot_histograms(paths[1])
    return paths


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
