"""Plans: a study validated and sized, nothing computed, as plain data.

Every study (strong convergence, stability, phase diagram) is a :class:`Plan` dataclass: its
constructor function (``plan_convergence``, ``plan_stability``, ``plan_phase``) runs every
check and the resource estimate; :meth:`Plan.to_dict` is the plain JSON a run store records
and :meth:`Plan.from_dict` reads it back (specs of older stores included); :meth:`Plan.tasks`
splits it into sweep tasks seeded by :func:`deeplimits._random.chunk_seed`;
:meth:`Plan.summarise` turns finished tasks into the study's result (a plain-data dataclass
with ``to_dict`` / ``from_dict``, see :mod:`deeplimits._plain`). One :meth:`Plan.run` and one
:func:`results_from_store` serve every study (docs/sweeps.md).
"""

from __future__ import annotations

import abc
import dataclasses
import time
import warnings
from typing import Callable, ClassVar

from ..errors import ParameterError

__all__ = ["Plan", "register_plan", "plan_from_dict", "results_from_store"]

_PLANS: dict[str | None, type] = {}


def register_plan(cls):
    """Class decorator: the plan class of the specs whose ``'study'`` is ``cls.study``."""
    _PLANS[cls.study] = cls
    return cls


class Plan(abc.ABC):
    """A validated study (a frozen dataclass in every subclass).

    Subclasses declare :attr:`study` (the ``'study'`` key of their specs; ``None`` for the
    convergence specs, which predate the key) and :attr:`optional` (fields written by
    :meth:`to_dict` only when not ``None``, so that adding one leaves older specs, store keys
    and seeds unchanged).
    """

    study: ClassVar[str | None] = None
    """The ``'study'`` key of the specs (``None`` for the convergence specs, which predate it)."""
    optional: ClassVar[tuple[str, ...]] = ()
    """Fields written by :meth:`to_dict` only when not ``None`` (older specs stay unchanged)."""

    def to_dict(self) -> dict:
        """The plan as plain JSON (what a run store records and compares)."""
        d = {} if self.study is None else {"study": self.study}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name in self.optional and v is None:
                continue
            d[f.name] = list(v) if isinstance(v, tuple) else v
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Plan":
        """The plan of a spec written by :meth:`to_dict` (lists become tuples)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names - {"study"})
        if unknown:
            raise ParameterError("spec", f"not a {cls.__name__} spec: unknown keys {unknown}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in names})

    @abc.abstractmethod
    def tasks(self) -> list:
        """The sweep tasks (:class:`deeplimits.runs.Task`) of the plan, in order."""

    @abc.abstractmethod
    def summarise(self, tasks: list, results: list, seconds: float = 0.0):
        """The study's result from finished ``tasks`` (any subset, in order) and their ``results``."""

    def progress_units(self, task) -> int:
        """What one finished task adds to a progress count (draws by default)."""
        return task.params.get("draws", 1)

    def run(self, progress: Callable[[int], None] | None = None, *, store=None, workers: int | None = None,
            scheduler: str | None = None, timeout: float | None = None, tasks: list | None = None):
        """Run the tasks not yet in ``store`` (in this process, or on a Dask cluster: the same
        numbers) and summarise; ``progress`` (``None`` or a function) is called with
        :meth:`progress_units` of each task this call runs (those already in ``store`` are
        :meth:`stored_units`); ``store`` is ``None`` or a :class:`~deeplimits.runs.RunStore`.
        The result's ``seconds`` add the stored compute time of the tasks finished in earlier
        sessions to this call's wall time. ``tasks``: the tasks to run and summarise (default all
        of :meth:`tasks`; a run sized to decide runs a growing part of them)."""
        from .. import _validate as V_
        from ..runs import run_sweep
        from ..runs.executors import check_store

        V_.callback("progress", progress)
        check_store(store)
        t0 = time.perf_counter()
        if store is not None and not store.readonly:
            self.discard_damaged(store)
        tasks = self.tasks() if tasks is None else tasks
        stored = set(store.results()) if store is not None else set()
        before = self._stored_seconds(store, stored)
        reported: dict = {}  # units a running task has reported already

        def partial(task, n):
            reported[task.key] = reported.get(task.key, 0) + n
            progress(n)

        def finished(task):
            if task.key not in stored:  # work done by this call only (stored_units counts the rest)
                progress(self.progress_units(task) - reported.pop(task.key, 0))

        done = run_sweep(tasks, store, workers=workers, scheduler=scheduler, timeout=timeout,
                         progress=None if progress is None else finished,
                         partial=None if progress is None else partial,
                         keep=lambda task, result: self.keep(task, result, store))
        return self.summarise(tasks, [done[t.key] for t in tasks], before + time.perf_counter() - t0)

    def stored_units(self, store) -> int:
        """The :meth:`progress_units` of the tasks already finished in ``store`` (a resumed run's
        progress starts there: :meth:`run` reports only the work it does)."""
        if store is None:
            return 0
        stored = store.results()
        return sum(self.progress_units(t) for t in self.tasks() if t.key in stored)

    def _stored_seconds(self, store, keys) -> float:
        """The compute seconds stored for the finished tasks ``keys`` (earlier sessions of the run)."""
        if store is None or not keys:
            return 0.0
        return sum(r["seconds"] or 0.0 for r in store.records() if r["key"] in keys)

    def damaged(self, store) -> list[tuple[str, str]]:
        """``(task key, reason)`` of the finished tasks in ``store`` whose files beside the store
        (written by :meth:`keep`) are missing or damaged; none by default."""
        return []

    def result_damage(self, task, result) -> str | None:
        """Why the stored ``result`` of ``task`` cannot be used (numbers that are not numbers, of the
        wrong shape, or too large for the statistics), or ``None``; every result is sound by default.
        A store's checksum tells a result as written from one changed since; this tells a result
        that no task could have written (a store re-signed by hand)."""
        return None

    def _unusable(self, done: dict) -> list[tuple[str, str]]:
        """``(key, reason)`` of the finished results among ``done`` that :meth:`result_damage` refuses."""
        out = []
        for task in self.tasks():
            if task.key in done:
                why = self.result_damage(task, done[task.key])
                if why is not None:
                    out.append((task.key, f"the stored result of task {task.key} is unusable ({why})"))
        return out

    def discard_damaged(self, store) -> list[str]:
        """Mark the tasks of :meth:`damaged` (and those whose stored result :meth:`result_damage`
        refuses) as failed in ``store`` so that this run computes them again, each reported in one
        line (a :class:`~deeplimits.runs.DamagedFileWarning`)."""
        from ..runs import DamagedFileWarning

        keys = []
        for key, reason in self.damaged(store) + self._unusable(store.results()):
            if store.discard(key, reason):
                warnings.warn(f"{reason}; computing its task {key} again", DamagedFileWarning, stacklevel=3)
                keys.append(key)
        return keys

    def keep(self, task, result, store):
        """What of a finished task's result the store records (called before it does): the
        result itself by default; a study may move large parts (tensors) into files beside
        the store here and keep their paths."""
        return result

    def stored_result(self, done: dict, seconds: dict):
        """The result of the finished tasks among ``done`` (results by key), ``None`` if none; a
        result :meth:`result_damage` refuses is left out, said in one line."""
        from ..runs import DamagedFileWarning

        for key, reason in self._unusable(done):
            warnings.warn(f"{reason}; left out (run the same command again to recompute it)", DamagedFileWarning,
                          stacklevel=2)
            done = {k: v for k, v in done.items() if k != key}
        tasks = [t for t in self.tasks() if t.key in done]
        if not tasks:
            return None
        return self.summarise(tasks, [done[t.key] for t in tasks], sum(seconds.get(t.key) or 0.0 for t in tasks))


def plan_from_dict(spec: dict) -> Plan:
    """The plan of a stored spec, by its ``'study'`` key (none: a convergence plan)."""
    study = spec.get("study") if isinstance(spec, dict) else None
    if study not in _PLANS:
        raise ParameterError("spec", f"unknown study {study!r} (known: {', '.join(str(s) for s in _PLANS)})")
    return _PLANS[study].from_dict(spec)


def results_from_store(store) -> list:
    """The results of a stored run of any study, rebuilt from its finished tasks (no simulation):
    one result per stored plan that has a finished task (a convergence run may hold several)."""
    from .._user_code import reading_stored
    from ..runs import RunStoreError

    with reading_stored(f"the run store {store.path}"):  # nothing the spec names is imported
        spec = store.spec
        try:
            plans = [plan_from_dict(s) for s in (spec if isinstance(spec, list) else [spec])]
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise RunStoreError(f"{store.path} does not hold a deeplimits study ({type(e).__name__}: {e})") from None
        done = store.results()
        seconds = {r["key"]: r["seconds"] for r in store.records()}
        return [r for r in (p.stored_result(done, seconds) for p in plans) if r is not None]
