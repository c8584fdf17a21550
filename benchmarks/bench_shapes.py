"""The shapes study's networks: their speed against the same arithmetic written plainly, and the memory
of one large network's training, in the same run.

* ``--speed``: every cell of a preset's grid (``--preset``, default cpu) with ``--runs`` runs each,
  trained and measured against the exact limit twice: by the study's task (:func:`depth_task`: the
  networks of a depth batched over widths, embedding sizes and runs, streamed over the layers) and by
  benchmarks/shapes_plain.py (one network at a time, numpy, as the authors' released Python code),
  each with the same weights, its hidden-state error against the same limit paths. CPU seconds of the
  process (``resource.getrusage``: the machine is shared), one thread, and the largest difference of
  the errors.
* ``--memory L,M,D``: one network trained for ``--steps`` recorded steps in a fresh process: the
  growth of its peak resident memory (``ru_maxrss``) over the memory before its weights were drawn,
  against the size of its parameters ``2 L M D``.

Run from the repository root:

    python benchmarks/bench_shapes.py --speed [--preset cpu] [--runs 2]
    python benchmarks/bench_shapes.py --memory 499,499,499 [--dtype float64] [--steps 2]
"""

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
import torch

from deeplimits.studies.shapes.presets import PRESETS, PROTOCOL
from deeplimits.studies.shapes.limit import linear_limit
from deeplimits.studies.shapes.network import draw_weights, exact_targets, train_shapes
from deeplimits.studies.shapes.task import embedding_rows, run_seed
from deeplimits.studies.shapes.task import depth_task
from shapes_plain import train_plain


def cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def ours(grid: dict, runs: int) -> tuple[float, dict]:
    """The study's tasks on the grid: CPU seconds and ``{(L, M, D, run): hidden error at step 5}``."""
    t0, out = cpu(), {}
    for L in grid["depths"]:
        params = dict(case="linear", protocol=dataclasses.asdict(PROTOCOL), widths=grid["widths"], dims=grid["dims"],
                      seed=0, dtype="float64", cap=1 << 26, reference=None, depth=L, first_run=0, runs=runs,
                      single_thread=True)
        for c in depth_task(params, 0)["cells"]:
            for j, row in enumerate(c["hidden"]):
                out[(L, c["M"], c["D"], j)] = row[5]
    return cpu() - t0, out


def plain(grid: dict, runs: int) -> tuple[float, dict]:
    """The same networks one at a time: CPU seconds and the same errors."""
    lim = linear_limit(PROTOCOL.x, PROTOCOL.y, steps=PROTOCOL.steps, lr=PROTOCOL.lr)
    x, y = np.array(PROTOCOL.x), np.array(PROTOCOL.y)
    t0, out = cpu(), {}
    for L in grid["depths"]:
        for M in grid["widths"]:
            for D in grid["dims"]:
                for j in range(runs):
                    E = embedding_rows(0, j, D, 6, True)
                    U, V = (W[0].permute(1, 2, 0).numpy().copy() for W in
                            draw_weights(L, [M], [D], [run_seed(0, j, L, M, D)], torch.float64, "cpu"))
                    _, states = train_plain(U, V, E[:, :3], E[:, 3:], x, y)
                    H = lim.paths(E, np.arange(L + 1) / L)
                    out[(L, M, D, j)] = float(np.abs(states[5] - H[5]).mean(axis=1).max())
    return cpu() - t0, out


def speed(args) -> dict:
    torch.set_num_threads(1)
    grid = PRESETS[args.preset]
    ours({"depths": [8], "widths": [8], "dims": [8]}, 1)  # warm-up
    t_ours, e_ours = ours(grid, args.runs)
    t_plain, e_plain = plain(grid, args.runs)
    diff = max(abs(e_ours[k] - e_plain[k]) / e_plain[k] for k in e_plain)
    networks = len(e_plain)
    print(f"| grid | networks | batched (CPU s) | one at a time (CPU s) | ratio | largest relative difference |")
    print(f"|---|---:|---:|---:|---:|---:|")
    print(f"| {args.preset}: L {grid['depths']}, M {grid['widths']}, D {grid['dims']}, {args.runs} runs | {networks} "
          f"| {t_ours:.2f} | {t_plain:.2f} | {t_plain / t_ours:.1f}x | {diff:.1e} |")
    return {"preset": args.preset, "runs": args.runs, "networks": networks, "ours": t_ours, "plain": t_plain,
            "ratio": t_plain / t_ours, "difference": diff}


def _rss() -> int:
    """Resident bytes now (``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def memory_child(L: int, M: int, D: int, dtype: str, steps: int) -> dict:
    """In this (fresh) process: one network's training, its peak memory over the memory before its weights."""
    torch.set_num_threads(1)
    dt = getattr(torch, dtype)
    lim = linear_limit(PROTOCOL.x, PROTOCOL.y, steps=PROTOCOL.steps, lr=PROTOCOL.lr)
    E = torch.as_tensor(embedding_rows(0, 0, D, 6, True), dtype=dt)[None]
    targets = exact_targets(lim, L, E)
    targets(0)  # the limit's paths set up before the baseline
    base = _rss()
    t0 = time.perf_counter()
    out = train_shapes(L, [M], [D], E, [run_seed(0, 0, L, M, D)], protocol=dataclasses.replace(PROTOCOL, steps=steps),
                       targets=targets)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    params = 2 * L * M * D * dt.itemsize
    return {"shape": [L, M, D], "dtype": dtype, "steps": steps, "params_bytes": params, "baseline_bytes": base,
            "peak_bytes": peak, "growth_bytes": peak - base, "ratio": (peak - base) / params, "seconds": seconds,
            "hidden": out["hidden"][-1].item()}


def memory(args) -> dict:
    L, M, D = (int(v) for v in args.memory.split(","))
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import json, sys; sys.path.insert(0, {here!r}); from bench_shapes import memory_child; "
            f"print(json.dumps(memory_child({L}, {M}, {D}, {args.dtype!r}, {args.steps})))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    row = json.loads(p.stdout.strip().splitlines()[-1])
    gib = 1 << 30
    print(f"| network (L, M, D) | dtype | recorded steps | parameters | peak growth | ratio | seconds |")
    print(f"|---|---|---:|---:|---:|---:|---:|")
    print(f"| {tuple(row['shape'])} | {row['dtype']} | {row['steps']} | {row['params_bytes'] / gib:.3f} GiB | "
          f"{row['growth_bytes'] / gib:.3f} GiB | {row['ratio']:.3f} | {row['seconds']:.1f} |")
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--speed", action="store_true", help="the batched networks against one at a time")
    ap.add_argument("--preset", default="cpu", choices=list(PRESETS))
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--memory", metavar="L,M,D", help="the peak memory of one network's training")
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--json", help="write the rows there")
    args = ap.parse_args(argv)
    rows = {}
    if args.speed:
        rows["speed"] = speed(args)
    if args.memory:
        rows["memory"] = memory(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
