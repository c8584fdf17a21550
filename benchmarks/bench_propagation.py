"""Benchmark of the stability study (issue 5, first step): the published i.i.d. protocol.

res-3, d = 40, n_in = 64, uniform i.i.d. weights, depths linspace(10, 1000, 10),
beta in {0.25, 0.5, 1}, 50 draws, r_h and r_p. Target: at most 5 s (the paper's reference
code needs about 230 s on this machine).

Compared in the same run with a straightforward PyTorch peer written the usual way: one
network per (depth, beta, draw), weights drawn per beta, p_k by autograd through all L
layers. Run from the repository root:

    python benchmarks/bench_propagation.py [--peer-draws 50]
"""

import argparse
import json
import math
import time

import numpy as np
import torch

from deeplimits.propagation import stability

DEPTHS = [int(x) for x in np.linspace(10, 1000, 10)]
BETAS = [0.25, 0.5, 1.0]


def peer(draws, d=40, n_in=64, seed=0):
    """The usual way: loop over depths, betas and draws; autograd for p_0 and p_L."""
    g = torch.Generator().manual_seed(seed)
    out = []
    a = math.sqrt(3.0 / d)
    for L in DEPTHS:
        for beta in BETAS:
            for _ in range(draws):
                V = (torch.rand(L, d, d, generator=g) * 2 - 1) * a
                W = (torch.rand(L, d, d, generator=g) * 2 - 1) * a
                x = torch.randn(n_in, generator=g)
                A = torch.randn(d, n_in, generator=g) / math.sqrt(n_in)
                B = torch.randn(1, d, generator=g) / math.sqrt(d)
                h0 = (A @ x).requires_grad_(True)
                hs = [h0]
                h = h0
                for k in range(L):
                    h = h + L ** -beta * (V[k] @ torch.relu(W[k] @ h))
                    h.retain_grad()
                    hs.append(h)
                loss = 0.5 * (B @ h).pow(2).sum()
                loss.backward()
                r_h = ((h - h0).norm() / h0.norm()).item()
                r_p = ((h0.grad - h.grad).norm() / h.grad.norm()).item()
                out.append((L, beta, r_h, r_p))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer-draws", type=int, default=50)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    stability("res-3", depths=[10], draws=2)  # warm-up
    t0 = time.perf_counter()
    res = stability("res-3", depths=DEPTHS, betas=BETAS, draws=50)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = peer(args.peer_draws)
    t_peer = time.perf_counter() - t0
    print(f"deeplimits: {t_ours:.2f} s (target <= 5 s: {'PASS' if t_ours <= 5 else 'FAIL'})")
    print(f"peer (autograd, one network per draw, {args.peer_draws} draws): {t_peer:.1f} s -> "
          f"{t_peer / t_ours * 50 / args.peer_draws:.0f}x slower per draw")
    print(f"{'beta':>5} {'depth':>6} {'median r_h':>11} {'peer median':>12} {'median r_p':>11} {'peer median':>12}")
    for rec in res.records:
        if rec["depth"] in (10, 1000):
            pr = [r for r in rows if r[0] == rec["depth"] and r[1] == rec["beta"]]
            print(f"{rec['beta']:5.2f} {rec['depth']:6d} {rec['r_h']['median']:11.4g} {np.median([r[2] for r in pr]):12.4g} "
                  f"{rec['r_p']['median']:11.4g} {np.median([r[3] for r in pr]):12.4g}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(ours_seconds=t_ours, peer_seconds=t_peer, peer_draws=args.peer_draws), f, indent=2)


if __name__ == "__main__":
    main()
