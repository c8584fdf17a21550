"""How often the transfer verdict is wrong (issue 43): its false-rejection rate where the
prediction holds and its power on settings built to say no, on real training at small sizes.

Each repetition runs the study (:func:`deeplimits.studies.transfer.plan_transfer`) at the
``--preset`` (default ``quick``: depths 2..32, width 8, rates 2^-6..2^4, 1 epoch of 256 digits)
with ``--seeds`` seeds and the base seed ``r`` (``r = 0 .. --reps - 1``: other initialisations,
another split of the data, other mini-batches), and counts the verdicts of

* the settings where the prediction holds (rescaled: SGD at beta 1/2 and 1, Adam at beta 1/2 and
  1): a ``does not transfer`` there is a false rejection, and ``transfers`` is the power of the
  equivalence test;
* the settings built to say no (beta = 0, rescaled or not, and the rate not rescaled where the
  prediction is not 0): a ``transfers`` there is a false acceptance, ``does not transfer`` the power.

Seeded: the same numbers every run. CPU seconds (user + system, ``resource.getrusage``) are
printed. Run from the repository root:

    python benchmarks/calibrate_transfer.py [--reps 6] [--seeds 4] [--preset quick]
"""

import argparse
import collections
import resource

from deeplimits.studies.transfer import PRESETS, plan_transfer

HOLDS = [(0.5, "sgd", "rescaled"), (1.0, "sgd", "rescaled"), (0.5, "adam", "rescaled"), (1.0, "adam", "rescaled")]
"""The settings where the heuristic predicts a transfer."""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=6)
    p.add_argument("--seeds", type=int, default=4)
    p.add_argument("--preset", default="quick", choices=list(PRESETS))
    args = p.parse_args()
    counts: dict = collections.defaultdict(collections.Counter)
    t0 = _cpu()
    for rep in range(args.reps):
        result = plan_transfer(**{**PRESETS[args.preset], "seeds": args.seeds, "seed": rep}).run()
        for s in result.settings:
            counts[(s["beta"], s["optimizer"], s["variant"])][s["verdict"]] += 1
        print(f"repetition {rep + 1}/{args.reps}: {_cpu() - t0:.0f} CPU s", flush=True)
    print(f"\npreset {args.preset}, {args.seeds} seeds, {args.reps} repetitions")
    print(f"{'setting':34} {'transfers':>10} {'does not':>9} {'insufficient':>13}")
    for key in sorted(counts, key=lambda k: (k not in HOLDS, k)):
        c = counts[key]
        tag = "holds" if key in HOLDS else "built to say no"
        print(f"{key[0]:g} {key[1]:4} {key[2]:13} ({tag:15}) {c['transfers']:6} {c['does not transfer']:9} "
              f"{c['insufficient evidence']:13}")
    holds = sum((counts[k] for k in HOLDS), collections.Counter())
    no = sum((c for k, c in counts.items() if k not in HOLDS), collections.Counter())
    print(f"where it holds: false rejections {holds['does not transfer']}/{sum(holds.values())}, transfers "
          f"{holds['transfers']}/{sum(holds.values())}")
    print(f"built to say no: false 'transfers' {no['transfers']}/{sum(no.values())}, does not transfer "
          f"{no['does not transfer']}/{sum(no.values())}")
    print(f"{_cpu() - t0:.0f} CPU s (user + system)")


if __name__ == "__main__":
    main()
