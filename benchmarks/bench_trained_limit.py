"""The trained depth family (issue 30) against training each depth on its own, in the same run.

Timed, for one case (default res-2 with tanh, smooth weights, beta = 1):

* family: :func:`deeplimits.studies.train_depth_family`: every depth and the reference read
  one driver sample, the ``seeds`` networks of a depth are trained at once (one
  :class:`~deeplimits.training.ResidualNetwork` of ``C = seeds`` configurations), and the
  distances to the reference are measured at the checkpoints;
* peer: the usual way, one network per (depth, seed), each initialised on its own from the
  driver (:func:`~deeplimits.training.init_from_driver`) and trained by
  :func:`~deeplimits.training.train` with the same steps and depth-scaled rate, and nothing
  measured (a floor for the measurement as well);
* floor: the family's training alone (the same ``C = seeds`` networks, no snapshots).

Run from the repository root:

    python benchmarks/bench_trained_limit.py [--case res-2] [--seeds 5] [--epochs 20] [--repeats 3]
"""

import argparse
import os
import statistics
import time

import torch

from deeplimits.data import load_dataset
from deeplimits.paths import make_driver
from deeplimits.studies import train_depth_family
from deeplimits.studies.trained_limit.presets import CASES
from deeplimits.training import ResidualNetwork, init_from_driver, train
from deeplimits.training.family import depth_lr, effective_beta, family_member, family_sample


def peer(case, data, depths, reference, seeds, epochs, lr):
    """One network per (depth, seed), each initialised and trained on its own."""
    c, d = CASES[case], data.x_train.shape[1]
    driver = make_driver(c["driver"])
    for L in list(depths) + [reference]:
        for s in range(seeds):
            net = ResidualNetwork(c["arch"], L, d, d, d, beta=c["beta"], activation=c["activation"],
                                  dtype=data.x_train.dtype)
            init_from_driver(net, driver, generator=torch.Generator().manual_seed(s))
            with torch.no_grad():
                for p in (net.A, net.B):
                    p.copy_(torch.eye(d, dtype=p.dtype).expand_as(p))
                    p.requires_grad_(False)
            train(net, data, optimizer="sgd", lr=depth_lr(lr, L, effective_beta(c["arch"], c["beta"]), "sgd"),
                  epochs=epochs, batch_size=len(data.x_train), loss="squared", lr_decay_halfway=False)


def floor(case, data, depths, reference, seeds, epochs, lr):
    """The family's networks trained, nothing kept or measured."""
    c, d = CASES[case], data.x_train.shape[1]
    samples = family_sample(c["arch"], d, make_driver(c["driver"]), seeds, reference, torch.Generator().manual_seed(0),
                            data.x_train.dtype)
    for L in list(depths) + [reference]:
        net = family_member(c["arch"], L, d, samples, beta=c["beta"], activation=c["activation"],
                            dtype=data.x_train.dtype)
        train(net, data, optimizer="sgd", lr=depth_lr(lr, L, effective_beta(c["arch"], c["beta"]), "sgd"),
              epochs=epochs, batch_size=len(data.x_train), loss="squared", lr_decay_halfway=False)


def _timed(fns, repeats):
    """Median wall and CPU seconds of each of ``fns`` (name -> callable), run in turn ``repeats`` times."""
    runs = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            runs[name].append((time.perf_counter() - t0, time.process_time() - c0))
    return {name: tuple(statistics.median(x) for x in zip(*r)) for name, r in runs.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", default="res-2", choices=list(CASES))
    ap.add_argument("--depths", default="8,16,32,64")
    ap.add_argument("--reference", type=int, default=512)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--samples", type=int, default=80)
    ap.add_argument("--repeats", type=int, default=3, help="runs of each, in turn; medians reported")
    a = ap.parse_args()
    torch.set_num_threads(1)  # as the study's tasks run (deeplimits.training.family.one_thread), for all three
    depths = [int(x) for x in a.depths.split(",")]
    data = load_dataset("synthetic", seed=0, n=a.samples, dim=a.width, dtype=torch.float64)
    args = (a.case, data, depths, a.reference, a.seeds, a.epochs, a.lr)
    floor(a.case, data, [2], 4, 1, 1, a.lr)  # warm-up: the first optimiser imports torch._dynamo (seconds)
    load = os.getloadavg()[0]
    times = _timed({"family": lambda: train_depth_family(a.case, data, depths=depths, reference=a.reference,
                                                         seeds=a.seeds, epochs=a.epochs, lr=a.lr,
                                                         checkpoints=(a.epochs // 2,)),
                    "floor": lambda: floor(*args), "peer": lambda: peer(*args)}, a.repeats)
    print(f"{a.case}, depths {depths} + reference {a.reference}, {a.seeds} seeds, {a.epochs} full-batch steps, "
          f"width {a.width}, {len(data.x_train)} training inputs, {torch.get_num_threads()} threads; medians of "
          f"{a.repeats} runs each, in turn; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    for name, (wall, cpu) in times.items():
        print(f"{name:>7}: {wall:7.2f} s wall, {cpu:7.2f} s CPU")
    f, p, fl = times["family"][1], times["peer"][1], times["floor"][1]
    print(f"peer / family (CPU): {p / f:.2f}x;  family / floor (CPU): {f / fl:.2f}x")


if __name__ == "__main__":
    main()
