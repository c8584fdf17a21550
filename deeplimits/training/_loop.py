"""The epochs of :func:`~deeplimits.training.train` (docs/training.md, "The training loop"):
mini-batches from memory or from a ``torch.utils.data.DataLoader``, one optimiser step per
mini-batch, the per-epoch history, the scheduler, the callbacks and the final records.

Nothing in a step reads the device from the host (the epoch's losses and accuracies add up on
the device); each epoch reads its record back once.
"""

from __future__ import annotations

import math
import time

import torch

from .. import _random as R_
from .. import _validate as V_
from ..data.batching import batches
from ..errors import ParameterError
from .losses import _config_losses, _evaluate, _pair, evaluate_batches

__all__ = ["Memory", "Batches", "run", "records", "live_mask"]


class Memory:
    """The splits of a data set held in memory (``x_train``, ``y_train``, ``x_test``,
    ``y_test``, checked by the caller): epoch ``e`` shuffles the training split with
    :func:`~deeplimits._random.epoch_seed` ``(seed, e)``."""

    def __init__(self, data, batch_size: int, seed: int):
        self.data, self.batch_size, self.seed = data, batch_size, seed

    def epoch(self, e: int):
        return batches((self.data.x_train, self.data.y_train), self.batch_size, seed=R_.epoch_seed(self.seed, e))

    def train_metrics(self, module, loss):
        return _evaluate(module, self.data.x_train, self.data.y_train, loss)

    def test_metrics(self, module, loss):
        return _evaluate(module, self.data.x_test, self.data.y_test, loss)


class Batches:
    """The mini-batches ``(x, y)`` of ``data`` (a ``DataLoader``, or any iterable that can be
    read once per epoch) and optionally ``test``, moved to the module's device. The first batch
    is checked in full (values included, as the in-memory splits are); the others by type,
    shape, dtype and device only (no pass over their values, no read from the device)."""

    def __init__(self, data, test, module, loss: str):
        self.data, self.test, self.module, self.loss = data, test, module, loss
        self._checked: set = set()
        if test is not None:  # its first batch now, not after training
            if next(self._pairs(test, "test_data"), None) is None:
                raise ParameterError("test_data", "test_data must hold at least one mini-batch")

    def epoch(self, e: int):
        return self._pairs(self.data, "data")

    def _pairs(self, source, name):
        where = self.module.A.device
        for i, item in enumerate(source):
            if not (isinstance(item, (tuple, list)) and len(item) == 2
                    and all(isinstance(t, torch.Tensor) for t in item)):
                raise ParameterError(name, f"{name} must yield pairs (x, y) of tensors, got {type(item).__name__} at "
                                           f"batch {i}")
            x, y = (t.to(where, non_blocking=True) for t in item)
            if name not in self._checked:
                _pair(self.module, f"{name} x", x, f"{name} y", y, self.loss)
                self._checked.add(name)
            else:
                _shapes(self.module, name, x, y, self.loss)
            yield x, y

    def train_metrics(self, module, loss):
        return evaluate_batches(module, self._pairs(self.data, "data"), loss)

    def test_metrics(self, module, loss):
        return None if self.test is None else evaluate_batches(module, self._pairs(self.test, "test_data"), loss)


def _shapes(module, name, x, y, loss):
    """The checks of a mini-batch that read no value: inputs ``(n, in_features)`` of the
    module's dtype, ``n >= 1``; labels ``int64`` ``(n,)`` or targets ``(n, out_features)``."""
    V_.tensor(f"{name} x", x, shape=(None, module.in_features), dtype_=module.A.dtype, finite=False)
    n = x.shape[0]
    if n == 0:
        raise ParameterError(name, f"{name} x must hold at least one sample, got shape {tuple(x.shape)}")
    if loss == "cross_entropy":
        if y.dtype != torch.int64 or tuple(y.shape) != (n,):
            raise ParameterError(name, f"{name} y must hold class labels of dtype torch.int64 and shape ({n},), got "
                                       f"{y.dtype} {tuple(y.shape)}")
    else:
        V_.tensor(f"{name} y", y, shape=(n, module.out_features), dtype_=module.A.dtype, finite=False)


