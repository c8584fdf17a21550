"""The data set interface: :class:`Dataset`, the registry :data:`DATASETS` and :func:`load_dataset`.

A data set is one loader function registered by name (like torchdiffeq's solver registry)::

    @register_dataset("digits")
    def digits(*, seed):
        ...
        return Arrays(x, y, task="classification", n_classes=10)

The loader returns NumPy arrays (:class:`Arrays`); :func:`load_dataset` validates every
argument first (one-line ``ValueError`` naming the parameter and the allowed values), calls the
loader, splits pooled samples with a seeded permutation (or keeps the official split of a
loader registered with ``official_split=True``) and returns tensors on the requested device.

A loader's keyword-only parameters other than ``root`` and ``seed`` are its options: they are
passed through ``load_dataset(name, **options)`` and the loader validates their values. A
loader that takes ``root`` reads files the user already has; nothing is ever downloaded.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from .. import _validate as V_
from .._random import MAX_SEED
from ..errors import ParameterError

TASKS = ("classification", "regression")
DEFAULT_TEST_FRACTION = 0.2


@dataclass(frozen=True)
class Arrays:
    """What a loader returns: inputs ``x`` of shape ``(n, input_dim)`` and targets ``y``
    (class indices ``(n,)`` for classification, ``(n, output_dim)`` for regression), pooled,
    or with the official test split in ``x_test``, ``y_test``."""

    x: np.ndarray
    """Inputs, ``(n, input_dim)``."""
    y: np.ndarray
    """Targets: class indices ``(n,)`` or regression targets ``(n, output_dim)``."""
    task: str
    """``'classification'`` or ``'regression'``."""
    n_classes: int | None = None
    """The number of classes (``None`` for regression)."""
    x_test: np.ndarray | None = None
    """The official test split's inputs (``None``: the data are pooled)."""
    y_test: np.ndarray | None = None
    """The official test split's targets (``None``: the data are pooled)."""


@dataclass(frozen=True, eq=False)
class Dataset:
    """A data set split into train and test tensors (all on one device).

    ``task`` is ``'classification'`` (``y`` holds ``int64`` class indices in
    ``[0, n_classes)``, ``output_dim == n_classes``) or ``'regression'`` (``y`` has shape
    ``(n, output_dim)`` and the dtype of ``x``; ``n_classes`` is ``None``).
    """

    name: str
    """The registered name."""
    x_train: torch.Tensor
    """Training inputs, ``(n_train, input_dim)``."""
    y_train: torch.Tensor
    """Training targets."""
    x_test: torch.Tensor
    """Test inputs, ``(n_test, input_dim)``."""
    y_test: torch.Tensor
    """Test targets."""
    task: str
    """``'classification'`` or ``'regression'``."""
    n_classes: int | None
    """The number of classes (``None`` for regression)."""
    input_dim: int
    """The dimension of an input."""
    output_dim: int
    """The dimension of an output (``n_classes`` for classification)."""

    @property
    def train(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x_train, y_train)``, e.g. for :func:`batches`."""
        return self.x_train, self.y_train

    @property
    def test(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x_test, y_test)``."""
        return self.x_test, self.y_test

    @property
    def n_train(self) -> int:
        """The number of training examples."""
        return int(self.x_train.shape[0])

    @property
    def n_test(self) -> int:
        """The number of test examples."""
        return int(self.x_test.shape[0])

    def __repr__(self) -> str:
        classes = f", n_classes={self.n_classes}" if self.n_classes is not None else ""
        return (f"Dataset(name={self.name!r}, task={self.task!r}{classes}, input_dim={self.input_dim}, "
                f"output_dim={self.output_dim}, n_train={self.n_train}, n_test={self.n_test}, "
                f"dtype={self.x_train.dtype}, device={self.x_train.device})")


@dataclass(frozen=True)
class DatasetSpec:
    """A registered data set: its ``loader``, whether it has an ``official_split``, whether it
    reads files (``needs_root``) and its ``options`` with their defaults."""

    name: str
    """The registered name."""
    loader: Callable[..., Arrays]
    """The function returning the :class:`Arrays`."""
    official_split: bool = False
    """Whether the set comes with an official test split."""
    needs_root: bool = False
    """Whether the loader reads files (takes ``root``)."""
    options: dict = field(default_factory=dict)
    """The loader's keyword options with their defaults."""
    shared: bool = False
    """Whether the loader gives the same arrays for the same arguments, so that a process loads
    them once and shares them (read-only) across its tasks (:func:`load_dataset`)."""

    @property
    def summary(self) -> str:
        """The first line of the loader's docstring."""
        return (inspect.getdoc(self.loader) or "").split("\n")[0]


