"""Output paths probed before any work (what a probe creates, it removes): a file that can be
written, a directory that can be created and written into; a file written whole or not at all. Re-exported by
:mod:`deeplimits._validate`, whose checks raise the same one-line ``ValueError`` naming the
parameter."""

from __future__ import annotations

import os
import stat
import tempfile

from .errors import ParameterError

__all__ = ["missing_dirs", "remove_empty_dirs", "writable_file", "writable_dir", "replace_atomically"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()


def replace_atomically(path, write) -> None:
    """Write ``path`` through a fresh temporary file in its directory (``write(f)``, ``f`` open in
    binary) and rename it into place: a crash leaves the old file, and two processes writing the
    same file never see each other's half-written one."""
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o666 & ~_UMASK)  # as an open() would have made it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _path(name: str, value) -> str:
    try:
        path = os.fspath(value)
    except TypeError:
        raise ParameterError(name, f"{name} must be a path (str or os.PathLike), got {value!r}") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path.strip() or "\0" in path:
        raise ParameterError(name, f"{name} must be a non-empty path, got {value!r}")
    return path


def missing_dirs(directory: str) -> list[str]:
    """The directories that ``os.makedirs(directory)`` would create, outermost first
    (``NotADirectoryError`` when an existing ancestor is not a directory)."""
    missing = []
    d = os.path.abspath(directory)
    while not os.path.exists(d):
        missing.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    if not os.path.isdir(d):
        raise NotADirectoryError(f"{d} is not a directory")
    return missing[::-1]


def remove_empty_dirs(created: list[str]):
    """Remove the directories listed (innermost last in the list, removed first) that are empty."""
    for d in reversed(created):
        try:
            os.rmdir(d)
        except OSError:
            pass


def _why(e: OSError) -> str:
    return e.strerror or str(e) if isinstance(e, OSError) else str(e)


def writable_file(name: str, value) -> str:
    """An output file that can be written: not a directory, its directory existing or one new
    directory inside an existing one that is not the file system's root (a mistyped path is
    refused, not created: ``/rsults/x/r.json`` would make two directories, one at the top).
    Probed at once: a new file (and the directory it needs) is created and removed again, an
    existing regular file is opened for appending (its content is untouched), a memory device
    such as ``/dev/full`` is written one byte; ttys and pipes are only opened. Returns the path."""
    path = _path(name, value)
    if os.path.isdir(path):
        raise ParameterError(name, f"{name} must be a file path, but {path} is a directory")
    try:
        new = missing_dirs(os.path.dirname(path) or ".")
    except NotADirectoryError as e:
        raise ParameterError(name, f"{name} cannot be written: {e}") from None
    if len(new) > 1 or (new and os.path.dirname(new[0]) == os.path.dirname(os.path.dirname(new[0]))):
        raise ParameterError(name, f"{name}: directory {new[-1]} does not exist, nor {new[0]}: create it first (only "
                                   "one missing directory, inside an existing one below the root, is made)")
    try:
        if os.path.exists(path):
            st = os.stat(path)
            if stat.S_ISREG(st.st_mode):
                with open(path, "ab"):
                    pass
            else:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                try:
                    if stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and not os.isatty(fd):
                        os.write(fd, b"\n")  # /dev/null, /dev/zero, /dev/full: a byte shows ENOSPC
                finally:
                    os.close(fd)
            return path
        created = missing_dirs(os.path.dirname(path) or ".")
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            os.close(fd)
            os.unlink(path)
        finally:
            remove_empty_dirs(created)
    except OSError as e:
        raise ParameterError(name, f"{name}: cannot write {path} ({_why(e)})") from None
    return path


def writable_dir(name: str, value) -> str:
    """An output directory that can be created (or exists) and written: probed by creating and
    removing a file in it (and the directories it needs). Returns the path."""
    path = _path(name, value)
    if os.path.exists(path) and not os.path.isdir(path):
        raise ParameterError(name, f"{name} must be a directory, but {path} is a file")
    try:
        created = missing_dirs(path)
        try:
            os.makedirs(path, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=".deeplimits-probe-", dir=path)
            os.close(fd)
            os.unlink(probe)
        finally:
            remove_empty_dirs(created)
    except OSError as e:
        raise ParameterError(name, f"{name}: cannot write into {path} ({_why(e)})") from None
    return path
