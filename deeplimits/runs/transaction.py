"""One write transaction of a run store, and the line of a full disk (docs/sweeps.md, "A full
disk is named")."""

from __future__ import annotations

import sqlite3

from .integrity import DiskFullError, is_disk_full

__all__ = ["Transaction", "disk_full"]


class Transaction:
    """One write transaction; a full disk (at any statement or at the commit) is
    :class:`DiskFullError`, the transaction rolled back: nothing stored before is lost."""

    def __init__(self, store):
        self.store, self.db = store, store._db

    def __enter__(self):
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise disk_full(self.store) if is_disk_full(e, self.store.directory) else e from None
        return self.db

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and not self.db.in_transaction:  # SQLite rolled back already (SQLITE_FULL)
            if is_disk_full(exc, self.store.directory):
                raise disk_full(self.store) from None
            return False
        try:
            self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
        except sqlite3.DatabaseError as e:
            if not is_disk_full(e, self.store.directory):
                raise
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise disk_full(self.store) from None
        if exc_type is not None and is_disk_full(exc, self.store.directory):
            raise disk_full(self.store) from None
        return False


def disk_full(store, new: bool = False) -> DiskFullError:
    """The one line of a full disk: where, and what is kept (``new``: the store was being created)."""
    kept = 0 if new else _done_quietly(store)
    what = "no task had finished" if kept == 0 else \
        "its finished tasks are kept" if kept is None else f"its {kept} finished task{'s' * (kept != 1)} are kept"
    return DiskFullError(f"the disk holding {store.directory} is full: {what} in {store.path}; free some space "
                         f"and run the same command again to resume")


def _done_quietly(store) -> int | None:
    """The finished tasks, or ``None`` when the store cannot say (the line must come out anyway)."""
    try:
        return store.counts().get("done", 0)
    except Exception:  # noqa: BLE001
        return None
