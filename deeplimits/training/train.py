"""Training the ``C`` configurations of a :class:`~deeplimits.training.modules.ResidualNetwork`
at once (docs/training.md): Adam or SGD with one learning rate per configuration (or any
optimiser over the module's parameters), any ``torch.optim.lr_scheduler`` scheduler, by
default the learning rate divided by 10 halfway (Marion, Fermanian, Biau & Vert, JMLR 2025,
§4.2), optional early stopping at a loss threshold (Cohen, Cont, Rossier & Xu, ICML 2021),
callbacks after every epoch, cross-entropy or squared loss, data in memory or from a
``torch.utils.data.DataLoader``. The total loss is the sum of the per-configuration losses, so
each configuration gets exactly its own gradient; a configuration whose loss goes non-finite
is frozen and reported, the others go on.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

from .. import _random as RN_
from .. import _resources as R_
from .. import _validate as V_
from .._plain import PlainData
from .._settings import Training, grouped
from . import _loop as L_
from . import _setup as S_
from .losses import _evaluate, _module, config_losses, evaluate  # noqa: F401 - re-exported
from .losses import EVAL_BATCH, LOSSES
from .modules import ResidualNetwork, activation_count
from ._setup import OPTIMISERS, SCHEDULER_INTERVALS

__all__ = ["train", "TrainResult", "config_losses", "evaluate", "seed_limit", "train_steps", "require_train_steps",
           "train_bytes", "LOSSES", "OPTIMISERS", "SCHEDULER_INTERVALS", "EVAL_BATCH"]


def train_steps(n_train: int, batch_size: int, epochs: int, depth: int, stop_loss: float | None = None) -> int:
    """The sequential layer passes of :func:`train` (counted, nothing run): every epoch
    ``ceil(n_train / batch_size)`` mini-batches forward and backward and, with ``stop_loss``,
    ``ceil(n_train / EVAL_BATCH)`` evaluation batches, each through ``depth`` layers. Refused
    above :data:`~deeplimits._resources.MAX_TRAIN_STEPS` by :func:`require_train_steps`."""
    per_epoch = -(-n_train // batch_size) + (-(-n_train // EVAL_BATCH) if stop_loss is not None else 0)
    return epochs * per_epoch * depth


def require_train_steps(n_train: int, batch_size: int, epochs: int, depth: int, stop_loss, knobs,
                        names=("epochs", "depth")) -> int:
    """:func:`train_steps`, refused (:class:`~deeplimits._validate.ResourceError` naming
    ``knobs``) above :data:`~deeplimits._resources.MAX_TRAIN_STEPS`; ``names``: what the
    epochs and the depth are called in the message."""
    steps = train_steps(n_train, batch_size, epochs, depth, stop_loss)
    R_.require_count(steps, R_.MAX_TRAIN_STEPS,
                     f"{names[0]}={epochs} x {-(-n_train // batch_size)} mini-batches of {batch_size} x {names[1]}={depth} "
                     f"layers make too many layer passes per task", knobs)
    return steps


def train_bytes(params: int, activations: int, item: int) -> int:
    """Peak bytes of :func:`train` for ``params`` parameter numbers keeping ``activations``
    numbers for the backward pass (:func:`~deeplimits.training.modules.activation_count`) of
    ``item`` bytes each: six copies of the parameters (themselves, their gradient, Adam's two
    moments, the optimiser's temporary and the gradient being written) and the activations."""
    return item * (6 * params + activations)


@dataclasses.dataclass
class TrainResult(PlainData):
    """One record per configuration (``train_loss``, ``test_loss``, ``train_accuracy``,
    ``test_accuracy`` (``None`` for regression, or without test data), ``finite``), the epochs
    run, the learning rate of every epoch (per configuration), the wall time, and ``history``:
    one record per epoch (``epoch``, ``lr``, ``train_loss``, ``train_accuracy`` for
    classification, ``finite``, ``seconds``; see :func:`train`)."""

    records: list
    """One per configuration: ``train_loss``, ``test_loss``, ``train_accuracy``, ``test_accuracy``,
    ``finite``."""
    epochs: int
    """The epochs run."""
    lr_schedule: list
    """The learning rate of every epoch, per configuration."""
    seconds: float
    """The wall time, in seconds."""
    history: list = dataclasses.field(default_factory=list)
    """One record per epoch (``epoch``, ``lr``, ``train_loss``, ``train_accuracy``, ``finite``,
    ``seconds``)."""


#: epoch ``e`` of a run seeded ``seed`` shuffles with seed ``epoch_seed(seed, e) = seed * SEED_STRIDE + e``
SEED_STRIDE = RN_.SEED_STRIDE


def seed_limit(epochs: int) -> int:
    """The largest ``seed`` of :func:`train` for ``epochs`` epochs: its shuffling seeds
    (:func:`~deeplimits._random.epoch_seed`) stay below 2^63."""
    return RN_.epoch_seed_limit(epochs)


def _check(module, data, test_data, epochs, batch_size, loss, stop_loss, seed, progress, callbacks):
    """Every plain argument and the data, checked; ``(in_memory, loss, stop_loss, callbacks)``."""
    _module(module)
    epochs = V_.integer("epochs", epochs)
    batch_size = V_.integer("batch_size", batch_size)
    in_memory, loss = S_.data_form(module, data, test_data, loss)
    if stop_loss is not None:
        stop_loss = V_.real("stop_loss", stop_loss, low=0.0)
    V_.integer("seed", seed, low=0, high=seed_limit(epochs))
    V_.callback("progress", progress)
    callbacks = V_.callbacks("callbacks", callbacks)
    if progress is not None:
        callbacks = [_ticks(progress)] + callbacks
    if in_memory:
        n_train = int(data.x_train.shape[0])
        require_train_steps(n_train, batch_size, epochs, module.depth, stop_loss, ("epochs", "depth"))
        _require_memory(module, min(batch_size, n_train), batch_size)
    else:
        _require_batches(module, data, epochs, stop_loss)
    return in_memory, loss, stop_loss, callbacks


def _ticks(progress):
    """``progress`` as a callback: called with 1 after each epoch, never stopping the run
    (whatever it returns; a progress bar's ``update`` may return True)."""
    def tick(record):
        progress(1)
    return tick


def _require_batches(module, data, epochs, stop_loss):
    """The size checks of data given as mini-batches, as far as it tells its sizes: the layer
    passes when it has a length, the memory when it has an integer ``batch_size`` (a DataLoader)."""
    if hasattr(data, "__len__"):
        n = len(data) * (2 if stop_loss is not None else 1)
        R_.require_count(epochs * n * module.depth, R_.MAX_TRAIN_STEPS,
                         f"epochs={epochs} x {len(data)} mini-batches x depth={module.depth} layers make too many "
                         f"layer passes per task", ("epochs", "depth"))
    batch = getattr(data, "batch_size", None)
    if isinstance(batch, int) and not isinstance(batch, bool) and batch > 0:
        _require_memory(module, batch, batch)


def _require_memory(module, batch: int, batch_size: int):
    acts = activation_count(module.arch, module.fused, module.depth, module.width, batch, module.configs)
    params, item, where = sum(p.numel() for p in module.parameters()), module.A.element_size(), module.A.device
    held = params * item if where.type == "cuda" else 0  # a CUDA device's free memory excludes the module
    R_.require_memory(train_bytes(params, acts, item) - held,
                      f"to train {module.configs} configuration{'s' * (module.configs != 1)} of {module.arch} at "
                      f"depth={module.depth}, width={module.width}, batch_size={batch_size} (parameters, gradients, "
                      f"optimiser state and activations)", ("batch_size", "depth", "width", "configs"), device=where)


@grouped
def train(module: ResidualNetwork, data, *,
          training: Training = Training(optimizer="adam", lr=None, epochs=10, batch_size=128, lr_decay_halfway=None,
                                        stop_loss=None),
          loss: str | None = None, scheduler=None, scheduler_interval: str = "epoch", seed: int = 0,
          callbacks=None, progress: Callable[[int], None] | None = None, test_data=None) -> TrainResult:
    """Train every configuration of ``module`` on ``data``; returns a :class:`TrainResult`.

    Args:
        module: a :class:`~deeplimits.training.ResidualNetwork`.
        training: ``optimizer``, ``lr``, ``epochs``, ``batch_size``, ``lr_decay_halfway``,
            ``stop_loss`` (a :class:`~deeplimits.studies.settings.Training`, or its fields as
            keywords: ``train(net, data, epochs=5)`` is ``train(net, data, training=Training(epochs=5))``),
            each as below.
        data: a :class:`deeplimits.data.Dataset` or any object with tensors ``x_train, y_train,
            x_test, y_test`` (inputs ``(n, in_features)`` with ``n >= 1``, finite, of the
            module's dtype and device; targets ``int64`` class labels in ``[0, out_features)``
            for cross-entropy, ``(n, out_features)`` values for squared loss), shuffled in
            memory; or an iterable of mini-batches ``(x, y)`` read once per epoch (a
            ``torch.utils.data.DataLoader``, a list; not a one-shot iterator), moved to the
            module's device, the first checked in full and the others by shape and dtype.
        optimizer: ``'adam'`` or ``'sgd'`` (:class:`~deeplimits.training.BatchedAdam` /
            :class:`~deeplimits.training.BatchedSGD` with one rate per configuration: ``lr``,
            default 1e-3, a number or one per configuration, each finite and > 0; their groups'
            ``lr`` is 1, the multiplier a scheduler changes), an optimiser over the module's
            parameters, or a function ``module -> optimiser``; ``lr`` only with a name.
        epochs: passes over the training data (>= 1).
        batch_size: mini-batch size (>= 1) of data in memory; epoch ``e`` shuffles with
            :func:`~deeplimits._random.epoch_seed` ``(seed, e)``.
        loss: ``'cross_entropy'`` (classification, the default unless ``data.task`` is
            ``'regression'``), ``'squared'`` (half the squared error summed over the outputs)
            or ``'mse'`` (averaged over them, ``torch.nn.MSELoss()``'s convention).
        lr_decay_halfway: ``None`` (the default: True unless a scheduler is given), True or
            False: divide the learning rates by 10 from epoch ``epochs // 2`` on, as
            ``MultiStepLR(optimizer, milestones=[epochs // 2], gamma=0.1)`` stepped per epoch.
        scheduler: ``None``, a function ``optimizer -> scheduler`` (any
            ``torch.optim.lr_scheduler`` scheduler) or, with an optimiser instance, a scheduler
            built on it. ``ReduceLROnPlateau`` steps on the epoch's mean training loss over the
            live configurations.
        scheduler_interval: ``'epoch'`` (step the scheduler after every epoch) or ``'batch'``
            (after every optimiser step).
        stop_loss: stop after the first epoch where every live configuration's training loss
            is at most this (a real >= 0).
        seed: an integer in ``[0, seed_limit(epochs)]`` (about 9.2e13).
        callbacks: ``None``, a function or a list of functions, each called after every epoch
            with that epoch's history record (a dict); training stops after an epoch where one
            returns ``True`` (anything else, ``None`` included, goes on).
        progress: ``None`` or a function, called with 1 after each epoch (a callback).
        test_data: with mini-batch ``data``: ``None`` or an iterable of ``(x, y)`` mini-batches
            whose losses and accuracies go into the records.

    The history has one record per epoch run: ``epoch`` (from 0), ``lr`` (the rate of each
    configuration during that epoch), ``train_loss`` (each configuration's mean loss over the
    epoch's mini-batches, as the weights moved), ``train_accuracy`` (cross-entropy only),
    ``finite`` and ``seconds`` (since the start). Every argument is checked before any work (a
    one-line ``ValueError`` naming it).

    Raises:
        ResourceError: before any step, when the layer passes (:func:`train_steps`) exceed
            :data:`~deeplimits._resources.MAX_TRAIN_STEPS` or the training state
            (:func:`train_bytes`) exceeds the memory of the module's device.
    """
    optimizer, lr, epochs, batch_size = training.optimizer, training.lr, training.epochs, training.batch_size
    in_memory, loss, stop_loss, callbacks = _check(module, data, test_data, epochs, batch_size, loss,
                                                   training.stop_loss, seed, progress, callbacks)
    rates = S_.optimiser_form(module, optimizer, lr)
    halfway, interval = S_.scheduler_form(optimizer, scheduler, scheduler_interval, training.lr_decay_halfway)
    source = L_.Memory(data, batch_size, seed) if in_memory else L_.Batches(data, test_data, module, loss)
    t0 = time.perf_counter()
    opt = S_.build_optimiser(module, optimizer, rates)
    sched = S_.build_scheduler(opt, scheduler, halfway, epochs, interval)
    history = L_.run(module, source, opt, sched, epochs=epochs, loss=loss, stop_loss=stop_loss, callbacks=callbacks,
                     per_batch=interval == "batch")
    records = L_.records(module, source, loss, L_.live_mask(opt, module.configs))
    return TrainResult(records, len(history), [h["lr"] for h in history], time.perf_counter() - t0, history)
