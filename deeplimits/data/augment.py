"""Image augmentation as batched tensor operations, seeded (docs/data.md, "Augmentation"): the
random crops with zero padding and the horizontal flips of the CIFAR-10 protocol of He et al.
(2016) that Cohen, Cont, Rossier & Xu (ICML 2021, §3.2) train with.

:func:`crop_flip` draws one crop offset per image and axis (uniform on ``0..2 padding``) and
one flip per image (probability 1/2) from a generator, then gathers every image of the batch at
once (no loop over images). :func:`augmented_batches` is one epoch of shuffled mini-batches so
augmented, seeded.
"""

from __future__ import annotations

from typing import Iterator

import torch

from .. import _validate as V_
from .._random import chunk_seed
from ..errors import ParameterError
from .batching import batches

__all__ = ["crop_flip", "augmented_batches", "CROP_PADDING", "IMAGE_SHAPES", "default_padding"]

#: the stream of :func:`~deeplimits._random.chunk_seed` that seeds an epoch's crops and flips
AUGMENT_STREAM = 1
#: the padding of the published random crops (32 x 32 CIFAR-10 images padded to 40 x 40)
CROP_PADDING = 4
IMAGE_SHAPES = {"digits": (1, 8, 8), "mnist": (1, 28, 28), "cifar10": (3, 32, 32)}
"""``(channels, height, width)`` of the images of the registered image data sets (flattened
channel-major in their tensors)."""


def default_padding(image_shape) -> int:
    """The crop padding in proportion to CIFAR-10's (4 pixels of 32): ``round(4 h / 32)``, at
    least 1 (4 for CIFAR-10 and MNIST, 1 for the 8 x 8 digits: a labelled variant there)."""
    return max(1, round(CROP_PADDING * _image_shape(image_shape)[1] / 32))


def _image_shape(image_shape) -> tuple[int, int, int]:
    shape = tuple(V_.size(image_shape, name="image_shape"))
    if len(shape) != 3:
        raise ParameterError("image_shape", f"image_shape must be (channels, height, width), got {image_shape!r}")
    return shape


def crop_flip(x: torch.Tensor, image_shape, *, padding: int = CROP_PADDING, flip: bool = True,
              generator: torch.Generator | None = None) -> torch.Tensor:
    """Random crops of the zero-padded images and random horizontal flips.

    Args:
        x: images ``(batch, c, h, w)`` or flattened ``(batch, c * h * w)`` (channel-major).
        image_shape: ``(c, h, w)``.
        padding: zero padding on every side before the crop (>= 0); the crop offsets are
            uniform on ``0..2 padding`` per image and axis.
        flip: flip each image left-right with probability 1/2.
        generator: a seeded :class:`torch.Generator` (on the CPU: the same draws on every device).

    Returns:
        The augmented images, of the shape of ``x``.
    """
    c, h, w = _image_shape(image_shape)
    padding, flip = V_.integer("padding", padding, low=0), V_.flag("flip", flip)
    V_.generator(generator)
    V_.tensor("x", x, finite=False)
    flat = x.dim() == 2
    if not (flat and x.shape[1] == c * h * w) and not (x.dim() == 4 and tuple(x.shape[1:]) == (c, h, w)):
        raise ParameterError("x", f"x must have shape (batch, {c * h * w}) or (batch, {c}, {h}, {w}), got "
                                  f"{tuple(x.shape)}")
    n = x.shape[0]
    images = x.reshape(n, c, h, w)
    offsets = torch.randint(0, 2 * padding + 1, (n, 2), generator=generator)
    mirror = torch.rand(n, generator=generator) < 0.5 if flip else torch.zeros(n, dtype=torch.bool)
    offsets, mirror = offsets.to(x.device), mirror.to(x.device)
    padded = torch.nn.functional.pad(images, (padding,) * 4)
    rows = offsets[:, :1] + torch.arange(h, device=x.device)  # (n, h)
    cols = torch.arange(w, device=x.device).expand(n, w)
    cols = torch.where(mirror.unsqueeze(1), cols.flip(1), cols) + offsets[:, 1:]  # (n, w)
    index = torch.arange(n, device=x.device).view(n, 1, 1)
    out = padded.permute(0, 2, 3, 1)[index, rows.unsqueeze(2), cols.unsqueeze(1)]  # (n, h, w, c)
    out = out.permute(0, 3, 1, 2)
    return out.reshape(n, -1) if flat else out.contiguous()


def augmented_batches(split, batch_size: int, image_shape, *, seed: int = 0, padding: int = CROP_PADDING,
                      flip: bool = True) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """One epoch of mini-batches of ``split`` (``(x, y)``, e.g. ``dataset.train``) in the order of
    :func:`~deeplimits.data.batches` ``(split, batch_size, seed=seed)``, each augmented by
    :func:`crop_flip` with draws from a generator seeded ``chunk_seed(seed, AUGMENT_STREAM)``
    (a stream apart from the shuffling's; the same seed, the same batches)."""
    image_shape = _image_shape(image_shape)
    padding, flip = V_.integer("padding", padding, low=0), V_.flag("flip", flip)
    pairs = batches(split, batch_size, seed=seed)
    g = torch.Generator().manual_seed(chunk_seed(seed, AUGMENT_STREAM))  # not the shuffling generator's stream
    return ((crop_flip(xb, image_shape, padding=padding, flip=flip, generator=g), yb) for xb, yb in pairs)
