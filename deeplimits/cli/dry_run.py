"""``--dry-run``: a command's plan, its tasks and its memory and time estimates, printed after every
check has passed; nothing is run and no file is left (docs/cli.md)."""

from __future__ import annotations

import json
import os

from . import outputs
from .errors import UsageError
from .values import number

__all__ = ["add_flag", "show", "show_calibration", "show_files", "sizes_without_files", "HELP"]

HELP = ("print the plan, its task count and its memory and time estimates after every check, and exit without "
        "running anything or writing any file")


def add_flag(parser) -> None:
    parser.add_argument("--dry-run", action="store_true", help=HELP)


def sizes_without_files(args):
    """``--dry-run`` without ``--root``: a data set read from files is sized as published
    (:func:`~deeplimits.studies.sizes.published_sizes`); otherwise nothing changes."""
    import contextlib

    from ..studies.sizes import published_sizes

    if getattr(args, "dry_run", False) and getattr(args, "root", None) is None:
        return published_sizes()
    return contextlib.nullcontext()


def _sizes_line(specs) -> str | None:
    """What sized a plan whose data set's files were not read (``None``: every plan read its own)."""
    from ..studies.sizes import PUBLISHED_SIZES

    named = sorted({s.get("dataset") for s in specs if s.get("dataset") in PUBLISHED_SIZES and s.get("root") is None})
    if not named:
        return None
    parts = "; ".join(f"{d}: {PUBLISHED_SIZES[d][0]} training and {PUBLISHED_SIZES[d][1]} test samples of "
                      f"{PUBLISHED_SIZES[d][2]} inputs" for d in named)
    return f"sizes: as published ({parts}); no --root, so no file is read, and a run needs --root DIR with its files"


def _plain(spec) -> str:
    """A spec as ``key value`` pairs on one line (lists comma-separated)."""
    def value(v):
        if isinstance(v, (list, tuple)):
            return ",".join(value(x) for x in v) if len(v) <= 12 else f"{value(v[0])},...,{value(v[-1])} ({len(v)})"
        return json.dumps(v) if isinstance(v, dict) else number(v)  # a float axis: 0.4, not 0.39999999999999997

    names = {"paths": "draws"}  # a convergence spec keeps the former name of draws
    return ", ".join(f"{names.get(k, k)} {value(v)}" for k, v in spec.items() if v is not None and k != "study")


def _store_line(out: str | None, tasks: int) -> str:
    """What a run would find in ``out``: nothing yet, or its finished tasks (a run resumes)."""
    from ..runs import STORE_NAME, RunStore

    if out is None:
        return "no run store (nothing is stored)"
    if not os.path.exists(os.path.join(out, STORE_NAME)):
        return f"run store {out}: new"
    try:
        store = RunStore(out, create=False, readonly=True)
        done = store.counts().get("done", 0)
        store.close()
    except Exception as e:  # noqa: BLE001 - a store that cannot be read is said, not fatal here
        return f"run store {out}: exists but cannot be read ({' '.join(str(e).split())})"
    return f"run store {out}: {done} of {tasks} tasks finished (a run resumes there)"


