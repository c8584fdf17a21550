"""The prepared GPU check (issues 40, 57): one command that runs the CUDA tests and every study and
command of the package on a device, the same commands on the CPU beside it, checks that the
numbers agree to each comparison's stated tolerance, times each against the CPU and writes one table.

Run from the repository root on a machine with one CUDA GPU (at most 8 minutes on an H100-class
card; ``--budget`` stops starting new runs after 450 s):

    python benchmarks/gpu_check.py                        # writes the section of benchmarks/RESULTS.md
    python benchmarks/gpu_check.py --device cpu --small   # every command at a small size, on any machine

Steps, in this order (each a row of the table; a step that fails is a FAIL row with a one-line
reason and the check goes on; the exit status is 1 when any step failed, a run past ``--budget``
included; ``--skip NAMES`` leaves steps out, e.g. ``tests``, which tests/test_gpu_check.py leaves
to the test suite itself):

* ``tests``: ``python -m pytest`` on every test file that skips without CUDA (found by grepping
  ``tests/`` for ``skipif(not torch.cuda.is_available()`` / ``skipif(not HAS_CUDA``), selected by
  ``-k "cuda or test_device"``; ``--small``: ``-k cuda`` only. Counts passed / failed / skipped.
* every command (:data:`STEPS`): ``convergence`` (sde, ode, fbm), its ``inside-sde``,
  ``inside-ode`` and ``rough`` regimes, a run sized to decide (``--budget``), ``order``,
  ``stability`` (the criticality histograms), ``phase``, ``train`` (saving its weights),
  ``weights`` (on the weights the train step saved on that device), ``scaling`` (the inside model),
  ``conv`` (``scaling --arch conv``), ``trained-limit``, ``transfer``, ``law``, ``shapes`` and ``runs`` (``runs
  show`` and ``runs plot`` of the law step's store). ``--small``: sizes of a second or less each
  on a CPU; without it, the sizes of :func:`sizes` (full size on the device and, like for like, on
  the CPU, except ``stability``: 10^4 draws on the device against 500 on both).

All the commands of one device run in one child process (``--child``), one after the other, each
through ``deeplimits.cli.main`` in-process (imports paid once per device, as a user's session pays
them), with ``--no-figures`` (a figure is drawn on the CPU whatever the device; the figures are
tested by tests/test_figures.py). Each step's wall time is its ``main`` call alone, closed by
``torch.cuda.synchronize()`` on a GPU (CUDA's start-up is before the first step, not counted); its
CPU time is the process's over the call. A child that dies is started again for the steps left,
the step it died in a FAIL row. The CPU runs use torch's default threads on this machine.

Agreement rules (K = 4 standard errors: a false alarm of one comparison has probability 6e-5):

* Monte Carlo (convergence and its regimes, the sized run, order, law): the device runs use
  ``--seed 1`` against the CPU's ``--seed 0`` (a device draws its own numbers), so the two are
  independent samples: per result, depth (and test function) ``|E_dev - E_cpu| <= K sqrt(se_dev^2 +
  se_cpu^2)`` with the standard errors the commands report.
* Stability: the quartiles of ``|h_L|/|h_0|`` and ``|p_0|/|p_L|`` (per-draw samples) within K
  standard errors of their difference, each quantile's standard error by a bootstrap (200
  resamples); the 10^4-draw device run against the CPU's 500 draws.
* Phase (no standard error per cell in its result): the CPU runs twice (seeds 0 and 2); the root
  mean square over the cells of ``log10 r_h`` of device minus CPU must be at most twice that of the
  CPU's two runs (two independent differences of one law: their ratio of squares is an F(n, n)
  variable, above 4 with probability below 1% for the 16 cells of ``--small``), cells capped at 3
  in absolute value.
* Training from the same initial weights (drawn on the CPU from the seed) and the same batches:
  only the kernels' rounding differs (float32) and training amplifies it, so loss trajectories are
  not compared value for value. Scaling: the same number of depths reach the threshold and the
  fitted exponents alpha and beta agree within the root sum of squares of their 95% half-widths.
  Conv and train: per configuration the final training loss within 5% (relative) and the test
  accuracy within 0.05. Trained limit (float64): the mean weight and state distances within 1e-3
  relative; so are the (L, M, D) study's (``shapes``) mean hidden and output errors per cell.
  Transfer: the median relative difference of the final losses over the configurations finite on
  both at most 5%, and each depth's optimal rate within one step of the grid (log2 1).
  Weights (the diagnostics of each side's own trained weights): every number within 1e-2 relative
  (or 1e-6 absolute).
* Runs: ``runs plot`` of the device's law store rewrites result.json with the same numbers.

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
LOSS_RTOL, ACC_ATOL = 0.05, 0.05
LIMIT_RTOL, WEIGHTS_RTOL = 1e-3, 1e-2
PHASE_RATIO, PHASE_CAP = 2.0, 3.0
CUDA_SKIP = re.compile(r"skipif\(\s*not\s+(torch\.cuda\.is_available\(\)|HAS_CUDA)")

#: the steps in their order: name -> (kind, seeds) with kind ``run`` (a simulating command: --device,
#: --seed, --out, --json, --quiet, --no-figures), ``order`` (no --quiet), ``weights`` (files, on the
#: CPU whatever the device: its input is the device's trained weights), ``runs``; seeds ``mc``
#: (device seed 1, CPU seed 0) or ``same`` (0 on both)
STEPS = {
    "convergence": ("run", "mc"), "inside-sde": ("run", "mc"), "inside-ode": ("run", "mc"), "rough": ("run", "mc"),
    "sized": ("run", "mc"), "order": ("order", "mc"), "stability": ("run", "mc"), "phase": ("run", "mc"),
    "train": ("run", "same"), "weights": ("weights", "same"), "scaling": ("run", "same"), "conv": ("run", "same"),
    "trained-limit": ("run", "same"), "transfer": ("run", "same"), "law": ("run", "mc"), "shapes": ("run", "same"),
    "runs": ("runs", "same"),
}


def sizes(small: bool) -> dict:
    """The command-line arguments of each step: ``(full, subset)``, ``full`` the device's run and
    ``subset`` the one run on both devices (``None``: ``full`` on both)."""
    crit = ["stability", "--preset", "criticality", "--depths", "20", "--width", "10", "--draws"]
    if small:
        return {
            "convergence": (["convergence", "--depths", "8,16", "--draws", "16"], None),
            "inside-sde": (["convergence", "--regime", "inside-sde", "--depths", "8,16", "--draws", "32", "--width", "4"],
                           None),
            "inside-ode": (["convergence", "--regime", "inside-ode", "--depths", "8,16", "--draws", "32", "--width", "4"],
                           None),
            "rough": (["convergence", "--regime", "rough", "--depths", "8,16", "--draws", "64", "--width", "1"], None),
            "sized": (["convergence", "--regime", "sde", "--width", "2", "--depths", "8,16,32", "--draws", "64",
                       "--budget", "2"], None),
            "order": (["order", "--scheme", "milstein", "--problem", "sde-regime", "--noise-kind", "general",
                       "--depths", "8,16,32", "--draws", "256"], None),
            "stability": (crit + ["400"], crit + ["120"]),
            "phase": (["phase", "--hursts", "0.2,0.4,0.6,0.8", "--betas", "0.2,0.5,0.8,1.1", "--depth", "20", "--width",
                       "8", "--draws", "4", "--inputs", "4", "--n-in", "8"], None),
            "train": (["train", "--driver", "fractional", "--hursts", "0.5", "--betas", "0.5,1", "--lrs", "0.01", "--depth", "8", "--width", "8",
                       "--epochs", "1", "--save-weights"], None),
            "weights": (["weights"], None),
            "scaling": (["scaling", "--depths", "4,6", "--width", "4", "--max-epochs", "2", "--samples", "64"], None),
            "conv": (["scaling", "--arch", "conv", "--epochs", "1", "--depths", "3,4", "--width", "4"], None),
            "trained-limit": (["trained-limit", "--preset", "quick", "--cases", "linear", "--depths", "4,8",
                               "--reference", "32", "--epochs", "2", "--samples", "8"], None),
            "transfer": (["transfer", "--preset", "quick", "--depths", "2,4,8", "--betas", "0.5", "--optimizer", "sgd",
                          "--seeds", "2", "--lrs=-2,0", "--samples", "64"], None),
            "law": (["law", "--preset", "quick", "--draws", "2048", "--depths", "4,8", "--fine", "32"], None),
            "shapes": (["shapes", "--preset", "quick", "--depths", "4,8", "--widths", "4,8", "--dims", "4,8", "--seeds",
                        "2", "--steps", "4", "--step", "3", "--fit-min", "2,2,2"], None),
            "runs": (["runs"], None),
        }
    return {
        "convergence": (["convergence"], None),
        "inside-sde": (["convergence", "--regime", "inside-sde"], None),
        "inside-ode": (["convergence", "--regime", "inside-ode"], None),
        "rough": (["convergence", "--regime", "rough", "--width", "1"], None),
        "sized": (["convergence", "--regime", "sde", "--budget", "20"], None),
        "order": (["order", "--scheme", "milstein", "--problem", "sde-regime", "--noise-kind", "general", "--draws",
                   "1024"], None),
        "stability": (["stability", "--preset", "criticality", "--draws", "10000", "--chunk", "200"],
                      ["stability", "--preset", "criticality", "--draws", "500"]),
        "phase": (["phase", "--preset", "full", "--hursts", "0.1,0.3,0.5,0.7,0.9", "--betas", "0.1,0.4,0.7,1.0"],
                  None),
        "train": (["train", "--driver", "fractional", "--hursts", "0.3,0.7", "--betas", "0.5,1", "--lrs", "0.001,0.01", "--depth", "200",
                   "--epochs", "2", "--save-weights"], None),
        "weights": (["weights"], None),
        "scaling": (["scaling"], None),
        "conv": (["scaling", "--arch", "conv", "--epochs", "1"], None),
        "trained-limit": (["trained-limit", "--preset", "quick"], None),
        "transfer": (["transfer", "--preset", "quick"], None),
        "law": (["law", "--preset", "quick"], None),
        "shapes": (["shapes", "--preset", "quick"], None),
        "runs": (["runs"], None),
    }


def command(name: str, argv: list, device: str, seed: int, work: Path, tag: str) -> list:
    """The full command line of step ``name`` on ``device`` (``tag`` names its outputs)."""
    kind = STEPS[name][0]
    stem = work / f"{name}-{tag}"
    if kind == "weights":  # the diagnostics of the weights this device's train step saved
        return ["weights", str(work / f"train-{tag}"), "--out", str(stem), "--json", f"{stem}.json", "--no-figures"]
    if kind == "runs":  # the law step's store, shown and redrawn
        return ["runs", "plot", str(work / f"law-{tag}"), "--json", f"{stem}.json"]
    quiet = [] if kind == "order" else ["--quiet"]
    return argv + ["--device", device, "--seed", str(seed), "--out", str(stem), "--json", f"{stem}.json", *quiet,
                   "--no-figures"]


# ----------------------------------------------------------------------------------------
# the child: one device's commands, each timed in-process
# ----------------------------------------------------------------------------------------

def child(device: str, plan_path: str, out_path: str) -> int:
    """Run the steps of ``plan_path`` (``[{name, argv}]``) on ``device``; one JSON line per step
    into ``out_path`` (``name``, ``rc``, ``wall``, ``cpu``, ``error``), written as each ends."""
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":
        torch.zeros(1, device=dev).sum().item()  # CUDA's start-up, not counted
        torch.cuda.synchronize(dev)
    from deeplimits.cli import main

    with open(out_path, "a") as out:
        for step in json.loads(Path(plan_path).read_text()):
            print(f"=== {step['name']}: deeplimits {' '.join(step['argv'])}", flush=True)
            error, t0, c0 = "", time.perf_counter(), time.process_time()
            try:
                rc = main(step["argv"])
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
            except Exception as e:  # noqa: BLE001 - one step's failure is its row, the others go on
                rc, error = 1, f"{type(e).__name__}: {e}"[:200]
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            out.write(json.dumps({"name": step["name"], "rc": rc, "wall": wall, "cpu": cpu, "error": error}) + "\n")
            out.flush()
    return 0


# ----------------------------------------------------------------------------------------
# the parent
# ----------------------------------------------------------------------------------------

class Budget:
    def __init__(self, seconds: float, per_run: float):
        self.end, self.per_run = time.perf_counter() + seconds, per_run

    def left(self) -> float:
        return self.end - time.perf_counter()


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else "no output")[:160]


CPU_USED = [0.0]  # the children's CPU seconds (user + system, wait4)


def _call(cmd: list, log: Path, timeout: float, cwd: Path) -> tuple[int | None, str]:
    """Run ``cmd`` in its own process group, output to ``log``; ``(None, reason)`` past ``timeout``."""
    if timeout < 5:
        return None, "not run: the --budget was spent"
    with open(log, "a") as fh:
        p = subprocess.Popen(cmd, cwd=cwd, env=_env(), stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        end = time.perf_counter() + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                CPU_USED[0] += ru.ru_utime + ru.ru_stime
                return os.waitstatus_to_exitcode(status), ""
            if time.perf_counter() > end:
                os.killpg(p.pid, signal.SIGKILL)
                _, _, ru = os.wait4(p.pid, 0)
                CPU_USED[0] += ru.ru_utime + ru.ru_stime
                return None, f"timed out after {timeout:.0f} s"
            time.sleep(0.05)


def run_device(device: str, tag: str, steps: list, work: Path, budget: Budget, per_run: float) -> dict:
    """Every ``(name, argv)`` of ``steps`` on ``device`` in child processes (a dead child's step is
    a failure; a new child goes on with the rest; ``tag`` names their files): ``{name: row}`` with
    ``rc``, ``wall``, ``cpu``, ``error``."""
    rows, left = {}, list(steps)
    while left:
        plan = work / f"plan-{tag}-{len(rows)}.json"
        out = work / f"times-{tag}.jsonl"
        plan.write_text(json.dumps([{"name": n, "argv": a} for n, a in left]))
        rc, reason = _call([sys.executable, str(Path(__file__).resolve()), "--child", device, str(plan), str(out)],
                           work / f"{tag}.log", min(budget.left(), per_run * len(left)), work)
        done = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        for r in done:
            rows.setdefault(r["name"], r)
        left = [(n, a) for n, a in left if n not in rows]
        if not left:
            break
        if rc is None:  # out of time: the rest is not run
            for n, _ in left:
                rows[n] = {"name": n, "rc": None, "error": reason}
            break
        first = left.pop(0)  # the child died in this step
        log = (work / f"{tag}.log").read_text(errors="replace")
        rows[first[0]] = {"name": first[0], "rc": rc or 1, "error": f"the child died (exit {rc}): {_last_line(log)}"}
    return rows


def _read(work: Path, name: str, tag: str):
    return json.loads((work / f"{name}-{tag}.json").read_text())


def _speed(cpu: float, dev: float) -> str:
    return f"{cpu / dev:.2f}x" if dev > 0 else "-"


# ----------------------------------------------------------------------------------------
# comparisons: (ok, one-line text)
# ----------------------------------------------------------------------------------------

def _results(x) -> list:
    return x if isinstance(x, list) else [x]


def compare_convergence(dev, cpu) -> tuple[bool, str]:
    """Per result and depth ``|E_dev - E_cpu| <= K sqrt(se_dev^2 + se_cpu^2)`` (independent seeds)."""
    worst, parts, ok = 0.0, [], True
    by = {r["regime"] + str(r.get("activation")): r for r in _results(cpu)}
    for r in _results(dev):
        c = by[r["regime"] + str(r.get("activation"))]
        if len(r["error"]) != len(c["error"]):
            return False, f"{r['regime']}: {len(r['error'])} depths against {len(c['error'])}"
        z = [abs(a - b) / math.hypot(sa, sb) if math.hypot(sa, sb) > 0 else (0.0 if a == b else math.inf)
             for a, b, sa, sb in zip(r["error"], c["error"], r["stderr"], c["stderr"])]
        zmax = max(z)
        ok &= zmax <= K
        worst = max(worst, zmax)
        rate = "-" if r["rate"] is None else f"{r['rate']:.3f}"
        rate_c = "-" if c["rate"] is None else f"{c['rate']:.3f}"
        parts.append(f"{r['regime']} max z {zmax:.2f} (rate {rate} / {rate_c}, {r['draws']} / {c['draws']} draws)")
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


def _cells(d: dict) -> np.ndarray:
    return np.clip(np.array([[np.nan if v is None else v for v in row] for row in d["log10_rh"]], dtype=float),
                   -PHASE_CAP, PHASE_CAP)


def compare_phase(dev: dict, cpu: dict, cpu2: dict) -> tuple[bool, str]:
    """RMS over the cells of device - CPU against that of the CPU's two independent runs."""
    a, b, c = _cells(dev), _cells(cpu), _cells(cpu2)
    ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    if a.shape != b.shape or not ok.any():
        return False, f"grids {a.shape} and {b.shape}, {int(ok.sum())} comparable cells"
    d_dev, d_cpu = float(np.sqrt(np.mean((a - b)[ok] ** 2))), float(np.sqrt(np.mean((c - b)[ok] ** 2)))
    bound = PHASE_RATIO * d_cpu
    return d_dev <= bound, (f"RMS of log10 r_h device - CPU {d_dev:.3f} <= {PHASE_RATIO:g} x the CPU's two seeds' "
                            f"{d_cpu:.3f} over {int(ok.sum())} cells")


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


