"""Training step of the convolutional residual networks (issue 32), against the usual loop.

Model: the block ``h_{k+1} = ReLU(h_k + delta_k * ReLU(A_k * h_k))`` of Cohen et al. (ICML 2021,
§3.2), one stage of ``--width`` channels on 8 x 8 digits-sized images, batch 32, float32,
cross-entropy, SGD with momentum 0.9 and weight decay 5e-4 (the protocol of ``scaling --arch
conv --preset cpu``). Timed per configuration-step:

* peer: the usual PyTorch loop: one ``nn.Module`` of ``nn.Conv2d`` layers per configuration,
  trained one after the other with ``torch.optim.SGD``;
* deeplimits: ``ConvResidualNetwork(configs=C)`` (grouped convolutions) and ``BatchedSGD``, the
  ``C`` configurations in one step;
each on one intra-op thread and on two (the rule of ``studies/training/conv.py``,
``ONE_THREAD_BELOW``), and the floating-point rate of the step (two per multiply-add, three
forward passes per step) that the time estimate of ``scaling --arch conv`` reads.

Run from the repository root (every call timed once per round, the rounds interleaved, after a
warm-up round; the minimum over the rounds, and the median):

    python benchmarks/bench_conv.py [--depth 16] [--width 16] [--configs 1 4] [--rounds 5] [--json PATH]

``python benchmarks/bench_conv_peak.py`` (issue 40; the same flags): the same step against the
machine's peaks measured in the same run: a 2048 x 2048 float32 ``torch.mm`` and a large convolution of the
study's kernel and channels (batch 256 on 32 x 32), forward and backward, in both memory
formats; the study's step, its convolutions and its optimiser alone, with the levers (channels-last
activations, oneDNN off, float64, two threads, grouped convolutions against a loop and a block-diagonal
dense kernel), each as a fraction of both peaks and as a ratio to the usual loop.
"""

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

from deeplimits.studies._shared.conv import conv_flops
from deeplimits.training import BatchedSGD, ConvResidualNetwork
from deeplimits.training.losses import config_losses


class UsualBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.A = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.delta = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)

    def forward(self, h):
        return torch.relu(h + self.delta(torch.relu(self.A(h))))


class UsualNet(torch.nn.Module):
    """The usual way: nn.Conv2d layers in an nn.Sequential, one network per configuration."""

    def __init__(self, depth, width):
        super().__init__()
        self.stem = torch.nn.Conv2d(1, width, 3, padding=1, bias=False)
        self.blocks = torch.nn.Sequential(*[UsualBlock(width) for _ in range(depth)])
        self.head = torch.nn.Linear(width, 10)

    def forward(self, x):
        return self.head(self.blocks(torch.relu(self.stem(x))).mean((-2, -1)))


def peer_step(nets, opts, x, y):
    for net, opt in zip(nets, opts):
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(net(x), y).backward()
        opt.step()


def ours_step(net, opt, x, y):
    opt.zero_grad(set_to_none=True)
    config_losses(net(x), y, "cross_entropy").sum().backward()
    opt.step()


def interleaved(cases, rounds, steps):
    """``{name: {"wall": [...], "cpu": [...]}}``: the seconds per configuration-step of ``cases``
    ``{name: (threads, C, fn)}``, one per round, by the clock and in CPU time (the process's,
    every thread): every case ``steps`` calls per round, the rounds interleaved, round 0 a warm-up."""
    times = {k: {"wall": [], "cpu": []} for k in cases}
    for r in range(rounds + 1):
        for name, (threads, C, fn) in cases.items():
            torch.set_num_threads(threads)
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(steps):
                fn()
            if r:  # round 0 warms up
                times[name]["wall"].append((time.perf_counter() - t0) / steps / C)
                times[name]["cpu"].append((time.process_time() - c0) / steps / C)
    return times


def parser() -> argparse.ArgumentParser:
    """The command line of this benchmark (and of :mod:`bench_conv_peak`, which takes the same)."""
    p = argparse.ArgumentParser()
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--configs", type=int, nargs="+", default=[1, 4])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--json")
    return p


def main():
    a = parser().parse_args()
    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(32, 1, 8, 8, generator=g), torch.randint(0, 10, (32,), generator=g)
    flops = 3 * 32 * conv_flops((1, 8, 8), dict(stem=a.width, channels=(a.width,), strides=(1,), blocks=(a.depth,)))
    cases = {}
    for C in a.configs:
        nets = [UsualNet(a.depth, a.width) for _ in range(C)]
        opts = [torch.optim.SGD(n.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4) for n in nets]
        ours = ConvResidualNetwork((1, 8, 8), 10, [a.depth], stem=a.width, channels=[a.width], strides=[1], configs=C)
        opt = BatchedSGD(ours, lr=0.01, momentum=0.9, weight_decay=5e-4)
        for threads in (1, 2):
            cases[f"peer C={C} threads={threads}"] = (threads, C, lambda n=nets, o=opts: peer_step(n, o, x, y))
            cases[f"deeplimits C={C} threads={threads}"] = (threads, C, lambda n=ours, o=opt: ours_step(n, o, x, y))
    times = interleaved(cases, a.rounds, a.steps)
    rows = []
    for name, t in times.items():
        ts = t["wall"]
        best = min(ts)
        rows.append({"case": name, "min_ms": 1e3 * best, "median_ms": 1e3 * statistics.median(ts),
                     "gflops": flops / best / 1e9})
        print(f"{name:28s} {1e3 * best:8.2f} ms {1e3 * statistics.median(ts):8.2f} ms  {flops / best / 1e9:6.1f} "
              "GFLOP/s per configuration-step")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
