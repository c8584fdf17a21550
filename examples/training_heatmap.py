"""A training heat map (Marion, Fermanian, Biau & Vert, JMLR 2025, §4.2): res-1 networks of depth
1000 whose weights start on fractional Brownian paths, trained on the bundled digits with Adam;
the best test accuracy over three learning rates per (H, beta), against the line
beta = max(H, 1/2) (docs/training.md). The `quick` preset of `deeplimits train`.

Run:  python examples/training_heatmap.py [OUT_DIR] [--small]     (about 2 minutes on 2 CPU cores)
Writes OUT_DIR/heatmap_quick.png (default docs/figures); the run directory
runs/examples/training-heatmap resumes a stopped run.
"""
import os
import sys

from deeplimits.runs import RunStore
from deeplimits.studies import TRAIN_PRESETS, plan_training

FIGURES = ["heatmap_quick.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    kw = dict(TRAIN_PRESETS["quick"])
    if small:
        kw.update(hursts=[0.3, 0.7], betas=[0.3, 0.7], lrs=[1e-2], depth=8, width=4, epochs=1)
    dataset = kw.pop("dataset")
    driver = kw.pop("driver")
    plan = plan_training(dataset, driver, **kw, save_weights=False)
    run = os.path.join(out, "run") if small else os.path.join("runs", "examples", "training-heatmap")
    with RunStore(run, plan.to_dict()) as store:
        res = plan.run(store=store)
    print(res.report())
    path = os.path.join(out, FIGURES[0])
    res.plot(path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