def _losses(records: list) -> tuple[list, list]:
    return ([r["train_loss"] for r in records],
            [r.get("test_accuracy") for r in records])


def compare_trained(dev: dict, cpu: dict) -> tuple[bool, str]:
    """Conv and train: per configuration the final training loss within 5% and the accuracy within 0.05."""
    if len(dev["records"]) != len(cpu["records"]):
        return False, f"{len(dev['records'])} records against {len(cpu['records'])}"
    (la, aa), (lb, ab) = _losses(dev["records"]), _losses(cpu["records"])
    rel = [abs(a - b) / abs(b) for a, b in zip(la, lb) if a is not None and b is not None and b]
    acc = [abs(a - b) for a, b in zip(aa, ab) if a is not None and b is not None]
    ok = bool(rel) and max(rel) <= LOSS_RTOL and (not acc or max(acc) <= ACC_ATOL)
    return ok, (f"final train loss max rel diff {max(rel, default=math.nan):.2g} <= {LOSS_RTOL:g}, test accuracy max "
                f"diff {max(acc, default=0.0):.3f} <= {ACC_ATOL:g} over {len(rel)} configurations")


def compare_limit(dev: dict, cpu: dict) -> tuple[bool, str]:
    worst = 0.0
    for a, b in zip(dev["cases"], cpu["cases"]):
        for key in ("weight_distance", "state_distance"):
            x, y = np.asarray(a[key]["mean"], float), np.asarray(b[key]["mean"], float)
            if x.shape != y.shape:
                return False, f"{a['case']} {key}: shapes {x.shape} and {y.shape}"
            worst = max(worst, float(np.nanmax(np.abs(x - y) / np.maximum(np.abs(y), 1e-300))))
    return worst <= LIMIT_RTOL, f"mean weight and state distances max rel diff {worst:.2g} <= {LIMIT_RTOL:g}"


