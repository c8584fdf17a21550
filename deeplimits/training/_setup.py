"""What :func:`~deeplimits.training.train` is given, checked and built before the first step
(docs/training.md, "The training loop"): the data (in memory or as mini-batches), the
optimiser (a name, an instance or a factory) and the schedule (a scheduler, a factory, or the
default decay by 10 halfway, a ``MultiStepLR``).
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from .. import _validate as V_
from ..errors import ParameterError
from .losses import LOSSES, _pair
from .optim import BatchedAdam, BatchedSGD

__all__ = ["OPTIMISERS", "SCHEDULER_INTERVALS", "data_form", "optimiser_form", "build_optimiser", "scheduler_form",
           "build_scheduler"]

OPTIMISERS = {"adam": BatchedAdam, "sgd": BatchedSGD}
#: when :func:`~deeplimits.training.train` steps a scheduler it is given
SCHEDULER_INTERVALS = ("epoch", "batch")
_SPLITS = ("x_train", "y_train", "x_test", "y_test")


def data_form(module, data, test_data, loss) -> tuple[bool, str]:
    """``(in_memory, loss)``: ``data`` holds the four splits as tensors (checked here, in full),
    or is an iterable of ``(x, y)`` mini-batches that can be read once per epoch (checked as it
    is read); ``loss`` defaults to the data's task (``data.task``; cross-entropy without one)."""
    if loss is None:
        loss = "cross_entropy" if getattr(data, "task", "classification") == "classification" else "squared"
    loss = V_.choice("loss", loss, LOSSES)
    if hasattr(data, "x_train") or not _batches(data):
        for name in _SPLITS:
            if not isinstance(getattr(data, name, None), torch.Tensor):
                raise ParameterError("data", "data must have tensors x_train, y_train, x_test, y_test or be an "
                                             f"iterable of (x, y) mini-batches such as a DataLoader (missing {name})")
        if test_data is not None:
            raise ParameterError("test_data", "test_data applies only to data given as mini-batches (the data set has "
                                              "its test split)")
        for split in ("train", "test"):
            _pair(module, f"data.x_{split}", getattr(data, f"x_{split}"), f"data.y_{split}",
                  getattr(data, f"y_{split}"), loss)
        return True, loss
    if _split_pair(data):
        kinds = " and ".join(type(d).__name__ for d in data)
        raise ParameterError("data", f"data must be the training mini-batches alone, got a pair ({kinds}): pass the "
                                     "test batches as test_data=, train(net, train_loader, test_data=test_loader)")
    if isinstance(data, Iterator):  # not iter(data): a DataLoader's starts workers and draws its seed
        raise ParameterError("data", "data must be readable once per epoch (a DataLoader or a list of batches), not an "
                                     "iterator")
    if hasattr(data, "__len__") and len(data) == 0:
        raise ParameterError("data", "data must hold at least one mini-batch")
    if test_data is not None and (not _batches(test_data) or isinstance(test_data, Iterator)):
        raise ParameterError("test_data", "test_data must be None or an iterable of (x, y) mini-batches such as a "
                                          f"DataLoader, got {type(test_data).__name__}")
    return False, loss


def _split_pair(data) -> bool:
    """Whether ``data`` is ``(train_batches, test_batches)``: two iterables of mini-batches (a
    DataLoader, a list of batches), not two mini-batches ``(x, y)`` of tensors."""
    return (isinstance(data, (tuple, list)) and len(data) == 2
            and all(_batches(d) and not (isinstance(d, (tuple, list)) and len(d) == 2
                                         and all(isinstance(t, torch.Tensor) for t in d)) for d in data))


def _batches(data) -> bool:
    """Whether ``data`` is an iterable of mini-batches (not a tensor, a string, a mapping, nor a
    ``torch.utils.data.Dataset`` of single samples, which a DataLoader batches)."""
    if isinstance(data, torch.utils.data.Dataset) and not isinstance(data, torch.utils.data.IterableDataset):
        raise ParameterError("data", "data: a torch.utils.data.Dataset gives one sample at a time; pass "
                                     "torch.utils.data.DataLoader(data, batch_size=...) instead")
    return hasattr(data, "__iter__") and not isinstance(data, (torch.Tensor, str, bytes, dict))


