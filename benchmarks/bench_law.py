"""The law study's variance reduction, measured (issue 42): draws per second at a given standard
error, the coupling and the control variates against plain Monte Carlo.

For each weight law, three ways to estimate the weak error ``E phi(h_L) - E phi(H_1)`` at the
depths 4 to 64 (``dl`` law study, ``d = 4``, Euler-Maruyama on 64, 128, 256 steps):

* ``plain``: every network draws its own i.i.d. weights, the SDE its own path (``method='plain'``);
* ``coupled``: one Brownian path per draw drives the SDE and, through quantile transforms, every
  network (``method='coupled'``);
* ``coupled + controls``: the same with the martingale control variates (non-Gaussian laws).

Each runs in this process, on one thread, timed by its CPU time (``time.process_time``: a loaded
machine stretches the wall clock, not the work). Its cost per draw and the variance per draw of the
estimate give the draws per second it takes to reach a given standard error; the table's ``gain`` is
that rate over plain Monte Carlo's (``(var_plain * t_plain) / (var * t)``), per test function at the
deepest depth. Run from the repository root:

    python benchmarks/bench_law.py [--draws 65536] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import torch

from deeplimits.studies.law import PHIS, plan_law

METHODS = {"plain": "plain", "coupled": "coupled", "coupled + controls": "controls"}


def measure(law: str, method: str, draws: int, seed: int) -> dict:
    """One way on one law: CPU seconds per draw and the variance per draw at the deepest depth."""
    plan = plan_law(law=law, depths=[4, 8, 16, 32, 64], fine=256, draws=draws, samples=100, seed=seed,
                    method=METHODS[method])
    t0 = time.process_time()
    r = plan.run()
    cpu = time.process_time() - t0
    return {"cpu_per_draw": cpu / draws, "variance": [q["variance"][-1] for q in r.phis], "verdict": r.verdict}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=65536)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    names = list(PHIS)
    print("| law | method | draws/s (CPU) | " + " | ".join(f"var/draw {n} (gain)" for n in names) + " |")
    print("|---|---|---:|" + "---:|" * len(names))
    for law in ("uniform", "rademacher", "gaussian"):
        rows = {m: measure(law, m, args.draws, args.seed) for m in METHODS if not (law == "gaussian" and "controls" in m)}
        base = rows["plain"]
        for m, row in rows.items():
            gains = [(b * base["cpu_per_draw"]) / (v * row["cpu_per_draw"]) for b, v in
                     zip(base["variance"], row["variance"])]
            cells = " | ".join(f"{v:.3g} ({g:.1f}x)" for v, g in zip(row["variance"], gains))
            print(f"| {law} | {m} | {1 / row['cpu_per_draw']:.0f} | {cells} |", flush=True)
    print(f"\n{args.draws} draws per row; gain: draws per second at a given standard error over plain Monte Carlo "
          f"(the deepest depth, L = 64); geometric means in the text")


if __name__ == "__main__":
    main()