def compare_shapes(dev: dict, cpu: dict) -> tuple[bool, str]:
    """The (L, M, D) study from the same seeds (its embeddings and weights drawn on the CPU): every
    cell's mean hidden and output errors at every recorded step within :data:`LIMIT_RTOL`."""
    worst = 0.0
    if len(dev["cells"]) != len(cpu["cells"]):
        return False, f"{len(dev['cells'])} cells against {len(cpu['cells'])}"
    for a, b in zip(dev["cells"], cpu["cells"]):
        for key in ("hidden", "output"):
            x, y = np.asarray(a[key], float), np.asarray(b[key], float)
            if x.shape != y.shape or (a["L"], a["M"], a["D"]) != (b["L"], b["M"], b["D"]):
                return False, f"cell {(a['L'], a['M'], a['D'])} {key}: not the CPU's cell or shape"
            worst = max(worst, float(np.nanmax(np.abs(x - y) / np.maximum(np.abs(y), 1e-300))))
    return worst <= LIMIT_RTOL, (f"mean hidden and output errors of {len(cpu['cells'])} cells max rel diff "
                                 f"{worst:.2g} <= {LIMIT_RTOL:g}")


def compare_transfer(dev: dict, cpu: dict) -> tuple[bool, str]:
    rel, steps = [], []
    for a, b in zip(dev["settings"], cpu["settings"]):
        for ca, cb in zip(a["curves"], b["curves"]):
            rel += [abs(x - y) / abs(y) for x, y in zip(ca, cb) if x is not None and y is not None and y]
        steps += [abs(x - y) for x, y in zip(a.get("optimum") or [], b.get("optimum") or [])]
    med = float(np.median(rel)) if rel else math.inf
    ok = med <= LOSS_RTOL and (not steps or max(steps) <= 1.0)
    return ok, (f"final losses median rel diff {med:.2g} <= {LOSS_RTOL:g} over {len(rel)} (rate, depth) means; "
                f"optimal log2 rate differs by at most {max(steps, default=0.0):.2f} <= 1")


