"""Plan-time time estimates: what a study takes in one process, computed from its sizes before
any work (``deeplimits COMMAND --dry-run`` prints them; docs/sweeps.md, "See a run before it runs").

A task is a sequence of batched steps (a layer of a network, a step of its limit or of a
scheme on the reference grid); each step costs a fixed overhead (:data:`SECONDS_PER_STEP`:
Python and the launch of a few tensor operations), a time per random number it draws or reads
(:data:`SECONDS_PER_ENTRY`) and per operation of its batched products (:data:`SECONDS_PER_FLOP`);
a training task costs :data:`~deeplimits.studies.scaling.study.SECONDS_PER_LAYER_STEP` per layer pass
and :data:`SECONDS_PER_TRAINING_TASK` to set up. The constants were measured on a 2-core CPU by
``benchmarks/dry_run_estimates.py``, which prints the measured time of each command beside its
estimate (benchmarks/RESULTS.md): the estimates are "about", within a factor of 3 for runs of a
few seconds or more.
"""

from __future__ import annotations

import math

from .scaling.study import SECONDS_PER_LAYER_STEP

__all__ = ["SECONDS_PER_STEP", "SECONDS_PER_ENTRY", "SECONDS_PER_FLOP", "SECONDS_PER_TRAINING_TASK",
           "SECONDS_PER_TRAIN_PASS", "SECONDS_PER_TRAIN_FLOP", "SECONDS_PER_TRAIN_TASK", "seconds",
           "duration", "convergence_seconds", "stability_seconds", "phase_seconds", "order_seconds",
           "training_seconds", "trained_limit_seconds", "plan_seconds"]

#: seconds of overhead per batched step of a task (2 CPU cores; benchmarks/dry_run_estimates.py)
SECONDS_PER_STEP = 1.0e-4
#: seconds per random number drawn (and read by a step) in a task (float32, 2 CPU cores)
SECONDS_PER_ENTRY = 6e-9
#: seconds per floating-point operation of the batched products (a few GFLOP/s on 2 cores)
SECONDS_PER_FLOP = 1.0e-10
#: seconds of a training task besides its layer passes: its data, network, optimiser, measurements
SECONDS_PER_TRAINING_TASK = 1.0
#: ``deeplimits train``'s task: seconds per layer pass (a mini-batch through one layer of its networks,
#: forward and backward, with the evaluations and the optimiser's step), per operation of its batched
#: products, and to set up, measured on 2 idle CPU cores at its defaults (res-1, width 30, batch 128,
#: Adam, digits: depth 64 to 1000, 1 to 15 configurations a task, 0.3 to 8 s a task); the scaling and
#: trained-limit studies' fused inside model costs :data:`~deeplimits.studies.scaling.study.SECONDS_PER_LAYER_STEP`
SECONDS_PER_TRAIN_PASS, SECONDS_PER_TRAIN_FLOP, SECONDS_PER_TRAIN_TASK = 3e-5, 2.5e-11, 0.3


def seconds(steps: float, entries: float, flops: float = 0.0) -> float:
    """``steps`` batched steps drawing or reading ``entries`` numbers and doing ``flops`` operations."""
    return steps * SECONDS_PER_STEP + entries * SECONDS_PER_ENTRY + flops * SECONDS_PER_FLOP


def duration(s: float) -> str:
    """``s`` seconds as ``'40 s'``, ``'12 min'``, ``'3.1 h'`` or ``'2.5 days'``."""
    if s < 90:
        return f"{max(s, 1):.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 48 * 3600:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def _chunks(draws: int, chunk: int) -> list[int]:
    full, rest = divmod(draws, chunk)
    return [chunk] * full + ([rest] if rest else [])


def convergence_seconds(plan) -> float:
    """:class:`~deeplimits.studies.convergence.study.ConvergencePlan`: per chunk of ``n`` draws, the
    limit on the reference grid and every network, each step reading ``n`` samples of every weight
    and multiplying ``n x inputs`` states by them. A limit read in closed form (the rough regime's
    exact flow at width 1) takes no step on the reference grid, only its path's numbers (measured:
    25 s for 4,096 draws where the steps counted would say 53 s)."""
    pair = plan.pair()
    m = sum(math.prod(pair._weight_layout(name)[0]) for name in pair.drivers)
    exact = getattr(pair.limit, "exact", None) is not None and plan.width == 1
    steps = (0 if exact else plan.reference) + sum(plan.depths)
    read = plan.reference + sum(plan.depths)
    return sum(seconds(steps, n * m * read, 2 * n * plan.inputs * m * steps) for n in _chunks(plan.draws, plan.chunk))


def stability_seconds(plan) -> float:
    """:class:`~deeplimits.studies.propagation.study.StabilityPlan`: per chunk, every depth's weights
    drawn once and the network run at every beta."""
    m, layers = plan.width * plan.width, sum(plan.depths)
    return sum(seconds(layers * (1 + len(plan.betas)), n * m * layers, 2 * n * plan.inputs * m * layers * len(plan.betas))
               for n in _chunks(plan.draws, plan.chunk))


