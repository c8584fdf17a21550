"""How often the shapes study's verdicts are wrong: ``studies`` small seeded studies of the published
protocol (size: the rate of ``disagrees``; power: of ``agrees``) and of the case built to say no
(power: the rate of ``disagrees``), per verdict (:mod:`deeplimits.studies.shapes.calibration`).

Run from the repository root:

    python benchmarks/calibrate_shapes_verdicts.py [--studies 100] [--seeds 16] [--verdicts swap,ushape]
"""

import argparse
import json
import resource

from deeplimits.studies.shapes.calibration import GRIDS, calibrate_shapes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--studies", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--verdicts", default="swap,ushape")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the result there")
    args = ap.parse_args(argv)
    verdicts = [v for v in args.verdicts.split(",") if v]
    for v in verdicts:
        print(f"{v}: {GRIDS[v]}")
    result = calibrate_shapes(verdicts=verdicts, studies=args.studies, seeds=args.seeds, seed=args.seed)
    print(result.report())
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{ru.ru_utime + ru.ru_stime:.0f} CPU s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result.to_dict(), f, indent=1)


if __name__ == "__main__":
    main()
