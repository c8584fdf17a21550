"""Training the ``C`` configurations of a :class:`~deeplimits.training.modules.ResidualNetwork`
at once (docs/training.md): Adam or SGD with one learning rate per configuration, the learning
rate divided by 10 halfway (Marion, Fermanian, Biau & Vert, JMLR 2025, §4.2), optional early
stopping at a loss threshold (Cohen, Cont, Rossier & Xu, ICML 2021), cross-entropy or squared
loss. The total loss is the sum of the per-configuration losses, so each configuration gets
exactly its own gradient; a configuration whose loss goes non-finite is frozen and reported,
the others go on.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

import torch

from .. import _resources as R_
from .. import _validate as V_
from .._plain import PlainData
from ..data.batching import batches
from .modules import ResidualNetwork, activation_count
from .optim import BatchedAdam, BatchedSGD

__all__ = ["train", "TrainResult", "config_losses", "evaluate", "seed_limit", "train_steps", "require_train_steps",
           "train_bytes", "LOSSES", "OPTIMISERS", "EVAL_BATCH"]

LOSSES = ("cross_entropy", "squared")
OPTIMISERS = {"adam": BatchedAdam, "sgd": BatchedSGD}
#: mini-batch of :func:`evaluate` (no gradient)
EVAL_BATCH = 1024


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
    ``test_accuracy`` (``None`` for regression), ``finite``), the epochs run, the learning rate
    of every epoch (per configuration) and the wall time."""

    records: list
    epochs: int
    lr_schedule: list
    seconds: float


#: epoch ``e`` of a run seeded ``seed`` shuffles with seed ``seed * SEED_STRIDE + e``
SEED_STRIDE = 100_003


def seed_limit(epochs: int) -> int:
    """The largest ``seed`` of :func:`train` for ``epochs`` epochs: its shuffling seeds
    ``seed * SEED_STRIDE + e`` stay below 2^63."""
    return (2 ** 63 - 1 - (epochs - 1)) // SEED_STRIDE


def config_losses(out: torch.Tensor, y: torch.Tensor, loss: str) -> torch.Tensor:
    """Per-configuration mean losses ``(C,)`` of outputs ``(C, batch, k)`` against ``y``:
    cross-entropy with class labels ``(batch,)`` (``int64`` in ``[0, k)``), or half the squared
    error summed over the outputs with targets ``(batch, k)`` (the dtype of ``out``)."""
    loss = V_.choice("loss", loss, LOSSES)
    out = V_.tensor("out", out, finite=False)
    if out.dim() != 3 or 0 in out.shape:
        raise ValueError(f"out must have shape (configs, batch, outputs), none empty, got {tuple(out.shape)}")
    _targets("y", y, loss, out.shape[1], out.shape[2], out.dtype, out.device)
    return _config_losses(out, y, loss)


def _config_losses(out, y, loss):
    C, B, K = out.shape
    if loss == "cross_entropy":
        per = torch.nn.functional.cross_entropy(out.reshape(C * B, K), y.repeat(C), reduction="none")
        return per.view(C, B).mean(1)
    return 0.5 * ((out - y.unsqueeze(0)) ** 2).sum(-1).mean(-1)


def _targets(name, y, loss, n, k, dtype, device):
    """Class labels ``(n,)`` in ``[0, k)`` for cross-entropy, else targets ``(n, k)`` of ``dtype``."""
    if loss == "cross_entropy":
        V_.labels(name, y, k, n)
    else:
        V_.tensor(name, y, shape=(n, k), dtype_=dtype)
    return V_.same_device(name, y, device, "the outputs'")


def _pair(module, x_name, x, y_name, y, loss):
    """Inputs ``(n, d_in)`` (``n >= 1``, finite, the module's dtype and device) and their targets."""
    V_.inputs(x_name, x, module.in_features, module.A)
    _targets(y_name, y, loss, x.shape[0], module.out_features, module.A.dtype, module.A.device)


def _module(module) -> ResidualNetwork:
    if not isinstance(module, ResidualNetwork):
        raise ValueError(f"module must be a ResidualNetwork, got {type(module).__name__}")
    return module


@torch.no_grad()
def evaluate(module: ResidualNetwork, x: torch.Tensor, y: torch.Tensor, loss: str, batch_size: int = EVAL_BATCH):
    """Mean loss ``(C,)`` and, for cross-entropy, accuracy ``(C,)`` (else ``None``) over ``(x, y)``:
    ``x`` ``(n, d_in)`` with ``n >= 1``, ``y`` class labels ``(n,)`` or targets ``(n, d_out)``."""
    loss = V_.choice("loss", loss, LOSSES)
    _pair(_module(module), "x", x, "y", y, loss)
    return _evaluate(module, x, y, loss, V_.integer("batch_size", batch_size))


@torch.no_grad()
def _evaluate(module, x, y, loss, batch_size=EVAL_BATCH):
    total, correct = 0.0, 0.0
    for xb, yb in batches((x, y), batch_size, shuffle=False):
        out = module(xb)
        total = total + _config_losses(out, yb, loss) * len(xb)
        if loss == "cross_entropy":
            correct = correct + (out.argmax(-1) == yb.unsqueeze(0)).sum(-1).to(torch.float64)
    n = len(x)
    return total / n, (correct / n if loss == "cross_entropy" else None)


