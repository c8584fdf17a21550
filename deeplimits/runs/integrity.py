"""What makes a stored task trustworthy: its checksum, and the errors and warnings of a store or
of a file beside it that is damaged (see docs/sweeps.md, "Every stored result is verified")."""

from __future__ import annotations

import hashlib
import json

from ..errors import DamagedFileWarning, DamagedStoreError, DiskFullError, RunStoreError

__all__ = ["RunStoreError", "DamagedStoreError", "DiskFullError", "DamagedFileWarning", "is_disk_full", "checksum", "task_state"]


def checksum(key: str, fn: str, params: str, seed: int, result: str, versions: str) -> str:
    """The checksum of a finished task as stored: sha256 of the exact stored texts of its result
    and versions together with its key, function, parameters and seed (so that neither a changed
    digit nor a truncation nor a row moved to another key goes unnoticed)."""
    text = json.dumps(["deeplimits-task-v1", key, fn, params, int(seed), result, versions])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
