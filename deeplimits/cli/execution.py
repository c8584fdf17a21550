"""Where and how a command runs: the executor flags, the progress bar, and the run store
opened once every check has passed (removed again if the run fails before its first task)."""

from __future__ import annotations

import json
import os
import sys

from .errors import UsageError, one_line, usage

__all__ = ["executor", "progress", "Run", "open_store", "digest", "default_out", "preset_options", "run_study"]


def executor(args, cmd) -> dict:
    """``--workers``, ``--scheduler``, ``--timeout`` checked (before any store is opened); the
    keyword arguments of the run functions."""
    from .._executor import executor as check_executor
    from ..errors import ParameterError

    try:
        workers, scheduler, timeout = check_executor(args.workers, args.scheduler, args.timeout)
    except ParameterError as e:
        msg = str(e).replace("give workers (a local cluster) or scheduler", "give --workers (a local cluster) or "
                             "--scheduler")
        raise usage(cmd, ParameterError(e.param, msg), ("workers", "scheduler", "timeout")) from None
    if timeout is not None and workers is None and scheduler is None:
        raise UsageError(f"deeplimits {cmd}: --timeout applies only with --workers or --scheduler")
    kw = {"workers": workers, "scheduler": scheduler}
    if workers is not None or scheduler is not None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise UsageError(f"deeplimits {cmd}: --workers and --scheduler need the 'distributed' package "
                             f"(pip install distributed)") from None
        import logging

        if not os.environ.get("DEEPLIMITS_DEBUG"):  # failures are reported in one line, not as Dask logs
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
    if timeout is not None:  # pass it only when given (run functions before the timeout parameter)
        kw["timeout"] = timeout
    return kw


def preset_options(args, preset: dict, names) -> dict:
    """A preset's values overridden by the flags given among ``names``, and ``--dtype``,
    ``--seed``, ``--device`` when given (one rule for every command with presets)."""
    import torch

    kw = dict(preset)
    for n in names:
        v = getattr(args, n, None)
        if v is not None:
            kw[n] = v
    if getattr(args, "dtype", None) is not None:
        kw["dtype"] = getattr(torch, args.dtype)
    for n in ("seed", "device"):
        if getattr(args, n, None) is not None:
            kw[n] = getattr(args, n)
    return kw


def progress(args, **kw):
    """Progress on stderr: a bar on a terminal; elsewhere (a log file, CI, a cluster's job log)
    one line every :data:`LOG_INTERVAL` seconds (:class:`LogProgress`); nothing with ``--quiet``.
    ``initial`` is the work a resumed run finds stored."""
    from tqdm import tqdm

    if not args.quiet and not sys.stderr.isatty():
        return LogProgress(total=kw.get("total"), initial=kw.get("initial", 0), unit=kw.get("unit", "it"),
                           desc=kw.get("desc", ""), interval=LOG_INTERVAL)
    return tqdm(disable=args.quiet, file=sys.stderr, **kw)


#: seconds between two progress lines when standard error is not a terminal
LOG_INTERVAL = 5.0


