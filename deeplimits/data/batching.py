"""Mini-batches of one split of a :class:`~deeplimits.data.Dataset`, in a seeded order."""

from __future__ import annotations

from typing import Iterator

import torch

from .. import _validate as V_
from .._random import MAX_SEED
from ..errors import ParameterError


def _split(split) -> tuple[torch.Tensor, torch.Tensor]:
    ok = (isinstance(split, (tuple, list)) and len(split) == 2
          and all(isinstance(t, torch.Tensor) and t.ndim >= 1 for t in split))
    if not ok or split[0].shape[0] != split[1].shape[0] or split[0].device != split[1].device:
        raise ParameterError("split", "split must be a pair (x, y) of tensors with the same first dimension on one "
                                      "device, e.g. dataset.train")
    return V_.has_data("split", split[0]), split[1]


def _order(n: int, shuffle: bool, seed, generator, device) -> torch.Tensor | None:
    V_.flag("shuffle", shuffle)
    if seed is not None and generator is not None:
        raise ParameterError("generator", "give seed or generator, not both")
    V_.generator(generator)
    if seed is not None:
        seed = V_.integer("seed", seed, low=0, high=MAX_SEED)
    if not shuffle:
        return None
    if generator is None:
        generator = torch.Generator().manual_seed(0 if seed is None else seed)
    return torch.randperm(n, generator=generator, device=generator.device).to(device)


def batches(split, batch_size: int, *, seed: int | None = None, generator: torch.Generator | None = None,
            shuffle: bool = True, drop_last: bool = False) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """The mini-batches ``(x, y)`` of ``split`` (a pair of tensors, e.g. ``dataset.train``) for
    one epoch: every sample exactly once (the last batch may be smaller, unless ``drop_last``).

    With ``shuffle`` the order is a permutation drawn from ``generator`` (which advances, so
    one generator gives a new order every epoch) or from a fresh generator seeded with
    ``seed`` (default 0: the same order on every call; pass e.g. ``seed=epoch``). Arguments are
    checked when called, not when iterated.
    """
    x, y = _split(split)
    batch_size = V_.integer("batch_size", batch_size)
    V_.flag("drop_last", drop_last)
    order = _order(x.shape[0], shuffle, seed, generator, x.device)
    return _iterate(x, y, order, batch_size, drop_last)


def _iterate(x, y, order, batch_size, drop_last):
    n = x.shape[0]
    stop = n - n % batch_size if drop_last else n
    for start in range(0, stop, batch_size):
        if order is None:
            yield x[start:start + batch_size], y[start:start + batch_size]
        else:
            index = order[start:start + batch_size]
            yield x[index], y[index]


def copying_shuffle(order: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One epoch of the published scaling code's batch order (Cohen et al., 2021,
    instadeepai/scaling-resnets, ``scaling_experiments.py``): ``np.random.shuffle`` applied to a
    torch tensor of mini-batches. NumPy shuffles an object that is not an ndarray by the swaps
    ``x[i], x[j] = x[j], x[i]`` of Fisher-Yates (``i`` from ``n - 1`` down to 1, ``j`` uniform on
    ``0..i``); with tensor views the second assignment copies back what the first just wrote, so
    each swap is the copy ``x[i] = x[j]`` (the swap by item assignment does not survive a
    container whose items are views). The law is therefore
    ``new[0] = old[0]`` and ``new[i] = old[J_i]`` with ``J_i`` independent and uniform on ``0..i``:
    batch ``p`` survives a pass with probability ``1 - p / n``, so ``(n + 1) / 2`` distinct
    batches survive the first pass on average, and after a few epochs one batch fills the
    epoch (docs/weights.md, "The published code's training loop").

    ``order``: a 1-D integer tensor (the batch indices of the previous epoch, ``arange(n)`` at
    first); ``generator`` supplies the uniforms (on its own device). Returns the new order, on
    ``order``'s device, without a Python loop over batches.
    """
    ok = isinstance(order, torch.Tensor) and order.ndim == 1 and not order.is_floating_point() \
        and not order.is_complex() and order.dtype != torch.bool
    if not ok:
        raise ParameterError("order", f"order must be a 1-D integer tensor of batch indices, got "
                                      f"{getattr(order, 'dtype', type(order).__name__)} of shape {tuple(getattr(order, 'shape', ()))}")
    if not isinstance(generator, torch.Generator):
        raise ParameterError("generator", f"generator must be a torch.Generator, got {type(generator).__name__}")
    n = order.shape[0]
    i = torch.arange(n, device=generator.device)
    u = torch.rand(n, generator=generator, dtype=torch.float64, device=generator.device)
    j = torch.minimum((u * (i + 1)).floor().long(), i)  # uniform on 0..i (J_0 = 0)
    return order[j.to(order.device)]
