"""Transfer (issue 43): the batched grid of learning rates and seeds against one configuration at
a time, the same numbers.

One ``(beta, optimizer, depth)`` grid of the transfer study: ``rates x seeds`` configurations of
a res-1 tanh network on digits, the blocks trained at ``2^k x L^p`` (embedding and readout
fixed), mini-batch training. Timed in CPU seconds (user + system of this process,
``resource.getrusage``; the machine is shared, so the wall clock is not the measure), one thread:

* batched: every configuration in one :class:`~deeplimits.training.ResidualNetwork`
  (``configs = rates x seeds``), one :func:`~deeplimits.training.train` call (what a task of
  the study does);
* one at a time: each configuration copied out of the same initial networks and trained alone
  with the same rate, mini-batches and steps.

The final training losses of the two agree to rounding (the largest relative difference is
printed). Run from the repository root:

    python benchmarks/bench_transfer.py [--depth 16] [--width 16] [--rates 12] [--seeds 4] [--optimizer sgd]
"""

import argparse
import resource

import torch

from deeplimits.studies.transfer.presets import predicted_exponent
from deeplimits.studies.transfer.coords import tiled
from deeplimits.studies.transfer.study import _data, _initial_net
from deeplimits.training import train


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--rates", type=int, default=12)
    p.add_argument("--seeds", type=int, default=4)
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    p.add_argument("--samples", type=int, default=512)
    args = p.parse_args()
    torch.set_num_threads(1)
    data = _data({"dtype": "float32", "seed": 0, "samples": args.samples})
    net0 = _initial_net(args.depth, args.width, 10, data, args.beta, args.seeds, torch.Generator().manual_seed(0))
    scale = float(args.depth) ** predicted_exponent(args.beta, args.optimizer)
    base = [2.0 ** k for k in range(-(args.rates // 2) - 2, args.rates - args.rates // 2 - 2)]
    kw = dict(optimizer=args.optimizer, epochs=1, batch_size=64, loss="cross_entropy", lr_decay_halfway=False, seed=1)
    train(tiled(net0, 1), data, lr=[0.1] * args.seeds, **kw)  # warm-up: the first optimiser imports more of torch
    t0 = _cpu()
    res = train(tiled(net0, len(base)), data, lr=[b * scale for b in base for _ in range(args.seeds)], **kw)
    batched = _cpu() - t0
    t0 = _cpu()
    alone = [train(tiled(net0.config(j), 1), data, lr=[b * scale], **kw).records[0]["train_loss"]
             for b in base for j in range(args.seeds)]
    one = _cpu() - t0
    pairs = [(r["train_loss"], a) for r, a in zip(res.records, alone) if r["finite"]]
    diff = max(abs(x - y) / max(abs(y), 1e-12) for x, y in pairs)
    C = len(base) * args.seeds
    print(f"depth {args.depth}, width {args.width}, {len(base)} rates x {args.seeds} seeds = {C} configurations, "
          f"{args.optimizer} at beta {args.beta:g}, {args.samples} samples, 1 epoch of batches of 64, one thread")
    print(f"batched: {batched:.2f} CPU s; one at a time: {one:.2f} CPU s ({one / batched:.1f}x); "
          f"finite {len(pairs)}/{C}; largest relative difference of the final losses {diff:.1e}")


if __name__ == "__main__":
    main()
