"""The package's exceptions: what a caller can catch by kind.

Every exception deeplimits raises on purpose is a :class:`DeeplimitsError`:

* :class:`ParameterError` (a ``ValueError``): an argument refused before any work, with the
  parameter's name in ``param`` and a one-line message that names it;
* :class:`MissingDataError` (a :class:`ParameterError` and a ``FileNotFoundError``): a data set's
  files are not in ``root``;
* :class:`ResourceError` (a :class:`ParameterError`): a request that cannot fit, refused at plan
  time with the estimate and the parameters to change (``knobs``; ``param`` is the first);
* :class:`DamagedFileError` (a ``ValueError``, not a :class:`ParameterError`): a file whose
  content cannot be used (a damaged or foreign data-set file, weights file or training chunk),
  named in ``path``: there is no argument to change, the file to replace;
* :class:`RunStoreError` (not a ``ValueError``): a run store that cannot be used; its
  :class:`DamagedStoreError` when its file cannot be read as a store, its :class:`DiskFullError`
  when the disk holding it is full (the finished tasks are kept: free space and resume);
* :class:`SweepError` and :class:`ExecutorError` (``RuntimeError``): failed tasks, an unreachable
  or worker-less Dask cluster;
* :class:`MissingExtra` (an ``ImportError``): an optional dependency is not installed.

A ``ValueError`` that is none of these is not about a parameter: a method called on an object
that has no such thing (a smooth sample's increments), or an error of torch or NumPy itself.
:class:`DamagedFileWarning` is the warning of a file beside a run store that is missing or damaged.
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

__all__ = ["DeeplimitsError", "ParameterError", "MissingDataError", "ResourceError", "DamagedFileError", "RunStoreError",
           "DamagedStoreError", "DiskFullError", "SweepError", "ExecutorError", "MissingExtra", "DamagedFileWarning"]


class DeeplimitsError(Exception):
    """The base of every exception the package raises on purpose."""


class ParameterError(DeeplimitsError, ValueError):
    """An argument refused before any work: ``param`` is the parameter's name (the command line
    shows it as the flag that sets it), the message one line naming it.

    Args:
        param: the name of the parameter refused.
        message: the one-line message (it names the parameter and what it allows).
    """

    def __init__(self, param: str, message: str):
        super().__init__(message)
        self.param = param
        """The name of the refused parameter (the command line shows its flag)."""

    def __reduce__(self):  # pickled through a Dask worker with its parameter
        return type(self), (self.param, str(self))


class MissingDataError(ParameterError, FileNotFoundError):
    """A data set's files are not where ``root`` says (a :class:`ParameterError` naming ``root``,
    and a ``FileNotFoundError``, which older callers catch): the message names the files and the
    directory searched."""

    def __init__(self, message: str):
        ParameterError.__init__(self, "root", message)

    def __reduce__(self):
        return type(self), (str(self),)


class ResourceError(ParameterError):
    """A request that cannot fit: raised at plan time, before any work, with the estimate.

    Args:
        message: the one-line message (the estimate and what this machine has).
        needed: bytes (or counts) the request needs.
        available: bytes (or counts) available.
        knobs: the parameter names to change (the CLI shows them as flags); ``param`` is the first.
    """

    def __init__(self, message: str, *, needed: float, available: float, knobs: Sequence[str] = ()):
        knobs = tuple(knobs)
        super().__init__(knobs[0] if knobs else None, message)
        self.needed, self.available, self.knobs = needed, available, knobs

    def __reduce__(self):
        return functools.partial(type(self), needed=self.needed, available=self.available, knobs=self.knobs), \
            (str(self),)


class DamagedFileError(DeeplimitsError, ValueError):
    """A file whose content cannot be used: damaged, truncated or foreign (a data-set file, a
    weights file, a stored training chunk). Nothing is run from it.

    Args:
        path: the file.
        message: the one-line message naming it.
    """

    def __init__(self, path, message: str):
        super().__init__(message)
        self.path = path
        """The file whose content cannot be used."""

    def __reduce__(self):
        return type(self), (self.path, str(self))


class RunStoreError(DeeplimitsError):
    """The run store cannot be used: unreadable, not a deeplimits store, or made by another command."""


class DamagedStoreError(RunStoreError):
    """The run store's file cannot be read as a store: truncated or garbled, a table missing, its
    spec not JSON, or a schema this version does not read (the command line exits 1: a runtime
    failure, not a bad argument)."""


class DiskFullError(RunStoreError):
    """The disk holding the run store (or an output) is full: nothing stored is lost, the task
    being written is not stored, and the same command resumes once space is freed."""


class ExecutorError(DeeplimitsError, RuntimeError):
    """The Dask scheduler cannot be reached, or has no workers within the timeout (one-line message)."""


class SweepError(DeeplimitsError, RuntimeError):
    """Some tasks failed; the others are stored and the same command retries the failed ones."""


class MissingExtra(DeeplimitsError, ImportError):
    """An optional dependency is not installed; the message names the extra."""


class DamagedFileWarning(UserWarning):
    """A file a finished task wrote beside the store is missing or damaged: the task is computed
    again (the command line prints the warning as one line)."""


def param_name(name: str) -> str:
    """The parameter (:attr:`~deeplimits.errors.ParameterError.param`) a message's ``name`` is
    about: ``'betas'`` of ``'betas[0]'``, ``'data'`` of ``'data x'`` and of ``'data.x_train'``,
    ``'source'`` of ``'source: PATH'``; any other (``'the run directory'``, ``'--out'``) is its own."""
    m = re.match(r"([A-Za-z_]\w*)(?:$|\[|:|\.| \w+$)", name)
    return m.group(1) if m else name
