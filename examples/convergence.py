"""The main job's figures: the strong error of each default regime against the depth, with the
fitted expansion, its verdict and the theory (docs/mathematics.md, "The implemented regimes"),
one figure per regime and the three side by side exactly as ``deeplimits convergence`` draws
them (the home page's figure): the same plans (:data:`deeplimits.studies.convergence.presets.DEFAULT_STUDY`,
seed 0), the same numbers, the same verdicts.

Run:  python examples/convergence.py [OUT_DIR] [--small]     (about 16 s on 2 idle CPU cores)
Writes OUT_DIR/convergence_sde.png, convergence_ode.png, convergence_fbm.png and
convergence.png (default docs/figures). ``--small`` runs a tiny study (what the tests run).
Each figure carries its results and the verdicts it shows: tests/test_figures_current.py reads
the committed ones against what the main job prints today.
"""
import os
import sys

from deeplimits.studies.convergence.plots import plot_convergence
from deeplimits.studies.convergence.presets import DEFAULT_STUDY
from deeplimits.studies.convergence.study import plan_convergence

FIGURES = ["convergence_sde.png", "convergence_ode.png", "convergence_fbm.png", "convergence.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    tiny = dict(depths=[4, 8], draws=4, width=2) if small else {}
    paths, results = [], []
    for (regime, kw), name in zip(DEFAULT_STUDY, FIGURES):  # the main job's plans
        res = plan_convergence(regime, seed=0, **kw, **tiny).run()
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
