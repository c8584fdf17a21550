"""strong_order against its floor and torchsde's own way of checking a strong order (issues 29, 40), in one run.

The equation: the scalar linear Itô SDE ``dX = 0.1 X dt + 0.5 X dW``, ``X_0 = 1``, with its exact
solution ``X_t = exp(-0.025 t + 0.5 W_t)``; torchsde's ``euler`` solver.

* ``strong_order``: ``dl.strong_order(dl.TorchsdeScheme(sde, "euler"), ...)``: every depth on one
  Brownian path per draw in one pass, the exact solution read at the grid points; and the same
  with the hand-written ``dl.EulerMaruyama``;
* torchsde's own way: one ``BrownianInterval`` for all draws, one ``sdeint(..., method="euler",
  dt=1/L)`` per depth with ``ts`` the grid ``k/L``, the exact solution from the interval's values
  ``W_{k/L}``;
* the floor: the work ``strong_order`` cannot avoid, with no statistics: the same count of normal
  draws, their level sums (sums of 2, 4, ... consecutive fine increments), the plain
  Euler–Maruyama loop of every depth over them, the exact solution on the fine grid and the error
  reductions, block by block on preallocated buffers, torch on one thread; and the same with
  ``dl.EulerMaruyama``'s own step called for every step (what a general scheme's calls cost).

Each runs in a child process of its own (``--child NAME``): its CPU time (user + system, all
threads) is that of the measured call, read in the child with ``getrusage`` after the imports;
the child's whole CPU time and peak RSS come from ``os.wait4``. All report ``E max_k |X_{k/L} -
x_k|`` and ``E |X_1 - x_L|`` per depth with standard errors over independent draws (different
random numbers: the errors must agree within their standard errors, not bitwise). Run from the
repository root:

    python benchmarks/bench_scheme_order.py [--draws 4096] [--max-log2 9] [--seed 0] [--repeat 3] [--before PATH]

(``--before PATH``: also ``strong_order`` with ``PYTHONPATH=PATH``, e.g. ``git archive`` of an
earlier commit unpacked there, in the same rounds.)
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

A, B = 0.1, 0.5
CHILDREN = ("strong_order + TorchsdeScheme", "strong_order + EulerMaruyama", "torchsde sdeint per depth", "floor",
            "floor, EulerMaruyama's step")
#: the suffix of the strong_order child run on the package of ``--before``
BEFORE = ", before"


class Linear:
    """``dX = A X dt + B X dW`` for torchsde (diagonal noise, Itô)."""

    noise_type, sde_type = "diagonal", "ito"

    def f(self, t, y):
        return A * y

    def g(self, t, y):
        return B * y


def exact(x0, w, t):
    return x0 * torch.exp((A - B * B / 2) * t + B * w)


def torchsde_way(depths, paths, seed):
    """One BrownianInterval, one sdeint per depth on the grid k/L, the exact solution on it."""
    import torchsde

    bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(paths, 1), dtype=torch.float64, entropy=seed,
                                   levy_area_approximation="none")
    y0 = torch.ones(paths, 1, dtype=torch.float64)
    mx, tm = [], []
    for L in depths:
        ts = torch.linspace(0, 1, L + 1, dtype=torch.float64)
        ys = torchsde.sdeint(Linear(), y0, ts, bm=bm, method="euler", dt=1.0 / L)[..., 0]  # (L + 1, paths)
        w = torch.stack([bm(0.0, float(t)) if t > 0 else torch.zeros(paths, 1, dtype=torch.float64)
                         for t in ts])[..., 0]
        err = (exact(1.0, w, ts[:, None]) - ys).abs()
        mx.append(err.max(0).values.numpy())
        tm.append(err[-1].numpy())
    return np.stack(mx, 1), np.stack(tm, 1)


#: fine steps per block of the floor (its buffers are reused from block to block, as strong_order's are)
BLOCK = 128


def _block_sums(dw, sums):
    """Level sums of a block of fine increments: ``{n: (n, draws)}`` for n = K, K/2, ..., 1 (the
    sums of K/n consecutive fine increments), into the preallocated ``sums``."""
    levels, n, at = {len(dw): dw}, len(dw), 0
    while n > 1:
        levels[n // 2] = torch.add(levels[n][0::2], levels[n][1::2], out=sums[at:at + n // 2])
        at, n = at + n // 2, n // 2
    return levels


def floor(depths, draws, seed, scheme=None):
    """The work strong_order cannot avoid: the normals of the finest grid (2 max(depths) steps, as in the
    strong_order runs) drawn block by block, their level sums, the Euler–Maruyama loop of every depth,
    the exact solution at every fine grid point and the error reductions, on preallocated buffers
    (``scheme``: ``scheme(h, dW, t, dt)`` called for every step instead, writing its result there)."""
    R, f64 = 2 * depths[-1], dict(dtype=torch.float64)
    K, rng, c = min(R, BLOCK), np.random.default_rng(seed), (A - B * B / 2) / R
    dw, X, sums, path, err = (torch.empty(K, draws, **f64) for _ in range(5))
    t = torch.arange(1, K + 1, **f64)[:, None] * c
    x, mx, acc = ({L: torch.full((draws,), v, **f64) for L in depths} for v in (1.0, 0.0, 0.0))
    W = torch.zeros(draws, **f64)
    for j0 in range(0, R, K):
        rng.standard_normal(out=dw.numpy())
        levels = _block_sums(dw.mul_(1 / math.sqrt(R)), sums)
        torch.add(W, dw[0], out=X[0])
        for k in range(1, K):  # W at the block's fine grid points, then X = exp(c t + B W) in place
            torch.add(X[k - 1], dw[k], out=X[k])
        W.copy_(X[-1])
        X.mul_(B).add_(t).add_(j0 * c).exp_()
        for L in depths:
            r, dt = R // L, 1.0 / L
            if r > K:  # a step spans several blocks: add up the blocks' increments
                acc[L].add_(levels[1][0])
                if (j0 + K) % r:
                    continue
            inc, n = (acc[L][None], 1) if r > K else (levels[K // r], K // r)
            h = x[L]
            for k in range(n):  # x + f(x) dt + g(x) dW with f = A x, g = B x
                if scheme is None:
                    torch.addcmul(h, h, inc[k], value=B, out=path[k]).add_(h, alpha=A * dt)
                else:
                    path[k].copy_(scheme(h[:, None], inc[k][:, None], 0.0, dt)[:, 0])
                h = path[k]
            x[L].copy_(h)
            acc[L].zero_()
            e = torch.sub(X[min(r, K) - 1::min(r, K)], path[:n], out=err[:n]).abs_()
            torch.maximum(mx[L], torch.amax(e, 0), out=mx[L])
    return (np.stack([mx[L].numpy() for L in depths], 1),
            np.stack([(X[-1] - x[L]).abs().numpy() for L in depths], 1))


def stats(x):
    return x.mean(0), x.std(0, ddof=1) / math.sqrt(len(x))


def _strong_order(name, kw):
    import deeplimits as dl

    scheme = (dl.TorchsdeScheme(Linear(), "euler") if "Torchsde" in name else
              dl.EulerMaruyama(lambda t, x: A * x, lambda t, x: B * x[..., None]))
    run = dl.strong_order  # the lazy import of the study's module, outside the measurement

    def measured():
        r = run(scheme, [1.0], **kw)
        return dict(max=(r.error, r.stderr), terminal=(r.terminal_error, r.terminal_stderr), verdict=r.verdict,
                    fit=r.fit.law_text, p=r.fit.pvalue, rate=(r.rate, *r.rate_ci))
    return measured


def child(name, depths, draws, seed):
    """One measurement in this process: its CPU seconds (getrusage, after the imports) and numbers, as JSON."""
    import torchsde  # noqa: F401  every child pays the same imports before its measurement

    kw = dict(depths=depths, draws=draws, reference=2 * depths[-1], exact=exact, seed=seed, chunk=draws)
    if name.startswith("strong_order"):
        measured = _strong_order(name, kw)
    else:
        import deeplimits as dl

        em = dl.EulerMaruyama(lambda t, x: A * x, lambda t, x: B * x[..., None]) if "step" in name else None

        def measured():
            if name.startswith("torchsde"):
                mx, tm = torchsde_way(depths, draws, seed + 1)
            else:
                torch.set_num_threads(1)
                mx, tm = floor(depths, draws, seed, em)
            return dict(max=stats(mx), terminal=stats(tm))
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    row = measured()
    r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - t0
    row = {k: [np.asarray(x).tolist() for x in v] if k in ("max", "terminal") else v for k, v in row.items()}
    print(json.dumps(dict(row, cpu=r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, wall=wall)))


def measure(name, args):
    """Run ``--child name`` in a process of its own: its row, with the whole child's CPU and peak RSS (wait4)."""
    cmd = [sys.executable, __file__, "--child", name, "--draws", str(args.draws), "--max-log2", str(args.max_log2),
           "--seed", str(args.seed)]
    env = dict(os.environ)
    if name.endswith(BEFORE):  # the package of another checkout: its PYTHONPATH
        env["PYTHONPATH"] = args.before
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{name} failed")
    row = json.loads(out.strip().splitlines()[-1])
    row.update(process_cpu=ru.ru_utime + ru.ru_stime, rss_mb=ru.ru_maxrss / 1024)
    row["max"], row["terminal"] = (tuple(np.array(x) for x in row[k]) for k in ("max", "terminal"))
    return row


