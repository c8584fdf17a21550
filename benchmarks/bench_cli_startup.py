"""Benchmark of the command line's start-up (issue 11): ``deeplimits --help`` and
``deeplimits --version`` must not import torch and answer in well under a second.

Each command is run as a fresh process ``--runs`` times (default 7, after one warm-up run that
fills the file cache) and the median wall time is reported, against two floors measured in the
same run: the bare interpreter (``python -c pass``) and ``python -c "import torch"`` (what every
command paid before the command line was made thin). Also checked: no ``torch`` module in
``python -X importtime -m deeplimits --help``.

Run from the repository root:

    python benchmarks/bench_cli_startup.py [--runs 7] [--json results.json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = {**os.environ, "PYTHONPATH": ROOT}
TARGET = 1.0  # seconds: "well under a second"

CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import torch'": [sys.executable, "-c", "import torch"],
    "deeplimits --help": [sys.executable, "-m", "deeplimits", "--help"],
    "deeplimits --version": [sys.executable, "-m", "deeplimits", "--version"],
    "deeplimits convergence --help": [sys.executable, "-m", "deeplimits", "convergence", "--help"],
}


def wall(cmd, runs: int) -> float:
    """The median wall time of ``runs`` fresh processes of ``cmd`` (after one warm-up)."""
    subprocess.run(cmd, env=ENV, capture_output=True, check=True)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=ENV, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def torch_imported() -> int:
    """How many lines of ``python -X importtime -m deeplimits --help`` name torch."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "deeplimits", "--help"], env=ENV,
                       capture_output=True, text=True, check=True)
    return sum("torch" in line for line in r.stderr.splitlines())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    medians = {name: wall(cmd, args.runs) for name, cmd in CASES.items()}
    floor, torch_floor = medians["python -c pass"], medians["python -c 'import torch'"]
    print(f"median wall time of {args.runs} runs each ({sys.executable}, {os.cpu_count()} CPUs)")
    print("| command | median (s) | above the bare interpreter (s) | vs import torch |")
    print("|---|---:|---:|---|")
    ok = True
    for name, t in medians.items():
        verdict = ""
        if name.startswith("deeplimits"):
            passed = t < TARGET and t < torch_floor
            ok &= passed
            verdict = f"{torch_floor / t:.1f}x faster {'PASS' if passed else 'FAIL'}"
        print(f"| `{name}` | {t:.3f} | {t - floor:+.3f} | {verdict} |")
    lines = torch_imported()
    ok &= lines == 0
    print(f"torch lines in `python -X importtime -m deeplimits --help`: {lines} ({'PASS' if lines == 0 else 'FAIL'})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": args.runs, "medians": medians, "torch_lines": lines, "pass": ok}, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
