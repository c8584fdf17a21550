"""How often the law study's verdict is wrong (issue 42; docs/law.md, "How often the verdict is
wrong"): its size, the rate of ``disagrees`` on the three correct laws over many seeded runs, and
its power on the two laws built to say no (a mean of 0.3/sqrt(d), a variance of 1.2/d), each with
a 95% Wilson interval (:func:`deeplimits.studies.law.calibrate_law`). With ``--synthetic``, the
fit and verdict alone on Gaussian tables about truths shaped like measured ones (the ``result.json``
of ``deeplimits law``: :func:`deeplimits.studies.law.calibrate_fit`), at 1/4 to 16 times their
draws. Run from the repository root:

    python benchmarks/calibrate_law_verdict.py [--runs 100] [--power-runs 30] [--draws 8192] [--seed 0]
    python benchmarks/calibrate_law_verdict.py --synthetic runs/law/result.json [--runs 400] [--every-depth]
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from deeplimits.studies.law import SHIFTS, calibrate_fit, calibrate_law, correct_laws


def synthetic(paths: list[str], runs: int, seed: int, deeper: bool) -> None:
    """The verdict on tables of known truth shaped like each result's joint table (``deeper=False``:
    every depth read alone, without the search from a deeper depth)."""
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        spec = r.get("plan") or r["spec"]  # the plan's spec (results written before results held their plans: "spec")
        print(f"{path} ({spec['law']}, {r['draws']} draws):")
        cal = calibrate_fit(spec["depths"], r["joint"]["error"], r["joint"]["cov"], runs=runs, seed=seed,
                            deeper=deeper)
        print(cal.report(), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--power-runs", type=int, default=30)
    parser.add_argument("--draws", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--synthetic", nargs="+", metavar="RESULT", help="result.json files of deeplimits law")
    parser.add_argument("--every-depth", action="store_true",
                        help="with --synthetic: read every depth alone, without the search from a deeper depth")
    args = parser.parse_args()
    torch.set_num_threads(1)
    t0 = time.process_time()
    if args.synthetic:
        synthetic(args.synthetic, args.runs, args.seed, not args.every_depth)
        print(f"{time.process_time() - t0:.0f} CPU s")
        return
    size = calibrate_law(cases=list(correct_laws()), runs=args.runs, draws=args.draws, seed=args.seed)
    print(size.report(), flush=True)
    power = calibrate_law(cases=list(SHIFTS), runs=args.power_runs, draws=args.draws, seed=args.seed + 1)
    print("\n".join(power.report().splitlines()[2:]))
    print(f"{time.process_time() - t0:.0f} CPU s")


if __name__ == "__main__":
    main()
