"""Spectral norms of convolutions (issue 32): the batched FFT method against the dense SVD of
the explicit matrix of the convolution, measured in the same run.

Ours: ``conv_spectral_norms`` of a stage of kernels ``(L, c, c, 3, 3)`` on an ``n x n`` grid
(Sedghi, Gupta & Long, ICLR 2019: one batched real FFT, the largest eigenvalue of the smaller
Gram matrix at every frequency). Peer: what one does without the theorem, the largest singular
value of the explicit ``(c n^2) x (c n^2)`` matrix of each layer's circular convolution (built
by applying ``conv2d`` with circular padding to the basis images, then its largest singular
value by ``torch.linalg.svdvals``, the fastest dense route in PyTorch), timed on
``--dense-layers`` of the layers (the median layer) and scaled to the stage; skipped where the matrix has more than
``--dense-max`` rows (64 channels on 16x16 is a 16384 x 16384 matrix: 2 GiB and hours of SVD on
two cores), where only ours is timed. Both in
float64; the two answers are compared (relative difference, over the layers the peer measured).

Run from the repository root:

    python benchmarks/bench_conv_norms.py [--sizes 4x8,16x8,8x16,64x16,128x8] [--layers 16] [--dense-layers 3]
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from bench_diagnostics import timed  # the median of repeats after one untimed call (this folder is on sys.path)
from deeplimits.diagnostics import conv_spectral_norms


def dense_norms(K: torch.Tensor, n: int) -> torch.Tensor:
    """The peer: the spectral norm of the explicit matrix of each layer's circular convolution."""
    out = []
    for k in K:  # one layer at a time: its matrix alone is (c n^2)^2 numbers
        c_out, c_in, kh, kw = k.shape
        basis = torch.eye(c_in * n * n, dtype=k.dtype).reshape(-1, c_in, n, n)
        y = F.conv2d(F.pad(basis, (0, kw - 1, 0, kh - 1), mode="circular"), k)
        out.append(torch.linalg.svdvals(y.reshape(y.shape[0], -1).T.contiguous())[0])
    return torch.stack(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="4x8,16x8,8x16,64x16,128x8", help="channels x grid, comma separated")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--dense-layers", type=int, default=3)
    ap.add_argument("--dense-max", type=int, default=2048, help="the largest dense matrix the peer builds (rows)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"{torch.get_num_threads()} threads, float64, a stage of {a.layers} layers of 3x3 kernels")
    dense_norms(torch.randn(1, 2, 2, 3, 3, dtype=torch.float64), 4)  # LAPACK's first call (about 0.5 s) untimed
    for size in a.sizes.split(","):
        c, n = (int(x) for x in size.split("x"))
        K = torch.randn(a.layers, c, c, 3, 3, generator=torch.Generator().manual_seed(c), dtype=torch.float64)
        t_ours = timed(lambda: conv_spectral_norms(K, n), a.repeats)
        if c * n * n > a.dense_max:
            print(f"c={c:4d} on {n}x{n} (dense matrix {c * n * n} x {c * n * n}): FFT {t_ours * 1e3:9.1f} ms; "
                  f"dense SVD not run ({(c * n * n) ** 2 * 8 / 2 ** 30:.1f} GiB per layer)")
            continue
        sub = K[:a.dense_layers]
        per_layer = []
        for k in sub:  # the median layer's time, times the stage's layers (a shared machine's hiccups ignored)
            t0 = time.perf_counter()
            dense_norms(k[None], n)
            per_layer.append(time.perf_counter() - t0)
        t_dense = statistics.median(per_layer) * a.layers
        dense = dense_norms(sub, n)
        rel = float(((conv_spectral_norms(sub, n) - dense).abs() / dense).max())
        print(f"c={c:4d} on {n}x{n} (dense matrix {c * n * n} x {c * n * n}): FFT {t_ours * 1e3:9.1f} ms; "
              f"dense SVD {t_dense:8.2f} s ({t_dense / t_ours:,.0f}x slower); max rel. difference {rel:.1e}")


if __name__ == "__main__":
    main()
