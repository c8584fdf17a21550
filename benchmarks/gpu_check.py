"""The prepared GPU check (issue 40): one command that runs the CUDA tests and every study on a
GPU, the same code on the CPU beside it, checks that the numbers agree and prints the speed-ups.

Run from the repository root on a machine with one CUDA GPU (at most 8 minutes on an H100-class
card; ``--budget`` stops starting new runs after 450 s):

    python benchmarks/gpu_check.py                        # writes the section of benchmarks/RESULTS.md
    python benchmarks/gpu_check.py --device cpu --small   # seconds, on any machine (tests/test_gpu_check.py)

Steps, in this order (each isolated: a step that fails is a FAIL row with a one-line reason and
the check goes on; the exit status is 1 when any step failed, a run past ``--budget`` included):

1. ``tests``: ``python -m pytest`` on every test file that skips without CUDA (found by grepping
   ``tests/`` for ``skipif(not torch.cuda.is_available()`` / ``skipif(not HAS_CUDA``), selected by
   ``-k "cuda or test_device"`` (all of tests/test_device.py, the CUDA tests of the others);
   ``--small``: ``-k cuda`` only. Counts passed / failed / skipped.
2. ``convergence``: ``deeplimits convergence`` (the default study: sde, ode, fbm at H = 3/4, the
   default depths 8..512 and draws) on the device and on the CPU, full size on both.
3. ``conv``: ``deeplimits scaling --arch conv --epochs 1`` (preset ``cpu``: digits, 16 channels,
   depths 4..32 blocks; one training epoch per depth), on both.
4. ``scaling``: ``deeplimits scaling`` (preset ``cpu``: the inside model at 25 depths 10..850,
   1 seed, Adam to MSE 1e-3, at most 300 epochs), full size on both; nothing is cut.
5. ``stability``: ``deeplimits stability --preset criticality`` (res-3, d = 100, L = 1000,
   beta = 1/2, the histograms of Marion et al. Fig. 2): 500 draws on both (the default chunk of
   13 draws, like for like), then the published 10^4 draws on the device with ``--chunk 200``
   (50 tasks instead of 770: on a GPU the per-layer kernel launches of 13-draw tasks dominate).

Every study runs in a fresh child process (``--timeout`` seconds at most) that calls
``deeplimits.cli.main`` in-process; its wall time is that call alone (after ``import torch`` and a
first CUDA operation, so neither CUDA's start-up nor the imports of the parent are counted; the
imports of the command itself are, on both devices), closed by ``torch.cuda.synchronize()``.
The CPU runs use torch's default threads on this machine.

Agreement rules (K = 4 standard errors: a false alarm of one comparison has probability 6e-5):

* Monte Carlo studies (convergence, stability) draw other numbers on another device (its own
  generator) and the device runs use ``--seed 1`` against the CPU's ``--seed 0``, so the two sides
  are independent samples on every machine (also ``--device cpu``). Convergence: per regime and
  depth, ``|E_dev - E_cpu| <= K sqrt(se_dev^2 + se_cpu^2)`` with the standard errors the study
  reports. Stability: the quartiles of ``|h_L|/|h_0|`` and ``|p_0|/|p_L|`` (from the per-draw
  samples) within K standard errors of their difference, each quantile's standard error by a
  bootstrap of its samples (200 resamples); the 10^4-draw device run is compared with the CPU's
  500 draws (the CPU's error dominates).
* Training (scaling, conv) starts from the same weights (drawn on the CPU from the seed) and sees
  the same batches; only the kernels' rounding differs (float32), and training amplifies it, so
  the loss trajectories are not compared value for value. Scaling: the same number of depths
  reach the threshold, and the fitted exponents alpha and beta agree within the root sum of the
  squares of their 95% half-widths (the study's own resolution: a smaller difference changes no
  conclusion); the epochs to the threshold are reported. Conv (one epoch): per depth, the final
  training loss within 5% (relative) and the test accuracy within 0.05: loose on purpose, a
  wrong kernel or a lost update moves them by far more, rounding after ~45 SGD steps by less.

Speed-up: CPU wall / device wall of the like-for-like runs (same sizes, same command).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
HEADING = "## GPU check (issue 40)"
K = 4.0
BOOTSTRAP = 200
CONV_LOSS_RTOL, CONV_ACC_ATOL = 0.05, 0.05
CUDA_SKIP = re.compile(r"skipif\(\s*not\s+(torch\.cuda\.is_available\(\)|HAS_CUDA)")


def sizes(small: bool) -> dict:
    """The command-line arguments of each study: ``full`` (the device's published-size run) and
    ``subset`` (run on both devices; ``None``: the full size on both)."""
    if small:
        crit = ["stability", "--preset", "criticality", "--depths", "20", "--width", "10", "--draws"]
        return {
            "convergence": (["convergence", "--depths", "8,16", "--draws", "16"], None),
            "conv": (["scaling", "--arch", "conv", "--epochs", "1", "--depths", "3,4", "--width", "4"], None),
            "scaling": (["scaling", "--depths", "4,6", "--width", "4", "--max-epochs", "2", "--samples", "64"], None),
            "stability": (crit + ["400"], crit + ["120"]),
        }
    return {
        "convergence": (["convergence"], None),
        "conv": (["scaling", "--arch", "conv", "--epochs", "1"], None),
        "scaling": (["scaling"], None),
        "stability": (["stability", "--preset", "criticality", "--draws", "10000", "--chunk", "200"],
                      ["stability", "--preset", "criticality", "--draws", "500"]),
    }


# ----------------------------------------------------------------------------------------
# the child: one command, timed in-process
# ----------------------------------------------------------------------------------------

def child(device: str, result: str, argv: list[str]) -> int:
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":
        torch.zeros(1, device=dev).sum().item()  # CUDA's start-up, not counted
        torch.cuda.synchronize(dev)
    from deeplimits.cli import main

    t0 = time.perf_counter()
    rc = main(argv)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    wall = time.perf_counter() - t0
    Path(result).write_text(json.dumps({"rc": rc, "wall": wall}))
    return rc


# ----------------------------------------------------------------------------------------
# the parent
# ----------------------------------------------------------------------------------------

class Budget:
    def __init__(self, seconds: float, per_run: float):
        self.end, self.per_run = time.perf_counter() + seconds, per_run

    def timeout(self) -> float:
        return min(self.per_run, self.end - time.perf_counter())


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else "no output")[:160]


def _call(cmd: list[str], log: Path, timeout: float, cwd: Path) -> tuple[int | None, str]:
    """Run ``cmd`` in its own process group, output to ``log``; ``(None, reason)`` past ``timeout``."""
    if timeout < 5:
        return None, "not run: the --budget was spent"
    with open(log, "w") as fh:
        p = subprocess.Popen(cmd, cwd=cwd, env=_env(), stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return p.wait(timeout=timeout), ""
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return None, f"timed out after {timeout:.0f} s"


class Failed(Exception):
    pass


def run_cli(name: str, device: str, argv: list[str], work: Path, budget: Budget, seed: int) -> tuple[dict, float]:
    """One study in a child process; returns (its JSON result, wall seconds) or raises Failed."""
    stem = work / name
    print(f"    {name}: deeplimits {' '.join(argv)} --device {device} --seed {seed}", flush=True)
    argv = argv + ["--device", device, "--seed", str(seed), "--out", str(stem), "--json", f"{stem}.json", "--quiet"]
    t0 = time.perf_counter()
    rc, reason = _call([sys.executable, str(Path(__file__).resolve()), "--child", device, f"{stem}.wall", "--", *argv],
                       Path(f"{stem}.log"), budget.timeout(), work)
    if rc is None:
        raise Failed(f"{name}: {reason}")
    if rc != 0:
        raise Failed(f"{name}: exit {rc}: {_last_line(Path(f'{stem}.log').read_text(errors='replace'))}")
    wall = json.loads(Path(f"{stem}.wall").read_text())["wall"]
    print(f"    {name}: {wall:.1f} s (process {time.perf_counter() - t0:.1f} s)", flush=True)
    return json.loads(Path(f"{stem}.json").read_text()), wall


def _speed(cpu: float, dev: float) -> str:
    return f"{cpu / dev:.2f}x" if dev > 0 else "-"


# ----------------------------------------------------------------------------------------
# comparisons: (ok, one-line text)
# ----------------------------------------------------------------------------------------

def compare_convergence(dev: list, cpu: list) -> tuple[bool, str]:
    worst, parts, ok = 0.0, [], True
    by = {r["regime"]: r for r in cpu}
    for r in dev:
        c = by[r["regime"]]
        z = [abs(a - b) / math.sqrt(sa ** 2 + sb ** 2)
             for a, b, sa, sb in zip(r["error"], c["error"], r["stderr"], c["stderr"])]
        zmax = max(z)
        ok &= len(r["error"]) == len(c["error"]) and zmax <= K
        worst = max(worst, zmax)
        rate = "-" if r["rate"] is None else f"{r['rate']:.3f}"
        rate_c = "-" if c["rate"] is None else f"{c['rate']:.3f}"
        parts.append(f"{r['regime']} max z {zmax:.2f} (rate {rate} / {rate_c})")
    return ok, f"E max_k error per depth, max z {worst:.2f} <= {K:g}: " + "; ".join(parts)


def _quantile_se(x: np.ndarray, q: float, rng) -> float:
    idx = rng.integers(0, len(x), size=(BOOTSTRAP, len(x)))
    return float(np.quantile(x[idx], q, axis=1).std(ddof=1))


def compare_stability(dev: dict, cpu: dict) -> tuple[bool, str]:
    rng = np.random.default_rng(0)
    (sd,), (sc,) = dev["samples"][-1:], cpu["samples"][-1:]
    zs, med = [], []
    for key in ("norm_h", "norm_p"):
        a, b = np.asarray(sd[key], float), np.asarray(sc[key], float)
        for q in (0.25, 0.5, 0.75):
            se = math.hypot(_quantile_se(a, q, rng), _quantile_se(b, q, rng))
            zs.append(abs(np.quantile(a, q) - np.quantile(b, q)) / se if se > 0 else math.inf)
        med.append(f"{key} quartiles {'/'.join(f'{np.quantile(a, q):.4f}' for q in (.25, .5, .75))} "
                   f"(CPU {'/'.join(f'{np.quantile(b, q):.4f}' for q in (.25, .5, .75))})")
    return max(zs) <= K, f"max z {max(zs):.2f} <= {K:g}; " + "; ".join(med)


def compare_scaling(dev: dict, cpu: dict) -> tuple[bool, str]:
    reached = [sum(bool(r["reached"]) for r in d["records"]) for d in (dev, cpu)]
    n = len(dev["records"])
    ok, parts = reached[0] == reached[1], [f"reached {reached[0]}/{n} (CPU {reached[1]}/{n})"]
    for name in ("alpha", "beta"):
        a, b = dev["exponents"][name], cpu["exponents"][name]
        if a["value"] is None or b["value"] is None or None in a["ci"] + b["ci"]:
            parts.append(f"{name}: no interval at these depths")
            continue
        tol = math.hypot((a["ci"][1] - a["ci"][0]) / 2, (b["ci"][1] - b["ci"][0]) / 2)
        ok &= abs(a["value"] - b["value"]) <= tol
        parts.append(f"{name} {a['value']:.3f} / {b['value']:.3f} (tol {tol:.3f})")
    de = [abs(x["epochs"] - y["epochs"]) for x, y in zip(dev["records"], cpu["records"])]
    parts.append(f"epochs differ at {sum(d > 0 for d in de)}/{n} depths (at most {max(de)})")
    return ok, "; ".join(parts)


def compare_conv(dev: dict, cpu: dict) -> tuple[bool, str]:
    pairs = list(zip(dev["records"], cpu["records"]))
    rel = [abs(a["train_loss"] - b["train_loss"]) / abs(b["train_loss"]) for a, b in pairs]
    acc = [abs(a["test_accuracy"] - b["test_accuracy"]) for a, b in pairs]
    ok = len(dev["records"]) == len(cpu["records"]) and max(rel) <= CONV_LOSS_RTOL and max(acc) <= CONV_ACC_ATOL
    return ok, (f"final train loss max rel diff {max(rel):.2g} <= {CONV_LOSS_RTOL:g}, test accuracy max diff "
                f"{max(acc):.3f} <= {CONV_ACC_ATOL:g} over {len(rel)} depths")


COMPARE = {"convergence": compare_convergence, "conv": compare_conv, "scaling": compare_scaling,
           "stability": compare_stability}


# ----------------------------------------------------------------------------------------
# steps
# ----------------------------------------------------------------------------------------

def cuda_test_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py")
                  if CUDA_SKIP.search(p.read_text(errors="replace")))


def step_tests(args, work: Path, budget: Budget) -> dict:
    files = cuda_test_files()
    sel = "cuda" if args.small else "cuda or test_device"
    cmd = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", "-k", sel, *files]
    print(f"    pytest -q -k '{sel}' {' '.join(files)}", flush=True)
    t0 = time.perf_counter()
    rc, reason = _call(cmd, work / "tests.log", budget.timeout(), ROOT)
    wall = time.perf_counter() - t0
    log = work / "tests.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", _last_line(text))}
    what = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("passed", "failed", "skipped")) + \
        (f", {counts['error'] + counts.get('errors', 0)} errors" if "error" in counts or "errors" in counts else "")
    row = {"step": "tests", "full": f"{len(files)} files, -k '{sel}': {what}", "full_s": wall}
    if rc is None:
        return {**row, "ok": False, "agree": reason}
    if rc != 0:
        first = next((ln for ln in text.splitlines() if ln.startswith(("FAILED ", "ERROR "))), "")
        return {**row, "ok": False, "agree": f"pytest exit {rc}: {_last_line(text)}" + (f"; first: {first[:160]}"
                                                                                         if first else "")}
    return {**row, "ok": True, "agree": "every selected test passed or was skipped with its reason"}


def step_study(name: str, args, work: Path, budget: Budget) -> dict:
    full, subset = sizes(args.small)[name]
    row = {"step": name, "full": "deeplimits " + " ".join(full), "subset": "same" if subset is None else
           "deeplimits " + " ".join(subset)}
    try:
        sub = full if subset is None else subset
        cpu, cpu_s = run_cli(f"{name}-cpu", "cpu", sub, work, budget, seed=0)
        seed = 0 if name in ("conv", "scaling") else 1
        dev, dev_s = run_cli(f"{name}-device", args.device, sub, work, budget, seed=seed)
        row.update(sub_dev_s=dev_s, sub_cpu_s=cpu_s)
        ok, text = COMPARE[name](dev, cpu)
        if subset is not None:
            big, big_s = run_cli(f"{name}-device-full", args.device, full, work, budget, seed=seed)
            row["full_s"] = big_s
            ok2, text2 = COMPARE[name](big, cpu)
            ok, text = ok and ok2, f"subset: {text}. Full size against the CPU subset: {text2}"
        else:
            row["full_s"] = dev_s
        return {**row, "ok": ok, "agree": text}
    except Failed as e:
        return {**row, "ok": False, "agree": str(e)}
    except Exception as e:  # a result that cannot be read or compared
        return {**row, "ok": False, "agree": f"{type(e).__name__}: {e}"[:200]}


# ----------------------------------------------------------------------------------------
# the table
# ----------------------------------------------------------------------------------------

def _cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def table(rows: list[dict], device: str) -> str:
    out = [f"| step | status | full size on {device} | {device} (s) | like-for-like subset | {device} (s) | "
           f"cpu (s) | speed-up | agreement |", "|---|---|---|---:|---|---:|---:|---:|---|"]
    for r in rows:
        s = lambda k: f"{r[k]:.1f}" if isinstance(r.get(k), (int, float)) else "-"
        sp = _speed(r["sub_cpu_s"], r["sub_dev_s"]) if "sub_dev_s" in r else "-"
        out.append("| " + " | ".join(_cell(v) for v in (
            r["step"], "PASS" if r["ok"] else "FAIL", r.get("full", "-"), s("full_s"), r.get("subset", "-"),
            s("sub_dev_s"), s("sub_cpu_s"), sp, r["agree"])) + " |")
    return "\n".join(out)


def write_results(section: str, path: Path = RESULTS) -> None:
    """Put ``section`` in place of the section under :data:`HEADING` of ``path`` (up to the next
    ``## `` heading), or at its end when it has none."""
    text = path.read_text()
    start = text.find(HEADING)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        nxt = re.search(r"^## ", text[start + len(HEADING):], re.M)
        end = len(text) if nxt is None else start + len(HEADING) + nxt.start()
        text = text[:start] + section + ("\n" if nxt is not None else "") + text[end:]
    path.write_text(text.rstrip("\n") + "\n")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child(argv[1], argv[2], argv[4:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="the device checked against the CPU (default cuda)")
    ap.add_argument("--small", action="store_true", help="tiny sizes (seconds); never writes RESULTS.md")
    ap.add_argument("--out", help="directory of the run stores and logs (default: a temporary directory)")
    ap.add_argument("--no-write", action="store_true", help="do not touch benchmarks/RESULTS.md")
    ap.add_argument("--timeout", type=float, default=200.0, help="seconds per run (default 200)")
    ap.add_argument("--budget", type=float, default=450.0,
                    help="no run starts or goes on past this many seconds in all (default 450)")
    args = ap.parse_args(argv)

    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu_check: --device cuda but torch.cuda.is_available() is False (use --device cpu to try the "
              "check itself)", file=sys.stderr)
        return 2
    name = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "CPU"
    base = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="gpu-check-"))
    work = base / datetime.datetime.now().strftime("gpu-check-%Y%m%d-%H%M%S")
    work.mkdir(parents=True)
    command = "python benchmarks/gpu_check.py " + " ".join(argv)
    print(f"gpu_check: {name} ({args.device}), torch {torch.__version__}, {os.cpu_count()} CPUs; logs and run "
          f"stores in {work}", flush=True)
    budget, t_all, rows = Budget(args.budget, args.timeout), time.perf_counter(), []
    steps = [("tests", lambda: step_tests(args, work, budget))] + \
        [(s, (lambda s=s: step_study(s, args, work, budget))) for s in ("convergence", "conv", "scaling", "stability")]
    for i, (label, fn) in enumerate(steps, 1):
        print(f"[{i}/{len(steps)}] {label} (elapsed {time.perf_counter() - t_all:.0f} s)", flush=True)
        t0 = time.perf_counter()
        try:
            row = fn()
        except Exception as e:  # the step itself broke: a FAIL row, the check goes on
            row = {"step": label, "ok": False, "agree": f"{type(e).__name__}: {e}"[:200]}
        rows.append(row)
        print(f"[{i}/{len(steps)}] {label}: {'PASS' if row['ok'] else 'FAIL'} in {time.perf_counter() - t0:.1f} s: "
              f"{row['agree']}", flush=True)
    total = time.perf_counter() - t_all
    failed = [r["step"] for r in rows if not r["ok"]]
    tab = table(rows, args.device)
    print("\n" + tab + f"\n\ntotal {total:.0f} s; "
          + (f"FAILED: {', '.join(failed)}" if failed else "every step passed"))
    if not (args.no_write or args.small):
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        section = (f"{HEADING}\n\n```\n{command}\n```\n\n{name} ({args.device}), torch {torch.__version__}, "
                   f"{os.cpu_count()} CPU cores for the CPU runs, {date}; total {total:.0f} s. The rules of "
                   f"agreement and what each step runs are in the script's docstring. "
                   f"{'Failed: ' + ', '.join(failed) if failed else 'Every step passed.'}\n\n{tab}\n")
        write_results(section)
        print(f"wrote the section '{HEADING}' of {RESULTS.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
