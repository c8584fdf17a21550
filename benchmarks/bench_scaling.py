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

Run from the repository root (every call timed once per round, the rounds interleaved, after a
warm-up round; the minimum over the rounds, and the median):

    python benchmarks/bench_scaling.py [--depths 1000 10000] [--configs 1 8 32] [--json PATH]
"""

import argparse
import json
import statistics
import time

import torch

from deeplimits.training import BatchedAdam, ResidualNetwork
from deeplimits.training.losses import config_losses


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


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


def usual_step(L, x, y):
    torch.manual_seed(0)
    net = UsualInside(L, x.shape[1])
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    mse = torch.nn.MSELoss()

    def step():
        opt.zero_grad()
        mse(net(x), y).backward()
        opt.step()

    return step


def fused_steps(L, C, x, y) -> dict:
    """For C configurations: the forward pass alone, forward and backward, the whole step."""
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

    return {"forward": forward, "forward_backward": forward_backward, "step": step}


def measure(L, configs, x, y, repeats: int) -> dict:
    """Every timed call once per round, the rounds in turn (so a machine shared with other work
    slows the peer and deeplimits alike), after one warm-up round: the minimum and the median
    over the rounds of each."""
    calls = {("peer", 1, "step"): usual_step(L, x, y)}
    for C in configs:
        calls.update({("fused", C, k): f for k, f in fused_steps(L, C, x, y).items()})
    for f in calls.values():
        f()
    times = {k: [] for k in calls}
    for _ in range(repeats):
        for k, f in calls.items():
            times[k].append(timed(f))
    return {k: (min(v), statistics.median(v)) for k, v in times.items()}


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
          f"torch {torch.__version__}; min (median) over {a.repeats} interleaved rounds")
    rows = []
    for L in a.depths:
        t = measure(L, a.configs, x, y, a.repeats if L <= 1000 else max(3, a.repeats // 2))
        usual = t[("peer", 1, "step")]
        print(f"L={L}: peer (nn.Parameter x 2L, autograd, torch.optim.Adam): {usual[0] * 1e3:.1f} "
              f"({usual[1] * 1e3:.1f}) ms per step")
        print(f"{'C':>4} {'step ms':>9} {'ms/config-step':>15} {'vs peer':>8} {'fwd ms':>8} {'fwd+bwd ms':>11} "
              f"{'loss+optimiser ms':>18}")
        for C in a.configs:
            step, fb, fw = (t[("fused", C, k)] for k in ("step", "forward_backward", "forward"))
            row = {"depth": L, "configs": C, "usual_ms": usual[0] * 1e3, "usual_median_ms": usual[1] * 1e3,
                   "step_ms": step[0] * 1e3, "step_median_ms": step[1] * 1e3,
                   "ms_per_config_step": step[0] / C * 1e3, "speedup": usual[0] / (step[0] / C),
                   "speedup_median": usual[1] / (step[1] / C), "forward_ms": fw[0] * 1e3,
                   "forward_backward_ms": fb[0] * 1e3}
            rows.append(row)
            print(f"{C:4d} {row['step_ms']:9.1f} {row['ms_per_config_step']:15.2f} {row['speedup']:7.1f}x "
                  f"{row['forward_ms']:8.1f} {row['forward_backward_ms']:11.1f} "
                  f"{max(row['step_ms'] - row['forward_backward_ms'], 0.0):18.1f}   (median: "
                  f"{row['speedup_median']:.1f}x)", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"settings": vars(a), "threads": torch.get_num_threads(), "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
