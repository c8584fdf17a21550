"""``python benchmarks/bench_conv_peak.py`` (issue 40; the flags of ``bench_conv.py``): the conv training step of ``bench_conv.py`` against the
machine's peaks, measured in the same run.

Peaks: ``torch.mm`` of two 2048 x 2048 float32 matrices on one and two threads (the arithmetic
peak), and a large convolution of the study's kernel and channels (``--width`` to ``--width``
channels, 3 x 3, batch 256 on 32 x 32), forward and backward, in both memory formats (the
convolution peak: the faster of the two, one thread). Beside them, one of the study's own
convolutions (batch 32 on 8 x 8) and the matrix product its im2col form computes
(``(32 * 64) x (9 * width)`` by ``(9 * width) x width``), and ``C`` configurations' convolutions
three ways: grouped (what ``ConvResidualNetwork`` does), one after the other, and one dense
convolution of a block-diagonal kernel's shape (``C`` times the arithmetic).

The step (``ConvResidualNetwork`` and ``BatchedSGD``, per configuration): as the module runs it;
with channels-last activations (``torch.channels_last`` from the stem's output on, forward
and backward); with oneDNN off (``torch.backends.mkldnn``); in float64; on two threads; and its
convolutions alone (the same ``conv2d`` calls, forward and backward, no ReLU, sum, loss or
optimiser); its optimiser's step alone against ``torch.optim.SGD``'s on the same parameters. The usual loop (``nn.Conv2d`` networks one after the other, ``torch.optim.SGD``) is
the ratio's reference. Every rate counts two operations per multiply-add and three forward
passes per step, in CPU time (the process's, every thread), the minimum over the rounds.
"""

import json
import os
import warnings

import torch
import torch.nn.functional as F

from bench_conv import UsualNet, interleaved, ours_step, parser, peer_step
from deeplimits.studies._shared.conv import conv_flops
from deeplimits.training import BatchedSGD, ConvResidualNetwork

CL = torch.channels_last
BATCH, SIDE = 32, 8  # the study's mini-batch and the digits' 8 x 8 images
BIG_BATCH, BIG_SIDE = 256, 32  # the large convolution of the convolution peak


def _fwd_bwd(x, w, groups=1):
    """One convolution of ``x`` by ``w`` (padding 1), forward and backward (input and kernel)."""
    def run():
        y = F.conv2d(x, w, padding=1, groups=groups)
        y.backward(torch.ones_like(y))
        x.grad = w.grad = None
    return run


def _leaf(shape, fmt=torch.contiguous_format):
    return torch.randn(shape).contiguous(memory_format=fmt).requires_grad_()


def peak_cases(width, C):
    """``{name: (threads, flops per call, fn)}``: the peaks and the convolutions alone."""
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    k = 9 * width
    p, q = torch.randn(BATCH * SIDE * SIDE, k), torch.randn(k, width)
    big = 3 * 2 * BIG_BATCH * BIG_SIDE ** 2 * width * k
    one = 3 * 2 * BATCH * SIDE ** 2 * width * k
    cases = {f"matmul 2048 threads={t}": (t, 2 * 2048 ** 3, lambda: torch.mm(a, b)) for t in (1, 2)}
    cases["im2col GEMM of one study conv"] = (1, 2 * p.shape[0] * k * width, lambda: torch.mm(p, q))
    for fmt, tag in ((torch.contiguous_format, "contiguous"), (CL, "channels-last")):
        w = _leaf((width, width, 3, 3), fmt)
        cases[f"conv peak {tag}"] = (1, big, _fwd_bwd(_leaf((BIG_BATCH, width, BIG_SIDE, BIG_SIDE), fmt), w))
        cases[f"study conv {tag}"] = (1, one, _fwd_bwd(_leaf((BATCH, width, SIDE, SIDE), fmt), w))
    return cases if C == 1 else {**cases, **grouping_cases(width, C, one)}


def grouping_cases(width, C, one):
    """``C`` configurations' convolutions (``one`` operations each) grouped, one after the
    other, and as one dense convolution of a block-diagonal kernel's shape (``C`` times the
    arithmetic, rated by the useful operations)."""
    x, w = _leaf((BATCH, C * width, SIDE, SIDE)), _leaf((C * width, width, 3, 3))
    cases = {}
    cases[f"C={C} grouped"] = (1, C * one, _fwd_bwd(x, w, C))
    xl, wl = _leaf((BATCH, C * width, SIDE, SIDE), CL), _leaf((C * width, width, 3, 3), CL)
    cases[f"C={C} grouped channels-last"] = (1, C * one, _fwd_bwd(xl, wl, C))
    parts = [_fwd_bwd(_leaf((BATCH, width, SIDE, SIDE)), _leaf((width, width, 3, 3))) for _ in range(C)]
    cases[f"C={C} one after the other"] = (1, C * one, lambda: [f() for f in parts])
    dense = _leaf((C * width, C * width, 3, 3))
    cases[f"C={C} block-diagonal dense"] = (1, C * one, _fwd_bwd(x, dense))
    return cases


def conv_chain(net, x, fmt=torch.contiguous_format):
    """The step's convolutions alone: the ``conv2d`` calls of ``net`` on ``x``, forward and
    backward, the stem's output in memory format ``fmt`` (every later activation follows it)."""
    def run():
        C = net.configs
        h = F.conv2d(x, net.stem.flatten(0, 1), padding=1).contiguous(memory_format=fmt)
        for b in net.blocks:
            h = F.conv2d(h, b.A.flatten(0, 1), padding=1, groups=C)
            h = F.conv2d(h, b.delta.flatten(0, 1), padding=1, groups=C)
        h.backward(torch.ones_like(h))
        net.zero_grad(set_to_none=True)
    return run