def phase_seconds(plan) -> float:
    """:class:`~deeplimits.studies.propagation.study.PhasePlan`: per Hurst index, the fractional weights
    (an FFT per entry, ``log2 L`` passes) and one pass of the network batched over the betas."""
    m, n = plan.width * plan.width, plan.draws
    entries = n * m * plan.depth * math.log2(max(2, plan.depth))
    return len(plan.hursts) * seconds(plan.depth, entries, 2 * len(plan.betas) * n * plan.inputs * m * plan.depth)


def order_seconds(d: int, noise: int, depths, draws: int, reference: int, chunk: int, exact: bool = False) -> float:
    """:func:`~deeplimits.strong_order`: per chunk, the driver drawn on the reference grid, the
    scheme on it (unless an exact solution is read: ``exact``) and on every depth."""
    steps = (0 if exact else reference) + sum(depths)
    return sum(seconds(steps, n * steps * (d * noise + d) + 2 * n * noise * reference) for n in _chunks(draws, chunk))


#: seconds of one verdict of a table of errors (its statistics with a bootstrap of 200 and the
#: expansion's test), and per draw (measured on one core: 31 to 45 ms at 256 draws on the shipped
#: cases, 80 to 90 ms at 16384)
SECONDS_PER_VERDICT, SECONDS_PER_VERDICT_DRAW = 0.035, 3e-6


def verdict_seconds(draws: int) -> float:
    """One table's verdict (:func:`~deeplimits.studies.scheme_order.calibration.table_verdict`)."""
    return SECONDS_PER_VERDICT + SECONDS_PER_VERDICT_DRAW * draws


def training_seconds(passes: int, configs: int, batch: int, width: int, per_pass: float = SECONDS_PER_LAYER_STEP,
                     per_flop: float = SECONDS_PER_FLOP, setup: float = SECONDS_PER_TRAINING_TASK) -> float:
    """A training task: ``passes`` layer passes (forward and backward of one mini-batch through one
    layer, ``per_pass`` seconds each) of ``configs`` batched configurations, each ``3 x batch x
    width^2`` multiply-adds (``per_flop`` seconds per operation), and ``setup`` seconds to build its
    data, network and optimiser and measure it."""
    return setup + passes * per_pass + 6.0 * passes * configs * batch * width * width * per_flop


def trained_limit_seconds(plan) -> float:
    """:class:`~deeplimits.studies.trained_limit.study.TrainedLimitPlan`: per case and chunk of seeds,
    every depth and the reference trained for ``epochs`` (full batch: one step per epoch)."""
    n_train = plan.n_train()
    batch = plan.batch_size or n_train
    per_epoch = -(-n_train // batch)
    passes = plan.epochs * per_epoch * (sum(plan.depths) + plan.reference)
    return len(plan.cases) * sum(training_seconds(passes, c, batch, plan.width) for c in _chunks(plan.seeds, plan.chunk))


def _train_seconds(plan) -> float:
    """:class:`~deeplimits.studies.training.study.TrainPlan`: its chunks of configurations, each
    :meth:`~deeplimits.studies.training.study.TrainPlan.steps` layer passes; a convolutional grid by its
    floating-point operations (:func:`~deeplimits.studies.scaling_conv.study.conv_flops`)."""
    per_beta = plan.n_configs // len(plan.betas)
    chunks = _chunks(per_beta, min(plan.chunk, per_beta)) * len(plan.betas)
    if plan.study == "train-conv":
        from ..data.augment import IMAGE_SHAPES
        from ._shared.conv import CONV_FLOPS_PER_SECOND, conv_flops
        from .sizes import data_sizes

        n_train, n_test = data_sizes(plan.dataset, plan.root)[:2]
        flops = conv_flops(IMAGE_SHAPES[plan.dataset], plan.layout()) * (3 * n_train * plan.epochs + n_train + n_test)
        return plan.n_configs * flops / CONV_FLOPS_PER_SECOND
    steps = plan.steps()
    return sum(training_seconds(steps, c, plan.batch_size, plan.width, SECONDS_PER_TRAIN_PASS, SECONDS_PER_TRAIN_FLOP,
                                SECONDS_PER_TRAIN_TASK) for c in chunks)


def plan_seconds(plan) -> float:
    """The estimated seconds of every task of ``plan`` in one process (2 CPU cores); a scaling
    study's are those where every network stops by 100 epochs (its ``seconds()``: the typical)."""
    study = plan.study
    if study is None:
        return convergence_seconds(plan)
    if study in ("scaling", "scaling-conv", "transfer", "transfer-conv"):
        s = plan.seconds()
        return s[1] if isinstance(s, tuple) else s
    return {"stability": stability_seconds, "phase": phase_seconds, "train": _train_seconds,
            "train-conv": _train_seconds, "trained-limit": trained_limit_seconds}[study](plan)
