"""The depth coordinate check of the transfer study on convolutional ResNets (docs/transfer.md,
"The coordinate check"; :mod:`.coords` for the MLPs): after a few full-batch steps, ``h_L`` the
mean entry of ``|Δh_L|`` (the states after the last block) and ``block`` the mean over the
blocks that keep the shape of ``|Δ(h_k - h_{k-1})|`` over that of ``|h_k - h_{k-1}|`` before.
"""

from __future__ import annotations

import copy
import math
import types

import torch
import torch.nn.functional as F_

from .presets import horizon_epochs

__all__ = ["conv_states", "conv_coordinate_check", "train_configurations"]


@torch.no_grad()
def conv_states(net, x: torch.Tensor) -> list[torch.Tensor]:
    """The stem's output and every block's, each ``(C, n, c * h * w)``."""
    h = torch.relu(F_.conv2d(net.images(x), net.stem.flatten(0, 1), padding=1))
    out = [h]
    for block in net.blocks:
        h = block(h, net.configs, net.branch_multiplier)
        out.append(h)
    return [s.reshape(s.shape[0], net.configs, -1).transpose(0, 1) for s in out]


def _sizes(before: list, after: list) -> dict:
    """Per configuration: the two update sizes from the states before and after the steps."""
    d_last = (after[-1] - before[-1]).abs().mean(dim=(-2, -1))
    num, den = 0.0, 0.0
    for k in range(1, len(before)):
        if before[k].shape != before[k - 1].shape:
            continue  # a block that changes the channels or the grid: no increment of the state
        num = num + ((after[k] - after[k - 1]) - (before[k] - before[k - 1])).abs().mean(dim=(-2, -1))
        den = den + (before[k] - before[k - 1]).abs().mean(dim=(-2, -1))
    return {"h_L": d_last, "block": num / den if torch.is_tensor(den) else d_last * float("nan")}


def train_configurations(net, data, optimizer: str, rates, epochs: int, batch_size: int, seed: int,
                         horizons: list | None = None) -> list:
    """Train every configuration of ``net`` at its rate of ``rates``: its final training loss,
    ``None`` where it blew up. ``horizons``: a list to which the training losses after each of
    :func:`~.presets.horizon_epochs` but the last are appended (the same form)."""
    from ...training import _loop as L_
    from ...training._setup import build_optimiser
    from ...training.conv_train import ConvSource

    opt = build_optimiser(net, optimizer, torch.tensor(rates, dtype=torch.float64))
    source = ConvSource(data, batch_size, seed, net.image_shape, False, 0)
    at = horizon_epochs(epochs)[:-1] if horizons is not None else []

    def read(record):
        if record["epoch"] + 1 in at:
            losses = source.train_metrics(net, "cross_entropy")[0].tolist()
            horizons.append([float(x) if f and math.isfinite(x) else None for x, f in zip(losses, record["finite"])])

    L_.run(net, source, opt, None, epochs=epochs, loss="cross_entropy", stop_loss=None, callbacks=[read],
           per_batch=False)
    recs = L_.records(net, source, "cross_entropy", L_.live_mask(opt, net.configs))
    return [r["train_loss"] if r["finite"] else None for r in recs]


def conv_coordinate_check(net, data, *, optimizer: str, lr: float, steps: int, samples: int) -> dict:
    """Train a copy of ``net`` (its configurations: seeds; only its trainable kernels) for
    ``steps`` full-batch steps on the first ``samples`` training images of ``data`` at the rate
    ``lr``, and measure the update sizes on those images: ``{key: [one value per seed, None
    where training blew up]}``."""
    x, y = data.x_train[:samples], data.y_train[:samples]
    sub = types.SimpleNamespace(x_train=x, y_train=y, x_test=x[:1], y_test=y[:1], task="classification")
    twin = copy.deepcopy(net)
    before = conv_states(twin, x)
    loss = train_configurations(twin, sub, optimizer, [lr] * twin.configs, steps, x.shape[0], 0)
    after = conv_states(twin, x)
    sizes = _sizes(before, after)
    return {k: [float(v) if ok is not None and torch.isfinite(v) else None for v, ok in zip(t, loss)]
            for k, t in sizes.items()}
