"""Small data sets that need no file from the user: scikit-learn's 8x8 ``digits`` (bundled with
the scikit-learn wheel) and ``mnist1d`` (generated locally by the ``mnist1d`` package).

Both are pooled and split by :func:`~deeplimits.data.base.split_indices` with the seed of
:func:`~deeplimits.data.load_dataset`. Neither downloads anything.
"""

from __future__ import annotations

import functools
import os
import random
import sys

import numpy as np

from .base import Arrays, register_dataset


@register_dataset("digits", shared=True)
def digits(*, seed: int) -> Arrays:
    """scikit-learn's 8x8 handwritten digits: 1797 images, 64 features in [0, 1], 10 classes."""
    x, y = _digits_file()
    return Arrays(x / 16.0, y.astype(np.int64), task="classification", n_classes=10)


def _digits_file() -> tuple[np.ndarray, np.ndarray]:
    """The pixels and labels of ``sklearn/datasets/data/digits.csv.gz``, read as scikit-learn's
    ``load_digits`` reads them (``np.loadtxt``) without importing scikit-learn (about 1 s of CPU):
    the file is found on ``sys.path`` as Python would find the package; through ``load_digits``
    where it is not."""
    for where in sys.path:
        path = os.path.join(where or os.curdir, "sklearn", "datasets", "data", "digits.csv.gz")
        if os.path.isfile(path):
            data = np.loadtxt(path, delimiter=",")
            return data[:, :-1], data[:, -1].astype(int)
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise ImportError("dataset 'digits' needs scikit-learn (pip install 'scikit-learn>=1.2')") from None
    return load_digits(return_X_y=True)


@functools.lru_cache(maxsize=1)
def _mnist1d_arrays() -> tuple[np.ndarray, np.ndarray]:
    """The 5000 MNIST-1D samples made by ``mnist1d.data.make_dataset`` with its default
    arguments (its seed 42), pooled; the global NumPy and ``random`` states are restored."""
    from .._extras import need

    data = need("mnist1d.data")
    get_dataset_args, make_dataset = data.get_dataset_args, data.make_dataset
    np_state, py_state = np.random.get_state(), random.getstate()
    try:
        d = make_dataset(get_dataset_args())  # seeds the global generators itself
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    x = np.concatenate([d["x"], d["x_test"]]).astype(np.float64)
    y = np.concatenate([d["y"], d["y_test"]]).astype(np.int64)
    return x, y


@register_dataset("mnist1d", shared=True)
def mnist1d(*, seed: int) -> Arrays:
    """MNIST-1D (Greydanus, 2020): 5000 one-dimensional signals of length 40, 10 classes, generated locally."""
    x, y = _mnist1d_arrays()
    return Arrays(x.copy(), y.copy(), task="classification", n_classes=10)