def _numbers(x, out: list) -> list:
    if isinstance(x, dict):
        for k in sorted(x):
            if k not in ("path", "seconds"):
                _numbers(x[k], out)
    elif isinstance(x, list):
        for v in x:
            _numbers(v, out)
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        out.append(float(x))
    return out


def compare_weights(dev: dict, cpu: dict) -> tuple[bool, str]:
    a, b = np.array(_numbers(dev["tensors"], [])), np.array(_numbers(cpu["tensors"], []))
    if a.shape != b.shape:
        return False, f"{a.size} numbers against {b.size}"
    ok = np.isclose(a, b, rtol=WEIGHTS_RTOL, atol=1e-6) | (np.isnan(a) & np.isnan(b))
    worst = float(np.nanmax(np.abs(a - b) / np.maximum(np.abs(b), 1e-6))) if a.size else 0.0
    return bool(ok.all()), f"{a.size} diagnostics of the trained weights, max rel diff {worst:.2g} <= {WEIGHTS_RTOL:g}"


def compare_law(dev: dict, cpu: dict) -> tuple[bool, str]:
    zs = []
    for a, b in zip(dev["phis"], cpu["phis"]):
        zs += [abs(x - y) / math.hypot(sx, sy) for x, y, sx, sy in zip(a["error"], b["error"], a["se"], b["se"])]
    zmax = max(zs)
    return zmax <= K, (f"weak error per test function and depth, max z {zmax:.2f} <= {K:g} over {len(zs)}; verdicts "
                       f"{dev['verdict']} / {cpu['verdict']}")