DATASETS: dict[str, DatasetSpec] = {}
"""The registered data sets by name (:func:`register_dataset`)."""


def register_dataset(name: str, *, official_split: bool = False, shared: bool = False):
    """Decorator registering ``loader`` under ``name`` in :data:`DATASETS`.

    The loader takes keyword-only arguments: ``seed`` (always passed), ``root`` (passed when
    present in its signature: the set reads files) and its options with defaults. ``shared``:
    the loader is a function of its arguments alone (no files, no global state), so its arrays
    are loaded once per process for each set of arguments and shared, read-only, by every
    :func:`load_dataset` of them (the bundled and generated sets; a loader of your own is called
    every time unless it says so).
    """
    if not isinstance(name, str) or not name:
        raise ParameterError("name", f"name must be a non-empty string, got {name!r}")
    V_.flag("official_split", official_split)
    V_.flag("shared", shared)

    def register(loader):
        if not callable(loader):
            raise ParameterError("loader", f"loader must be a function returning Arrays, got {loader!r}")
        params = inspect.signature(loader).parameters
        options = {k: p.default for k, p in params.items()
                   if k not in ("root", "seed") and p.kind is p.KEYWORD_ONLY}
        DATASETS[name] = DatasetSpec(name, loader, official_split, "root" in params, options, shared)
        return loader

    return register


def dataset_names() -> tuple[str, ...]:
    """The names of the registered data sets, in registration order."""
    return tuple(DATASETS)


