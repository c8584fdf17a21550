"""Benchmarks of the strong-convergence engine (issue 3), each measured in one run.

* ``floor``: the all-depth SDE sweep against the time it takes merely to draw the finest
  level's Gaussian increments (same chunks of draws, same blocks). Target: at most 2.5x.
* ``peer``: against the straightforward torchsde approach (``sdeint`` Euler, general noise
  with the full ``d x d^2`` diffusion matrix, one solve per depth plus a fine reference, all
  on one ``BrownianInterval``). Target: at least 30x faster, same errors within Monte Carlo
  error.
* ``memory``: peak resident memory of the SDE sweep, in a fresh process per finest depth.
  Target: does not grow with the finest depth.

Run from the repository root:

    python benchmarks/bench_convergence.py floor
    python benchmarks/bench_convergence.py peer
    python benchmarks/bench_convergence.py memory
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import numpy as np
import torch

import deeplimits as dl
from deeplimits.studies.convergence.study import chunk_seed, plan_convergence, run_plan


def _dtype(name):
    return getattr(torch, name)


def floor(args) -> dict:
    depths = [2 ** k for k in range(2, args.max_log2 + 1)]
    plan = plan_convergence("sde", width=args.width, depths=depths, draws=args.draws,
                            reference=args.reference, dtype=_dtype(args.dtype), seed=0)
    # floor: draw every fine increment of every chunk of draws, nothing else
    t0 = time.perf_counter()
    p = plan.pair()
    for c, n in enumerate(plan.chunk_sizes):
        g = torch.Generator().manual_seed(chunk_seed(plan.seed, c))
        s = p.sample(n, resolution=plan.reference, generator=g, dtype=plan.dtype)
        for _ in s.weights["V"].iter_increments(plan.reference):
            pass
    t_ours_draw = time.perf_counter() - t0
    # the plain alternative: torch.randn of the same numbers in the same block shapes
    g = torch.Generator().manual_seed(0)
    t0 = time.perf_counter()
    for n in plan.chunk_sizes:
        block = p.sample(n, resolution=plan.reference, generator=g, dtype=plan.dtype).weights["V"].block
        for _ in range(plan.reference // block):
            torch.randn(block, n, args.width, args.width, generator=g, dtype=plan.dtype)
    t_randn = time.perf_counter() - t0
    t_floor = min(t_ours_draw, t_randn)
    t0 = time.perf_counter()
    res = run_plan(plan)
    t_sweep = time.perf_counter() - t0
    ratio = t_sweep / t_floor
    out = dict(benchmark="floor", width=args.width, draws=args.draws, depths=depths, reference=plan.reference,
               dtype=args.dtype, chunk=plan.chunk, draw_seconds=t_ours_draw, randn_seconds=t_randn,
               floor_seconds=t_floor, sweep_seconds=t_sweep, ratio=ratio, target="<= 2.5", passed=ratio <= 2.5,
               rate=res.rate, rate_ci=res.rate_ci)
    print(f"drawing alone: deeplimits' stream {t_ours_draw:.2f} s, plain torch.randn {t_randn:.2f} s")
    print(f"floor (the faster of the two, {plan.reference} fine increments x {args.draws} draws x "
          f"{args.width}^2): {t_floor:.2f} s")
    print(f"all-depth sweep (depths {depths[0]}..{depths[-1]}, reference {plan.reference}): {t_sweep:.2f} s")
    print(f"ratio {ratio:.2f}  (target <= 2.5)  {'PASS' if ratio <= 2.5 else 'FAIL'}   fitted rate {res.rate:.3f}")
    return out


class _GeneralNoiseSDE(torch.nn.Module):
    """dH = d^{-1/2} dB sigma(H) written the straightforward way: a (batch, d, d^2) diffusion."""

    noise_type = "general"
    sde_type = "ito"

    def __init__(self, d):
        super().__init__()
        self.d = d
        self.eye = torch.eye(d, dtype=torch.float64)

    def f(self, t, y):
        return torch.zeros_like(y)

    def g(self, t, y):
        # G[b, i, (i', j)] = delta_{i i'} tanh(y_j) / sqrt(d)
        s = torch.tanh(y) / math.sqrt(self.d)
        return torch.einsum("ik,bj->bikj", self.eye, s).reshape(y.shape[0], self.d, self.d * self.d)


def _peer_child(d, n, R, max_log2):
    """The peer, in its own process: one BrownianInterval, one sdeint per depth and one for the
    reference. Prints its timing and per-draw errors as JSON."""
    import torchsde

    depths = [2 ** k for k in range(2, max_log2 + 1)]
    t0 = time.perf_counter()
    gen = torch.Generator().manual_seed(1)
    y0 = torch.randn(n, d, generator=gen, dtype=torch.float64)
    bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(n, d * d), dtype=torch.float64, entropy=2, dt=1.0 / R)
    sde = _GeneralNoiseSDE(d)
    ref = torchsde.sdeint(sde, y0, torch.linspace(0, 1, R + 1, dtype=torch.float64), bm=bm, method="euler", dt=1.0 / R)
    errors = []
    for L in depths:
        h = torchsde.sdeint(sde, y0, torch.linspace(0, 1, L + 1, dtype=torch.float64), bm=bm, method="euler",
                            dt=1.0 / L)
        errors.append((ref[:: R // L] - h).norm(dim=-1).amax(0).tolist())
    print(json.dumps(dict(seconds=time.perf_counter() - t0, errors=errors)))


def peer(args) -> dict:
    depths = [2 ** k for k in range(2, args.max_log2 + 1)]
    d, n, R = args.width, args.draws, args.reference
    # glibc raises its mmap threshold after freeing the peer's 32 MB diffusion matrices and then
    # keeps them on the heap: without a fixed threshold the peer's RSS grows by GBs per 100
    # steps. The peer runs in its own process with a fixed threshold; deeplimits runs here.
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "1048576"}
    out = subprocess.run([sys.executable, __file__, "_peer_child", str(d), str(n), str(R), str(args.max_log2)],
                         capture_output=True, text=True, check=True, env=env)
    child = json.loads(out.stdout.strip().splitlines()[-1])
    t_peer = child["seconds"]
    peer_err = np.asarray(child["errors"]).T  # (n, depths)
    t0 = time.perf_counter()
    ours = dl.strong_convergence("sde", width=d, depths=depths, draws=n, reference=R, seed=3)
    t_ours = time.perf_counter() - t0
    pe, pse = peer_err.mean(0), peer_err.std(0, ddof=1) / math.sqrt(n)
    z = (np.asarray(ours.error) - pe) / np.sqrt(np.asarray(ours.stderr) ** 2 + pse ** 2)
    speedup = t_peer / t_ours
    same = bool(np.all(np.abs(z) < 3))
    print(f"{'depth':>6} {'deeplimits':>12} {'± se':>8} {'torchsde':>12} {'± se':>8} {'z':>6}")
    for L, a, sa, b, sb, zz in zip(depths, ours.error, ours.stderr, pe, pse, z):
        print(f"{L:6d} {a:12.5f} {sa:8.5f} {b:12.5f} {sb:8.5f} {zz:6.2f}")
    print(f"peer (torchsde, general noise, {len(depths) + 1} solves): {t_peer:.1f} s; deeplimits: {t_ours:.2f} s; "
          f"speed-up {speedup:.1f}x (target >= 30x) {'PASS' if speedup >= 30 else 'FAIL'}; "
          f"errors agree within 3 se: {'PASS' if same else 'FAIL'}")
    return dict(benchmark="peer", width=d, draws=n, depths=depths, reference=R, peer_seconds=t_peer,
                ours_seconds=t_ours, speedup=speedup, passed_speed=speedup >= 30, errors_agree=same,
                ours_error=ours.error, ours_stderr=ours.stderr, peer_error=pe.tolist(), peer_stderr=pse.tolist(),
                z=z.tolist())


def _memory_child(reference, width, draws, dtype):
    torch.set_num_threads(1)
    depths = [2 ** k for k in range(2, int(math.log2(reference)) - 3)]
    dl.strong_convergence("sde", width=width, depths=[4], draws=1, reference=32, seed=0)  # warm-up
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    dl.strong_convergence("sde", width=width, depths=depths, draws=draws, reference=reference,
                          dtype=_dtype(dtype), seed=0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(dict(reference=reference, depths=depths, base_kib=base, peak_kib=peak,
                          extra_mib=(peak - base) / 1024, seconds=time.perf_counter() - t0)))


def memory(args) -> dict:
    rows = []
    for ref in args.references:
        out = subprocess.run([sys.executable, __file__, "_memory_child", str(ref), str(args.width),
                              str(args.draws), args.dtype], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        naive = ref * args.draws * args.width ** 2 * (8 if args.dtype == "float64" else 4) / 2 ** 20
        print(f"reference {ref:6d}: peak RSS {r['peak_kib'] / 1024:7.1f} MiB, above warm-up {r['extra_mib']:6.1f} MiB "
              f"(the finest increments alone would take {naive:8.1f} MiB), {r['seconds']:.1f} s")
    extra = [r["extra_mib"] for r in rows]
    grows = max(extra) > min(extra) + max(16.0, 0.25 * min(extra))
    print(f"peak memory above warm-up: {', '.join(f'{e:.1f}' for e in extra)} MiB -> "
          f"{'grows (FAIL)' if grows else 'flat (PASS)'}")
    return dict(benchmark="memory", width=args.width, draws=args.draws, dtype=args.dtype, rows=rows, passed=not grows)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "_peer_child":
        _peer_child(*(int(x) for x in sys.argv[2:6]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "_memory_child":
        _memory_child(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="which", required=True)
    f = sub.add_parser("floor")
    f.add_argument("--width", type=int, default=40)
    f.add_argument("--draws", "--paths", dest="draws", type=int, default=256)
    f.add_argument("--max-log2", type=int, default=12)
    f.add_argument("--reference", type=int, default=8192)
    f.add_argument("--dtype", default="float32")
    p = sub.add_parser("peer")
    p.add_argument("--width", type=int, default=40)
    p.add_argument("--draws", "--paths", dest="draws", type=int, default=64)
    p.add_argument("--max-log2", type=int, default=9)
    p.add_argument("--reference", type=int, default=2048)
    m = sub.add_parser("memory")
    m.add_argument("--width", type=int, default=40)
    m.add_argument("--draws", "--paths", dest="draws", type=int, default=64)
    m.add_argument("--references", type=lambda s: [int(x) for x in s.split(",")], default=[1024, 4096, 16384])
    m.add_argument("--dtype", default="float32")
    for q in (f, p, m):
        q.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    out = {"floor": floor, "peer": peer, "memory": memory}[args.which](args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)


if __name__ == "__main__":
    main()
