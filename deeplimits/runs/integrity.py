"""What makes a stored run trustworthy: the checksums of its tasks and of its spec (with the
provenance of the user code it was made with), and the errors and warnings of a store or of a file
beside it that is damaged (see docs/sweeps.md, "Every stored result is verified")."""

from __future__ import annotations

import hashlib
import json

from ..errors import DamagedFileWarning, DamagedStoreError, DiskFullError, RunStoreError

__all__ = ["RunStoreError", "DamagedStoreError", "DiskFullError", "DamagedFileWarning", "is_disk_full", "checksum",
           "spec_checksum", "check_spec", "same_code", "user_code_of", "seal_tasks", "task_state"]


def checksum(key: str, fn: str, params: str, seed: int, result: str, versions: str) -> str:
    """The checksum of a finished task as stored: sha256 of the exact stored texts of its result
    and versions together with its key, function, parameters and seed (so that neither a changed
    digit nor a truncation nor a row moved to another key goes unnoticed)."""
    text = json.dumps(["deeplimits-task-v1", key, fn, params, int(seed), result, versions])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def spec_checksum(spec: str, user_code: str) -> str:
    """The checksum of a store's spec as stored: sha256 of the exact stored texts of its spec and
    of the user code it was run with (module, name and source hash of each), so that an edited spec
    (a changed option, a name of code put in it) is seen as damage, as an edited task is."""
    text = json.dumps(["deeplimits-spec-v1", spec, user_code])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _strings(spec):
    """The strings of a JSON spec (a tree of dicts and lists)."""
    if isinstance(spec, str):
        yield spec
    elif isinstance(spec, dict):
        for v in spec.values():
            yield from _strings(v)
    elif isinstance(spec, (list, tuple)):
        for v in spec:
            yield from _strings(v)


def user_code_of(spec) -> dict:
    """``{'module:Name': {'module', 'name', 'sha256'}}``: the user code named in ``spec`` that this
    process imported on the user's word (:data:`deeplimits._user_code.IMPORTED`): a run's provenance."""
    from .._user_code import IMPORTED

    return {name: IMPORTED[name] for name in sorted(set(_strings(spec))) if name in IMPORTED}


def check_spec(meta: dict, path: str, *, current: str):
    """The spec of the store ``path`` (its meta rows ``meta``) and the user code recorded with it,
    against their checksum: an edited spec is a damaged store. A store older than the schema
    ``current`` has none: its spec is read unverified."""
    if "spec_checksum" not in meta:
        if meta["schema"] == current:
            raise DamagedStoreError(f"{path} is damaged (its spec has no checksum); move it away or recompute "
                                    "the run")
        return
    code = meta.get("user_code", "{}")
    if meta["spec_checksum"] != spec_checksum(meta["spec"], code):
        raise DamagedStoreError(f"{path} is damaged: its spec fails its checksum (edited or damaged), so "
                                "nothing of it is used; move it away or recompute the run")
    try:
        json.loads(code)
    except ValueError:
        raise DamagedStoreError(f"{path} is damaged (its user code record is not JSON)") from None


def same_code(stored: dict, given: dict, path: str):
    """A run resumed with user code whose source changed would mix the results of two codes."""
    for name in sorted(set(stored) | set(given)):
        old, new = stored.get(name, {}).get("sha256"), given.get(name, {}).get("sha256")
        if old != new:
            info = stored.get(name) or given.get(name)
            what = f"{info.get('module')}:{info.get('name')}"
            alias = "" if what == name else f" (as {name})"
            raise RunStoreError(f"{path} was run with {what}{alias}, whose source has changed since (sha256 "
                                f"{str(old)[:12]}, now {str(new)[:12]}): resuming would mix the results of two codes; "
                                f"use another output directory (or restore that source)")


def seal_tasks(db, columns: str) -> None:
    """Inside a store's write transaction (a schema-1 store migrated): add the ``checksum`` column and
    seal every finished task whose texts are JSON with the checksum of its text as found (the others
    stay without one: damaged, recomputed)."""
    db.execute("ALTER TABLE tasks ADD COLUMN checksum TEXT")
    cur = db.execute(f"SELECT {columns} FROM tasks WHERE status = 'done'")
    names = [c[0] for c in cur.description]
    for row in [dict(zip(names, r)) for r in cur.fetchall()]:
        if task_state(row) == "unverified":
            db.execute("UPDATE tasks SET checksum = ? WHERE key = ?", (checksum(
                row["key"], row["fn"], row["params"], row["seed"], row["result"], row["versions"]), row["key"]))


def task_state(row: dict) -> str:
    """``'verified'``, ``'unverified'`` (a task of a schema-1 store, which has no checksum
    column) or ``'damaged'`` (its texts are not JSON, or its checksum is missing or wrong)."""
    try:
        for k in ("result", "params", "versions"):
            json.loads(row[k])
        if "checksum" not in row:
            return "unverified"
        stored = row["checksum"]
        ok = stored is not None and stored == checksum(row["key"], row["fn"], row["params"], row["seed"],
                                                       row["result"], row["versions"])
    except (TypeError, ValueError):
        return "damaged"
    return "verified" if ok else "damaged"


#: free bytes below which SQLite's "disk I/O error" on a store is read as a full disk (SQLite
#: reports an I/O error, not SQLITE_FULL, when its write-ahead log cannot grow)
NEARLY_FULL = 1 << 20


def is_disk_full(e: BaseException, directory: str | None = None) -> bool:
    """Whether ``e`` says the disk (or the quota) is full: SQLite's ``SQLITE_FULL`` ("database or
    disk is full"), an ``OSError`` with ``ENOSPC`` or ``EDQUOT``, or, for a store in
    ``directory``, SQLite's "disk I/O error" with less than :data:`NEARLY_FULL` bytes free there."""
    import errno
    import os
    import sqlite3

    if isinstance(e, OSError):
        return e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    if not isinstance(e, sqlite3.DatabaseError):
        return False
    if "disk is full" in str(e):
        return True
    if "disk I/O error" in str(e) and directory is not None:
        try:
            st = os.statvfs(directory)
        except (OSError, AttributeError):
            return False
        return st.f_bavail * st.f_frsize < NEARLY_FULL
    return False