def split_indices(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The seeded split of ``n`` pooled samples: ``(train_index, test_index)``, disjoint,
    covering ``range(n)``, each sorted; ``round(test_fraction * n)`` test samples.

    The permutation comes from NumPy's ``default_rng([seed, 0])``; stream ``[seed, 1]`` is
    left to loaders that draw their samples (so data and split are independent streams).
    ``n >= 2``, ``test_fraction`` in (0, 1), ``seed`` in ``[0, 2^63 - 1]``.
    """
    n = V_.integer("n", n, low=2)
    test_fraction = V_.real("test_fraction", test_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    seed = V_.integer("seed", seed, low=0, high=MAX_SEED)
    n_test = int(round(test_fraction * n))
    if not 1 <= n_test <= n - 1:
        raise ParameterError("test_fraction", f"test_fraction={test_fraction!r} leaves an empty train or test split of "
                                              f"{n} samples; choose it in [{1 / n:.3g}, {1 - 1 / n:.3g}]")
    perm = np.random.default_rng([seed, 0]).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _root(spec: DatasetSpec, root) -> str | None:
    if not spec.needs_root:
        return None  # the set is bundled or generated: root is not used
    if root is None:
        raise ParameterError("root", f"root is required for dataset {spec.name!r}: the directory holding its files "
                                     "(nothing is downloaded; see docs/data.md)")
    return os.path.abspath(os.path.expanduser(V_._path("root", root)))


def _options(spec: DatasetSpec, options: dict) -> dict:
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        allowed = ", ".join(map(repr, spec.options)) or "none"
        raise ParameterError(unknown[0], f"unknown option {unknown[0]!r} for dataset {spec.name!r}; its options: "
                                         f"{allowed}")
    return options


def _test_fraction(spec: DatasetSpec, value) -> float | None:
    if spec.official_split:
        if value is not None:
            raise ParameterError("test_fraction", f"test_fraction must be None for dataset {spec.name!r}, which has an "
                                                  f"official train/test split; got {value!r}")
        return None
    if value is None:
        return DEFAULT_TEST_FRACTION
    return V_.real("test_fraction", value, low=0.0, high=1.0, low_open=True, high_open=True)


def load_dataset(name: str = "digits", *, root=None, seed: int = 0, test_fraction: float | None = None,
                 device=None, dtype: torch.dtype = torch.float32, **options) -> Dataset:
    """The data set ``name`` (one of :data:`DATASETS`), split into train and test tensors.

    ``root`` is the directory of the files of ``mnist`` and ``cifar10`` (ignored by the bundled
    and generated sets); ``seed`` fixes the split (and the samples of ``synthetic``);
    ``test_fraction`` (default 0.2; ``None`` for sets with an official split) is the share
    of test samples; inputs (and regression targets) get ``dtype`` (float32 or float64) on
    ``device`` (``None``: the CPU; a device this machine has, not ``'meta'``);
    class labels are ``int64``. ``options`` go to the loader (e.g. ``n`` for ``synthetic``).
    Bad arguments raise a one-line ``ValueError`` before anything is read or generated.
    """
    name = V_.choice("name", name, dataset_names())
    spec = DATASETS[name]
    seed = V_.integer("seed", seed, low=0, high=MAX_SEED)
    test_fraction = _test_fraction(spec, test_fraction)
    dtype = V_.dtype(dtype)
    device = V_.device("device", device, dtype)
    kwargs = dict(_options(spec, options), seed=seed)
    if spec.needs_root:
        kwargs["root"] = _root(spec, root)
    arrays = _arrays(spec, kwargs)
    if spec.official_split:
        parts = (arrays.x, arrays.y, arrays.x_test, arrays.y_test)
    else:
        train, test = split_indices(len(arrays.x), test_fraction, seed)
        parts = (arrays.x[train], arrays.y[train], arrays.x[test], arrays.y[test])
    return _to_dataset(name, arrays, parts, dtype, device)


#: the arrays of shared loaders already called in this process: (name, loader, arguments) -> Arrays
_SHARED: dict = {}
#: at most this many sets of arguments are kept (the oldest is dropped)
SHARED_ENTRIES = 8


def _arrays(spec: DatasetSpec, kwargs: dict) -> Arrays:
    """The checked arrays of ``spec.loader(**kwargs)``; of a ``shared`` loader, those of its first
    call with these arguments in this process (made read-only: a task cannot change another's)."""
    if not spec.shared:
        return _check_arrays(spec.name, spec.loader(**kwargs))
    key = (spec.name, spec.loader, repr(sorted(kwargs.items())))
    arrays = _SHARED.pop(key, None)
    if arrays is None:
        arrays = _check_arrays(spec.name, spec.loader(**kwargs))
        for a in (arrays.x, arrays.y, arrays.x_test, arrays.y_test):
            if a is not None:
                a.setflags(write=False)
        while len(_SHARED) >= SHARED_ENTRIES:
            _SHARED.pop(next(iter(_SHARED)))
    _SHARED[key] = arrays  # the most recently used last
    return arrays


def _check_arrays(name: str, a: Arrays) -> Arrays:
    """What a loader returned is consistent (a clear error for a new loader's mistakes)."""
    if not isinstance(a, Arrays) or a.task not in TASKS:
        raise ParameterError("loader", f"the loader of {name!r} must return Arrays with task in {TASKS}, got {a!r:.80}")
    if a.x_test is None and len(a.x) < 2:
        raise ParameterError("loader", f"the loader of {name!r} returned {len(a.x)} samples; a train/test split needs "
                                       "at least 2")
    pairs = [(a.x, a.y)] + ([(a.x_test, a.y_test)] if a.x_test is not None else [])
    for x, y in pairs:
        if x.ndim != 2 or len(y) != len(x) or y.ndim != (1 if a.task == "classification" else 2):
            raise ParameterError("loader", f"the loader of {name!r} returned x of shape {x.shape} and y of shape "
                                           f"{y.shape}")
        if a.task == "classification" and len(y) and (y.min() < 0 or y.max() >= a.n_classes):
            raise ParameterError("loader", f"the labels of {name!r} must lie in [0, {a.n_classes}), "
                             f"got [{y.min()}, {y.max()}]")
    return a


def _to_dataset(name: str, a: Arrays, parts, dtype: torch.dtype, device: torch.device) -> Dataset:
    x_train, y_train, x_test, y_test = parts

    def tensor(a):  # a shared (read-only) array is copied: the tensors are the caller's own
        return torch.from_numpy(np.array(a) if not a.flags.writeable else np.ascontiguousarray(a))

    def inputs(x):
        return tensor(x).to(device=device, dtype=dtype)

    def targets(y):
        y = tensor(y)
        return y.to(device=device, dtype=torch.int64 if a.task == "classification" else dtype)

    out_dim = a.n_classes if a.task == "classification" else int(y_train.shape[1])
    return Dataset(name, inputs(x_train), targets(y_train), inputs(x_test), targets(y_test), a.task,
                   a.n_classes if a.task == "classification" else None, int(x_train.shape[1]), out_dim)