def _strip(d):
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if k != "seconds"}
    return [_strip(v) for v in d] if isinstance(d, list) else d


def compare_runs(dev: dict, stored: dict) -> tuple[bool, str]:
    same = _strip(dev) == _strip(stored)
    return same, "runs plot of the device's law store: " + ("the same result.json" if same else "a different result")


COMPARE = {"convergence": compare_convergence, "inside-sde": compare_convergence, "inside-ode": compare_convergence,
           "rough": compare_convergence, "sized": compare_convergence, "order": compare_convergence,
           "stability": compare_stability, "phase": compare_phase, "train": compare_trained,
           "weights": compare_weights, "scaling": compare_scaling, "conv": compare_trained,
           "trained-limit": compare_limit, "transfer": compare_transfer, "law": compare_law, "shapes": compare_shapes,
           "runs": compare_runs}


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
    rc, reason = _call(cmd, work / "tests.log", min(budget.left(), args.timeout), ROOT)
    wall = time.perf_counter() - t0
    log = work / "tests.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", _last_line(text))}
    what = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("passed", "failed", "skipped")) + \
        (f", {counts.get('error', 0) + counts.get('errors', 0)} errors" if "error" in counts or "errors" in counts else "")
    row = {"step": "tests", "full": f"{len(files)} files, -k '{sel}': {what}", "full_s": wall}
    if rc is None:
        return {**row, "ok": False, "agree": reason}
    if rc != 0:
        first = next((ln for ln in text.splitlines() if ln.startswith(("FAILED ", "ERROR "))), "")
        return {**row, "ok": False, "agree": f"pytest exit {rc}: {_last_line(text)}" + (f"; first: {first[:160]}"
                                                                                         if first else "")}
    return {**row, "ok": True, "agree": "every selected test passed or was skipped with its reason"}


