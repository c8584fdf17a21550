"""The scaling of trained weights with depth (Cohen, Cont, Rossier & Xu, ICML 2021; docs/weights.md,
"The scaling experiment"): the inside model ``h_{k+1} = h_k + delta_k sigma(W_k h_k + b_k)``
trained on the synthetic task (or on digits through a fixed random embedding, one-hot targets)
at a geometric family of depths, each until its training loss falls below a threshold, then
Cohen et al.'s steps (§2.3): alpha from ``delta ~ L^-alpha``, beta from the cumulative-sum norm
of the weights, the beta-scaled increments, the noise part, the root sum of squares and the
loss kept by the trend, weighed into a verdict (:mod:`.result`).

Protocol (the published code's, the default; :data:`~.result.PUBLISHED` the published
values): d = 10, ``h_0 = x`` and ``F(x) = h_L`` (input and output layers fixed to the
identity), weights initialised with entries of order ``init_scale / (L d)`` (or, with
``init_method='xavier'``, the released code's default, ``init_scale / d``), ``delta``
initialised at ``1/L``, the loss of ``torch.nn.MSELoss()`` (``loss='mse'``) below 1e-3, Adam
at 1e-2, mini-batches of 32, depths ``floor(1.2^n)``. One task per depth and seed (its
learning rates trained at once, :mod:`.task`), resumable like every study.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Sequence

import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...data.base import DEFAULT_TEST_FRACTION
from ...runs import Task
from ..plan import Plan, register_plan
from ..settings import Compute, Network, ScalingProtocol, Training, grouped
from .presets import ARCH, CPU_DEPTHS, INIT_METHODS
from .result import LOSS_NAMES, PUBLISHED, PUBLISHED_EMBEDDED, ScalingResult, other_convention
from .task import scaling_task  # noqa: F401 - registers the task

__all__ = ["ScalingPlan", "ScalingResult", "plan_scaling", "scaling_block", "PUBLISHED", "PUBLISHED_EMBEDDED",
           "scaling_task", "SECONDS_PER_LAYER_STEP", "ARCH"]

#: the sizes the synthetic loader accepts (:func:`deeplimits.data.synthetic.synthetic`: ``n``, ``dim``)
MAX_SYNTHETIC_SAMPLES, MAX_SYNTHETIC_DIM = 10 ** 7, 10 ** 4

SECONDS_PER_LAYER_STEP = 30e-6
"""The measured seconds of one training step per layer (one configuration, d = 10, batch 32,
float32, the fused pass, one thread) on the project's 2-core CPU: 10 us at L = 1000 and 9 us at
L = 10^4 at a load average of 2, 27 to 33 us at L = 1000 under heavy load (benchmarks/RESULTS.md);
the time estimate takes about the loaded figure."""


@register_plan
@dataclasses.dataclass(frozen=True)
class ScalingPlan(Plan):
    """A validated scaling experiment (from :func:`plan_scaling`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "scaling"
    optional: ClassVar[tuple[str, ...]] = ("device", "arch")

    activation: str
    """``'tanh'`` or ``'relu'``."""
    delta: str
    """``'shared'`` (one trained scale ``delta``) or ``'per-layer'`` (one ``delta_k`` per layer)."""
    depths: tuple[int, ...]
    """The depths ``L`` (at least two, distinct)."""
    width: int
    """The width ``d``."""
    seeds: int
    """Independent initialisations per depth (one task each)."""
    optimizer: str
    """``'adam'`` or ``'sgd'``."""
    lr: tuple[float, ...]
    """The learning rates, trained together in each task (one configuration each)."""
    batch_size: int
    """The mini-batch size."""
    stop_loss: float
    """Training stops once the training loss (in the ``loss`` convention) is below this."""
    max_epochs: int
    """The most epochs a network trains."""
    init_scale: float
    """The initial weights' entries are of order ``init_scale / (L d)`` (``init_scale / d`` with
    ``init_method='xavier'``)."""
    samples: int
    """The synthetic task's number of samples."""
    seed: int
    """The base seed."""
    dtype: str
    """The dtype, by name."""
    dataset: str = "synthetic"  # a default: specs written before the digits variant read back
    """``'synthetic'`` or ``'digits'`` (through a fixed random embedding)."""
    device: str | None = None  # None: the CPU
    """Where the tasks run (``None``: the CPU)."""
    loss: str = "squared"  # a default: specs written before the loss convention was named used this one
    """The loss convention (:data:`~deeplimits.studies.scaling.result.LOSS_NAMES`): ``'mse'`` is
    ``torch.nn.MSELoss()``, the published code's."""
    delta_init: str = "constant"  # a default: specs written before the option used this one
    """``'constant'`` (``delta = 1/L``) or ``'normal'`` (``N(0, 1/L^2)``, one draw per layer: the
    published code's initialisation of one ``delta_k`` per layer)."""
    bias_init: str = "zero"  # a default: specs written before the option used this one
    """``'zero'`` (``b_k = 0``) or ``'normal'`` (``N(0, (init_scale / (L sqrt d))^2)``, the
    published code's)."""
    inputs: str = "cube"  # a default: specs written before the option used this one
    """The synthetic task's inputs: ``'cube'`` (``x`` uniform on ``[-1, 1]^d``) or ``'sphere'``
    (``x / ||x||`` after the targets are computed from ``x``, the published code's)."""
    batches: str = "shuffled"  # a default: specs written before the option used this one
    """``'shuffled'`` (a fresh permutation of the samples every epoch) or ``'published'`` (the
    published code's fixed batches in the order of :func:`~deeplimits.data.batching.copying_shuffle`,
    which copies batches over others) or ``'collapsed'`` (the state that shuffle reaches and the
    published code trains from its third depth on: the first batch, every batch of the epoch)."""
    angle_start: int = 1  # a default: specs written before the option used this one
    """The synthetic task's angles: step ``k`` of its recursion at ``5 (k - 1 + angle_start) pi /
    K`` (1: Cohen et al.'s formula; 0: the published code's, :mod:`deeplimits.data.synthetic`)."""
    stop_rule: str = "evaluated"  # a default: specs written before the option used this one
    """``'evaluated'`` (the whole training split's loss after every epoch) or ``'running'`` (the
    published code's: the mean of the epoch's mini-batch losses, and a patience of 5 epochs)."""
    arch: str | None = None  # None: ARCH (specs of the published block are as they were)
    """A registered block of one's own whose declarations fit the experiment (:func:`scaling_block`);
    ``None``: :data:`ARCH`, the published inside block."""
    init_method: str = "xavier-depth"  # a default: specs written before the option used this one
    """The released code's names (``scaling_model.py``, ``init_values``): ``'xavier-depth'``
    (``W_k ~ N(0, (init_scale / (L d))^2)``, with ``bias_init='normal'`` ``b_k ~ N(0, (init_scale
    / (L sqrt d))^2)``) or ``'xavier'`` (the same without the ``1/L``: ``N(0, (init_scale /
    d)^2)`` and ``N(0, (init_scale / sqrt d)^2)``, its ``run_experiment``'s default)."""

    def tasks(self) -> list:
        """One task per depth and seed (its learning rates trained at once), the seeds in turn."""
        base = {k: v for k, v in self.to_dict().items() if k not in ("depths", "study")}
        n = len(self.depths)
        return [Task(f"scaling/seed-{s:03d}/depth-{L:06d}", "scaling-depth", {**base, "depth": L, "seed_index": s},
                     chunk_seed(self.seed, s * n + i)) for s in range(self.seeds) for i, L in enumerate(self.depths)]

    def progress_units(self, task) -> int:
        return 1

    def seconds(self) -> tuple[float, float]:
        """The time the tasks take in one process, estimated before any runs: ``(budget,
        typical)``, every task to ``max_epochs`` and to 100 epochs, at
        :data:`SECONDS_PER_LAYER_STEP` per layer, mini-batch and configuration (2 CPU cores)."""
        n_train = self.data_sizes()[0]
        whole = self.batches != "shuffled"  # the published code's batches: the remainder dropped
        per_epoch = (n_train // self.batch_size if whole else -(-n_train // self.batch_size)) \
            + (self.stop_rule == "evaluated")  # the mini-batches and the evaluation
        layer_epochs = self.seeds * sum(self.depths) * per_epoch * len(self.lr) * SECONDS_PER_LAYER_STEP
        return layer_epochs * self.max_epochs, layer_epochs * min(100, self.max_epochs)

    def data_sizes(self) -> tuple[int, int, int, int]:
        """``(n_train, n_test, input_dim, output_dim)`` of the task's data (the synthetic set of
        ``samples`` points of dimension ``width``, split 80/20; or digits), without loading it."""
        if self.dataset != "synthetic":
            from ..sizes import data_sizes

            return data_sizes(self.dataset)
        n_test = int(round(DEFAULT_TEST_FRACTION * self.samples))
        return self.samples - n_test, n_test, self.width, self.width

    def steps(self) -> int:
        """Layer passes of the deepest task: ``max_epochs x ceil(n_train / batch_size) x depth``
        and the loss evaluated every epoch (:func:`~deeplimits.training.train.train_steps`)."""
        from ...training.train import train_steps

        return train_steps(self.data_sizes()[0], self.batch_size, self.max_epochs, max(self.depths), self.stop_loss)

    def estimate(self) -> R_.Estimate:
        """Peak memory of the deepest task (all ``seeds`` configurations), tasks, trained
        networks and layer passes of that task (no allocation)."""
        return R_.Estimate(self.task_bytes(max(self.depths)), self.seeds * len(self.depths),
                           self.seeds * len(self.depths) * len(self.lr), len(self.lr), self.steps(),
                           R_.available_memory(self.device), "configuration")

    def task_bytes(self, depth: int) -> int:
        """Peak bytes of :func:`scaling_task` at ``depth`` (:func:`.memory.scaling_bytes`)."""
        from .memory import scaling_bytes

        return scaling_bytes(self, depth)

    def protocol(self) -> dict:
        """The training protocol as plain data (the report's first line)."""
        other, value = other_convention(self.loss, self.stop_loss, self.data_sizes()[3])
        block = {} if self.arch is None else {"arch": self.arch}  # a block of one's own
        return {**block, "optimizer": self.optimizer, "lr": list(self.lr), "batch_size": self.batch_size,
                "init_scale": self.init_scale, "init_method": self.init_method, "delta_init": self.delta_init, "bias_init": self.bias_init,
                "inputs": self.inputs, "angle_start": self.angle_start, "batches": self.batches,
                "stop_rule": self.stop_rule, "dtype": self.dtype,
                "max_epochs": self.max_epochs, "loss": self.loss, "loss_name": LOSS_NAMES[self.loss],
                "stop_loss": self.stop_loss, "other": other, "stop_loss_other": value}

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> ScalingResult:
        from ...diagnostics.verdict import INSUFFICIENT
        from .result import family_exponents

        records = sorted((r for res in results for r in res["records"]), key=lambda r: (r["depth"], r["seed"], r["lr"]))
        families = []
        for lr in self.lr:
            rs = [r for r in records if r["lr"] == lr and r["finite"]]
            if len({r["depth"] for r in rs}) >= 2:
                families.append(family_exponents(rs, self.dataset))
        first = families[0] if families else {"exponents": {}, "hypothesis": INSUFFICIENT,
                                              "reason": "fewer than two depths trained"}
        published = (PUBLISHED if self.dataset == "synthetic" else PUBLISHED_EMBEDDED).get(self.activation, {})
        deepest = [(t.params["depth"], res) for t, res in zip(tasks, results) if t.params.get("seed_index", 0) == 0]
        paths = max(deepest, key=lambda p: p[0])[1].get("paths", {}) if deepest else {}
        return ScalingResult(self, records, first["exponents"], first["hypothesis"], first["reason"], published,
                             seconds, families, self.protocol(), paths)


ScalingResult.plan_type = ScalingPlan


@grouped
def plan_scaling(*, dataset: str = "synthetic", delta: str | None = None, depths: Sequence[int] = tuple(CPU_DEPTHS),
                 seeds: int = 1, max_epochs: int = 300, samples: int = 1024,
                 network: Network = Network(arch=ARCH, activation="tanh", width=10),
                 training: Training = Training(optimizer="adam", lr=1e-2, batch_size=32, stop_loss=1e-3),
                 protocol: ScalingProtocol = ScalingProtocol(loss="mse", init_scale=0.01, init_method="xavier-depth",
                                                             delta_init=None, bias_init="zero", inputs="cube",
                                                             angle_start=1, batches="shuffled", stop_rule="evaluated"),
                 compute: Compute = Compute(seed=0, dtype=torch.float32, device=None)) -> ScalingPlan:
    """Validate a scaling experiment (every check, before any work). The groups
    (:mod:`deeplimits.studies.settings`, or their fields as keywords): ``network``
    (``arch``: the published inside block, or a registered block of one's own whose declarations
    fit, :func:`scaling_block`; ``activation``, ``width``), ``training`` (``optimizer``, ``lr``, ``batch_size``,
    ``stop_loss``), ``protocol`` (:class:`~deeplimits.studies.settings.ScalingProtocol`: ``loss``,
    ``init_scale``, ``init_method``, ``delta_init``, ``bias_init``, ``inputs``, ``angle_start``,
    ``batches``, ``stop_rule``), ``compute`` (``seed``, ``dtype``, ``device``). ``delta``: ``'shared'``
    (default for tanh) or ``'per-layer'`` (default for relu), as in Cohen et al. (2021);
    ``optimizer``: ``'adam'`` (default, the published code's) or ``'sgd'`` (the paper's text:
    a constant rate); ``lr``: a rate > 0 or a list of them (trained at once in every task);
    ``loss``: ``'mse'`` (default, ``torch.nn.MSELoss()``: the mean over the batch and the
    outputs) or ``'squared'`` (half the squared error summed over the outputs), the convention
    of ``stop_loss`` (> 0). ``delta_init``: ``'constant'`` (``1/L``; the default with a shared
    ``delta``, the published code's) or ``'normal'`` (``N(0, 1/L^2)`` per layer, random signs;
    the default with ``delta='per-layer'``, the published code's, and only there).
    ``init_method``: ``'xavier-depth'`` (default: the weights of order ``init_scale / (L d)``,
    the biases, when drawn, ``init_scale / (L sqrt d)``) or ``'xavier'`` (the same without the
    ``1/L``: the released code's ``run_experiment`` default).
    ``bias_init``: ``'zero'`` (default) or ``'normal'`` (``N(0, (init_scale / (L sqrt d))^2)``,
    the published code's); ``inputs``: ``'cube'`` (default, ``x`` uniform on ``[-1, 1]^d``) or
    ``'sphere'`` (``x / ||x||`` after the targets are computed, the published code's; only with
    ``dataset='synthetic'``); ``angle_start``: 1 (default, Cohen et al.'s angles ``5 k pi / K``)
    or 0 (``5 (k - 1) pi / K``, the published code's; only with ``dataset='synthetic'``).
    ``batches``: ``'shuffled'`` (default), ``'published'`` (the published code's fixed batches,
    reordered by a shuffle that copies batches over others,
    :func:`~deeplimits.data.batching.copying_shuffle`) or ``'collapsed'`` (the first batch, every
    batch of the epoch: where that shuffle ends, and what the published code trains its later
    depths on); ``stop_rule``: ``'evaluated'`` (default, the whole training split's loss after
    every epoch) or ``'running'`` (the published code's: the mean of the epoch's mini-batch
    losses, with a patience of 5 epochs without a 1% improvement).
    ``depths``: a list of at least two distinct depths >= 1;
    ``init_scale`` >= 0; ``seed`` in ``[0, seed_limit(max_epochs) - seeds + 1]``
    (:func:`deeplimits.training.train.seed_limit`: seed ``s`` shuffles with ``seed + s``);
    ``dtype``: ``torch.float32``, ``torch.float64`` or their names.

    Sizes are checked before any work (``ResourceError``, naming the parameters to change):
    ``seeds x len(depths) x len(lr)`` trained networks at most
    :data:`~deeplimits._resources.MAX_CONFIGS`; the deepest task's memory
    (:meth:`ScalingPlan.task_bytes`) within the machine's (or the device's); its layer passes
    (:meth:`ScalingPlan.steps`) at most :data:`~deeplimits._resources.MAX_TRAIN_STEPS`. The
    synthetic task takes ``samples`` in ``[3, 10^7]`` and ``width`` up to ``10^4``."""
    from ...training.modules import DELTA_MODES
    from ...training.train import seed_limit

    activation = V_.choice("activation", network.activation, ("tanh", "relu"))
    block = scaling_block(network.arch, activation, V_.integer("width", network.width))
    delta = V_.choice("delta", ("shared" if activation == "tanh" else "per-layer") if delta is None else delta,
                      DELTA_MODES)
    depths = tuple(V_.sequence("depths", depths, lambda L: V_.integer("depths", L), what="a list of depths >= 1"))
    if len(depths) < 2 or len(set(depths)) != len(depths):
        raise ParameterError("depths", f"depths must hold at least two distinct depths, got {list(depths)}")
    lr = training.lr
    lrs = [lr] if V_._is_real(lr) else V_.sequence("lr", lr, what="a rate > 0 or a list of rates")
    lrs = tuple(V_.real("lr", r, low=0.0, low_open=True) for r in lrs)
    if not lrs or len(set(lrs)) != len(lrs):
        raise ParameterError("lr", f"lr must be a rate > 0 or a list of distinct rates, got {lr!r}")
    max_epochs = V_.integer("max_epochs", max_epochs)
    seeds = V_.integer("seeds", seeds, high=seed_limit(max_epochs) + 1)  # seed s shuffles with seed + s: below 2^63
    dtype = compute.dtype
    dtype = getattr(torch, dtype) if dtype in ("float32", "float64") else dtype  # a preset names it
    p = protocol
    plan = ScalingPlan(activation=activation, delta=delta, depths=tuple(sorted(depths)),
                       width=V_.integer("width", network.width), seeds=V_.integer("seeds", seeds),
                       optimizer=V_.choice("optimizer", training.optimizer, ("adam", "sgd")), lr=lrs,
                       batch_size=V_.integer("batch_size", training.batch_size),
                       stop_loss=V_.real("stop_loss", training.stop_loss, low=0.0, low_open=True),
                       max_epochs=max_epochs, init_scale=V_.real("init_scale", p.init_scale, low=0.0),
                       samples=V_.integer("samples", samples, low=3),
                       seed=V_.integer("seed", compute.seed, low=0, high=seed_limit(max_epochs) - (seeds - 1)),
                       dtype=str(V_.dtype(dtype)).replace("torch.", ""),
                       dataset=V_.choice("dataset", dataset, ("synthetic", "digits")),
                       device=V_.device_spec(compute.device, dtype), loss=V_.choice("loss", p.loss, tuple(LOSS_NAMES)),
                       delta_init=_delta_init(p.delta_init, delta),
                       bias_init=V_.choice("bias_init", p.bias_init, ("zero", "normal")),
                       inputs=_inputs(p.inputs, dataset), angle_start=_angle_start(p.angle_start, dataset),
                       batches=V_.choice("batches", p.batches, ("shuffled", "published", "collapsed")),
                       stop_rule=V_.choice("stop_rule", p.stop_rule, ("evaluated", "running")),
                       init_method=V_.choice("init_method", p.init_method, INIT_METHODS),
                       arch=None if block.name == ARCH else block.name)
    _require_sizes(plan)
    if plan.batches != "shuffled" and plan.data_sizes()[0] < plan.batch_size:
        raise ParameterError("batches", f"batches {plan.batches!r} cuts the training split into whole batches: it needs at "
                             f"least batch_size={plan.batch_size} training samples, got {plan.data_sizes()[0]} (raise "
                             f"samples or lower batch_size)")
    return plan


def scaling_block(arch, activation, width: int):
    """The block of the experiment, checked against the mathematics it measures (Cohen et al.'s
    ``h + delta_k sigma(A_k h + b_k)``): a registered block (its verified shapes and residual) that
    declares a trained scale ``delta`` (:attr:`~deeplimits.blocks.Block.trained_scale`), one per-layer
    ``(d, d)`` matrix ``A_k`` (its one required weight: the study reads beta off it) and an
    optional bias ``b`` of shape ``(d,)`` (the protocol trains ``b_k``); a one-line error naming
    ``arch`` and the declaration missing otherwise."""
    from ...blocks import recorded_block

    block = recorded_block(arch, activation).check(width)
    name, req = block.name, block.required
    if not block.trained_scale:
        raise ParameterError("arch", f"arch {name!r} declares no trained scale (trained_scale = False): the scaling "
                                     "study reads alpha off the trained delta_k of h + delta_k sigma(A_k h + b_k)")
    if len(req) != 1 or block.weight_shape(req[0], width) != (width, width):
        raise ParameterError("arch", f"arch {name!r} declares the required weights {', '.join(req)}: the scaling "
                                     "study reads beta off one per-layer (d, d) matrix A_k of h + delta_k sigma(A_k h "
                                     "+ b_k), its one required weight")
    if "b" not in block.optional or block.weight_shape("b", width) != (width,):
        raise ParameterError("arch", f"arch {name!r} declares no optional bias 'b' of shape (d,) (optional = "
                                     f"{block.optional}): the protocol trains the b_k of h + delta_k sigma(A_k h + b_k)")
    return block


def _delta_init(delta_init, delta: str) -> str:
    """The initialisation of ``delta``: the published code's by default (``1/L`` shared, ``N(0,
    1/L^2)`` per layer); ``'normal'`` draws one value per layer, so it needs ``delta='per-layer'``."""
    if delta_init is None:
        return "constant" if delta == "shared" else "normal"
    delta_init = V_.choice("delta_init", delta_init, ("constant", "normal"))
    if delta_init == "normal" and delta == "shared":
        raise ParameterError("delta_init", "delta_init 'normal' draws one delta_k per layer: it needs delta "
                             "'per-layer', got delta 'shared'")
    return delta_init


def _inputs(inputs, dataset) -> str:
    """The synthetic task's inputs, ``'cube'`` or ``'sphere'``; only the synthetic task has them."""
    inputs = V_.choice("inputs", inputs, ("cube", "sphere"))
    if inputs == "sphere" and dataset != "synthetic":
        raise ParameterError("inputs", f"inputs 'sphere' normalises the synthetic task's inputs: it needs dataset "
                             f"'synthetic', got dataset {dataset!r}")
    return inputs


def _angle_start(angle_start, dataset) -> int:
    """The synthetic task's first angle index, 0 or 1; only the synthetic task has angles."""
    angle_start = V_.integer("angle_start", angle_start, low=0, high=1)
    if angle_start != 1 and dataset != "synthetic":
        raise ParameterError("angle_start", f"angle_start sets the synthetic task's angles: it needs dataset "
                             f"'synthetic', got dataset {dataset!r}")
    return angle_start


def _require_sizes(plan: ScalingPlan) -> None:
    """The plan's sizes, refused before any work (module docstring of :func:`plan_scaling`)."""
    from ...training.train import require_train_steps

    synthetic = plan.dataset == "synthetic"
    R_.require_count(plan.seeds * len(plan.depths) * len(plan.lr), R_.MAX_CONFIGS,
                     f"seeds={plan.seeds} x {len(plan.depths)} depths x {len(plan.lr)} learning rates make too many "
                     f"trained networks", ("seeds", "depths", "lr"))
    L = plan.depths[-1]
    R_.require_memory(plan.task_bytes(L), f"per task at depth={L}, width={plan.width}, {len(plan.lr)} learning "
                      f"rate{'s' * (len(plan.lr) > 1)}" + (f", samples={plan.samples}" if synthetic else ""),
                      ("depths", "width", "lr") + (("samples",) if synthetic else ()), device=plan.device)
    require_train_steps(plan.data_sizes()[0], plan.batch_size, plan.max_epochs, L, plan.stop_loss,
                        ("depths", "max_epochs") + (("samples",) if synthetic else ()), names=("max_epochs", "depth"))
    if synthetic:  # what the synthetic loader accepts, checked here rather than in a task
        V_.integer("samples", plan.samples, low=3, high=MAX_SYNTHETIC_SAMPLES)
        if plan.width > MAX_SYNTHETIC_DIM:
            raise ParameterError("width", f"width must be at most {MAX_SYNTHETIC_DIM} for dataset 'synthetic' (the dimension of "
                             f"its points), got {plan.width}")
