"""Benchmark of the command line (issues 11 and 31): start-up, and every command's time to first
output and to result.

Start-up (issue 11): ``deeplimits --help`` and ``deeplimits --version`` must not import torch
and answer in well under a second. Each is run as a fresh process ``--runs`` times (default 7,
after one warm-up run that fills the file cache and writes the package's bytecode, as the
floors have theirs) and the median wall time and the median CPU
time of the child (user + system, robust to a loaded machine) are reported, against
two floors measured in the same run: the bare interpreter (``python -c pass``) and
``python -c "import torch"``. Also checked: no ``torch`` module in
``python -X importtime -m deeplimits --help``.

Time to result (issue 31, ``--commands``): every command on a small real task (the stability
command on its default preset, the published i.i.d. protocol), each a fresh process, with the
time of its first byte of output (progress or report, on either stream) and of its exit; beside
them ``import torch`` and the heavy modules each command imports (``-X importtime``: torch,
scipy, matplotlib, pandas, sklearn), so that a command pays only for what it uses.

Run from the repository root:

    python benchmarks/bench_cli_startup.py [--runs 7] [--json results.json]
    python benchmarks/bench_cli_startup.py --commands [--runs 3] [--json results.json]
    python benchmarks/bench_cli_startup.py --commands --code OTHER_CHECKOUT   # the same, for other code
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# like the floors (the interpreter's and torch's modules are compiled to bytecode when installed), deeplimits runs
# from its bytecode: the warm-up writes it (a checkout under PYTHONDONTWRITEBYTECODE=1 would compile every module
# of the package at each start, about half the start-up: benchmarks/RESULTS.md, issue 40)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": ROOT}
CWD = tempfile.gettempdir()  # not the repository: 'python -m' puts the working directory first on sys.path
TARGET = 1.0  # seconds: "well under a second"
DL = [sys.executable, "-m", "deeplimits"]
HEAVY = ("torch", "scipy", "matplotlib", "pandas", "sklearn")

CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import torch'": [sys.executable, "-c", "import torch"],
    "deeplimits --help": DL + ["--help"],
    "deeplimits --version": DL + ["--version"],
    "deeplimits convergence --help": DL + ["convergence", "--help"],
}


def commands(tmp: str) -> dict:
    """Every command on a small real task; each writes under ``tmp`` (a fresh run directory per
    run: nothing is resumed)."""
    return {
        "convergence --regime sde --depths 4,8 --paths 8 --width 4": ["convergence", "--regime", "sde", "--depths",
                                                                       "4,8", "--paths", "8", "--width", "4"],
        "stability (preset iid)": ["stability"],
        "stability --figures (preset iid)": ["stability", "--figures"],
        "phase --hursts 0.3,0.8 --betas 0:1.2:7 --width 6 --depth 60 --draws 2 --inputs 3":
            ["phase", "--hursts", "0.3,0.8", "--betas", "0:1.2:7", "--width", "6", "--depth", "60", "--draws", "2",
             "--inputs", "3"],
        "train --dataset synthetic --depth 8 --width 6 --epochs 1 --save-weights":
            ["train", "--dataset", "synthetic", "--depth", "8", "--width", "6", "--epochs", "1", "--save-weights"],
        "scaling --dataset synthetic --depths 4,6 --width 4 --max-epochs 2 --samples 64":
            ["scaling", "--dataset", "synthetic", "--depths", "4,6", "--width", "4", "--max-epochs", "2",
             "--samples", "64"],
        "weights RUN (the train run's weights)": ["weights", os.path.join(tmp, "keep-train")],
        "runs list DIR": ["runs", "list", tmp],
        "runs show RUN (the stability run)": ["runs", "show", os.path.join(tmp, "keep-stability")],
    }


def wall_and_cpu(cmd, runs: int) -> tuple[float, float]:
    """The median wall time and the median CPU time (user + system, from the child's own
    resource usage: what the machine's load does not inflate) of ``runs`` fresh processes of
    ``cmd`` (after one warm-up)."""
    subprocess.run(cmd, env=ENV, cwd=CWD, capture_output=True, check=True)
    times, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, env=ENV, cwd=CWD, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times), statistics.median(cpus)


def wall(cmd, runs: int) -> float:
    """The median wall time of ``runs`` fresh processes of ``cmd`` (after one warm-up)."""
    return wall_and_cpu(cmd, runs)[0]


def first_and_last(cmd) -> tuple[float, float]:
    """Seconds to the first byte of output (stdout and stderr merged) and to the exit."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=ENV, cwd=CWD, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    first = p.stdout.read(1)
    t1 = time.perf_counter()
    rest = p.stdout.read()
    if p.wait() != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{(first + rest).decode(errors='replace')[-2000:]}")
    return t1 - t0, time.perf_counter() - t0


def heavy_imports(cmd) -> list[str]:
    r = subprocess.run([sys.executable, "-X", "importtime"] + cmd[1:], env=ENV, cwd=CWD, capture_output=True, text=True)
    mods = {line.split("|")[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    return [h for h in HEAVY if h in mods]


def torch_imported() -> int:
    """How many lines of ``python -X importtime -m deeplimits --help`` name torch."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "deeplimits", "--help"], env=ENV, cwd=CWD,
                       capture_output=True, text=True, check=True)
    return sum("torch" in line for line in r.stderr.splitlines())


def bench_startup(args) -> dict:
    load = os.getloadavg()[0]
    both = {name: wall_and_cpu(cmd, args.runs) for name, cmd in CASES.items()}
    medians, cpus = {k: v[0] for k, v in both.items()}, {k: v[1] for k, v in both.items()}
    floor, torch_floor = medians["python -c pass"], medians["python -c 'import torch'"]
    print(f"median wall and CPU time of {args.runs} runs each ({sys.executable}, {os.cpu_count()} CPUs, load average "
          f"{load:.2f} before, {os.getloadavg()[0]:.2f} after)")
    print("| command | median wall (s) | above the bare interpreter (s) | median CPU (s) | above it (s) | "
          "vs import torch |")
    print("|---|---:|---:|---:|---:|---|")
    ok = True
    for name, t in medians.items():
        verdict = ""
        if name.startswith("deeplimits"):
            passed = t < TARGET and t < torch_floor
            ok &= passed
            verdict = f"{torch_floor / t:.1f}x faster {'PASS' if passed else 'FAIL'}"
        c = cpus[name]
        print(f"| `{name}` | {t:.3f} | {t - floor:+.3f} | {c:.3f} | {c - cpus['python -c pass']:+.3f} | {verdict} |")
    lines = torch_imported()
    ok &= lines == 0
    print(f"torch lines in `python -X importtime -m deeplimits --help`: {lines} ({'PASS' if lines == 0 else 'FAIL'})")
    return {"runs": args.runs, "medians": medians, "cpu_medians": cpus, "torch_lines": lines, "load": load, "pass": ok}


def bench_commands(args) -> dict:
    tmp = tempfile.mkdtemp(prefix="deeplimits-bench-")
    try:
        # the runs the read-only commands read
        subprocess.run(DL + ["train", "--dataset", "synthetic", "--depth", "8", "--width", "6", "--epochs", "1",
                             "--save-weights", "--quiet", "--out", os.path.join(tmp, "keep-train")], env=ENV, cwd=CWD,
                       check=True, capture_output=True)
        subprocess.run(DL + ["stability", "--quiet", "--out", os.path.join(tmp, "keep-stability")], env=ENV, cwd=CWD,
                       check=True, capture_output=True)
        torch_s = wall([sys.executable, "-c", "import torch"], args.runs)
        rows = {}
        for name, argv in commands(tmp).items():
            times = []
            try:
                for i in range(args.runs):
                    out = [] if argv[0] in ("weights", "runs") else ["--out", os.path.join(tmp, f"run-{len(rows)}-{i}")]
                    times.append(first_and_last(DL + argv + out))
            except RuntimeError as e:  # a flag the other code does not have
                print(f"{name}: {str(e).splitlines()[-1]}", file=sys.stderr)
                rows[name] = {"first_output_s": None, "result_s": None, "heavy_imports": []}
                continue
            first = statistics.median(t[0] for t in times)
            last = statistics.median(t[1] for t in times)
            rows[name] = {"first_output_s": first, "result_s": last, "heavy_imports": heavy_imports(DL + argv + (
                [] if argv[0] in ("weights", "runs") else ["--out", os.path.join(tmp, f"imports-{len(rows)}")]))}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"medians of {args.runs} fresh processes each ({os.cpu_count()} CPUs); python -c 'import torch': "
          f"{torch_s:.2f} s")
    print("| command | first output (s) | result (s) | heavy modules imported |")
    print("|---|---:|---:|---|")
    for name, r in rows.items():
        if r["result_s"] is None:
            print(f"| `deeplimits {name}` | - | - | (not in this code) |")
            continue
        print(f"| `deeplimits {name}` | {r['first_output_s']:.2f} | {r['result_s']:.2f} | "
              f"{', '.join(r['heavy_imports']) or '-'} |")
    return {"runs": args.runs, "import_torch_s": torch_s, "commands": rows, "code": ENV["PYTHONPATH"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--commands", action="store_true", help="every command's time to first output and to result")
    ap.add_argument("--code", metavar="DIR", help="time the deeplimits of this checkout instead (before/after)")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    if args.code:
        ENV["PYTHONPATH"] = os.path.abspath(args.code)
    out = bench_commands(args) if args.commands else bench_startup(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0 if out.get("pass", True) else 1


if __name__ == "__main__":
    sys.exit(main())
