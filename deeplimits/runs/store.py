"""The resumable SQLite run store of a sweep (``DIR/run.sqlite``).

Every finished task is committed at once, in its own SQLite transaction: a run killed at any
moment (SIGKILL included) loses no finished task, and running the same command again skips
finished tasks and retries failed ones. Only the coordinating process writes to the store.
Every stored result carries a checksum verified on read (see docs/sweeps.md).
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import time
import urllib.parse

import torch

from .._version import __version__
from .integrity import (DamagedFileWarning, DamagedStoreError, DiskFullError, RunStoreError, check_spec, checksum,
                        is_disk_full, same_code, seal_tasks, spec_checksum, task_state, user_code_of)
from .tasks import Task
from .transaction import Transaction, disk_full

SCHEMA = 3  # 2: every finished task carries a checksum; 3: so does the spec (older stores are read, migrated by a write)
"""The schema a store is written in (2: every finished task carries a checksum; 3: the spec too, with
the provenance of the user code the run was made with)."""
READABLE_SCHEMAS = ("1", "2", "3")
STORE_NAME = "run.sqlite"
"""The file name of a run store in its directory."""

__all__ = ["RunStore", "RunStoreError", "DamagedStoreError", "DiskFullError", "DamagedFileWarning", "find_runs", "checksum",
           "STORE_NAME", "SCHEMA", "user_code_of"]

_COLUMNS = "key, fn, params, seed, status, result, error, seconds, finished, attempts, versions"


def _versions() -> str:
    return json.dumps({"deeplimits": __version__, "torch": torch.__version__, "python": platform.python_version()})


def _writable(path: str) -> bool:
    return os.access(path, os.W_OK)


class RunStore:
    """The SQLite store of one run directory.

    Args:
        directory: the run's directory (created if needed); the store is ``directory/run.sqlite``.
        spec: what the run computes (plain JSON). A new store records it; an existing store
            must have been made with the same spec, or :class:`RunStoreError` is raised.
        create: create the store if it does not exist (``False``: it must exist).
        readonly: open for reading only (SQLite ``mode=ro``; writing raises :class:`RunStoreError`).
            ``None`` (default): read-only when ``create`` is false and the store file or its
            directory is not writable (an archived run: ``runs show/export/plot`` read it as it is).

    Integrity: every finished task is stored with a :func:`checksum` of its exact result text,
    key, function, parameters, seed and versions, verified whenever it is read. A task whose
    checksum does not match (a changed digit, a truncated result) or whose stored text is not
    JSON is *damaged*: :meth:`results` leaves it out, so a sweep computes it again (with its
    fixed seed: the same numbers as an undamaged run) and :meth:`record` replaces it;
    :meth:`records` lists it with status ``'damaged'`` and no result; :meth:`integrity` and
    :meth:`integrity_line` report it.

    In a store of schema 2 or 3 a finished task without a checksum (``NULL``) is damaged too: only a
    hand-edited or tampered row lacks one. The spec is checksummed too (schema 3) with the user
    code the run was made with (:func:`user_code_of`): an edited spec is a damaged store, and a
    run resumed with user code whose source changed is refused. Nothing a spec names is imported.

    Older stores load: those of schema 1 (before checksums) with *unverified* tasks (used as they
    are when their text is JSON, counted by :meth:`integrity`), those of schema 1 and 2 with an
    unverified spec. The first task stored into one (resuming the run) migrates it to schema 3 in
    one transaction: a ``checksum`` column, every finished task whose text is JSON sealed with the
    checksum of that text as found, and the spec sealed likewise (so that from then on a change to
    it is seen). Reading it (``runs show/export/plot``) leaves it untouched.

    Creating a store is atomic: several processes creating the same store at once all get it
    (one creates it, the others open it), or :class:`RunStoreError` if their specs differ.
    """

    def __init__(self, directory: str, spec: dict | list | None = None, *, create: bool = True,
                 readonly: bool | None = None):
        self.directory = os.fspath(directory)
        """The run directory."""
        self.path = os.path.join(self.directory, STORE_NAME)
        """The store's file, ``directory/run.sqlite``."""
        exists = os.path.exists(self.path)
        if not exists and not create:
            raise RunStoreError(f"no run store at {self.path}")
        if readonly is None:
            readonly = not create and not (_writable(self.path) and _writable(self.directory))
        if readonly and not exists:
            raise RunStoreError(f"no run store at {self.path}")
        if create and not readonly and exists and not (_writable(self.path) and _writable(self.directory)):
            raise RunStoreError(f"{self.path} is read-only: it can be shown, exported or plotted, not resumed "
                                f"(make it writable, or choose another output directory)")
        self.readonly = bool(readonly)
        """Whether the store is opened read-only (shown, exported or plotted, not resumed)."""
        self.immutable = False
        """Whether it was opened ``immutable=1`` (tasks still in the write-ahead log are not shown)."""
        self._db = None
        try:
            if self.readonly:
                self._db = self._connect_readonly()
            else:
                os.makedirs(self.directory, exist_ok=True)
                self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
                self._wal()
                if create:
                    self._create(spec)
            self._check(spec)
            self._checked = self._has_checksums()
        except (sqlite3.DatabaseError, OSError) as e:
            full = disk_full(self, new=not exists) if is_disk_full(e, self.directory) else None
            self._close_quietly()
            if full is not None:
                raise full from None
            if isinstance(e, OSError):
                raise RunStoreError(f"cannot use {self.directory} as a run directory ({e})") from None
            raise DamagedStoreError(f"{self.path} is not a readable deeplimits run store ({e}); "
                                    f"move it away or choose another output directory") from None
        except RunStoreError:
            self._close_quietly()
            raise

    def _close_quietly(self):
        try:
            self._db is not None and self._db.close()
        except sqlite3.Error:
            pass

    def _connect_readonly(self):
        """A store without a write-ahead log (closed cleanly) is read ``immutable=1``: nothing is
        written, not even SQLite's lock files. With a log (a run killed mid-way, or running),
        ``mode=ro`` reads it; when SQLite cannot (no WAL index and the directory not writable),
        ``immutable=1`` reads the main file as last checkpointed, and :meth:`integrity_line` says so."""
        uri = "file:" + urllib.parse.quote(os.path.abspath(self.path))
        if os.path.exists(self.path + "-wal"):
            try:
                db = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=30, isolation_level=None,
                                     check_same_thread=False)
                db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return db
            except sqlite3.OperationalError:
                self.immutable = True
        return sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False)

    def _wal(self):
        for attempt in range(200):  # switching to WAL needs a moment alone with the file
            try:
                self._db.execute("PRAGMA journal_mode=WAL").fetchall()
                break
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or attempt == 199:
                    raise
                time.sleep(0.05)
        self._db.execute("PRAGMA synchronous=FULL")

    def _create(self, spec):
        """Create the tables and the meta rows unless the file already holds tables; decided
        inside one write transaction, so concurrent creators cannot both create."""
        with self._transaction() as db:
            if db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]:
                return  # exists (made by us earlier, or by a concurrent creator): _check decides
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("""CREATE TABLE IF NOT EXISTS tasks (key TEXT PRIMARY KEY, fn TEXT NOT NULL,
                          params TEXT NOT NULL, seed INTEGER NOT NULL,
                          status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
                          result TEXT, error TEXT, seconds REAL, finished REAL, attempts INTEGER NOT NULL,
                          versions TEXT NOT NULL, checksum TEXT)""")
            spec_text = json.dumps(spec, sort_keys=True)
            code_text = json.dumps(user_code_of(spec), sort_keys=True)
            db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", [
                ("schema", str(SCHEMA)), ("spec", spec_text), ("user_code", code_text),
                ("spec_checksum", spec_checksum(spec_text, code_text)),
                ("created", str(time.time())), ("versions", _versions())])

    def _check(self, spec):
        try:
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
            self._db.execute("SELECT key, status FROM tasks LIMIT 1").fetchall()
        except sqlite3.OperationalError as e:
            raise DamagedStoreError(f"{self.path} is not a deeplimits run store ({e})") from None
        check = self._db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise DamagedStoreError(f"{self.path} is damaged ({check}); move it away or choose another "
                                    f"output directory")
        if "spec" not in meta:
            raise DamagedStoreError(f"{self.path} is not a deeplimits run store (no spec)")
        if meta.get("schema") not in READABLE_SCHEMAS:
            raise DamagedStoreError(f"{self.path} has store schema {meta.get('schema')!r}; this deeplimits "
                                    f"reads schemas {', '.join(READABLE_SCHEMAS)}")
        self.schema = meta["schema"]
        stored = self._spec_of(meta["spec"])
        check_spec(meta, self.path, current=str(SCHEMA))
        if spec is not None and stored != json.loads(json.dumps(spec, sort_keys=True)):
            raise RunStoreError(f"{self.path} holds a run of a different command; use another output "
                                f"directory (or the same options as that run to resume it)")
        self._given_code = None if spec is None else user_code_of(spec)
        if spec is not None and "user_code" in meta:
            same_code(json.loads(meta["user_code"]), self._given_code, self.path)

    def _spec_of(self, text):
        try:
            return json.loads(text)
        except (TypeError, ValueError) as e:
            raise DamagedStoreError(f"{self.path} is damaged (its spec is not JSON: {e}); move it away or "
                                    f"recompute the run") from None

    def _has_checksums(self) -> bool:
        return any(r[1] == "checksum" for r in self._db.execute("PRAGMA table_info(tasks)").fetchall())

    def _migrate(self):
        """An older store, brought to schema 3 in one transaction when a task is first stored into it:
        (schema 1) a ``checksum`` column, and every finished task whose texts are JSON sealed with the
        checksum of its text as found (the others stay without one: damaged, recomputed); (schema 1
        and 2) the spec sealed with its checksum as found, with the user code this resumed run was
        given."""
        if self.schema == str(SCHEMA):
            return
        with self._transaction() as db:
            found = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
            if found == str(SCHEMA):
                return
            if not self._has_checksums():
                seal_tasks(db, _COLUMNS)
            spec_text = db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()[0]
            code_text = json.dumps(self._given_code or {}, sort_keys=True)
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                ("user_code", code_text), ("spec_checksum", spec_checksum(spec_text, code_text)),
                ("schema", str(SCHEMA)), ("migrated", json.dumps({"from_schema": int(found), "at": time.time()}))])
        self._checked, self.schema = True, str(SCHEMA)

    def _transaction(self):
        if self.readonly:
            raise RunStoreError(f"{self.path} is opened read-only")
        return Transaction(self)

    # -- reading ------------------------------------------------------------------------
    @property
    def spec(self):
        """The spec the store was created with."""
        return self._spec_of(self._db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()[0])

    def meta(self) -> dict:
        """The store's metadata table (spec, schema, versions, ...) as a dict."""
        return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    def _rows(self, where: str = "", args=()) -> list[dict]:
        cols = _COLUMNS + (", checksum" if self._checked else "")
        cur = self._db.execute(f"SELECT {cols} FROM tasks {where} ORDER BY key", args)
        names = [c[0] for c in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    _state = staticmethod(task_state)

    def integrity(self) -> dict:
        """``{'verified': n, 'unverified': n, 'damaged': [keys]}`` over the finished tasks."""
        out = {"verified": 0, "unverified": 0, "damaged": []}
        for row in self._rows("WHERE status = 'done'"):
            state = self._state(row)
            if state == "damaged":
                out["damaged"].append(row["key"])
            else:
                out[state] += 1
        return out

    def damaged(self) -> list[str]:
        """Keys of the finished tasks whose stored result fails its checksum (recomputed by a rerun)."""
        return self.integrity()["damaged"]

    def integrity_line(self) -> str:
        """One line on the store's integrity for ``runs show``; ``''`` when every task verifies."""
        info = self.integrity()
        parts = []
        if info["damaged"]:
            keys = info["damaged"]
            shown = ", ".join(keys[:5]) + (f", ... ({len(keys) - 5} more)" if len(keys) > 5 else "")
            parts.append(f"{len(keys)} damaged task{'s' if len(keys) != 1 else ''} not used ({shown}); run the "
                         f"same command again to recompute them")
        if info["unverified"]:
            parts.append(f"{info['unverified']} task{'s' if info['unverified'] != 1 else ''} from an older store "
                         f"without checksums (unverified)")
        if self.schema != str(SCHEMA):
            parts.append(f"its spec is unverified (a store of schema {self.schema}, from before specs had checksums)")
        if self.immutable:
            parts.append("opened immutable: tasks still in the write-ahead log are not shown")
        return "; ".join(parts)

    def results(self) -> dict:
        """Results of the finished tasks whose checksum verifies (or, schema 1, that are JSON), by key;
        damaged tasks are left out (not done)."""
        return {r["key"]: json.loads(r["result"]) for r in self._rows("WHERE status = 'done'")
                if self._state(r) != "damaged"}

    def records(self) -> list[dict]:
        """Every stored task (parameters, seed, status, result, timing, versions). A damaged task
        has status ``'damaged'``, no result and its error says why."""
        out = []
        for row in self._rows():
            damaged = row["status"] == "done" and self._state(row) == "damaged"
            row.pop("checksum", None)
            if damaged:
                row.update(status="damaged", result=None, error="stored result fails its checksum (damaged); "
                           "run the same command again to recompute it")
            for k in ("params", "result", "versions"):
                try:
                    row[k] = None if row[k] is None else json.loads(row[k])
                except (TypeError, ValueError):
                    row[k] = None
            out.append(row)
        return out

    def counts(self) -> dict:
        """Tasks by status: ``'done'`` (verified or unverified), ``'failed'``, ``'damaged'`` (only when some)."""
        out = dict(self._db.execute("SELECT status, COUNT(*) FROM tasks GROUP BY status").fetchall())
        bad = len(self.damaged()) if out.get("done") else 0
        if bad:
            out["done"] -= bad
            out["damaged"] = bad
            if not out["done"]:
                del out["done"]
        return out

    # -- writing (one transaction per finished task) ----------------------------------------
    def _stored_intact(self, db, key) -> bool:
        """Inside a write transaction: is ``key`` already finished with a sound result?"""
        cols = _COLUMNS + (", checksum" if self._checked else "")
        cur = db.execute(f"SELECT {cols} FROM tasks WHERE key = ?", (key,))
        row = cur.fetchone()
        if row is None:
            return False
        row = dict(zip([c[0] for c in cur.description], row))
        return row["status"] == "done" and self._state(row) != "damaged"

    def record(self, task: Task, result, seconds: float):
        """Store a finished task with its checksum. A task already finished and sound is kept
        as it is; a failed or damaged one is replaced."""
        params, result_text, versions = json.dumps(task.params, sort_keys=True), json.dumps(result), _versions()
        digest = checksum(task.key, task.fn, params, task.seed, result_text, versions)
        self._migrate()
        with self._transaction() as db:
            if self._stored_intact(db, task.key):
                return
            db.execute(f"""INSERT INTO tasks ({_COLUMNS}, checksum) VALUES (?, ?, ?, ?, 'done', ?, NULL, ?, ?, 1, ?, ?)
                          ON CONFLICT(key) DO UPDATE SET fn = excluded.fn, params = excluded.params,
                          seed = excluded.seed, status = 'done', result = excluded.result, error = NULL,
                          seconds = excluded.seconds, finished = excluded.finished,
                          attempts = tasks.attempts + 1, versions = excluded.versions,
                          checksum = excluded.checksum""",
                       (task.key, task.fn, params, task.seed, result_text, seconds, time.time(), versions, digest))

    def discard(self, key: str, reason: str) -> bool:
        """Mark the finished task ``key`` as failed with ``reason`` (a file it wrote beside the
        store is damaged or missing), so that the same command computes it again. Returns
        whether a finished task was discarded."""
        with self._transaction() as db:
            cur = db.execute("UPDATE tasks SET status = 'failed', result = NULL, checksum = NULL, error = ? "
                             "WHERE key = ? AND status = 'done'" if self._checked else
                             "UPDATE tasks SET status = 'failed', result = NULL, error = ? "
                             "WHERE key = ? AND status = 'done'", (reason, key))
            return cur.rowcount > 0

    def record_failure(self, task: Task, error: str):
        """Record ``task`` as failed with ``error`` (a finished, intact result is kept)."""
        self._migrate()
        with self._transaction() as db:
            if self._stored_intact(db, task.key):
                return
            db.execute(f"""INSERT INTO tasks ({_COLUMNS}) VALUES (?, ?, ?, ?, 'failed', NULL, ?, NULL, ?, 1, ?)
                          ON CONFLICT(key) DO UPDATE SET status = 'failed', result = NULL, checksum = NULL,
                          error = excluded.error, finished = excluded.finished,
                          attempts = tasks.attempts + 1""",
                       (task.key, task.fn, json.dumps(task.params, sort_keys=True), task.seed, error, time.time(),
                        _versions()))

    def close(self):
        """Close the connection (checkpoints the write-ahead log); safe to call twice."""
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def find_runs(root: str) -> list[str]:
    """Run directories (holding a run store) under ``root``."""
    out = []
    for d, _, files in os.walk(root):
        if STORE_NAME in files:
            out.append(d)
    return sorted(out)