def show(args, cmd: str, plans, out: str | None = None, seconds: float | None = None, estimates=None,
         note: str = "") -> int:
    """Print what ``deeplimits cmd`` would run: each plan's spec (a Plan, or a dict), its tasks,
    networks, the peak memory of its largest task and the time; exit status 0. ``estimates``: the
    plans' resource estimates (default ``p.estimate()``), ``seconds``: the total time (default
    :func:`~deeplimits.studies.timing.plan_seconds`). With ``--json -`` the same as JSON on
    standard output (the lines go to standard error); a ``--json PATH`` is not written."""
    from ..studies.timing import duration, plan_seconds

    report = outputs.report_stream(getattr(args, "json", None))
    specs = [p.to_dict() if hasattr(p, "to_dict") else dict(p) for p in plans]
    estimates = [p.estimate() for p in plans] if estimates is None else estimates
    seconds = sum(plan_seconds(p) for p in plans) if seconds is None else seconds
    tasks = sum(e.tasks for e in estimates)
    print(f"deeplimits {cmd} --dry-run: nothing is run, no file is written", file=report)
    for spec in specs:
        print("plan: " + _plain(spec), file=report)
    for e in estimates:
        print(f"estimate: {e}; {e.steps} sequential steps per task", file=report)
    if (line := _sizes_line(specs)) is not None:
        print(line, file=report)
    print(f"time: about {duration(seconds)} in one process on 2 CPU cores{note}", file=report)
    print(_store_line(out, tasks), file=report)
    if getattr(args, "json", None) == "-":
        print(json.dumps({"dry_run": True, "command": cmd, "plans": specs, "tasks": tasks,
                          "peak_bytes": max(e.peak_bytes for e in estimates), "seconds": seconds, "out": out},
                         default=str))
    elif getattr(args, "json", None):
        print(f"a run writes {args.json}", file=report)
    return 0


def show_calibration(args, chosen, tables: int, pool_factor: int, budget: float | None = None,
                     budget_tables: int | None = None) -> int:
    """``order --calibrate --dry-run``: the cases ``chosen`` (checked and sized by
    :func:`~deeplimits.studies.scheme_order.calibration.plan_calibration`), their tables and pools,
    the stages of their runs sized to decide, and the time."""
    from ..studies.sequential import plan_stages
    from ..studies.timing import duration

    report = outputs.report_stream(getattr(args, "json", None))
    print("deeplimits order --calibrate --dry-run: nothing is run, no file is written", file=report)
    for name, c, seconds in chosen:
        sized = "" if budget is None else (f"; {budget_tables or tables} runs sized to decide in stages of "
                                           f"{','.join(map(str, plan_stages(c.draws, c.seconds, budget)))} draws")
        print(f"case {name}: depths {','.join(map(str, c.depths))}, {tables} tables of {c.draws} draws from a pool "
              f"of {pool_factor * c.draws}{sized}; about {duration(seconds)}", file=report)
    most = "" if budget is None else (" (a shipped case's runs sized to decide at the draws its measured runs drew on "
                                      "average, docs/schemes.md; another's to its last stage, the most it can take)")
    print(f"time: about {duration(sum(s for *_, s in chosen))}{most} in one process on 2 CPU cores", file=report)
    return 0


def show_files(args, paths, out: str) -> int:
    """``weights --dry-run``: what each path is, read as the run reads it
    (:func:`~deeplimits.diagnostics.load_weights`: bounded, nothing it names imported, so a file the
    run would refuse is refused), its size and the memory to read and measure it (about three times
    its data: the tensor and its float64 copy); nothing is measured or written."""
    from .. import _resources as R_
    from .._user_code import reading_stored
    from ..diagnostics import load_weights
    from ..diagnostics.sources import source_kind

    report = outputs.report_stream(getattr(args, "json", None))
    print("deeplimits weights --dry-run: nothing is measured or written", file=report)
    total = 0
    for path in paths:
        try:
            kind = source_kind(path)
            with reading_stored(path):
                load_weights(path)
        except ValueError as e:
            raise UsageError(f"deeplimits weights: {' '.join(str(e).split()).removeprefix('source: ')}") from None
        if kind == "directory":
            print(f"{path}: a run directory (its training chunks)", file=report)
            continue
        size = os.path.getsize(path)
        total += size
        print(f"{path}: {R_.fmt_bytes(size)}; ~{R_.fmt_bytes(3 * size)} to read and measure", file=report)
    print(f"memory: ~{R_.fmt_bytes(3 * total)} at most (this machine has {R_.fmt_bytes(R_.available_memory())})",
          file=report)
    print(f"a run writes {os.path.join(out, 'weights.png')} and {os.path.join(out, 'result.json')}", file=report)
    return 0
