"""The sizes of a training task, counted without running it (docs/training.md, "Grids, runs and
the heat map"): the data sets' sizes without loading them and the configurations of a grid,
read by the memory models of the training studies (:mod:`.memory`).
"""

from __future__ import annotations

import contextlib


from ..errors import MissingDataError, ParameterError

__all__ = ["DATA_SIZES", "PUBLISHED_SIZES", "published_sizes", "data_sizes", "data_root", "configs_count"]

#: ``(train samples, test samples, input_dim, output_dim)`` of the data sets that need no file,
#: as a training task loads them (default options, test fraction 0.2): a plan is sized without
#: loading them (tests/test_size_limits.py checks these against ``load_dataset``)
DATA_SIZES = {"digits": (1438, 359, 64, 10), "mnist1d": (4000, 1000, 40, 10), "synthetic": (819, 205, 10, 10)}
#: the same for the data sets read from files, as published (their official splits, kept by the
#: loaders: LeCun et al. 1998; Krizhevsky 2009), which size a plan given no files
#: (:func:`published_sizes`: ``--dry-run`` without ``--root``)
PUBLISHED_SIZES = {"mnist": (60000, 10000, 784, 10), "cifar10": (50000, 10000, 3072, 10)}
_READ: dict = {}  # the sizes of the data sets read at plan time, by (name, root)
_PUBLISHED = {"on": False}


@contextlib.contextmanager
def published_sizes():
    """Within it a plan on a data set read from files, given no root, is sized by
    :data:`PUBLISHED_SIZES` and reads nothing (``--dry-run`` without ``--root``: its memory and time
    estimates; a run still needs the files)."""
    before, _PUBLISHED["on"] = _PUBLISHED["on"], True
    try:
        yield
    finally:
        _PUBLISHED["on"] = before


def data_sizes(dataset: str, root: str | None = None) -> tuple[int, int, int, int]:
    """``(n_train, n_test, input_dim, output_dim)`` of ``dataset`` as a training task loads it:
    :data:`DATA_SIZES`, else those of the files read when the plan checked them
    (:func:`data_root`), else the data set is loaded once here."""
    if dataset in DATA_SIZES:
        return DATA_SIZES[dataset]
    if (dataset, root) not in _READ:
        from ..data import load_dataset

        _remember(dataset, root, load_dataset(dataset, root=root))
    return _READ[(dataset, root)]


def _remember(dataset: str, root, data) -> None:
    _READ[(dataset, root)] = (data.n_train, data.n_test, data.input_dim, data.output_dim)


def data_root(dataset: str, root):
    """The absolute directory of a data set read from files (read once now: a missing or
    malformed file is named before any work, not in a task, and its sizes are kept for
    :func:`data_sizes`); ``None`` for the others."""
    from ..data.base import DATASETS, _root, load_dataset

    if not DATASETS[dataset].needs_root:
        if root is not None:
            files = ", ".join(repr(n) for n, d in DATASETS.items() if d.needs_root)
            raise ParameterError("root", f"root applies only to the data sets read from files ({files}), not "
                                         f"{dataset!r}")
        return None
    if root is None and _PUBLISHED["on"] and dataset in PUBLISHED_SIZES:
        _READ[(dataset, None)] = PUBLISHED_SIZES[dataset]
        return None
    root = _root(DATASETS[dataset], root)
    try:
        _remember(dataset, root, load_dataset(dataset, root=root))
    except MissingDataError:
        raise
    except FileNotFoundError as e:
        raise ParameterError("root", f"root must hold the files of the data set: {e}") from None
    return root


def configs_count(hursts, seeds: int, lrs, betas) -> int:
    """The configurations of a training grid, ``len(hursts) x seeds x len(lrs) x len(betas)``."""
    return len(hursts) * seeds * len(lrs) * len(betas)
