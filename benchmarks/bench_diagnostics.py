"""Weight diagnostics on the published family of depths (issue 13), against a floor in the same run.

Tensors: the weights W of the inside model at the published depths floor(1.2^n), n = 13..50
(10 to about 9100 layers), width d (default 25: the embedded-MNIST width of Cohen et al. 2021),
float32 as stored by training. Timed: ``weight_diagnostics`` of every tensor (norms, increments,
cumulative sum, Hurst index of every coordinate) plus ``scaling_exponents`` of the family.
Floor: one pass over the same tensors (the sum of squares of each), the least any diagnostic
must read. Peer: the same diagnostics written the usual way in numpy, one coordinate at a time
for the Hurst index.

The own-ODE error (``own_ode_error``: the ODE of an inside network from the trend of its
weights, solved with torchdiffeq, against the network's states on 256 inputs, float64) at
every published depth, against the floor of the network's own forward pass on the same inputs.

Run from the repository root:

    python benchmarks/bench_diagnostics.py [--width 25] [--repeats 3]
"""

import argparse
import statistics
import time

import numpy as np
import torch

from deeplimits.diagnostics import own_ode_error, scaling_exponents, weight_diagnostics
from deeplimits.studies.presets import SCALING_PRESETS


def timed(fn, repeats):
    fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def peer(tensors):
    """The usual numpy code: norms per layer, Hurst index coordinate by coordinate."""
    for A in tensors:
        a = A.reshape(len(A), -1).astype(np.float64)
        norms = [np.linalg.norm(a[k]) for k in range(len(a))]
        max(norms)
        np.max([np.linalg.norm(a[k + 1] - a[k]) for k in range(len(a) - 1)])
        np.max(np.linalg.norm(np.cumsum(a, 0), axis=1))
        hs = []
        for j in range(a.shape[1]):
            x = a[:, j]
            hs.append(0.5 * np.log2(np.mean((x[1:] + x[:-1]) ** 2) / np.mean(x ** 2)))
        np.median(hs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--width", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    depths = SCALING_PRESETS["published"]["depths"]
    g = torch.Generator().manual_seed(0)
    tensors = [torch.randn(L, a.width, a.width, generator=g) * L ** -0.3 for L in depths]
    arrays = [t.numpy() for t in tensors]
    total = sum(t.numel() for t in tensors)

    def ours():
        scaling_exponents([weight_diagnostics(t) for t in tensors])

    def floor():
        for t in tensors:
            t.square().sum()

    t_ours, t_floor = timed(ours, a.repeats), timed(floor, a.repeats)
    t_peer = timed(lambda: peer(arrays), 1)
    print(f"{len(depths)} depths {depths[0]}..{depths[-1]}, d={a.width}: {total / 1e6:.1f} M weights, "
          f"{torch.get_num_threads()} threads")
    print(f"diagnostics + exponents: {t_ours * 1e3:.0f} ms;  floor (one pass): {t_floor * 1e3:.1f} ms "
          f"({t_ours / t_floor:.0f}x);  numpy peer: {t_peer * 1e3:.0f} ms ({t_peer / t_ours:.1f}x slower)")
    from deeplimits.training import ResidualNetwork

    x = torch.randn(256, a.width, generator=g, dtype=torch.float64)
    t_pair = t_forward = 0.0
    for L, W in zip(depths, tensors):
        net = ResidualNetwork("inside", L, a.width, a.width, a.width, bias=True, dtype=torch.float64)
        with torch.no_grad():
            net.W.copy_(W.double().unsqueeze(1) / a.width)
        t0 = time.perf_counter()
        own_ode_error(net, x)
        t1 = time.perf_counter()
        with torch.no_grad():
            net(x)
        t_pair, t_forward = t_pair + t1 - t0, t_forward + time.perf_counter() - t1
    print(f"own-ODE error at the {len(depths)} depths (256 inputs, float64): {t_pair:.1f} s;  floor (the networks' "
          f"forward passes): {t_forward:.2f} s ({t_pair / t_forward:.0f}x)")


if __name__ == "__main__":
    main()
