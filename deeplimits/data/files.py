"""MNIST and CIFAR-10 read from files the user already has (nothing is ever downloaded).

The layout is torchvision's, so a directory filled by ``torchvision.datasets.MNIST(root,
download=True)`` or ``CIFAR10(root, download=True)`` works as it is:

* MNIST: the idx files ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
  ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte`` (each optionally ``.gz``) in
  ``root/MNIST/raw/``;
* CIFAR-10: the Python pickles ``data_batch_1`` .. ``data_batch_5`` and ``test_batch`` in
  ``root/cifar-10-batches-py/`` (dicts with ``b'data'``, uint8 of shape ``(n, 3072)``, and
  ``b'labels'``). Pickles can run code when loaded: use only files you trust.

The files are read directly (torchvision is not needed). Images are flattened (MNIST
row-major, 784 features; CIFAR-10 in the pickles' channel-major order R, G, B, 3072 features)
and scaled to [0, 1]; the official train/test splits are kept.
"""

from __future__ import annotations

import gzip
import os
import pickle

import numpy as np

from .base import Arrays, register_dataset

MNIST_DIR = os.path.join("MNIST", "raw")
MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
               "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
CIFAR10_DIR = "cifar-10-batches-py"
CIFAR10_FILES = tuple(f"data_batch_{i}" for i in range(1, 6)) + ("test_batch",)
IDX_UBYTE = 0x08  # the idx type code of unsigned bytes


def _missing(dataset: str, directory: str, expected, missing) -> FileNotFoundError:
    return FileNotFoundError(
        f"dataset {dataset!r} needs {', '.join(expected)} in {directory}; missing: {', '.join(missing)} "
        "(nothing is downloaded: copy the files there, see docs/data.md)")


def _find_mnist(directory: str) -> list[str]:
    found, missing = [], []
    for name in MNIST_FILES:
        paths = [os.path.join(directory, name + ext) for ext in ("", ".gz")]
        hit = [p for p in paths if os.path.isfile(p)]
        (found.append(hit[0]) if hit else missing.append(name))
    if missing:
        raise _missing("mnist", directory, [f + "[.gz]" for f in MNIST_FILES], missing)
    return found


def read_idx(path: str, ndim: int) -> np.ndarray:
    """The array of unsigned bytes stored in the idx file ``path`` (optionally gzipped), which
    must have ``ndim`` dimensions (magic number ``0x0000 08 0<ndim>``, big-endian sizes)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    if len(data) < 4 + 4 * ndim or magic != bytes([0, 0, IDX_UBYTE, ndim]):
        raise ValueError(f"{path} is not an idx file of unsigned bytes with {ndim} dimensions "
                         f"(magic number {magic.hex() or 'missing'}, expected 000008{ndim:02x})")
    dims = tuple(int(v) for v in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise ValueError(f"{path} holds {body.size} bytes of data, its header {dims} says {int(np.prod(dims))}")
    return body.reshape(dims)


def _images_labels(images_path: str, labels_path: str) -> tuple[np.ndarray, np.ndarray]:
    images, labels = read_idx(images_path, 3), read_idx(labels_path, 1)
    if len(images) != len(labels):
        raise ValueError(f"{images_path} holds {len(images)} images but {labels_path} {len(labels)} labels")
    return images.reshape(len(images), -1) / 255.0, labels.astype(np.int64)


@register_dataset("mnist", official_split=True)
def mnist(*, root: str, seed: int) -> Arrays:
    """MNIST from the user's idx files in root/MNIST/raw: 60000 + 10000 images, 784 features in [0, 1], 10 classes."""
    paths = _find_mnist(os.path.join(root, MNIST_DIR))
    x, y = _images_labels(paths[0], paths[1])
    x_test, y_test = _images_labels(paths[2], paths[3])
    return Arrays(x, y, task="classification", n_classes=10, x_test=x_test, y_test=y_test)


def read_cifar_batch(path: str) -> tuple[np.ndarray, np.ndarray]:
    """``(data, labels)`` of one CIFAR-10 python pickle: uint8 ``(n, 3072)`` and int64 ``(n,)``."""
    with open(path, "rb") as f:
        try:
            d = pickle.load(f, encoding="bytes")
        except Exception as e:  # a damaged or foreign file: one line naming it
            raise ValueError(f"{path} is not a CIFAR-10 python pickle ({type(e).__name__}: {e})") from None
    if not isinstance(d, dict) or b"data" not in d or b"labels" not in d:
        raise ValueError(f"{path} is not a CIFAR-10 batch: expected a dict with b'data' and b'labels'")
    data, labels = np.asarray(d[b"data"], dtype=np.uint8), np.asarray(d[b"labels"], dtype=np.int64)
    if data.ndim != 2 or data.shape[1] != 3072 or len(labels) != len(data):
        raise ValueError(f"{path}: b'data' must have shape (n, 3072) with n labels, "
                         f"got {data.shape} and {len(labels)} labels")
    return data, labels


@register_dataset("cifar10", official_split=True)
def cifar10(*, root: str, seed: int) -> Arrays:
    """CIFAR-10 from the user's python pickles in root/cifar-10-batches-py: 50000 + 10000 images, 3072 features."""
    directory = os.path.join(root, CIFAR10_DIR)
    missing = [f for f in CIFAR10_FILES if not os.path.isfile(os.path.join(directory, f))]
    if missing:
        raise _missing("cifar10", directory, CIFAR10_FILES, missing)
    parts = [read_cifar_batch(os.path.join(directory, f)) for f in CIFAR10_FILES]
    x = np.concatenate([p[0] for p in parts[:5]]) / 255.0
    y = np.concatenate([p[1] for p in parts[:5]])
    return Arrays(x, y, task="classification", n_classes=10, x_test=parts[5][0] / 255.0, y_test=parts[5][1])