class LogProgress:
    """tqdm's interface (``update``, ``set_description``, ``set_postfix_str``, a context manager)
    written as lines for a log: ``DESC: 96/768 draws (12%), 10 s, about 70 s left`` at most every
    ``interval`` seconds, and once at the end."""

    def __init__(self, total=None, initial=0, unit="it", desc="", interval=LOG_INTERVAL, clock=None, file=None):
        import time

        self.clock = clock or time.monotonic
        self.total, self.n, self.unit, self.desc, self.postfix = total, initial, unit, desc, ""
        self.start_n, self.interval, self.file, self.written = initial, interval, file, initial
        self.t0 = self.last = self.clock()

    def update(self, n=1):
        self.n += n
        if self.clock() - self.last >= self.interval:
            self.write()

    def set_description(self, desc, refresh=True):
        self.desc = desc

    def set_postfix_str(self, s="", refresh=True):
        self.postfix = s

    def line(self) -> str:
        elapsed = self.clock() - self.t0
        done = f"{self.n}/{self.total}" if self.total else f"{self.n}"
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        rate = (self.n - self.start_n) / elapsed if elapsed > 0 else 0.0
        left = f", about {(self.total - self.n) / rate:.0f} s left" if self.total and self.n < self.total and rate > 0 \
            else ""
        post = f", {self.postfix}" if self.postfix else ""
        return f"{self.desc}: {done} {self.unit}s{share}{post}, {elapsed:.0f} s{left}"

    def write(self):
        self.last, self.written = self.clock(), self.n
        print(self.line(), file=self.file or sys.stderr, flush=True)

    def close(self):
        if self.n != self.written:  # the last count, unless it was just written
            self.write()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _lock_directory(out: str):
    """An exclusive lock on the run directory ``out`` (made if missing): its file descriptor, or
    ``None`` where the system has no ``flock`` (then concurrent invocations share the store: each
    finished task is still stored once). Waits, after one line, while another invocation holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    os.makedirs(out, exist_ok=True)
    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"deeplimits: {out} is being run by another invocation; waiting for it to finish, then this one "
                  f"reuses its finished tasks (none is computed twice)", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # a file system without locks (some network mounts): share the store
            pass
    except BaseException:
        os.close(fd)
        raise
    return fd


def digest(spec) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]


#: where runs are stored by default (``--out``), and the root ``runs list`` searches
RUNS = "runs"


def default_out(args, cmd, spec) -> str:
    """``--out``, or ``runs/CMD-<hash of the options>`` (:data:`RUNS`)."""
    return args.out if args.out is not None else os.path.join(RUNS, f"{cmd}-" + digest(spec))


def open_store(directory, spec=None, create=True, cmd=None):
    """The run store in ``directory``. A directory without a store, holding another command's
    run, resumed with user code whose source changed, or read-only where a run must write is a
    usage error (exit 2), said under ``deeplimits CMD`` (``cmd``: the command, e.g.
    ``'convergence'``); a store whose file is damaged (:class:`~deeplimits.runs.DamagedStoreError`)
    or on a full disk (:class:`~deeplimits.errors.DiskFullError`) is a runtime error (exit 1)."""
    from ..errors import DiskFullError
    from ..runs import DamagedStoreError, RunStore, RunStoreError

    try:
        return RunStore(directory, spec, create=create)
    except (DamagedStoreError, DiskFullError):
        raise
    except RunStoreError as e:
        raise UsageError(f"deeplimits{' ' + cmd if cmd else ''}: {one_line(e)}") from None


class Run:
    """The run store of a command, opened once every check has passed. On failure before any
    task is stored, what this command created (the store, its directories) is removed.

    One invocation at a time runs in a directory: a second one on the same ``--out`` says so in
    one line and waits for the first to finish (an exclusive ``flock`` on the run directory,
    released by the system when a process ends, killed or not), then reuses its finished tasks:
    no task is computed twice. Tasks run in parallel with ``--workers`` or ``--scheduler``.
    ``cmd``: the command (``'convergence'``), named by its refusals (:func:`open_store`)."""

    def __init__(self, out, spec, cmd: str):
        from .. import _validate as V
        from ..errors import DiskFullError
        from ..runs import STORE_NAME

        self.created = V.missing_dirs(out)
        self.lock, self.new_store = None, False
        try:
            self.lock = _lock_directory(out)
            self.new_store = not os.path.exists(os.path.join(out, STORE_NAME))
            self.store = open_store(out, spec, cmd=cmd)
        except DiskFullError:
            if self.new_store:  # a store this command began on a full disk: no half-made file stays
                self._remove(os.path.join(out, STORE_NAME))
            self._unlock()
            raise
        except BaseException:
            self._unlock()
            V.remove_empty_dirs(self.created)
            raise

    def _unlock(self):
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None

    def __enter__(self):
        return self.store

    def __exit__(self, exc_type, exc, tb):
        try:
            keep = exc_type is None or not self.new_store or bool(self.store.counts())
        except Exception:  # noqa: BLE001 - leave it as it is
            keep = True
        try:
            self.store.close()
        except Exception:  # noqa: BLE001
            pass
        if not keep:
            self._remove()
        self._unlock()
        return False

    def _remove(self, path=None):
        from .. import _validate as V

        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink((path or self.store.path) + suffix)
            except OSError:
                pass
        V.remove_empty_dirs(self.created)


def run_study(args, cmd: str, spec, *, unit: str, total: int, estimate: str | None = None,
              seconds: float | None = None, tag: str | None = None) -> int:
    """Run the plan ``spec`` of ``deeplimits cmd`` in its store with a progress bar of ``total``
    ``unit`` s (a ``--dry-run`` shows the plan instead, with ``seconds`` its time when given),
    print ``estimate`` first when given, then the report, and write the figures and the JSON
    (:func:`~.outputs.write_study`); ``tag`` names the default directory (``runs/TAG-<hash>``,
    default ``cmd``)."""
    from . import dry_run, outputs
    from .user import run_key

    stored = spec.to_dict()
    out = default_out(args, tag or cmd, run_key(args, stored))
    outputs.check_outputs(args, cmd, out)
    if args.dry_run:
        return dry_run.show(args, cmd, [spec], out, seconds=seconds)
    report = outputs.report_stream(args.json)
    if estimate:
        print(estimate, file=report, flush=True)
    with Run(out, stored, cmd) as store:
        with progress(args, total=total, unit=unit, desc=cmd, initial=spec.stored_units(store)) as bar:
            result = spec.run(bar.update, store=store, **executor(args, cmd))
    print(result.report(), file=report)
    written = outputs.write_study(result, out, args.json, figures=outputs.figure_mode(args))
    print(f"run store {store.path}; wrote " + ", ".join(written), file=report)
    return 0


def study_options(args, cmd: str, preset: dict, dtype: str, names) -> dict:
    """The executor flags checked, then the keyword arguments of a study's plan function: the
    ``preset`` overridden by the flags given among ``names`` (:func:`preset_options`), with the
    ``dtype`` named by the study's defaults unless ``--dtype`` is given."""
    import torch

    executor(args, cmd)  # checked before the plan
    kw = preset_options(args, preset, names)
    kw.setdefault("dtype", getattr(torch, dtype))
    return kw
