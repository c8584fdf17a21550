"""Transfer on convolutional ResNets (issue 43): the batched grid of learning rates and seeds
against one configuration at a time, the same numbers.

One ``(beta, optimizer, depth)`` grid of ``deeplimits transfer --preset conv``: ``rates x
seeds`` configurations of Cohen et al.'s blocks with the branch multiplied by ``L^-beta``
(one stage, digits as 8 x 8 images), the kernels of the blocks trained at ``2^k x L^p`` (stem and
head fixed), mini-batch training. Timed in CPU seconds (user + system of this process,
``resource.getrusage``), one thread:

* batched: every configuration in one :class:`~deeplimits.training.ConvResidualNetwork`
  (grouped convolutions), what a task of the study does;
* one at a time: each configuration built from the same seed and trained alone with the same
  rate, mini-batches and steps.

The final training losses of the two agree to rounding (the largest relative difference is
printed). Run from the repository root:

    python benchmarks/bench_transfer_conv.py [--depth 8] [--width 8] [--rates 7] [--seeds 2]
"""

import argparse
import resource

import torch

from deeplimits.studies.transfer import conv as TC
from deeplimits.studies.transfer.presets import predicted_exponent


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--width", type=int, default=8)
    p.add_argument("--rates", type=int, default=7)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    p.add_argument("--samples", type=int, default=256)
    args = p.parse_args()
    torch.set_num_threads(1)
    params = {"dataset": "digits", "width": args.width, "stages": 1, "depth": args.depth, "beta": args.beta,
              "seed": 0, "samples": args.samples, "dtype": "float32"}
    data = TC._images(params)
    scale = float(args.depth) ** predicted_exponent(args.beta, args.optimizer)
    rates = [2.0 ** k * scale for k in range(-(args.rates // 2) - 2, args.rates - args.rates // 2 - 2)]
    seeds = list(range(1, args.seeds + 1))

    def trained(configs, seed_list, lrs):
        net = TC.conv_net(params, configs, (1, 8, 8), torch.float32, "cpu")
        TC._initialise(net, params, seed_list, configs // len(seed_list))
        return TC._fit(net, data, args.optimizer, lrs, 1, 32, 1)

    trained(1, seeds[:1], rates[:1])  # warm-up
    t0 = _cpu()
    batched = trained(len(rates) * len(seeds), seeds, [r for r in rates for _ in seeds])
    t_batched = _cpu() - t0
    t0 = _cpu()
    alone = [trained(1, [s], [r])[0] for r in rates for s in seeds]
    t_one = _cpu() - t0
    pairs = [(x, y) for x, y in zip(batched, alone) if x is not None and y is not None]
    diff = max(abs(x - y) / max(abs(y), 1e-12) for x, y in pairs)
    C = len(rates) * len(seeds)
    print(f"depth {args.depth}, width {args.width}, {len(rates)} rates x {len(seeds)} seeds = {C} configurations, "
          f"{args.optimizer} at beta {args.beta:g}, {args.samples} samples, 1 epoch of batches of 32, one thread")
    print(f"batched: {t_batched:.2f} CPU s; one at a time: {t_one:.2f} CPU s ({t_one / t_batched:.1f}x); "
          f"finite {len(pairs)}/{C}; largest relative difference of the final losses {diff:.1e}")


if __name__ == "__main__":
    main()