def measure_rounds(args):
    """``--repeat`` rounds of every child, interleaved: each name's numbers from its first run, its
    CPU and wall seconds the medians over the rounds (all the CPU seconds kept), the peak RSS the largest."""
    names = CHILDREN + ((CHILDREN[1] + BEFORE,) if args.before else ())
    runs = {name: [] for name in names}
    for _ in range(args.repeat):
        for name in names:
            runs[name].append(measure(name, args))
    rows = {}
    for name, rs in runs.items():
        med = {k: float(np.median([r[k] for r in rs])) for k in ("cpu", "wall", "process_cpu")}
        rows[name] = dict(rs[0], **med, cpus=[round(r["cpu"], 3) for r in rs], rss_mb=max(r["rss_mb"] for r in rs))
    return rows


def report(rows, depths, args, load):
    base, fl = rows["torchsde sdeint per depth"], rows["floor"]
    print(f"depths {depths}, {args.draws} draws, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after; medians of {args.repeat} rounds")
    for name, row in rows.items():
        z = {k: (row[k][0] - base[k][0]) / np.sqrt(row[k][1] ** 2 + base[k][1] ** 2) for k in ("max", "terminal")}
        print(f"{name}: CPU {row['cpu']:.3f} s {row['cpus']} (wall {row['wall']:.3f} s), x{row['cpu'] / fl['cpu']:.2f} "
              f"the floor, speed-up over torchsde x{base['cpu'] / row['cpu']:.2f}; whole process CPU "
              f"{row['process_cpu']:.2f} s, peak RSS {row['rss_mb']:.0f} MB")
        for j, L in enumerate(depths):
            print(f"  L={L:4d}  max {row['max'][0][j]:.5f} ± {row['max'][1][j]:.5f} (z {z['max'][j]:+.2f})   "
                  f"terminal {row['terminal'][0][j]:.5f} ± {row['terminal'][1][j]:.5f} (z {z['terminal'][j]:+.2f})")
        if "verdict" in row:
            print(f"  fit {row['fit']}: p = {row['p']:.3g}, verdict {row['verdict']}, power-law slope "
                  f"{row['rate'][0]:.3f} [{row['rate'][1]:.3f}, {row['rate'][2]:.3f}]")
    print(json.dumps({k: dict(cpu=round(v["cpu"], 3), floor_ratio=round(v["cpu"] / fl["cpu"], 2),
                              speedup=round(base["cpu"] / v["cpu"], 2), rss_mb=round(v["rss_mb"])) for k, v in rows.items()}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", "--paths", dest="draws", type=int, default=4096)
    ap.add_argument("--max-log2", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="rounds of every measurement (medians reported)")
    ap.add_argument("--before", metavar="PATH", help="also strong_order + EulerMaruyama with PYTHONPATH=PATH (a "
                                                     "checkout of the package before a change)")
    ap.add_argument("--child", choices=CHILDREN + (CHILDREN[1] + BEFORE,), help=argparse.SUPPRESS)
    args = ap.parse_args()
    depths = [2 ** k for k in range(3, args.max_log2 + 1)]
    if args.child:
        return child(args.child, depths, args.draws, args.seed)
    load = os.getloadavg()[0]
    report(measure_rounds(args), depths, args, load)


if __name__ == "__main__":
    main()