def run(module, source, opt, scheduler, *, epochs: int, loss: str, stop_loss, callbacks, per_batch: bool) -> list:
    """Train for up to ``epochs`` epochs; the history, one record per epoch run."""
    history, t0 = [], time.perf_counter()
    for epoch in range(epochs):
        rates = _rates(opt, module.configs)
        total, correct, n = _epoch(module, source.epoch(epoch), opt, scheduler if per_batch else None, loss)
        finite = live_mask(opt, module.configs)
        record = {"epoch": epoch, "lr": rates, "train_loss": (total / n).tolist()}
        if correct is not None:
            record["train_accuracy"] = (correct.to(torch.float64) / n).tolist()
        record.update(finite=finite.tolist(), seconds=time.perf_counter() - t0)
        history.append(record)
        if scheduler is not None and not per_batch:
            _epoch_step(scheduler, record)
        stop = stop_loss is not None and _reached(module, source, loss, finite, stop_loss)
        answers = [cb(record) for cb in callbacks]  # every callback sees every epoch
        if stop or any(a is True for a in answers):
            break
    return history


def _epoch(module, pairs, opt, scheduler, loss):
    """One pass over ``pairs``: the step of each mini-batch, and the sums of the per-config
    losses and correct predictions (on the device) with the number of samples."""
    observe = getattr(opt, "observe", None)
    total, correct, n = 0.0, None, 0
    for xb, yb in pairs:
        opt.zero_grad(set_to_none=True)
        out = module(xb)
        per = _config_losses(out, yb, loss)
        per.sum().backward()
        per = per.detach()
        if observe is not None:
            observe(per)
        opt.step()
        if scheduler is not None:
            scheduler.step()
        total = total + per.to(torch.float64) * len(xb)
        if loss == "cross_entropy":
            hits = (out.detach().argmax(-1) == yb.unsqueeze(0)).sum(-1)
            correct = hits if correct is None else correct + hits
        n += len(xb)
    if n == 0:
        raise ParameterError("data", "data must yield at least one mini-batch per epoch")
    return total, correct, n


def _rates(opt, configs: int) -> list[float]:
    """The learning rate of every configuration: a batched optimiser's ``lr`` (its first
    group's), else the first group's ``lr`` for all."""
    rates = getattr(opt, "lr", None)
    if isinstance(rates, torch.Tensor):
        return rates.tolist()
    return [float(opt.param_groups[0]["lr"])] * configs


def live_mask(opt, configs: int) -> torch.Tensor:
    """A batched optimiser's mask of the live configurations, else all live."""
    finite = getattr(opt, "finite", None)
    return finite if isinstance(finite, torch.Tensor) else torch.ones(configs, dtype=torch.bool)


def _epoch_step(scheduler, record):
    """Step a per-epoch scheduler; ``ReduceLROnPlateau`` with the epoch's mean training loss
    over the live configurations (not stepped when none is live)."""
    if isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
        live = [v for v, ok in zip(record["train_loss"], record["finite"]) if ok and math.isfinite(v)]
        if live:
            scheduler.step(sum(live) / len(live))
    else:
        scheduler.step()


def _reached(module, source, loss, finite, stop_loss) -> bool:
    """Whether every live configuration's training loss is at most ``stop_loss`` (some live)."""
    tl, _ = source.train_metrics(module, loss)
    live = finite.to(tl.device)
    return bool(live.any()) and bool((tl[live] <= stop_loss).all())


def records(module, source, loss, finite) -> list[dict]:
    """One record per configuration: the losses and accuracies after training (the test ones
    ``None`` without test data), and whether it stayed finite."""
    tl, ta = source.train_metrics(module, loss)
    vl, va = source.test_metrics(module, loss) or (None, None)
    out = []
    for c in range(module.configs):
        ok = bool(finite[c]) and math.isfinite(float(tl[c]))
        acc = ta is not None and ok  # a blown-up configuration has no meaningful accuracy
        out.append({"train_loss": float(tl[c]), "test_loss": None if vl is None else float(vl[c]),
                    "train_accuracy": float(ta[c]) if acc else None,
                    "test_accuracy": float(va[c]) if acc and va is not None else None, "finite": ok})
    return out
