"""The ``deeplimits`` command: parsing only, over the library calls.

Conventions shared by every command: lists are comma-separated (``--depths 4,8,16``), evenly
spaced ranges are ``start:stop:count`` (``--betas 0:1.3:27``), ``--json PATH`` writes the
machine-readable result (``--json -``: to standard output, the report then goes to standard
error), ``--seed`` makes a run reproducible, ``--device`` picks where the tasks run.

Defaults, choices and which option applies to which regime are the library's (the regime
registry, :mod:`deeplimits._names`, the studies' ``presets`` modules); parsing imports no
numerical code, so ``deeplimits --help`` and ``--version`` start without torch.

Every check runs before any work, file or run store: flags (finite numbers, integers below 2^63,
lists of at most 100000 values), the library's plans (ranges and the resource estimate), the
executor (``--workers``, ``--scheduler``, ``--timeout``) and the outputs (``--out``, ``--json``,
``--csv`` are probed: what a probe creates it removes). Exit statuses and the one-line errors:
:mod:`deeplimits.cli.errors` (``DEEPLIMITS_DEBUG=1`` shows the traceback of an internal error).
A run that fails before its first task leaves no run directory behind.

Modules: :mod:`~deeplimits.cli.parser` (the grammar), :mod:`~deeplimits.cli.values` (flag
values), :mod:`~deeplimits.cli.convergence`, :mod:`~deeplimits.cli.order` (a scheme's strong order),
:mod:`~deeplimits.cli.propagation` (stability,
phase), :mod:`~deeplimits.cli.runs` (stored runs), :mod:`~deeplimits.cli.outputs`,
:mod:`~deeplimits.cli.execution`, :mod:`~deeplimits.cli.errors`.
"""

from __future__ import annotations

import sys
import warnings

from .errors import UsageError, say, status_of
from .parser import build_parser
from .user import resolve as resolve_user_flags
from .values import parse_list

__all__ = ["main", "build_parser", "parse_list", "UsageError"]


def main(argv=None) -> int:
    """The ``deeplimits`` command. Exit status: 0 done; 2 usage (bad flags, sizes refused at plan
    time, unwritable outputs, a run directory holding something else); 1 runtime (failed tasks,
    an unreachable Dask scheduler, a store damaged at run time, an error writing the outputs, an
    internal error); 130 Ctrl-C; 141 stdout closed early (``deeplimits runs show DIR | head -1``).
    Every error is one line on stderr."""
    from . import outputs

    cmd = "deeplimits"
    outputs.BACKGROUND["allowed"] = argv is None  # the process itself: its figures may be drawn after it ends
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        try:
            parser = build_parser()
            if not (sys.argv[1:] if argv is None else list(argv)):  # bare 'deeplimits': the commands
                parser.print_help(sys.stderr)
                return 2
            args = parser.parse_args(argv)
            cmd = f"deeplimits {args.command}"
            resolve_user_flags(args)  # MODULE:NAME flags: the user's objects, imported on this command
            with dry_run.sizes_without_files(args):
                status = args.func(args)
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's final flush
            return status
        except Exception as e:  # noqa: BLE001 - every failure is one line and an exit status
            return status_of(e, cmd)
        except KeyboardInterrupt as e:
            return status_of(e, cmd)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """A warning while a command runs (a damaged file recomputed, say) is one line on stderr."""
    say(f"deeplimits: {message}")
