"""Optional dependencies: imported where a feature needs them, with a one-line message naming
the extra that installs them when they are missing (``pip install 'deeplimits[EXTRA]'``)."""

from __future__ import annotations

import importlib

from .errors import MissingExtra

__all__ = ["EXTRAS", "MissingExtra", "need"]

#: top-level module -> (extra, what needs it)
EXTRAS = {
    "distributed": ("cluster", "sweeps on a Dask cluster (workers, scheduler)"),
    "pandas": ("tables", "tables (ConvergenceResult.table)"),
    "mnist1d": ("data", "the data set 'mnist1d' (generated locally, nothing is downloaded)"),
}


def need(module: str):
    """``module`` imported, or :class:`MissingExtra` with a one-line message naming its extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra, what = EXTRAS[module.split(".")[0]]
        raise MissingExtra(f"the package {module.split('.')[0]} is needed for {what}: "
                           f"pip install 'deeplimits[{extra}]'") from None
