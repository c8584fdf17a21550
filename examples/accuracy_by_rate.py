"""The training grid one learning rate at a time (Marion, Fermanian, Biau & Vert, JMLR 2025, §4.2:
with a fixed learning rate the accuracy falls for large beta): res-1 networks of depth 200 whose
weights start on fractional Brownian paths (H in 0.1..0.9), beta from 0.5 to 1.3 (the paper's
Table 4 goes to 1.3), trained 3 epochs on the bundled digits with Adam at three learning rates;
per rate, the mean test accuracy over H (cells on or above beta = max(H, 1/2)) against beta, with
standard errors, and whether it falls at the largest beta (docs/training.md, "One learning rate at
a time"). A smaller grid than the `quick` preset's (depth 1000, 10 epochs), to run in minutes.

Run:  python examples/accuracy_by_rate.py [OUT_DIR] [--small]     (71 s by the dry run's estimate, 27 minutes on the
shared, loaded 2-core machine; the run directory runs/examples/accuracy-by-rate resumes a stopped run)
Writes OUT_DIR/accuracy_by_rate.png (default docs/figures).
"""
import os
import sys

from deeplimits.runs import RunStore
from deeplimits.studies import plan_training
from deeplimits.studies.training import plot_accuracy_by_rate

FIGURES = ["accuracy_by_rate.png"]
GRID = dict(hursts=[0.1, 0.3, 0.5, 0.7, 0.9], betas=[0.5, 0.7, 0.9, 1.1, 1.3], lrs=[1e-4, 1e-3, 1e-2], depth=200,
            width=30, epochs=3, activation="relu")


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    kw = dict(GRID)
    if small:
        kw.update(hursts=[0.3, 0.7], betas=[0.5, 0.7, 0.9], lrs=[1e-3, 1e-2], depth=8, width=4, epochs=1)
    plan = plan_training("digits", "fractional", **kw, save_weights=False)
    run = os.path.join(out, "run") if small else os.path.join("runs", "examples", "accuracy-by-rate")
    with RunStore(run, plan.to_dict()) as store:
        res = plan.run(store=store)
    print(res.report())
    path = os.path.join(out, FIGURES[0])
    plot_accuracy_by_rate(res, path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
