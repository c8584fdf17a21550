"""Sweeps: a grid of tasks, a resumable SQLite run store, local and Dask executors.

A task is a pure function of ``(params, seed)`` whose result is plain JSON; its seed is
derived from the run's base seed and the task's place in the grid, so the same command gives
the same numbers whichever executor runs it. Every finished task is committed at once, in its
own SQLite transaction, to ``DIR/run.sqlite``: a run killed at any moment (SIGKILL included)
loses no finished task, and running the same command again skips finished tasks and retries
failed ones. Only the coordinating process writes to the store.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import platform
import sqlite3
import time
import traceback
from typing import Callable, Iterable, Sequence

import numpy as np
import torch

SCHEMA = 1
STORE_NAME = "run.sqlite"

__all__ = ["Task", "RunStore", "RunStoreError", "SweepError", "run_sweep", "find_runs", "ExecutorError", "chunk_seed", "chunk_sizes", "STORE_NAME"]


class RunStoreError(ValueError):
    """The run store cannot be used: unreadable, not a deeplimits store, or made by another command."""


class ExecutorError(RuntimeError):
    """The Dask scheduler cannot be reached, or has no workers within the timeout (one-line message)."""


class SweepError(RuntimeError):
    """Some tasks failed; the others are stored and the same command retries the failed ones."""


@dataclasses.dataclass(frozen=True)
class Task:
    """One point of a sweep: ``fn(params, seed)`` with ``fn`` given as ``'module:function'``."""

    key: str
    fn: str
    params: dict
    seed: int


def chunk_seed(seed: int, chunk: int) -> int:
    """The seed of task ``chunk`` of a run seeded ``seed``: independent streams per task,
    the same whichever process computes it."""
    return int(np.random.SeedSequence([seed, chunk]).generate_state(1, np.uint64)[0] >> 1)


def chunk_sizes(n: int, size: int) -> list[int]:
    """``n`` items in consecutive tasks of ``size`` (the last one takes the rest)."""
    return [min(size, n - s) for s in range(0, n, size)]


def call(fn: str, params: dict, seed: int):
    """Run a task function named ``'module:function'`` (what every executor runs)."""
    module, name = fn.split(":")
    return getattr(importlib.import_module(module), name)(params, seed)


def _versions() -> str:
    from . import __version__

    return json.dumps({"deeplimits": __version__, "torch": torch.__version__, "python": platform.python_version()})


class RunStore:
    """The SQLite store of one run directory.

    Args:
        directory: the run's directory (created if needed); the store is ``directory/run.sqlite``.
        spec: what the run computes (plain JSON). A new store records it; an existing store
            must have been made with the same spec, or :class:`RunStoreError` is raised.
        create: create the store if it does not exist (``False``: it must exist).
    """

    def __init__(self, directory: str, spec: dict | list | None = None, *, create: bool = True):
        self.directory = os.fspath(directory)
        self.path = os.path.join(self.directory, STORE_NAME)
        exists = os.path.exists(self.path)
        if not exists and not create:
            raise RunStoreError(f"no run store at {self.path}")
        try:
            os.makedirs(self.directory, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            tables = self._db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
            if tables == 0 and create:  # new, or a creation killed before its transaction committed
                self._create(spec)
            else:
                self._check(spec)
        except sqlite3.DatabaseError as e:
            raise RunStoreError(f"{self.path} is not a readable deeplimits run store ({e}); "
                                f"move it away or choose another output directory") from None
        except OSError as e:
            raise RunStoreError(f"cannot use {self.directory} as a run directory ({e})") from None

    def _create(self, spec):
        with self._transaction() as db:
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("""CREATE TABLE tasks (key TEXT PRIMARY KEY, fn TEXT NOT NULL, params TEXT NOT NULL,
                          seed INTEGER NOT NULL, status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
                          result TEXT, error TEXT, seconds REAL, finished REAL, attempts INTEGER NOT NULL,
                          versions TEXT NOT NULL)""")
            db.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("schema", str(SCHEMA)), ("spec", json.dumps(spec, sort_keys=True)),
                ("created", str(time.time())), ("versions", _versions())])

    def _check(self, spec):
        try:
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
            self._db.execute("SELECT key, status FROM tasks LIMIT 1").fetchall()
        except sqlite3.OperationalError as e:
            raise RunStoreError(f"{self.path} is not a deeplimits run store ({e})") from None
        check = self._db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise RunStoreError(f"{self.path} is damaged ({check}); move it away or choose another output directory")
        if "spec" not in meta:
            raise RunStoreError(f"{self.path} is not a deeplimits run store (no spec)")
        if meta.get("schema") != str(SCHEMA):
            raise RunStoreError(f"{self.path} has store schema {meta.get('schema')!r}; this deeplimits "
                                f"reads schema {SCHEMA}")
        if spec is not None and json.loads(meta["spec"]) != json.loads(json.dumps(spec, sort_keys=True)):
            raise RunStoreError(f"{self.path} holds a run of a different command; use another output "
                                f"directory (or the same options as that run to resume it)")

    class _Tx:
        def __init__(self, db):
            self.db = db

        def __enter__(self):
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, exc_type, *_):
            self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")

    def _transaction(self):
        return RunStore._Tx(self._db)

    # -- reading ------------------------------------------------------------------------
    @property
    def spec(self):
        return json.loads(self._db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()[0])

    def meta(self) -> dict:
        return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    def results(self) -> dict:
        """Results of the finished tasks, by key."""
        rows = self._db.execute("SELECT key, result FROM tasks WHERE status = 'done'").fetchall()
        return {k: json.loads(r) for k, r in rows}

    def records(self) -> list[dict]:
        """Every stored task (parameters, seed, status, result, timing, versions)."""
        cur = self._db.execute("SELECT key, fn, params, seed, status, result, error, seconds, finished, attempts, "
                               "versions FROM tasks ORDER BY key")
        cols = [c[0] for c in cur.description]
        out = []
        for row in cur.fetchall():
            d = dict(zip(cols, row))
            for k in ("params", "result", "versions"):
                d[k] = None if d[k] is None else json.loads(d[k])
            out.append(d)
        return out

    def counts(self) -> dict:
        return dict(self._db.execute("SELECT status, COUNT(*) FROM tasks GROUP BY status").fetchall())

    # -- writing (one transaction per finished task) ----------------------------------------
    def record(self, task: Task, result, seconds: float):
        with self._transaction() as db:
            db.execute("""INSERT INTO tasks (key, fn, params, seed, status, result, error, seconds, finished, attempts,
                          versions) VALUES (?, ?, ?, ?, 'done', ?, NULL, ?, ?, 1, ?)
                          ON CONFLICT(key) DO UPDATE SET status = 'done', result = excluded.result, error = NULL,
                          seconds = excluded.seconds, finished = excluded.finished,
                          attempts = tasks.attempts + 1, versions = excluded.versions
                          WHERE tasks.status != 'done'""",
                       (task.key, task.fn, json.dumps(task.params, sort_keys=True), task.seed, json.dumps(result),
                        seconds, time.time(), _versions()))

    def record_failure(self, task: Task, error: str):
        with self._transaction() as db:
            db.execute("""INSERT INTO tasks (key, fn, params, seed, status, result, error, seconds, finished, attempts,
                          versions) VALUES (?, ?, ?, ?, 'failed', NULL, ?, NULL, ?, 1, ?)
                          ON CONFLICT(key) DO UPDATE SET error = excluded.error, finished = excluded.finished,
                          attempts = tasks.attempts + 1 WHERE tasks.status != 'done'""",
                       (task.key, task.fn, json.dumps(task.params, sort_keys=True), task.seed, error, time.time(),
                        _versions()))

    def close(self):
        self._db.close()


def find_runs(root: str) -> list[str]:
    """Run directories (holding a run store) under ``root``."""
    out = []
    for d, _, files in os.walk(root):
        if STORE_NAME in files:
            out.append(d)
    return sorted(out)


def run_sweep(tasks: Sequence[Task], store: RunStore | None = None, *, workers: int | None = None,
              scheduler: str | None = None, progress: Callable[[Task], None] | None = None,
              timeout: float | None = None) -> dict:
    """Run the tasks not yet in ``store`` and return every task's result, by key.

    Executors: in this process (default; torch and the random-number pool use the cores),
    a local Dask ``distributed`` cluster of ``workers`` processes, or the Dask cluster at
    ``scheduler``. Each finished task is committed to the store before the next is awaited.
    ``workers``, ``scheduler`` and ``timeout`` (seconds to reach the scheduler and get a
    worker; default 10) are checked before anything else. Raises :class:`ExecutorError` when
    the cluster cannot be reached or has no worker in time, and :class:`SweepError` after the
    sweep if some tasks failed.
    """
    from . import _validate as V_

    workers, scheduler, timeout = V_.executor(workers, scheduler, timeout)
    done = store.results() if store is not None else {}
    pending = [t for t in tasks if t.key not in done]
    for t in tasks:
        if t.key in done and progress is not None:
            progress(t)
    failures = []

    def finish(task, result=None, seconds=0.0, error=None):
        if error is None:
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
            try:
                res = call(t.fn, t.params, t.seed)
            except Exception:  # noqa: BLE001 - a failed task is stored and retried, not fatal
                finish(t, error=traceback.format_exc(limit=5))
                continue
            finish(t, res, time.perf_counter() - t0)
    else:
        _run_dask(pending, workers, scheduler, finish, 10.0 if timeout is None else timeout)
    if failures:
        raise SweepError(f"{len(failures)} of {len(tasks)} tasks failed (first: {failures[0][0]}: "
                         f"{failures[0][1].strip().splitlines()[-1]}); the others are stored, run the same "
                         f"command again to retry the failed ones")
    return {t.key: done[t.key] for t in tasks}


def _timed_call(fn, params, seed):
    t0 = time.perf_counter()
    return call(fn, params, seed), time.perf_counter() - t0


def _run_dask(pending: Iterable[Task], workers, scheduler, finish, timeout: float):
    from concurrent.futures import CancelledError

    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address="127.0.0.1:0")
    try:
        client = Client(scheduler if scheduler is not None else cluster, timeout=f"{timeout}s")
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        raise ExecutorError(f"no Dask worker reachable at {scheduler or 'the local cluster'} within {timeout:g} s "
                            f"({type(e).__name__}); start the scheduler and its workers, or raise --timeout") from None
    try:
        futures = {client.submit(_timed_call, t.fn, t.params, t.seed, key=f"deeplimits-{t.key}-{t.seed}",
                                 pure=False, retries=2): t for t in pending}
        for fut in as_completed(futures):
            t = futures[fut]
            try:
                res, seconds = fut.result()
            except (Exception, CancelledError) as e:  # noqa: BLE001 - stored as a failure, retried on rerun
                finish(t, error=f"{type(e).__name__}: {e}")
                continue
            finish(t, res, seconds)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
