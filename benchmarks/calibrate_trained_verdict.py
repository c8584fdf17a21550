"""How often the trained-limit verdict is wrong (issue 37): its false-rejection rate and its
power on synthetic distance tables whose truth is known, at the CPU preset's size.

Each table holds per-seed distances ``d[s, L] = f(L) exp(a_s + u_s (log L - mean log L) + e_sL)``
at the CPU preset's depths (8..256 against a reference of depth 2048) and seeds (5): ``f`` the
truth of the row, ``a_s``, ``u_s``, ``e_sL`` Gaussian (a seed's size, a seed's slope, a depth's
wobble) with the standard deviations measured on real runs of the preset (:data:`SPREAD`;
``--store DIR`` prints them for a stored run). Each row counts, over ``--tables`` seeded tables,
how often :func:`deeplimits.diagnostics.trained_pair.rate_test` says

* the wrong verdict: ``'no common limit'`` of a distance that falls at least as ``L^-1/4``, or
  ``'falls'`` of one that does not (a constant, a plateau, a slower rate); at most the level
  :data:`~deeplimits.diagnostics.trained_pair.LEVEL` (within Monte Carlo error);
* the right verdict (the power) and ``'insufficient evidence'``;
* with as many seeds again (the same table, more rows): the right verdict, and for a distance that
  falls, how often a ``'falls'`` from the first seeds turns into another verdict;

beside the rule before issue 37 (a 95% percentile bootstrap interval of the rate over all depths
against 1/4). Seeded: the same numbers every run. Run from the repository root:

    python benchmarks/calibrate_trained_verdict.py [--tables 500] [--seeds 5] [--store DIR]
"""

import argparse
import math

import numpy as np

from deeplimits.diagnostics.trained_pair import LEVEL, MIN_RATE, deep_window, rate_test
from deeplimits.studies.fits import bootstrap_fit
from deeplimits.studies.trained_limit.presets import DEFAULTS, PRESETS

CPU = PRESETS["cpu"]
SPREAD = {"measured": (0.19, 0.06, 0.09), "widest (res-3 weights)": (0.28, 0.21, 0.20)}
"""Standard deviations ``(seed size a_s, seed slope u_s, depth wobble e_sL)`` of ``log d``
(``--store``). ``measured``: the largest over the CPU preset's cases (linear, res-2, iid,
control), both distances, before and after training, in ``deeplimits trained-limit`` (5 seeds):
res-2's trained weights set the first two (0.191, 0.059), control's states at initialisation
the third (0.086); the same preset at 3 seeds (``--seeds 3``) gives 0.115, 0.049, 0.084.
``widest``: the trained weights of the ReLU case (``res-3``) in ``--preset all`` (5 seeds), the
widest spread of any case."""


def truths(depths, reference):
    """The rows: ``(name, f, falls)``, ``falls`` whether ``f`` falls at least as ``L^-1/4``."""
    L = np.asarray(depths, dtype=float)
    deep = np.isin(L, deep_window(depths))

    def plateau_at(rate):  # c (L^-1 - R^-1 + p): the p whose deepest depths fall at `rate`
        lo, hi = 0.0, 1.0
        for _ in range(60):
            p = (lo + hi) / 2
            lo, hi = (p, hi) if _rate(L[deep], 1 / L[deep] - 1 / reference + p) > rate else (lo, p)
        return p

    pb = plateau_at(MIN_RATE)
    return [("r = 1: c (L^-1 - R^-1)", 1 / L - 1 / reference, True),
            ("r = 1/2: c (L^-1/2 - R^-1/2)", L ** -0.5 - reference ** -0.5, True),
            ("r = 1/2, independent errors: c (L^-1 - R^-1)^1/2", np.sqrt(1 / L - 1 / reference), True),
            ("r = 1/4: c (L^-1/4 - R^-1/4)", L ** -0.25 - reference ** -0.25, True),
            ("r = 1/4, an exact limit: c L^-1/4 (the boundary)", L ** -0.25, True),
            ("r = 0.24, an exact limit: c L^-0.24 (the boundary)", L ** -0.24, False),
            ("r = 0: c", np.ones_like(L), False),
            (f"plateau: c (L^-1 - R^-1 + {pb:.3g}) (deepest at 1/4)", 1 / L - 1 / reference + pb, False),
            ("plateau: c (L^-1 - R^-1 + 1/8)", 1 / L - 1 / reference + 1 / 8, False)]


def _rate(L, f):
    x = np.log(L) - np.log(L).mean()
    return float(-(np.log(f) * x).sum() / (x ** 2).sum())


def tables(f, depths, seeds, n, spread, rng):
    """``n`` tables ``(2 seeds, depths)`` of the truth ``f``: the first ``seeds`` rows are the table,
    all of them the same table with as many seeds again."""
    sa, su, se = spread
    x = np.log(np.asarray(depths, dtype=float))
    x = x - x.mean()
    noise = (rng.normal(0, sa, (n, 2 * seeds, 1)) + rng.normal(0, su, (n, 2 * seeds, 1)) * x
             + rng.normal(0, se, (n, 2 * seeds, len(depths))))
    return f * np.exp(noise)


