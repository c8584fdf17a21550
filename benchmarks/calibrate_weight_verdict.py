"""How often the weight verdict is wrong (issue 37, item 5; docs/weights.md, "How often the verdict is wrong").

The verdict of ``scaling_exponents`` (smooth, rough, sparse, neither, insufficient evidence) is a
test: on seeded families whose hypothesis is known (``deeplimits.diagnostics.calibration``:
Hypothesis 1, 2 and 3 families and families built to say no, layers of width x width, the
scaling study's width 10), this counts the rate at which it names a wrong hypothesis (with its
95% Clopper-Pearson upper bound), the right one (the power), neither and insufficient evidence:

* at the scaling study's CPU depths floor(1.2^n), n = 13..27 (10 to 137 layers, SHORT_CPU_DEPTHS);
* at the least evidence a verdict accepts: 4 depths spanning a factor of 4 (20, 30, 45, 80: the
  noise part, measured from 20 layers on, at all four);
* at three depths (16, 32, 64): no verdict;
* with ``--bounds``, the choice of ``MAX_WIDTH``: the wrong verdicts at each bound on the
  families of the least evidence with each depth's weights scaled by exp(0.15 Z) (a stress
  test: trained networks scatter from depth to depth), at 4 and at 7 depths from 20 to 80.

The power of each hypothesis by its parameters follows each table. Seeded: the same numbers on
every run. Run from the repository root (about 2 minutes on one core; 4 more with --bounds):

    OMP_NUM_THREADS=1 python benchmarks/calibrate_weight_verdict.py [--count 500] [--bounds 0.4,0.5,0.6,0.8]
"""

import argparse
import collections
import time

import torch

from deeplimits.diagnostics import calibration as C
from deeplimits.diagnostics import scaling_exponents, verdict, weight_diagnostics
from deeplimits.studies.scaling.presets import SHORT_CPU_DEPTHS

LEAST = (20, 30, 45, 80)
THREE = (16, 32, 64)


def families(kind, count, depths, seed, width, scatter=0.0):
    """``[(parameters, [WeightDiagnostics per depth])]`` of families ``0 .. count - 1`` of ``kind``."""
    out = []
    for i in range(count):
        params, tensors = C.known_family(kind, depths, seed=C.family_seed(kind, i, seed), width=width, scatter=scatter)
        out.append((params, [weight_diagnostics(A) for A in tensors]))
    return out


def verdicts(fams):
    return [(p, scaling_exponents(f).hypothesis) for p, f in fams]


#: the exponents the verdict reads (their intervals are what MAX_WIDTH bounds)
READ = ("beta", "max_norm", "scaled_increments", "noise_qv", "rss", "layers_90")


def widest(fams) -> list[float]:
    """Per family, the widest 95% interval among the exponents the verdict reads."""
    out = []
    for _, f in fams:
        e = scaling_exponents(f).exponents
        out.append(max(e[k]["ci"][1] - e[k]["ci"][0] for k in READ))
    return out


def power_lines(kind, judged):
    """The rate of the right verdict by the family's parameters (beta and nu; beta; the layers)."""
    keys = {"smooth": ("beta", "nu"), "rough": ("beta",), "sparse": ("layers",)}.get(kind)
    if not keys:
        return []
    groups = collections.defaultdict(list)
    for p, v in judged:
        groups[tuple(p[k] for k in keys)].append(v == kind)
    cells = [f"{'/'.join(f'{x:g}' for x in g)}: {sum(r)}/{len(r)}" for g, r in sorted(groups.items())]
    return [f"  {kind} right by {'/'.join(keys)}: " + ", ".join(cells)]


def table(title, count, depths, seed, width, power=True):
    """The rates of each verdict on each kind, then the power by parameters and the widest intervals."""
    t0 = time.perf_counter()
    counts, lines = {}, []
    for kind in C.KINDS:
        fams = families(kind, count, depths, seed, width)
        judged = verdicts(fams)
        counts[kind] = dict(collections.Counter(v for _, v in judged))
        if power:
            w = sorted(widest(fams))
            lines += power_lines(kind, judged) + [f"  {kind}: the widest interval read, median {w[len(w) // 2]:.2f}, "
                                                  f"99th percentile {w[int(0.99 * (len(w) - 1))]:.2f}, max {w[-1]:.2f}"]
    print(f"\n{title}: depths {list(depths)}, width {width}, {count} families of each kind "
          f"({time.perf_counter() - t0:.0f} s)\n")
    print(C.calibration_table(counts))
    print("\n".join(lines))


def bound_sweep(bounds, count, seed, width, scatter=0.15):
    """Wrong verdicts and the right ones at each MAX_WIDTH, on scattered families of the least evidence."""
    saved = verdict.MAX_WIDTH
    print(f"\nthe bound MAX_WIDTH on scattered families (each depth's weights times exp({scatter} Z)), "
          f"{count} of each kind: wrong / right / insufficient evidence")
    for depths in (LEAST, (20, 25, 32, 40, 50, 64, 80)):
        fams = {kind: families(kind, count, depths, seed, width, scatter) for kind in C.KINDS}
        print(f"depths {list(depths)}")
        for b in bounds:
            verdict.MAX_WIDTH = b
            cells = []
            for kind, fam in fams.items():
                c = collections.Counter(v for _, v in verdicts(fam))
                wrong = sum(n for v, n in c.items() if v in ("smooth", "rough", "sparse") and v != kind)
                cells.append(f"{kind} {wrong}/{c.get(kind, 0)}/{c.get(verdict.INSUFFICIENT, 0)}")
            print(f"  MAX_WIDTH {b:g}: " + ", ".join(cells))
    verdict.MAX_WIDTH = saved


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=500, help="families of each kind per table (default 500)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--width", type=int, default=10, help="each layer is width x width (default 10)")
    ap.add_argument("--bounds", help="comma-separated MAX_WIDTH values to sweep on scattered families")
    a = ap.parse_args()
    torch.set_num_threads(1)
    print(f"the rule: at least {verdict.MIN_DEPTHS} depths spanning a factor of {verdict.MIN_SPAN:g}, every exponent "
          f"read with a 95% interval at most {verdict.MAX_WIDTH:g} wide")
    table("the scaling study's CPU depths", a.count, SHORT_CPU_DEPTHS, a.seed, a.width)
    table("the least evidence", a.count, LEAST, a.seed, a.width)
    table("three depths", min(a.count, 100), THREE, a.seed, a.width, power=False)
    if a.bounds:
        bound_sweep([float(b) for b in a.bounds.split(",")], a.count, a.seed + 500000, a.width)


if __name__ == "__main__":
    main()
