"""The three convergence plots: the strong error of each default regime against the depth, with
the fitted rate and its theory (docs/mathematics.md, "The implemented regimes"), and the three
side by side as the main job (``deeplimits convergence``) draws them (the home page's figure).

Run:  python examples/convergence.py [OUT_DIR] [--small]     (about 16 s on 2 CPU cores)
Writes OUT_DIR/convergence_sde.png, convergence_ode.png, convergence_fbm.png and
convergence.png (default docs/figures). ``--small`` runs a tiny study (what the tests run).
"""
import os
import sys

import deeplimits as dl
from deeplimits.studies.convergence.plots import plot_convergence

FIGURES = ["convergence_sde.png", "convergence_ode.png", "convergence_fbm.png", "convergence.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    tiny = dict(depths=[4, 8], draws=4, width=2) if small else {}
    paths, results = [], []
    for regime, kw, name in [("sde", {}, FIGURES[0]), ("ode", {}, FIGURES[1]), ("fbm", {"hurst": 0.75}, FIGURES[2])]:
        res = dl.strong_convergence(regime, seed=0, **kw, **tiny)
        print(res.report())
        paths.append(os.path.join(out, name))
        res.plot(path=paths[-1])
        results.append(res)
    paths.append(os.path.join(out, FIGURES[3]))
    plot_convergence(results, path=paths[-1])
    return paths


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
