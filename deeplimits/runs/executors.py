"""Executors of a sweep: this process, a local Dask cluster, or a Dask cluster at an address.

A task's seed is fixed by the run's base seed and its place in the grid, so the same command
gives the same numbers whichever executor runs it; each finished task is committed to the run
store before the next is awaited (see docs/sweeps.md).
"""

from __future__ import annotations

import time
import traceback
from typing import Callable, Iterable, Sequence

from .. import _validate as V_
from .._executor import executor as check_executor
from ..errors import ExecutorError, ParameterError, SweepError
from .store import RunStore
from .tasks import Task, task_function

__all__ = ["run_sweep", "ExecutorError", "SweepError"]


def check_store(value):
    """``value`` if it is ``None`` or a :class:`~deeplimits.runs.RunStore` (opened with
    ``RunStore(directory, spec)``), else a :class:`~deeplimits.errors.ParameterError` naming ``store``."""
    if value is not None and not isinstance(value, RunStore):
        raise ParameterError("store", "store must be a deeplimits.runs.RunStore (RunStore(directory, spec)) or "
                                      f"None, got {value!r}")
    return value


def run_sweep(tasks: Sequence[Task], store: RunStore | None = None, *, workers: int | None = None,
              scheduler: str | None = None, progress: Callable[[Task], None] | None = None,
              timeout: float | None = None, keep: Callable[[Task, object], object] | None = None,
              partial: Callable[[Task, int], None] | None = None) -> dict:
    """Run the tasks not yet in ``store`` and return every task's result, by key.

    Executors: in this process (default; torch and the random-number pool use the cores),
    a local Dask ``distributed`` cluster of ``workers`` processes, or the Dask cluster at
    ``scheduler``. Each finished task is committed to the store before the next is awaited.
    ``workers``, ``scheduler`` and ``timeout`` (seconds to reach the scheduler and get a
    worker; default 10) are checked before anything else. ``keep(task, result)``, when given,
    turns each finished result into what is stored and returned (called before the store
    records the task, so whatever it writes exists once the task counts as done).
    ``partial(task, n)``: in this process, a task function registered with
    ``reports_progress=True`` reports ``n`` units of work done as it goes (an epoch of
    training); ``progress(task)`` still follows when it finishes. Raises :class:`ExecutorError` when
    the cluster cannot be reached or has no worker in time, and :class:`SweepError` after the
    sweep if some tasks failed.
    """
    workers, scheduler, timeout = check_executor(workers, scheduler, timeout)
    check_store(store)
    for name, fn in (("progress", progress), ("keep", keep), ("partial", partial)):
        V_.callback(name, fn)
    done = store.results() if store is not None else {}
    pending = [t for t in tasks if t.key not in done]
    for t in tasks:
        if t.key in done and progress is not None:
            progress(t)
    failures = []

    def finish(task, result=None, seconds=0.0, error=None):
        if error is None:
            if keep is not None:
                result = keep(task, result)
            done[task.key] = result
            if store is not None:
                store.record(task, result, seconds)
        else:
            failures.append((task.key, error))
            if store is not None:
                store.record_failure(task, error)
        if progress is not None:
            progress(task)

    if workers is None and scheduler is None:
        for t in pending:
            t0 = time.perf_counter()
            fn = task_function(t.fn)
            kw = {}
            if partial is not None and getattr(fn, "reports_progress", False):
                kw["progress"] = lambda n, t=t: partial(t, n)
            try:
                res = fn(t.params, t.seed, **kw)
            except Exception:  # noqa: BLE001 - a failed task is stored and retried, not fatal
                finish(t, error=traceback.format_exc(limit=5))
                continue
            finish(t, res, time.perf_counter() - t0)
    elif pending:  # a finished run needs no cluster
        _run_dask(pending, workers, scheduler, finish, 10.0 if timeout is None else timeout)
    if failures:
        raise SweepError(f"{len(failures)} of {len(tasks)} tasks failed (first: {failures[0][0]}: "
                         f"{failures[0][1].strip().splitlines()[-1]}); the others are stored, run the same "
                         f"command again to retry the failed ones")
    return {t.key: done[t.key] for t in tasks}


def _timed_call(fn: Callable, params, seed):
    t0 = time.perf_counter()
    return fn(params, seed), time.perf_counter() - t0


def _run_dask(pending: Iterable[Task], workers, scheduler, finish, timeout: float):
    from distributed import Client, LocalCluster

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address="127.0.0.1:0")
    client = None
    try:
        client = Client(scheduler if scheduler is not None else cluster, timeout=f"{timeout}s")
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as e:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        raise ExecutorError(f"no Dask worker reachable at {scheduler or 'the local cluster'} within {timeout:g} s "
                            f"({type(e).__name__}); start the scheduler and its workers, or raise --timeout") from None
    try:
        futures = {client.submit(_timed_call, task_function(t.fn), t.params, t.seed, key=f"deeplimits-{t.key}-{t.seed}",
                                 pure=False, retries=2): t for t in pending}
        _await(client, futures, finish, scheduler, timeout)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _await(client, futures: dict, finish, scheduler, timeout: float):
    """Finish the tasks as their futures complete; when the cluster has had no worker for
    ``timeout`` seconds (all lost, or the scheduler gone), raise :class:`ExecutorError` (the
    finished tasks are stored; the same command runs the others)."""
    from concurrent.futures import CancelledError

    from distributed import wait

    where = scheduler or "the local cluster"
    remaining = dict(futures)
    alone_since = None
    while remaining:
        try:
            done, _ = wait(list(remaining), timeout=min(1.0, timeout), return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = ()
        fetched = False
        for fut in done:
            t = remaining.pop(fut)
            try:
                res, seconds = fut.result(timeout=timeout)
            except TimeoutError:  # it finished on a worker that left before its result came back:
                remaining[fut] = t  # the scheduler computes it again when a worker is there
                continue
            except (Exception, CancelledError) as e:  # noqa: BLE001 - stored as a failure, retried on rerun
                finish(t, error=f"{type(e).__name__}: {e}")
            else:
                finish(t, res, seconds)
            fetched = True
        if fetched or not remaining:
            alone_since = None
            continue
        try:
            workers = len(client.nthreads())
        except (OSError, TimeoutError, RuntimeError):  # the scheduler is gone
            workers = 0
        if workers:
            alone_since = None
        elif alone_since is None:
            alone_since = time.monotonic()
        elif time.monotonic() - alone_since >= timeout:
            raise ExecutorError(f"the Dask cluster at {where} has had no worker for {timeout:g} s; "
                                f"{len(futures) - len(remaining)} of {len(futures)} tasks finished and are "
                                f"stored, run the same command again for the others")
