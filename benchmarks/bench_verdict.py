"""The strong-order verdict's cost: reading stored tables by today's rule against an earlier
commit's code reading the same tables, in one run.

A verdict (``ConvergenceResult.verdict``: the declared expansion fitted and tested, its leading
exponent's profile interval read by the equivalence test) is most of what a calibration's
``--reread`` costs (docs/schemes.md, "How often the verdict is wrong") and part of every run sized
to decide. The tables are the committed statistics of three calibration rows
(benchmarks/calibration_stats/calibration/: Euler-Maruyama on the linear SDE against its exact
solution, the fbm regime at H = 0.6 against its nested reference, whose mixed terms are tried at
11 coherences, and the ode regime), each table read at the shifts 0, +0.05 and -0.1 of its
exponent. Each code base runs in a child process of its own and reports the CPU seconds of the
readings alone (after the imports and a first reading) and every verdict with its interval, so the
two are also checked to read the tables alike. Run from the repository root:

    python benchmarks/bench_verdict.py [--tables 20] [--before PATH]

(``--before PATH``: the same readings with ``PYTHONPATH=PATH``, e.g. ``git worktree add PATH REV``.)
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
ROWS = (("euler-maruyama/linear-sde", "euler-maruyama_linear-sde"), ("fbm-H0.6", "fbm-H0.6"), ("ode", "ode"))
SHIFTS = (0.0, 0.05, -0.1)


def child(tables: int) -> dict:
    """The readings in this process: CPU seconds and every reading's verdict and interval."""
    import dataclasses

    from deeplimits.studies.scheme_order.calibration import choose
    from deeplimits.studies.scheme_order.table_stats import RowStats

    work = []
    for name, stem in ROWS:
        (label, case), = choose([name])
        case = dataclasses.replace(case() if callable(case) else case, name=label)
        work.append((name, case, RowStats.load(ROOT / "benchmarks" / "calibration_stats" / "calibration" /
                                               f"{stem}.npz").tables))
    work[0][2].result(work[0][1], 0).fit  # noqa: B018 - the first reading's imports are not counted
    out, t0 = {}, time.process_time()
    for name, case, stats in work:
        for i in range(1, tables + 1):
            for s in SHIFTS:
                fit = stats.result(case, i, shift=s).fit
                out[f"{name}/{i}/{s}"] = None if fit is None else [fit.verdict, list(fit.exponent_interval)]
    return {"seconds": time.process_time() - t0, "readings": out}


def run(path: str | None, tables: int) -> dict:
    env = dict(os.environ, PYTHONPATH=path or str(ROOT))
    done = subprocess.run([sys.executable, __file__, "--child", "--tables", str(tables)], env=env, cwd=ROOT,
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=20, help="tables read per row (each at 3 shifts)")
    ap.add_argument("--before", help="an earlier commit's tree, read with PYTHONPATH=PATH")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.tables)))
        return 0
    now = run(None, args.tables)
    n = len(now["readings"])
    print(f"today: {n} readings in {now['seconds']:.2f} s of CPU, {1e3 * now['seconds'] / n:.1f} ms a verdict")
    if args.before:
        before = run(args.before, args.tables)
        same = sum(before["readings"][k] == v for k, v in now["readings"].items())
        print(f"before ({args.before}): {before['seconds']:.2f} s of CPU, {1e3 * before['seconds'] / n:.1f} ms a "
              f"verdict; {before['seconds'] / now['seconds']:.2f} times today's; {same} of {n} readings alike")
    return 0


if __name__ == "__main__":
    sys.exit(main())