def plans(names: list, args, work: Path) -> tuple[list, list]:
    """The device's and the CPU's ``(name, argv)`` lists: the device runs each step's full size (and
    the subset beside it when there is one); the CPU the subset, or the full size; ``phase`` twice."""
    size = sizes(args.small)
    dev, cpu = [], []
    for n in names:
        full, subset = size[n]
        seed = 1 if STEPS[n][1] == "mc" else 0
        if subset is not None:
            dev.append((n + "+full", command(n, full, args.device, seed, work, "device-full")))
        dev.append((n, command(n, subset or full, args.device, seed, work, "device")))
        cpu.append((n, command(n, subset or full, "cpu", 0, work, "cpu")))
        if n == "phase":
            cpu.append((n + "+seed2", command(n, full, "cpu", 2, work, "cpu2")))
    return dev, cpu


def row_of(name: str, args, work: Path, dev: dict, cpu: dict) -> dict:
    full, subset = sizes(args.small)[name]
    shown = ["deeplimits", *full] if STEPS[name][0] not in ("weights", "runs") else \
        (["deeplimits", "weights", "<the train step's run>"] if name == "weights" else
         ["deeplimits", "runs", "plot", "<the law step's run>"])
    row = {"step": name, "full": " ".join(shown), "subset": "same" if subset is None else "deeplimits " + " ".join(subset)}
    for side, got in (("device", dev.get(name)), ("CPU", cpu.get(name))):
        if got is None or got.get("rc") != 0:
            why = "not run" if got is None else got.get("error") or f"exit {got.get('rc')}"
            return {**row, "ok": False, "agree": f"{side}: {why}"}
    row.update(sub_dev_s=dev[name]["wall"], sub_cpu_s=cpu[name]["wall"], cpu_cpu_s=cpu[name]["cpu"])
    row["full_s"] = dev[name + "+full"]["wall"] if subset is not None and dev.get(name + "+full", {}).get("rc") == 0 \
        else row["sub_dev_s"]
    try:
        tag_d, tag_c = "device", "cpu"
        if name == "runs":
            ok, text = compare_runs(_read(work, "runs", tag_d), _read(work, "law", tag_d))
        elif name == "phase":
            ok, text = compare_phase(_read(work, name, tag_d), _read(work, name, tag_c), _read(work, name, "cpu2"))
        else:
            ok, text = COMPARE[name](_read(work, name, tag_d), _read(work, name, tag_c))
        if subset is not None:
            if dev.get(name + "+full", {}).get("rc") != 0:
                return {**row, "ok": False, "agree": f"full size on the device: {dev.get(name + '+full', {}).get('error')}"}
            ok2, text2 = COMPARE[name](_read(work, name, "device-full"), _read(work, name, tag_c))
            ok, text = ok and ok2, f"subset: {text}. Full size against the CPU subset: {text2}"
        return {**row, "ok": ok, "agree": text}
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
        s = lambda k: f"{r[k]:.1f}" if isinstance(r.get(k), (int, float)) else "-"  # noqa: E731
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
        return child(argv[1], argv[2], argv[3])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", help="the device checked against the CPU (default cuda)")
    ap.add_argument("--small", action="store_true", help="small sizes (seconds); never writes RESULTS.md")
    ap.add_argument("--skip", default="", help="comma-separated steps left out (e.g. tests)")
    ap.add_argument("--out", help="directory of the run stores and logs (default: a temporary directory)")
    ap.add_argument("--no-write", action="store_true", help="do not touch benchmarks/RESULTS.md")
    ap.add_argument("--timeout", type=float, default=200.0, help="seconds per step (default 200)")
    ap.add_argument("--budget", type=float, default=450.0,
                    help="no run starts or goes on past this many seconds in all (default 450)")
    args = ap.parse_args(argv)
    skip = {s for s in args.skip.split(",") if s}
    unknown = skip - set(STEPS) - {"tests"}
    if unknown:
        ap.error(f"--skip: unknown steps {sorted(unknown)} (steps: tests, {', '.join(STEPS)})")

    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu_check: --device cuda but torch.cuda.is_available() is False (use --device cpu to try the "
              "check itself)", file=sys.stderr)
        return 2
    name = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "CPU"
    base = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="gpu-check-"))
    work = base / datetime.datetime.now().strftime("gpu-check-%Y%m%d-%H%M%S-%f")
    work.mkdir(parents=True)
    command_line = "python benchmarks/gpu_check.py " + " ".join(argv)
    print(f"gpu_check: {name} ({args.device}), torch {torch.__version__}, {os.cpu_count()} CPUs; logs and run "
          f"stores in {work}", flush=True)
    budget, t_all, c_all, rows = Budget(args.budget, args.timeout), time.perf_counter(), time.process_time(), []
    if "tests" not in skip:
        print("[tests]", flush=True)
        rows.append(step_tests(args, work, budget))
        print(f"[tests]: {'PASS' if rows[-1]['ok'] else 'FAIL'}: {rows[-1]['agree']}", flush=True)
    names = [n for n in STEPS if n not in skip]
    dev_plan, cpu_plan = plans(names, args, work)
    print(f"[{args.device}] {len(dev_plan)} runs in one process", flush=True)
    dev = run_device(args.device, "device", dev_plan, work, budget, args.timeout)
    print(f"[cpu] {len(cpu_plan)} runs in one process", flush=True)
    cpu = run_device("cpu", "cpu", cpu_plan, work, budget, args.timeout)
    for n in names:
        rows.append(row_of(n, args, work, dev, cpu))
        r = rows[-1]
        print(f"[{n}] {'PASS' if r['ok'] else 'FAIL'}: {r['agree']}", flush=True)
    total = time.perf_counter() - t_all
    cpu_total = CPU_USED[0] + time.process_time() - c_all
    failed = [r["step"] for r in rows if not r["ok"]]
    tab = table(rows, args.device)
    print("\n" + tab + f"\n\ntotal {total:.0f} s of wall time, {cpu_total:.1f} s of CPU time (this process and its "
          f"children); " + (f"FAILED: {', '.join(failed)}" if failed else "every step passed"))
    if not (args.no_write or args.small):
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        section = (f"{HEADING}\n\n```\n{command_line}\n```\n\n{name} ({args.device}), torch {torch.__version__}, "
                   f"{os.cpu_count()} CPU cores for the CPU runs, {date}; total {total:.0f} s. The rules of "
                   f"agreement and what each step runs are in the script's docstring. "
                   f"{'Failed: ' + ', '.join(failed) if failed else 'Every step passed.'}\n\n{tab}\n")
        write_results(section)
        print(f"wrote the section '{HEADING}' of {RESULTS.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
