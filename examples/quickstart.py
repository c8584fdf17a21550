"""Quick start: pair each network with its continuous limit and watch the strong error fall.

Run:  python examples/quickstart.py
"""
import numpy as np
import torch

import deeplimits as dl

depths = [16, 32, 64, 128, 256]
g = torch.Generator().manual_seed(0)
for regime, kw in [("sde", {}), ("ode", {}), ("fbm", {"hurst": 0.75})]:
    p = dl.pair(regime, width=8, **kw)
    sample = p.sample(32, resolution=2048 if regime != "ode" else None, generator=g)
    errors = [sol.strong_error().mean().item() for sol in p.solve_depths(sample, depths)]
    rate = -np.polyfit(np.log(depths), np.log(errors), 1)[0]
    print(p)
    for L, e in zip(depths, errors):
        print(f"  depth {L:4d}   E max_k |H_k/L - h_k| = {e:.4f}")
    print(f"  fitted rate {rate:.2f}   theory {p.theory_rate:g}\n")
