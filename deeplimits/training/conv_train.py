"""Training the ``C`` configurations of a :class:`~deeplimits.training.conv.ConvResidualNetwork`
at once with the published protocol of Cohen, Cont, Rossier & Xu (ICML 2021, §3.2; docs/training.md,
"Convolutional networks"): cross-entropy, SGD with momentum 0.9 and weight decay 5e-4, the
learning rate (one per configuration, 0.1 published) on a cosine schedule over the epochs, random
crops with 4-pixel zero padding and horizontal flips (:mod:`deeplimits.data.augment`). The loop,
its history and its records are :func:`~deeplimits.training.train`'s (:mod:`._loop`); a
configuration whose loss goes non-finite is frozen and reported, the others go on.
"""

from __future__ import annotations

import time
from typing import Callable

import torch

from .. import _random as RN_
from .. import _validate as V_
from ..data.augment import CROP_PADDING, augmented_batches
from ..errors import ParameterError
from . import _loop as L_
from .conv import ConvResidualNetwork
from .losses import _evaluate
from .optim import BatchedSGD
from .train import TrainResult, seed_limit

__all__ = ["train_conv", "PUBLISHED_CONV", "ConvSource"]

PUBLISHED_CONV = dict(lr=0.1, momentum=0.9, weight_decay=5e-4, epochs=200, batch_size=128, padding=CROP_PADDING,
                      flip=True)
"""The published protocol (the authors' CIFAR-10 setup; the mini-batch of 128 is the usual one of
that setup, which the paper does not state)."""


class ConvSource:
    """The training split in memory, each epoch ``e`` shuffled and augmented with seed
    :func:`~deeplimits._random.epoch_seed` ``(seed, e)`` (or only shuffled, ``augment=False``);
    the losses and accuracies after training are those of the images themselves."""

    def __init__(self, data, batch_size: int, seed: int, image_shape, augment: bool, padding: int):
        self.data, self.batch_size, self.seed = data, batch_size, seed
        self.image_shape, self.augment, self.padding = image_shape, augment, padding

    def epoch(self, e: int):
        split, seed = (self.data.x_train, self.data.y_train), RN_.epoch_seed(self.seed, e)
        if not self.augment:
            return L_.Memory(self.data, self.batch_size, self.seed).epoch(e)
        return augmented_batches(split, self.batch_size, self.image_shape, seed=seed, padding=self.padding)

    def train_metrics(self, module, loss):
        return _evaluate(module, self.data.x_train, self.data.y_train, loss)

    def test_metrics(self, module, loss):
        return _evaluate(module, self.data.x_test, self.data.y_test, loss)


def _check_data(module: ConvResidualNetwork, data):
    for split in ("train", "test"):
        x, y = getattr(data, f"x_{split}", None), getattr(data, f"y_{split}", None)
        if not isinstance(x, torch.Tensor):
            raise ParameterError("data", f"data must have tensors x_train, y_train, x_test, y_test (missing x_{split})")
        V_.same_device(f"data.x_{split}", V_.tensor(f"data.x_{split}", x, dtype_=module.stem.dtype), module.stem.device)
        if x.shape[0] == 0:
            raise ParameterError("data", f"data.x_{split} must hold at least one image")
        module.images(x[:1])  # the image shape, or a one-line error
        V_.same_device(f"data.y_{split}", V_.labels(f"data.y_{split}", y, module.classes, x.shape[0]),
                       module.stem.device)


def train_conv(module: ConvResidualNetwork, data, *, lr=PUBLISHED_CONV["lr"], epochs: int = PUBLISHED_CONV["epochs"],
               batch_size: int = PUBLISHED_CONV["batch_size"], momentum: float = PUBLISHED_CONV["momentum"],
               weight_decay: float = PUBLISHED_CONV["weight_decay"], augment: bool = True,
               padding: int = PUBLISHED_CONV["padding"], seed: int = 0, callbacks=None,
               progress: Callable[[int], None] | None = None) -> TrainResult:
    """Train every configuration of ``module`` on ``data`` (the module docstring's protocol).

    Args:
        module: a :class:`~deeplimits.training.ConvResidualNetwork`.
        data: a classification :class:`deeplimits.data.Dataset` (or an object with tensors
            ``x_train, y_train, x_test, y_test``) of images, flattened channel-major or
            ``(n, c, h, w)``, of the module's image shape, dtype and device.
        lr: the initial learning rate, a number > 0 or one per configuration; the cosine
            schedule (``CosineAnnealingLR(T_max=epochs)``, stepped per epoch) takes it to 0.
        epochs, batch_size: integers >= 1; epoch ``e`` shuffles and augments with seed
            :func:`~deeplimits._random.epoch_seed` ``(seed, e)``.
        momentum: in [0, 1); weight_decay: >= 0 (L2, as ``torch.optim.SGD``'s).
        augment: random crops (``padding`` >= 0 pixels of zeros) and horizontal flips.
        seed: an integer in ``[0, seed_limit(epochs)]``.
        callbacks, progress: as for :func:`~deeplimits.training.train`.

    Returns:
        A :class:`~deeplimits.training.TrainResult` (train and test loss and accuracy per
        configuration, the per-epoch history).
    """
    if not isinstance(module, ConvResidualNetwork):
        raise ParameterError("module", f"module must be a ConvResidualNetwork, got {type(module).__name__}")
    epochs, batch_size = V_.integer("epochs", epochs), V_.integer("batch_size", batch_size)
    rates = V_.per_config("lr", lr, module.configs)
    augment, padding = V_.flag("augment", augment), V_.integer("padding", padding, low=0)
    V_.integer("seed", seed, low=0, high=seed_limit(epochs))
    V_.callback("progress", progress)
    callbacks = V_.callbacks("callbacks", callbacks)
    if progress is not None:
        callbacks = [lambda record: progress(1)] + callbacks
    opt = BatchedSGD(module, lr=rates, momentum=momentum, weight_decay=weight_decay)
    _check_data(module, data)
    source = ConvSource(data, batch_size, seed, module.image_shape, augment, padding)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    t0 = time.perf_counter()
    history = L_.run(module, source, opt, sched, epochs=epochs, loss="cross_entropy", stop_loss=None,
                     callbacks=callbacks, per_batch=False)
    records = L_.records(module, source, "cross_entropy", L_.live_mask(opt, module.configs))
    return TrainResult(records, len(history), [h["lr"] for h in history], time.perf_counter() - t0, history)
