"""Sweep tasks: a task is a pure function of ``(params, seed)`` registered under a name.

The studies register their task functions here (``@register_task("convergence-chunk")``); a
:class:`Task` names its function, and every executor runs it through :func:`task_function`.
Nothing is looked up by module path: Dask receives the function object itself (pickled by
reference). The seeding scheme that gives each task its seed is described in
:mod:`deeplimits._random`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from ..errors import ParameterError

__all__ = ["Task", "register_task", "task_function", "task_names", "chunk_sizes", "LEGACY_NAMES"]

_TASKS: dict[str, Callable] = {}

LEGACY_NAMES = {
    "deeplimits.convergence:run_task": "convergence-chunk",
    "deeplimits.propagation:stability_task": "stability-chunk",
    "deeplimits.propagation:phase_task": "phase-hurst",
}
"""Names of task functions in run stores written before the registry (``module:function``)."""


@dataclasses.dataclass(frozen=True)
class Task:
    """One point of a sweep: the registered function ``fn`` called as ``fn(params, seed)``."""

    key: str
    """The task's key in the run store."""
    fn: str
    """The registered name of the task function."""
    params: dict
    """The parameters it is called with (plain JSON)."""
    seed: int
    """Its seed."""


def register_task(name: str, *, reports_progress: bool = False, axes: tuple[str, ...] = ()):
    """Decorator: register a task function under ``name`` (one name, one function). With
    ``reports_progress`` the function also takes ``progress=`` (called with units of work done,
    when it runs in the coordinating process; see :func:`~deeplimits.runs.run_sweep`). ``axes``
    names the axes of the nested lists of its result (``("draw", "depth")``): the tidy export
    (:func:`~deeplimits.runs.tidy_rows`) writes one row per entry, an axis ``x`` with a list
    ``xs`` in the task's parameters taking its values from it, any other axis its index."""

    def register(fn: Callable) -> Callable:
        fn.reports_progress = reports_progress
        fn.axes = tuple(axes)
        known = _TASKS.get(name)
        if known is not None and (known.__module__, known.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ParameterError("name", f"task name {name!r} is already registered to "
                                         f"{known.__module__}.{known.__qualname__}")
        _TASKS[name] = fn
        return fn

    return register


def task_names() -> list[str]:
    """The registered task names."""
    return sorted(_TASKS)


def task_function(name: str) -> Callable:
    """The function registered under ``name`` (or under its pre-registry ``module:function`` name)."""
    fn = _TASKS.get(LEGACY_NAMES.get(name, name))
    if fn is None:
        raise KeyError(f"no sweep task registered as {name!r}; registered: {', '.join(task_names()) or 'none'} "
                       f"(import the module that registers it)")
    return fn


def chunk_sizes(n: int, size: int) -> list[int]:
    """``n`` items in consecutive tasks of ``size`` (the last one takes the rest)."""
    return [min(size, n - s) for s in range(0, n, size)]