def optimiser_form(module, optimizer, lr):
    """``optimizer`` checked: a name of :data:`OPTIMISERS` (``lr``, default 1e-3, checked: a
    number or one per configuration), an optimiser over ``module``'s parameters, or a function
    ``module -> optimiser`` (``lr`` must then be ``None``)."""
    if isinstance(optimizer, str):
        V_.choice("optimizer", optimizer, tuple(OPTIMISERS))
        return V_.per_config("lr", 1e-3 if lr is None else lr, module.configs)
    if not isinstance(optimizer, torch.optim.Optimizer) and not callable(optimizer):
        raise ParameterError("optimizer", f"optimizer must be one of {', '.join(map(repr, OPTIMISERS))}, a "
                                          "torch.optim.Optimizer over the module's parameters, or a function module -> "
                                          f"optimizer; got {optimizer!r}")
    if lr is not None:
        raise ParameterError("lr", "lr applies only to an optimizer given by name (set it on the optimizer itself)")
    if isinstance(optimizer, torch.optim.Optimizer):
        _owned(module, optimizer)
    return None


def build_optimiser(module, optimizer, rates):
    """The optimiser: a named one built on ``module`` with the per-configuration ``rates`` (its
    groups' ``lr`` is then 1, a multiplier of the rates), the instance, or the factory's."""
    if isinstance(optimizer, str):
        return OPTIMISERS[optimizer](module, lr=rates)
    if isinstance(optimizer, torch.optim.Optimizer):
        return optimizer
    return _owned(module, optimizer(module))


def _owned(module, opt):
    if not isinstance(opt, torch.optim.Optimizer):
        raise ParameterError("optimizer", "optimizer: the function must return a torch.optim.Optimizer, got "
                                          f"{type(opt).__name__}")
    mine = {id(p) for p in module.parameters()}
    if not all(id(p) in mine for g in opt.param_groups for p in g["params"]):
        raise ParameterError("optimizer", "optimizer must optimise parameters of the module being trained")
    return opt


def scheduler_form(optimizer, scheduler, interval, lr_decay_halfway) -> tuple[bool, str]:
    """``(halfway, interval)`` checked: ``scheduler`` is ``None``, a function ``optimizer ->
    scheduler``, or (with an optimiser instance) a scheduler built on it; ``lr_decay_halfway``
    ``None`` means True without a scheduler."""
    if lr_decay_halfway is not None:
        V_.flag("lr_decay_halfway", lr_decay_halfway)
    interval = V_.choice("scheduler_interval", interval, SCHEDULER_INTERVALS)
    if scheduler is None:
        if interval != "epoch":
            raise ParameterError("scheduler_interval", "scheduler_interval applies only to a scheduler given by the "
                                                       "caller")
        return lr_decay_halfway is not False, interval
    if lr_decay_halfway:
        raise ParameterError("lr_decay_halfway", "lr_decay_halfway=True and a scheduler: give one schedule "
                                                 "(lr_decay_halfway=False or None with a scheduler)")
    if _is_scheduler(scheduler):
        if getattr(scheduler, "optimizer", None) is not optimizer:
            raise ParameterError("scheduler", "scheduler must be built on the optimizer given (or be a function "
                                              "optimizer -> scheduler)")
    elif not callable(scheduler):
        raise ParameterError("scheduler", "scheduler must be None, a torch.optim.lr_scheduler scheduler or a function "
                                          f"optimizer -> scheduler, got {scheduler!r}")
    return False, interval


def _is_scheduler(s) -> bool:
    return callable(getattr(s, "step", None)) and hasattr(s, "optimizer")


def build_scheduler(opt, scheduler, halfway: bool, epochs: int, interval: str):
    """The scheduler: the default decay by 10 at epoch ``epochs // 2`` (``MultiStepLR``; none for
    one epoch), the instance, or the factory's; ``ReduceLROnPlateau`` only per epoch."""
    if scheduler is None:
        if not halfway or epochs < 2:
            return None
        return torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[epochs // 2], gamma=0.1)
    out = scheduler if _is_scheduler(scheduler) else scheduler(opt)
    if not _is_scheduler(out) or out.optimizer is not opt:
        raise ParameterError("scheduler", "scheduler: the function must return a scheduler of the optimizer, got "
                                          f"{type(out).__name__}")
    if interval == "batch" and isinstance(out, torch.optim.lr_scheduler.ReduceLROnPlateau):
        raise ParameterError("scheduler_interval", "scheduler_interval='batch' does not apply to ReduceLROnPlateau (it "
                                                   "steps on the epoch's training loss)")
    return out
