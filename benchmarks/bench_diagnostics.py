"""Weight diagnostics on the published family of depths (issue 13), against a floor in the same run.

Tensors: the weights W of the inside model at the published depths floor(1.2^n), n = 13..50
(10 to about 9100 layers), width d (default 25: the embedded-MNIST width of Cohen et al. 2021),
float32 as stored by training. Timed: ``weight_diagnostics`` of every tensor (norms, increments,
cumulative sum, Hurst index of every coordinate) plus ``scaling_exponents`` of the family.
Floor: one pass over the same tensors (the sum of squares of each), the least any diagnostic
must read. Peer: the same diagnostics written the usual way in numpy, one coordinate at a time
for the Hurst index, with the same trend / noise split (a Gaussian average over 5% of the depth,
reflected ends: ``scipy.ndimage.gaussian_filter1d``) and the noise part's quadratic variation
and Hurst index; it is also timed without the split (the work of the earlier peer). Each time is
the median of ``--repeats`` runs, wall clock and CPU time of the process (the CPU time counts
every thread: compare it where the machine is loaded; torch runs on ``--threads``, default 1 like
the peer, since two threads spinning on a loaded machine inflate the CPU time).

The own-ODE error (``own_ode_error``: the ODE of an inside network from the trend of its
weights, solved with torchdiffeq, against the network's states on 256 inputs, float64) at
every published depth, against the floor of the network's own forward pass on the same inputs.

Run from the repository root:

    python benchmarks/bench_diagnostics.py [--width 25] [--repeats 3] [--threads 1] [--no-ode]
"""

import argparse
import os
import statistics
import time

import numpy as np
import torch

from deeplimits.diagnostics import own_ode_error, scaling_exponents, weight_diagnostics
from deeplimits.studies.scaling.presets import SCALING_PRESETS


def timed(fn, repeats):
    """Median wall and CPU seconds of ``repeats`` calls of ``fn`` after one warm-up call, and what
    the last call returned."""
    out = fn()
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), out


def _hurst_median(a):
    hs = []
    for j in range(a.shape[1]):
        x = a[:, j]
        hs.append(0.5 * np.log2(np.mean((x[1:] + x[:-1]) ** 2) / np.mean(x ** 2)))
    return np.median(hs)


def peer(tensors, split=True):
    """The usual numpy code: norms per layer, Hurst index coordinate by coordinate and (``split``)
    the noise part left by a Gaussian trend of bandwidth 5% of the depth, its quadratic variation
    and Hurst index. Returns the noise parts' quadratic variations (NaN below 20 layers)."""
    from scipy.ndimage import gaussian_filter1d

    qvs = []
    for A in tensors:
        a = A.reshape(len(A), -1).astype(np.float64)
        norms = [np.linalg.norm(a[k]) for k in range(len(a))]
        max(norms)
        np.max([np.linalg.norm(a[k + 1] - a[k]) for k in range(len(a) - 1)])
        np.max(np.linalg.norm(np.cumsum(a, 0), axis=1))
        _hurst_median(a)
        if split and 0.05 * len(a) >= 1:
            noise = a - gaussian_filter1d(a, 0.05 * len(a), axis=0, mode="mirror", truncate=3.0)
            qvs.append(float(np.sum(noise ** 2)))
            _hurst_median(noise)
        else:
            qvs.append(float("nan"))
    return qvs


def diagnostics(tensors, arrays, repeats):
    """Times the diagnostics, the floor and the peer (with and without the trend split; the peer
    with it, the slowest by far, once after its warm-up)."""

    def ours():
        out = [weight_diagnostics(t) for t in tensors]
        scaling_exponents(out)
        return out

    def floor():
        for t in tensors:
            t.square().sum()

    (w, c, out), (fw, fc, _) = timed(ours, repeats), timed(floor, repeats)
    (pw, pc, pq), (sw, sc, _) = timed(lambda: peer(arrays), 1), timed(lambda: peer(arrays, False), repeats)
    qv = np.array([d.noise_qv for d in out])
    agree = np.nanmax(np.abs(qv - np.array(pq)) / qv)
    print(f"diagnostics + exponents: {w * 1e3:.0f} ms wall, {c * 1e3:.0f} ms CPU;  floor (one pass): {fw * 1e3:.1f} ms "
          f"wall ({w / fw:.0f}x), {fc * 1e3:.1f} ms CPU")
    print(f"numpy peer, the same work (trend split by scipy.ndimage): {pw * 1e3:.0f} ms wall ({pw / w:.1f}x ours), "
          f"{pc * 1e3:.0f} ms CPU ({pc / c:.1f}x ours);  its noise quadratic variations within {agree:.1e} of ours")
    print(f"numpy peer without the trend split (the earlier peer): {sw * 1e3:.0f} ms wall ({sw / w:.2f}x ours), "
          f"{sc * 1e3:.0f} ms CPU ({sc / c:.2f}x ours)")


def own_ode(depths, tensors, width, g):
    """The own-ODE error at every depth against the networks' forward passes."""
    from deeplimits.training import ResidualNetwork

    x = torch.randn(256, width, generator=g, dtype=torch.float64)
    t_pair = t_forward = 0.0
    for L, W in zip(depths, tensors):
        net = ResidualNetwork("inside", L, width, width, width, bias=True, dtype=torch.float64)
        with torch.no_grad():
            net.W.copy_(W.double().unsqueeze(1) / width)
        t0 = time.perf_counter()
        own_ode_error(net, x)
        t1 = time.perf_counter()
        with torch.no_grad():
            net(x)
        t_pair, t_forward = t_pair + t1 - t0, t_forward + time.perf_counter() - t1
    print(f"own-ODE error at the {len(depths)} depths (256 inputs, float64): {t_pair:.1f} s;  floor (the networks' "
          f"forward passes): {t_forward:.2f} s ({t_pair / t_forward:.0f}x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--width", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-ode", action="store_true", help="skip the own-ODE error")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1: CPU times comparable with the "
                                                           "single-threaded numpy peer)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    depths = SCALING_PRESETS["published"]["depths"]
    g = torch.Generator().manual_seed(0)
    tensors = [torch.randn(L, a.width, a.width, generator=g) * L ** -0.3 for L in depths]
    print(f"{len(depths)} depths {depths[0]}..{depths[-1]}, d={a.width}: {sum(t.numel() for t in tensors) / 1e6:.1f} "
          f"M weights, {torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.2f}")
    diagnostics(tensors, [t.numpy() for t in tensors], a.repeats)
    if not a.no_ode:
        own_ode(depths, tensors, a.width, g)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
