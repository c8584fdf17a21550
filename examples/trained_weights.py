"""A weight coordinate against the layer index, at initialisation and after training, for
smooth weights at beta = 1, i.i.d. weights at beta = 1 and i.i.d. weights at beta = 1/2
(Marion, Fermanian, Biau & Vert, JMLR 2025, §4.2; docs/training.md).

Run:  python examples/trained_weights.py [OUT_DIR]     (about a minute on 2 CPU cores)
Writes OUT_DIR/trained_weights.png (default runs/trained-weights) and one run directory per
case, which the same command resumes.
"""
import os
import sys

from deeplimits.plots import plot_weight_paths
from deeplimits.runs import RunStore
from deeplimits.studies import plan_training
from deeplimits.studies.trained import weight_paths

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("runs", "trained-weights")
cases = [("smooth", 1.0), ("gaussian", 1.0), ("gaussian", 0.5)]
panels = []
for driver, beta in cases:
    plan = plan_training("digits", driver, betas=[beta], lrs=[1e-2], depth=1000, width=30, epochs=10,
                         activation="relu")
    directory = os.path.join(out, f"{driver}-beta{beta:g}")
    with RunStore(directory, plan.to_dict()) as store:
        result = plan.run(store=store)
    (panel,) = weight_paths(plan, directory, result)
    best = result.best[0]
    panel["label"] = f"{'smooth' if driver == 'smooth' else 'i.i.d.'} weights, beta = {beta:g} " \
                     f"(test accuracy {best['test_accuracy']:.2f})"
    panels.append(panel)
    print(panel["label"])
path = os.path.join(out, "trained_weights.png")
plot_weight_paths(panels, path=path)
print(f"wrote {path}")
