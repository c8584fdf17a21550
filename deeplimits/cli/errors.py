"""Exit statuses and one-line messages.

Exit status: 0 done; 2 usage (bad flags, sizes refused at plan time with the flags to change,
unwritable outputs, a run directory holding something else); 1 runtime (failed tasks, an
unreachable Dask scheduler, a store damaged at run time, an error writing the outputs, an
internal error); 130 Ctrl-C; 141 stdout closed by its reader. Every error is one line on stderr.
"""

from __future__ import annotations

import os
import sys

DONE, RUNTIME, USAGE, INTERRUPTED, BROKEN_PIPE = 0, 1, 2, 130, 141


class UsageError(Exception):
    """A bad command line (exit status 2); its message is the whole line."""


def say(message) -> None:
    """``message`` as one line on stderr."""
    print(" ".join(str(message).split()), file=sys.stderr)


def one_line(e) -> str:
    return " ".join(str(e).split())


def flag(name: str) -> str:
    """The flag that sets the library parameter ``name``: ``--name-with-dashes`` (a command may
    pass its own, e.g. the regime options' declared flags: :func:`usage`)."""
    return "--" + name.replace("_", "-")


def usage(cmd: str, e: ValueError, params=()) -> UsageError:
    """A library ValueError as a usage error. The parameter of a
    :class:`~deeplimits.errors.ParameterError` (``e.param``) is shown as its flag where the
    message names it first (``device: 'cuda' is not available`` -> ``--device: ...``), and a
    :class:`~deeplimits.errors.ResourceError` names the flags to change. ``params``: the
    parameter names this command sets, or a mapping name -> flag (``None``: the usual flag)."""
    from ..errors import ResourceError

    msg = one_line(e)
    flags = params if isinstance(params, dict) else {}
    name = getattr(e, "param", None)
    if name in params and msg.startswith(name) and not msg[len(name):len(name) + 1].isidentifier():
        msg = (flags.get(name) or flag(name)) + msg[len(name):]
    if isinstance(e, ResourceError) and e.knobs:
        msg += f" (change {', '.join(flags.get(k) or flag(k) for k in e.knobs)})"
    return UsageError(f"deeplimits {cmd}: {msg}")


def plan(cmd, params, fn, *a, **kw):
    """Call a plan function with its settings in their groups (the flags' values ``kw``
    gathered by :func:`deeplimits._settings.group`: ``Network(depth=...)``, ``Compute(seed=...)``,
    ...); any ValueError (ranges, resource estimate) is a usage error."""
    from .._settings import group

    try:
        return fn(*a, **group(fn, kw))
    except ValueError as e:
        raise usage(cmd, e, params) from None


def is_runtime(e: BaseException) -> bool:
    """A failure of the run itself (failed tasks, unreachable scheduler, damaged store): exit 1."""
    from ..errors import ExecutorError, RunStoreError, SweepError

    return isinstance(e, (SweepError, RunStoreError, ExecutorError))


def quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the final flush cannot fail again."""
    try:
        if sys.stdout is sys.__stdout__ and sys.stdout is not None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
    except (OSError, ValueError):
        pass


#: command -> what makes its run smaller (the flags it has), for an out-of-memory line
_SMALLER = {"convergence": "fewer --draws, a smaller --width or --chunk",
            "order": "fewer --draws, a smaller --reference or --width",
            "stability": "fewer --draws, a smaller --width or --chunk", "phase": "fewer --draws, a smaller --width",
            "train": "a smaller --width, --depth or --batch-size", "scaling": "smaller --depths or --width",
            "trained-limit": "smaller --depths or --width", "weights": "a smaller file",
            "runs": "a smaller run"}


def status_of(e: BaseException, cmd: str) -> int:
    """The exit status of a command that raised ``e``, after its one line on stderr."""
    if isinstance(e, UsageError):
        say(e)
        return USAGE
    if isinstance(e, KeyboardInterrupt):
        say("deeplimits: interrupted; finished tasks are stored, run the same command to resume")
        return INTERRUPTED
    if isinstance(e, BrokenPipeError):
        quiet_stdout()
        return BROKEN_PIPE
    if isinstance(e, MemoryError):
        say(f"{cmd}: out of memory; make the run smaller ({_SMALLER.get(cmd.split()[-1], _SMALLER['convergence'])})")
        return RUNTIME
    from .._extras import MissingExtra

    if isinstance(e, MissingExtra):
        say(f"{cmd}: {e}")
        return RUNTIME
    from ..runs.integrity import DiskFullError, is_disk_full

    if is_disk_full(e) and not isinstance(e, DiskFullError):  # an output or a file beside the store
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        say(f"{cmd}: the disk is full{where}: the finished tasks are kept in the run store; free some space and run "
            f"the same command again to resume")
        return RUNTIME
    if isinstance(e, OSError) or is_runtime(e):
        say(f"{cmd}: {e}")
        return RUNTIME
    if os.environ.get("DEEPLIMITS_DEBUG"):
        raise e
    say(f"deeplimits: internal error: {type(e).__name__}: {e} (run with DEEPLIMITS_DEBUG=1 for the traceback)")
    return RUNTIME
