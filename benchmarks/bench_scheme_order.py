"""strong_order against torchsde's own way of checking a strong order (issue 29), in one run.

The equation: the scalar linear Itô SDE ``dX = 0.1 X dt + 0.5 X dW``, ``X_0 = 1``, with its exact
solution ``X_t = exp(-0.025 t + 0.5 W_t)``; torchsde's ``euler`` solver.

* ``strong_order``: ``dl.strong_order(dl.TorchsdeScheme(sde, "euler"), ...)``: every depth on one
  Brownian path per draw in one pass, the exact solution read at the grid points; and the same
  with the hand-written ``dl.EulerMaruyama``;
* torchsde's own way: one ``BrownianInterval`` for all draws, one ``sdeint(..., method="euler",
  dt=1/L)`` per depth with ``ts`` the grid ``k/L``, the exact solution from the interval's values
  ``W_{k/L}``.

Both report ``E max_k |X_{k/L} - x_k|`` and ``E |X_1 - x_L|`` per depth with standard errors over
independent draws (different random numbers: the errors must agree within their standard
errors, not bitwise), and the wall time. Run from the repository root:

    python benchmarks/bench_scheme_order.py [--draws 4096] [--max-log2 9]
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import torch
import torchsde

import deeplimits as dl

A, B = 0.1, 0.5


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


def stats(x):
    return x.mean(0), x.std(0, ddof=1) / math.sqrt(len(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", "--paths", dest="draws", type=int, default=4096)
    ap.add_argument("--max-log2", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    depths = [2 ** k for k in range(3, args.max_log2 + 1)]
    kw = dict(depths=depths, draws=args.draws, reference=2 * depths[-1], exact=exact, seed=args.seed,
              chunk=args.draws)
    rows = {}
    for name, scheme in (("strong_order + TorchsdeScheme", dl.TorchsdeScheme(Linear(), "euler")),
                         ("strong_order + EulerMaruyama", dl.EulerMaruyama(lambda t, x: A * x,
                                                                           lambda t, x: B * x[..., None]))):
        t0 = time.perf_counter()
        r = dl.strong_order(scheme, [1.0], **kw)
        rows[name] = dict(seconds=time.perf_counter() - t0, max=(np.array(r.error), np.array(r.stderr)),
                          terminal=(np.array(r.terminal_error), np.array(r.terminal_stderr)), verdict=r.verdict,
                          fit=r.fit.law_text, p=r.fit.pvalue, rate=(r.rate, *r.rate_ci))
    t0 = time.perf_counter()
    mx, tm = torchsde_way(depths, args.draws, args.seed + 1)
    rows["torchsde sdeint per depth"] = dict(seconds=time.perf_counter() - t0, max=stats(mx), terminal=stats(tm))
    base = rows["torchsde sdeint per depth"]
    print(f"depths {depths}, {args.draws} draws, torch {torch.__version__}, {torch.get_num_threads()} threads")
    for name, row in rows.items():
        z = {k: (row[k][0] - base[k][0]) / np.sqrt(row[k][1] ** 2 + base[k][1] ** 2) for k in ("max", "terminal")}
        print(f"{name}: {row['seconds']:.2f} s, speed-up x{base['seconds'] / row['seconds']:.1f}")
        for j, L in enumerate(depths):
            print(f"  L={L:4d}  max {row['max'][0][j]:.5f} ± {row['max'][1][j]:.5f} (z {z['max'][j]:+.2f})   "
                  f"terminal {row['terminal'][0][j]:.5f} ± {row['terminal'][1][j]:.5f} (z {z['terminal'][j]:+.2f})")
        if "verdict" in row:
            print(f"  fit {row['fit']}: p = {row['p']:.3g}, verdict {row['verdict']}, power-law slope "
                  f"{row['rate'][0]:.3f} [{row['rate'][1]:.3f}, {row['rate'][2]:.3f}]")
    print(json.dumps({k: round(v["seconds"], 3) for k, v in rows.items()}))


if __name__ == "__main__":
    main()
