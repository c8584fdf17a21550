"""Training step of the scaling experiment's inside model (issue 27), against the usual loop.

Model: ``h_{k+1} = h_k + delta tanh(A_k h_k + b_k)``, one shared ``delta``, d = 10, batch 32,
``h_0 = x``, output ``h_L``, float32, ``torch.nn.MSELoss()``, Adam at 1e-2 (the protocol of
Cohen, Cont, Rossier & Xu's published code, docs/weights.md). Timed per configuration-step:

* peer: the usual PyTorch loop, as the authors' code is written: one model at a time, one
  ``nn.Parameter`` per layer for ``A_k`` and for ``b_k`` (``nn.ParameterList``), autograd,
  ``torch.optim.Adam``;
* deeplimits: ``ResidualNetwork('inside', configs=C)`` (the fused pass of
  ``deeplimits/training/_inside.py``) and ``BatchedAdam``, ``C`` configurations (seeds or
  learning rates) in one step; the step of the scaling study;
* where its time goes: the forward pass alone (no gradient kept), the forward and backward
  pass, and the whole step (loss, optimiser).

Run from the repository root (medians over --repeats steps after two warm-up steps):

    python benchmarks/bench_scaling.py [--depths 1000 10000] [--configs 1 8 32] [--json PATH]
"""

import argparse
import json
import statistics
import time

import torch

from deeplimits.training import BatchedAdam, ResidualNetwork
from deeplimits.training.losses import config_losses


def median_seconds(step, repeats: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class UsualInside(torch.nn.Module):
    """The usual way: one nn.Parameter per layer, as the published code is written."""

    def __init__(self, depth, width):
        super().__init__()
        self.A = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(width, width) * 0.01 / (depth * width))
                                        for _ in range(depth))
        self.b = torch.nn.ParameterList(torch.nn.Parameter(torch.zeros(width)) for _ in range(depth))
        self.delta = torch.nn.Parameter(torch.tensor(1.0 / depth))

    def forward(self, x):
        h = x
        for A, b in zip(self.A, self.b):
            h = h + self.delta * torch.tanh(torch.nn.functional.linear(h, A, b))
        return h


def usual_seconds(L, x, y, repeats):
    torch.manual_seed(0)
    net = UsualInside(L, x.shape[1])
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    mse = torch.nn.MSELoss()

    def step():
        opt.zero_grad()
        mse(net(x), y).backward()
        opt.step()

    return median_seconds(step, repeats)


def fused_seconds(L, C, x, y, repeats) -> dict:
    """Per step of C configurations: the forward pass alone, forward and backward, the whole step."""
    torch.manual_seed(0)
    d = x.shape[1]
    net = ResidualNetwork("inside", L, d, d, d, configs=C, bias=True, delta="shared")
    with torch.no_grad():
        net.W.mul_(0.01 / (L * d) * d ** 0.5)
        for p in (net.A, net.B):
            p.copy_(torch.eye(d).expand_as(p))
            p.requires_grad_(False)
    opt = BatchedAdam(net, lr=1e-2)

    def forward():
        with torch.no_grad():
            net(x)

    def forward_backward():
        opt.zero_grad(set_to_none=True)
        net(x).sum().backward()

    def step():  # the step of the scaling study
        opt.zero_grad(set_to_none=True)
        per = config_losses(net(x), y, "mse")
        per.sum().backward()
        opt.observe(per.detach())
        opt.step()

    return {"forward": median_seconds(forward, repeats), "forward_backward": median_seconds(forward_backward, repeats),
            "step": median_seconds(step, repeats)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--configs", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", metavar="PATH")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(1)
    x, y = torch.rand(32, 10, generator=g) * 2 - 1, torch.randn(32, 10, generator=g)
    print(f"inside model, tanh, shared delta, d=10, batch 32, float32, {torch.get_num_threads()} threads, "
          f"torch {torch.__version__}")
    rows = []
    for L in a.depths:
        repeats = a.repeats if L <= 1000 else max(3, a.repeats // 2)
        usual = usual_seconds(L, x, y, repeats)
        print(f"L={L}: peer (nn.Parameter x 2L, autograd, torch.optim.Adam): {usual * 1e3:.1f} ms per step")
        print(f"{'C':>4} {'step ms':>9} {'ms/config-step':>15} {'vs peer':>8} {'fwd ms':>8} {'fwd+bwd ms':>11} "
              f"{'loss+optimiser ms':>18}")
        for C in a.configs:
            t = fused_seconds(L, C, x, y, repeats)
            row = {"depth": L, "configs": C, "usual_ms": usual * 1e3, "step_ms": t["step"] * 1e3,
                   "ms_per_config_step": t["step"] / C * 1e3, "speedup": usual / (t["step"] / C),
                   "forward_ms": t["forward"] * 1e3, "forward_backward_ms": t["forward_backward"] * 1e3}
            rows.append(row)
            print(f"{C:4d} {row['step_ms']:9.1f} {row['ms_per_config_step']:15.2f} {row['speedup']:7.1f}x "
                  f"{row['forward_ms']:8.1f} {row['forward_backward_ms']:11.1f} "
                  f"{row['step_ms'] - row['forward_backward_ms']:18.1f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"settings": vars(a), "threads": torch.get_num_threads(), "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