def _check(module, data, optimizer, epochs, batch_size, loss, stop_loss, lr_decay_halfway, seed, progress):
    _module(module)
    for name in ("x_train", "y_train", "x_test", "y_test"):
        if not isinstance(getattr(data, name, None), torch.Tensor):
            raise ValueError(f"data must have tensors x_train, y_train, x_test, y_test (missing {name})")
    optimizer = V_.choice("optimizer", optimizer, tuple(OPTIMISERS))
    epochs = V_.integer("epochs", epochs)
    batch_size = V_.integer("batch_size", batch_size)
    if loss is None:
        loss = "cross_entropy" if getattr(data, "task", "classification") == "classification" else "squared"
    loss = V_.choice("loss", loss, LOSSES)
    for split in ("train", "test"):
        _pair(module, f"data.x_{split}", getattr(data, f"x_{split}"), f"data.y_{split}", getattr(data, f"y_{split}"),
              loss)
    if stop_loss is not None:
        stop_loss = V_.real("stop_loss", stop_loss, low=0.0)
    V_.flag("lr_decay_halfway", lr_decay_halfway)
    seed = V_.integer("seed", seed, low=0, high=seed_limit(epochs))
    V_.callback("progress", progress)
    n_train = int(data.x_train.shape[0])
    require_train_steps(n_train, batch_size, epochs, module.depth, stop_loss, ("epochs", "depth"))
    batch = min(batch_size, n_train)
    acts = activation_count(module.arch, module.fused, module.depth, module.width, batch, module.configs)
    params, item, where = sum(p.numel() for p in module.parameters()), module.A.element_size(), module.A.device
    held = params * item if where.type == "cuda" else 0  # a CUDA device's free memory excludes the module
    R_.require_memory(train_bytes(params, acts, item) - held,
                      f"to train {module.configs} configuration{'s' * (module.configs != 1)} of {module.arch} at "
                      f"depth={module.depth}, width={module.width}, batch_size={batch_size} (parameters, gradients, "
                      f"optimiser state and activations)", ("batch_size", "depth", "width", "configs"), device=where)
    return optimizer, epochs, batch_size, loss, stop_loss, seed


def train(module: ResidualNetwork, data, *, optimizer: str = "adam", lr=1e-3, epochs: int = 10,
          batch_size: int = 128, loss: str | None = None, lr_decay_halfway: bool = True,
          stop_loss: float | None = None, seed: int = 0,
          progress: Callable[[int], None] | None = None) -> TrainResult:
    """Train every configuration of ``module`` on ``data`` (a :class:`deeplimits.data.Dataset`
    or any object with ``x_train, y_train, x_test, y_test``).

    Args:
        data: inputs ``x_train``, ``x_test`` ``(n, in_features)`` with ``n >= 1``, finite, of the
            module's dtype and device; targets ``y_*``: ``int64`` class labels in
            ``[0, out_features)`` for cross-entropy, ``(n, out_features)`` values for squared loss.
        optimizer: ``'adam'`` or ``'sgd'``; ``lr`` a number or one per configuration, each
            finite and > 0.
        epochs: passes over the training set (>= 1); with ``lr_decay_halfway`` (True or False)
            the learning rates are divided by 10 from epoch ``epochs // 2`` on.
        batch_size: mini-batch size (>= 1); epoch ``e`` shuffles with seed ``(seed, e)``.
        loss: ``'cross_entropy'`` (classification, the default for classification data) or
            ``'squared'``.
        stop_loss: stop after the first epoch where every live configuration's training loss
            is at most this (a real >= 0).
        seed: an integer in ``[0, seed_limit(epochs)]`` (about 9.2e13).
        progress: ``None`` or a function, called with 1 after each epoch.

    Every argument is checked before any work (a one-line ``ValueError`` naming it).

    Raises:
        ResourceError: before any step, when the layer passes (:func:`train_steps`) exceed
            :data:`~deeplimits._resources.MAX_TRAIN_STEPS` or the training state
            (:func:`train_bytes`) exceeds the memory of the module's device.
    """
    optimizer, epochs, batch_size, loss, stop_loss, seed = _check(module, data, optimizer, epochs, batch_size,
                                                                  loss, stop_loss, lr_decay_halfway, seed, progress)
    t0 = time.perf_counter()
    opt = OPTIMISERS[optimizer](module, lr=lr)
    base, schedule, ran = opt.lr.clone(), [], 0
    for epoch in range(epochs):
        if lr_decay_halfway and epochs > 1 and epoch == epochs // 2:
            opt.lr = base / 10
        schedule.append(opt.lr.tolist())
        for xb, yb in batches((data.x_train, data.y_train), batch_size, seed=seed * SEED_STRIDE + epoch):
            opt.zero_grad(set_to_none=True)
            per = _config_losses(module(xb), yb, loss)
            per.sum().backward()
            opt.observe(per.detach())
            opt.step()
        ran = epoch + 1
        if progress is not None:
            progress(1)
        if stop_loss is not None:
            tl, _ = _evaluate(module, data.x_train, data.y_train, loss)
            live = opt.finite.to(tl.device)
            if bool(live.any()) and bool((tl[live] <= stop_loss).all()):
                break
    return TrainResult(_records(module, data, loss, opt.finite), ran, schedule, time.perf_counter() - t0)


def _records(module, data, loss, finite) -> list[dict]:
    tl, ta = _evaluate(module, data.x_train, data.y_train, loss)
    vl, va = _evaluate(module, data.x_test, data.y_test, loss)
    out = []
    for c in range(module.configs):
        ok = bool(finite[c]) and math.isfinite(float(tl[c]))
        acc = ta is not None and ok  # a blown-up configuration has no meaningful accuracy
        out.append({"train_loss": float(tl[c]), "test_loss": float(vl[c]),
                    "train_accuracy": float(ta[c]) if acc else None,
                    "test_accuracy": float(va[c]) if acc else None, "finite": ok})
    return out
