"""The gradients' phase boundary across depths (Marion, Fermanian, Biau & Vert, JMLR 2025, Fig. 7(b);
docs/published.md, "The gradients' phase boundary"): res-3 with fractional weights, d = 40, the
mean log10 r_p and log10 r_h against beta at L = 1000, 3000 and 10000 on the same weights (32 draws
x 4 inputs per H, H = 0.5, 0.7, 0.9), the crossings of 0 with bootstrap intervals, the band
|log10 r| < 1 that the published colour scale shows, and the crossing extrapolated in depth.

Run:  python examples/gradient_boundary.py [OUT_DIR] [--small]     (about 23 CPU minutes; a run
store under runs/gradient_boundary lets an interrupted run resume)
Writes OUT_DIR/gradient_boundary.png (default docs/figures).
"""
import os
import sys

from deeplimits.runs import RunStore
from deeplimits.studies.propagation.boundary import plan_gradient_boundary

FIGURES = ["gradient_boundary.png"]


def main(out: str = os.path.join("docs", "figures"), small: bool = False) -> list[str]:
    os.makedirs(out, exist_ok=True)
    if small:
        plan = plan_gradient_boundary([0.5, 0.9], [0.2, 0.4, 0.6, 0.8, 1.0], [40, 80, 160], width=6, n_in=4, draws=3,
                                      inputs=2)
        res = plan.run()
    else:
        plan = plan_gradient_boundary([0.5, 0.7, 0.9], draws=32)
        with RunStore(os.path.join("runs", "gradient_boundary"), plan.to_dict()) as store:
            res = plan.run(store=store)
    print(res.report())
    print(f"{res.seconds:.0f} s of work")
    path = os.path.join(out, FIGURES[0])
    res.plot(path)
    return [path]


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--small"]
    print("wrote", ", ".join(main(*args[:1], small="--small" in sys.argv)))