def channels_last(net):
    """``net`` with the stem's output turned channels-last (the input's one channel cannot carry
    the format: a ``(batch, 1, h, w)`` tensor is contiguous in both); every later activation,
    forward and backward, follows it."""
    net.blocks[0].register_forward_pre_hook(lambda m, args: (args[0].contiguous(memory_format=CL), *args[1:]))
    return net


def _without_onednn(fn):
    def run():
        with torch.backends.mkldnn.flags(enabled=False):
            fn()
    return run


def _ours(depth, width, C, dtype=torch.float32):
    net = ConvResidualNetwork((1, SIDE, SIDE), 10, [depth], stem=width, channels=[width], strides=[1], configs=C,
                              dtype=dtype)
    return net, BatchedSGD(net, lr=0.01, momentum=0.9, weight_decay=5e-4)


def step_cases(depth, width, C, x, y):
    """``{name: (threads, C, fn)}``: the step of ``C`` configurations, the usual loop and the levers."""
    nets = [UsualNet(depth, width) for _ in range(C)]
    opts = [torch.optim.SGD(n.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4) for n in nets]
    net, opt = _ours(depth, width, C)
    net_cl, opt_cl = _ours(depth, width, C)
    net64, opt64 = _ours(depth, width, C, torch.float64)
    channels_last(net_cl)
    step = lambda: ours_step(net, opt, x, y)  # noqa: E731
    return {f"C={C} usual loop": (1, C, lambda: peer_step(nets, opts, x, y)),
            f"C={C} deeplimits": (1, C, step),
            f"C={C} deeplimits channels-last": (1, C, lambda: ours_step(net_cl, opt_cl, x, y)),
            f"C={C} deeplimits oneDNN off": (1, C, _without_onednn(step)),
            f"C={C} deeplimits float64": (1, C, lambda: ours_step(net64, opt64, x.double(), y)),
            f"C={C} deeplimits threads=2": (2, C, step),
            f"C={C} its convolutions alone": (1, C, conv_chain(net, x)),
            f"C={C} its convolutions alone, channels-last": (1, C, conv_chain(net, x, CL))}


def optimiser_cases(depth, width, C, x, y):
    """``{name: (threads, C, fn)}``: the optimiser's step alone, ``BatchedSGD`` against
    ``torch.optim.SGD`` on the same parameters and gradients (no floating-point rate)."""
    net, opt = _ours(depth, width, C)
    ours_step(net, opt, x, y)  # the gradients and the momentum buffers
    sgd = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    sgd.step()
    return {f"C={C} BatchedSGD.step alone": (1, C, opt.step), f"C={C} torch.optim.SGD.step alone": (1, C, sgd.step)}


def _rows(times, flops, cases, steps):
    """One row a case: the minimum CPU and wall time per call (per configuration-step for the
    ``steps``), the rate, its fractions of the peaks and, for a step, its time over the usual
    loop's."""
    rate = {k: flops.get(k, 0) / min(t["cpu"]) / 1e9 for k, t in times.items()}
    conv_peak = max(rate["conv peak contiguous"], rate["conv peak channels-last"])
    mm_peak = rate["matmul 2048 threads=1"]
    rows = []
    for k, t in times.items():
        cpu = min(t["cpu"])
        loop = k.split(" ")[0] + " usual loop"
        ratio = cpu / min(times[loop]["cpu"]) if k in steps else None
        rows.append(dict(case=k, threads=cases[k][0], cpu_ms=1e3 * cpu, wall_ms=1e3 * min(t["wall"]),
                         gflops=rate[k], of_conv_peak=rate[k] / conv_peak, of_matmul_peak=rate[k] / mm_peak,
                         to_usual_loop=ratio))
    return rows, conv_peak, mm_peak


def peak_main(a):
    """Time the peaks and the steps (interleaved), print the table and write ``--json``."""
    warnings.filterwarnings("ignore", message=".*TF32.*")
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(BATCH, 1, SIDE, SIDE, generator=g), torch.randint(0, 10, (BATCH,), generator=g)
    step_flops = 3 * BATCH * conv_flops((1, SIDE, SIDE), dict(stem=a.width, channels=(a.width,), strides=(1,),
                                                                  blocks=(a.depth,)))
    cases, flops, steps = {}, {}, set()
    for C in a.configs:
        for k, (t, fl, fn) in peak_cases(a.width, C).items():
            cases[k], flops[k] = (t, 1, fn), fl
        for k, case in step_cases(a.depth, a.width, C, x, y).items():
            cases[k], flops[k] = case, step_flops
            steps.add(k)
        cases.update(optimiser_cases(a.depth, a.width, C, x, y))
    load = os.getloadavg()
    times = interleaved(cases, a.rounds, a.steps)
    rows, conv_peak, mm_peak = _rows(times, flops, cases, steps)
    print(f"load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after; conv peak {conv_peak:.1f} GFLOP/s, "
          f"matmul peak {mm_peak:.1f} GFLOP/s (one thread, CPU time)")
    print("| case | threads | CPU ms | wall ms | GFLOP/s | of conv peak | of matmul peak | time / usual loop |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = "" if r["to_usual_loop"] is None else f"{r['to_usual_loop']:.2f}"
        rates = (f"{r['gflops']:.1f} | {r['of_conv_peak']:.0%} | {r['of_matmul_peak']:.0%}" if r["gflops"]
                 else "| |")
        print(f"| {r['case']} | {r['threads']} | {r['cpu_ms']:.2f} | {r['wall_ms']:.2f} | {rates} | {ratio} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "load": [load, os.getloadavg()], "conv_peak": conv_peak,
                       "matmul_peak": mm_peak, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    peak_main(parser().parse_args())
