"""A weight coordinate against the layer index, at initialisation and after training, for
smooth weights at beta = 1, i.i.d. weights at beta = 1 and i.i.d. weights at beta = 1/2
(Marion, Fermanian, Biau & Vert, JMLR 2025, §4.2; docs/training.md).

Run:  python examples/trained_weights.py [OUT_DIR] [--small]     (about 20 s on 2 CPU cores)
Writes OUT_DIR/trained_weights.png (default docs/figures); one run directory per case under
runs/examples/trained-weights, which the same command resumes.
"""
import os
import sys

from deeplimits.studies.training.plots import plot_weight_paths
from deeplimits.runs import RunStore
from deeplimits.studies import Grid, Network, Training, plan_training
from deeplimits.studies.training.trained import weight_paths

FIGURES = ["trained_weights.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    runs = os.path.join(out, "runs") if small else os.path.join("runs", "examples", "trained-weights")
    depth, width, epochs = (16, 4, 1) if small else (1000, 30, 10)
    panels = []
    for driver, beta in [("smooth", 1.0), ("gaussian", 1.0), ("gaussian", 0.5)]:
        plan = plan_training("digits", driver, grid=Grid(betas=[beta], lrs=[1e-2]),
                             network=Network(activation="relu", depth=depth, width=width),
                             training=Training(epochs=epochs))
        directory = os.path.join(runs, f"{driver}-beta{beta:g}")
        with RunStore(directory, plan.to_dict()) as store:
            result = plan.run(store=store)
        (panel,) = weight_paths(plan, directory, result)
        best = result.best[0]
        panel["label"] = (f"{'smooth' if driver == 'smooth' else 'i.i.d.'} weights, beta = {beta:g} "
                          f"(test accuracy {best['test_accuracy']:.2f})")
        panels.append(panel)
        print(panel["label"])
    path = os.path.join(out, FIGURES[0])
    plot_weight_paths(panels, path=path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