def old_rule(depths, table):
    """The verdict before issue 37: the 95% percentile bootstrap interval of the rate over all depths."""
    _, _, (lo, hi) = bootstrap_fit(np.log(depths), table)
    return "falls" if -hi > MIN_RATE else "no common limit" if -lo < MIN_RATE else "inconclusive"


def ci(k, n):
    """The 95% Wilson interval of a proportion ``k / n``, as text."""
    p, z = k / n, 1.96
    mid, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{p:.3f} [{max(0.0, mid - half):.3f}, {min(1.0, mid + half):.3f}]"


def calibrate(depths, reference, seeds, n, spread, seed):
    rng = np.random.default_rng(seed)
    deep = deep_window(depths)
    print(f"{'truth':52} {'rate':>5} {'deep':>5} {'wrong [95% CI]':>21} {'right':>6} {'insuff.':>7} "
          f"{'2x seeds: right, wrong':>22} {'falls->worse':>12} {'old rule: wrong':>21} {'right':>6}")
    for name, f, falls in truths(depths, reference):
        wrong_v, right_v = ("no common limit", "falls") if falls else ("falls", "no common limit")
        count = {"wrong": 0, "right": 0, "insufficient evidence": 0, "worse": 0, "falls": 0, "old wrong": 0,
                 "old right": 0, "right 2x": 0, "wrong 2x": 0}
        for t in tables(f, depths, seeds, n, spread, rng):
            v = rate_test(depths, t[:seeds])["verdict"]
            count["wrong"] += v == wrong_v
            count["right"] += v == right_v
            count["insufficient evidence"] += v == "insufficient evidence"
            v2 = rate_test(depths, t)["verdict"]
            count["right 2x"] += v2 == right_v
            count["wrong 2x"] += v2 == wrong_v
            if falls and v == "falls":
                count["falls"] += 1
                count["worse"] += v2 != "falls"
            old = old_rule(depths, t[:seeds])
            count["old wrong"] += old == wrong_v
            count["old right"] += old == right_v
        worse = f"{count['worse']}/{count['falls']}" if falls else "-"
        print(f"{name:52} {_rate(np.array(depths, float), f):5.2f} {_rate(np.array(deep, float), f[-len(deep):]):5.2f} "
              f"{ci(count['wrong'], n):>21} {count['right'] / n:6.3f} {count['insufficient evidence'] / n:7.3f} "
              f"{count['right 2x'] / n:15.3f}, {count['wrong 2x'] / n:5.3f} {worse:>12} {ci(count['old wrong'], n):>21} {count['old right'] / n:6.3f}")


def measured_spread(path):
    """Per case, distance and epoch (first, last) of a stored trained-limit run: the standard
    deviations of a seed's size, a seed's slope and a depth's wobble in ``log d`` (the model above)."""
    from deeplimits.runs import RunStore

    by_case = {}
    for key, result in RunStore(path, create=False).results().items():
        by_case.setdefault(key.split("/")[1], []).extend(result["records"])
    print(f"{'case':10} {'epoch':>5} {'distance':16} {'seed size':>9} {'seed slope':>10} {'depth wobble':>12}")
    for case, records in by_case.items():
        key = {(r["depth"], r["seed"], r["epoch"]): r for r in records}
        depths, seeds = sorted({r["depth"] for r in records}), sorted({r["seed"] for r in records})
        x = np.log(depths) - np.log(depths).mean()
        epochs = sorted({r["epoch"] for r in records})
        for epoch in sorted({epochs[0], epochs[-1]}):
            for q in ("weight_distance", "state_distance"):
                with np.errstate(divide="ignore"):
                    y = np.log(np.array([[key[(L, s, epoch)][q] for L in depths] for s in seeds]))
                if not np.isfinite(y).all():
                    continue  # zero (one path) or blown up
                a, b = y.mean(1), (y - y.mean(1, keepdims=True)) @ x / (x @ x)
                resid = y - a[:, None] - np.outer(b, x)
                resid -= resid.mean(0)
                se = math.sqrt((resid ** 2).sum() / ((len(seeds) - 1) * (len(depths) - 2)))
                su = math.sqrt(max(b.var(ddof=1) - se ** 2 / (x @ x), 0.0))
                print(f"{case:10} {epoch:5d} {q:16} {a.std(ddof=1):9.3f} {su:10.3f} {se:12.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=500, help="seeded tables per row (default 500)")
    ap.add_argument("--seeds", type=int, default=DEFAULTS["seeds"], help="seeds per table (default: the preset's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--store", help="print the spread measured in this stored trained-limit run and stop")
    args = ap.parse_args()
    if args.store:
        return measured_spread(args.store)
    depths, reference = CPU["depths"], CPU["reference"]
    print(f"depths {depths} against {reference}, {args.seeds} seeds, {args.tables} tables per row, level {LEVEL:g}; "
          f"the verdict also reads the deepest {len(deep_window(depths))}")
    for i, (label, spread) in enumerate(SPREAD.items()):
        print(f"\nspread {label}: seed size {spread[0]}, seed slope {spread[1]}, depth wobble {spread[2]}")
        calibrate(depths, reference, args.seeds, args.tables, spread, args.seed + i)


if __name__ == "__main__":
    main()
