"""Training throughput of the batched grid (issue 12), against a peer and two floors in the same run.

Model: res-1 with a bias per layer, d = 30, L = 1000, 64 inputs, 10 classes, batch 128, float32,
cross-entropy, Adam (the heat map's setting, docs/training.md). One training step of C
configurations at once (``ResidualNetwork`` + ``BatchedAdam``, the step of
``deeplimits.training.train``) is timed per configuration-step, against:

* peer: the usual PyTorch loop, one model at a time: an ``nn.Module`` holding an input
  ``nn.Linear``, L ``nn.Linear(d, d)`` residual blocks ``h + L^-beta lin_k(sigma(h))`` in an
  ``nn.ModuleList``, an output ``nn.Linear``, autograd, ``torch.optim.Adam``. Target: the
  batched grid at least 8x faster per configuration-step.
* floor "forward+backward": the same batched module's forward and backward pass alone (no loss
  bookkeeping, no optimiser, no data). Target: the full step within 1.5x of it.
* floor "products": the batched matrix products of one step alone, on preallocated tensors:
  per layer the forward product and the two backward products (``G^T T`` and ``G V``),
  no activation, no autograd: the arithmetic no implementation can skip.

Run from the repository root (medians over --repeats steps after two warm-up steps):

    python benchmarks/bench_training.py [--configs 8 32] [--activation relu] [--json PATH]
"""

import argparse
import json
import statistics
import time

import torch

from deeplimits.training import BatchedAdam, ResidualNetwork
from deeplimits.training.train import config_losses


def median_seconds(step, repeats: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class UsualResNet(torch.nn.Module):
    """The usual way: one model, one nn.Linear per residual layer."""

    def __init__(self, depth, width, n_in, n_out, beta, activation):
        super().__init__()
        self.inp = torch.nn.Linear(n_in, width)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))
        self.out = torch.nn.Linear(width, n_out)
        self.scale = depth ** -beta
        self.sigma = getattr(torch, activation)

    def forward(self, x):
        h = self.inp(x)
        for layer in self.layers:
            h = h + self.scale * layer(self.sigma(h))
        return self.out(h)


def usual_step_seconds(a, x, y, repeats):
    torch.manual_seed(0)
    net = UsualResNet(a.depth, a.width, x.shape[1], 10, a.beta, a.activation)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    return median_seconds(step, repeats)


def batched_seconds(a, C, x, y, repeats):
    """(full training step, forward+backward alone) for C configurations."""
    torch.manual_seed(0)
    net = ResidualNetwork("res-1", a.depth, a.width, x.shape[1], 10, configs=C, beta=a.beta, bias=True,
                          activation=a.activation)
    opt = BatchedAdam(net, lr=1e-3)

    def step():  # the step of deeplimits.training.train
        opt.zero_grad(set_to_none=True)
        per = config_losses(net(x), y, "cross_entropy")
        per.sum().backward()
        opt.observe(per.detach())
        opt.step()

    full = median_seconds(step, repeats)

    def forward_backward():
        opt.zero_grad(set_to_none=True)  # hands the gradient buffers back, as in training
        net(x).sum().backward()

    return full, median_seconds(forward_backward, repeats)


def products_seconds(a, C, repeats):
    """The batched products of one step alone: baddbmm forward, two bmm backward per layer."""
    g = torch.Generator().manual_seed(0)
    L, d, B = a.depth, a.width, a.batch
    V = torch.randn(L, C, d, d, generator=g)
    T = torch.randn(C, B, d, generator=g)
    h = torch.randn(C, B, d, generator=g)
    G = torch.randn(C, B, d, generator=g)
    gV = torch.empty(L, C, d, d)
    out = torch.empty(C, B, d)
    alpha = L ** -a.beta

    def step():
        for k in range(L):
            torch.baddbmm(h, T, V[k].transpose(-1, -2), alpha=alpha, out=out)
        for k in range(L - 1, -1, -1):
            torch.bmm(G.transpose(-1, -2), T, out=gV[k])
            torch.bmm(G, V[k], out=out)

    return median_seconds(step, repeats)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--width", type=int, default=30)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--beta", type=float, default=1.0)
    ap.add_argument("--activation", default="relu", choices=["relu", "tanh"])
    ap.add_argument("--configs", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", metavar="PATH")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(a.batch, 64, generator=g)
    y = torch.randint(0, 10, (a.batch,), generator=g)
    print(f"res-1 + bias, {a.activation}, d={a.width}, L={a.depth}, batch {a.batch}, float32, "
          f"{torch.get_num_threads()} threads, torch {torch.__version__}")
    usual = usual_step_seconds(a, x, y, a.repeats)
    print(f"peer (nn.Linear x L, autograd, torch.optim.Adam): {usual * 1e3:.1f} ms per step")
    rows = []
    print(f"{'C':>4} {'step ms':>9} {'ms/config-step':>15} {'vs peer':>8} {'fwd+bwd ms':>11} "
          f"{'step/fwd+bwd':>13} {'products ms':>12} {'step/products':>14}")
    for C in a.configs:
        full, fb = batched_seconds(a, C, x, y, a.repeats)
        prod = products_seconds(a, C, a.repeats)
        row = {"configs": C, "step_ms": full * 1e3, "ms_per_config_step": full / C * 1e3,
               "speedup_vs_usual": usual / (full / C), "forward_backward_ms": fb * 1e3,
               "step_over_forward_backward": full / fb, "products_ms": prod * 1e3, "step_over_products": full / prod}
        rows.append(row)
        print(f"{C:4d} {row['step_ms']:9.1f} {row['ms_per_config_step']:15.2f} {row['speedup_vs_usual']:7.1f}x "
              f"{row['forward_backward_ms']:11.1f} {row['step_over_forward_backward']:12.2f}x "
              f"{row['products_ms']:12.1f} {row['step_over_products']:13.2f}x", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"settings": vars(a), "threads": torch.get_num_threads(), "usual_ms_per_step": usual * 1e3,
                       "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
