"""``deeplimits runs list|show|export|plot``: stored runs, read without recomputing."""

from __future__ import annotations

import json
import os
import sys

from . import outputs
from .errors import UsageError, one_line
from . import execution
from .execution import RUNS, open_store

__all__ = ["run_runs", "add_parser"]

#: the flags each action takes
FLAGS = {"list": (), "show": ("code",), "export": ("csv", "records_csv", "json", "code"), "plot": ("json", "code")}


def _read(store, what, *a):
    """``what(store)``; a store whose content cannot be read is a RunStoreError (exit 1)."""
    from ..errors import RunStoreError

    try:
        return what(store, *a)
    except RunStoreError as e:
        _needs_code(store, e)
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        _needs_code(store, e)
        raise RunStoreError(f"{store.path} is damaged ({type(e).__name__}: {one_line(e)}); "
                            f"move it away or recompute the run") from None


def _needs_code(store, error) -> None:
    """Where reading a stored run failed on a name of the user's own code (a block, law or
    activation the store records, :func:`deeplimits.runs.user_code_of`) that this invocation was not
    given (``--code``): say so, and how to give it, rather than call the store damaged."""
    from .._user_code import IMPORTED
    from ..errors import RunStoreError

    try:
        code = json.loads(store.meta().get("user_code") or "{}")
    except (ValueError, TypeError, AttributeError):
        return
    if not isinstance(code, dict):
        return
    text, given = str(error), {str(label): f"{i.get('module')}:{i.get('name')}" for label, i in code.items()
                               if isinstance(i, dict)}
    missing = sorted(set(given.values()) - set(IMPORTED))  # all of them: a run made with several needs each
    if missing and any(label in text or spec in text for label, spec in given.items()):
        raise RunStoreError(f"{store.path} was made with code of your own ({', '.join(missing)}), and a stored run never "
                            f"imports what it names: give it with {' '.join('--code ' + m for m in missing)}") from None


def _stored_results(store) -> list:
    """The results of a stored run of any command, rebuilt from its finished tasks."""
    from ..studies import results_from_store

    return results_from_store(store)


def _study(store):
    spec = store.spec
    return spec.get("study") if isinstance(spec, dict) else None


def add_parser(sub):
    """The ``runs`` subcommand."""
    r = sub.add_parser("runs", help="list, show, export and redraw stored runs",
                       description=f"Stored runs: 'list [ROOT]' (default ROOT {execution.RUNS}), 'show DIR', "
                                   "'export DIR --csv PATH --records-csv PATH --json PATH' (PATH '-': standard "
                                   "output), 'plot DIR' "
                                   "(redraw the figure and result.json from the store, without recomputing).")
    r.add_argument("action", choices=["list", "show", "export", "plot"],
                   help="list the runs under a root; show a run's counts, versions and reports; export its "
                        "records; plot: redraw its figures and result.json")
    r.add_argument("target", nargs="?", help="the run directory (for list: the root to search)")
    r.add_argument("--csv", metavar="PATH", help="export: write the measured points as CSV, one row per point: study, "
                                                 "setting, depth, quantity, value, stderr, ci_low, ci_high ('-': "
                                                 "standard output)")
    r.add_argument("--records-csv", metavar="PATH", help="export: write the stored records as CSV, one row per "
                                                         "observation of each task (a convergence run: per draw and "
                                                         "depth) ('-': standard output)")
    r.add_argument("--json", metavar="PATH", help="export: write the records as JSON; plot: also write the result "
                                                  "('-': standard output)")
    r.add_argument("--code", metavar="MODULE:NAME", action="append", default=None,
                   help="show, export, plot: a block, law or activation of your own that the run was made with (as "
                        "you gave it to the command that made it; repeat for each): a stored run never imports what "
                        "it names, so a run whose summary needs your code reads it only from you")
    r.set_defaults(func=run_runs)


def run_runs(args) -> int:
    cmd = f"runs {args.action}"
    for name in ("csv", "records_csv", "json", "code"):
        if getattr(args, name) is not None and name not in FLAGS[args.action]:
            uses = " and ".join(f"runs {a}" for a, f in FLAGS.items() if name in f)
            raise UsageError(f"deeplimits {cmd}: --{name.replace('_', '-')} applies only to {uses}")
    if args.action == "list":
        if args.dry_run:
            print(f"deeplimits runs list --dry-run: reads the run stores under {args.target or RUNS}, writes nothing",
                  file=sys.stderr)
            return 0
        return _list(args.target or RUNS)
    if not args.target:
        raise UsageError(f"deeplimits {cmd}: give the run directory")
    _check_outputs(args, cmd)  # outputs are checked before the store is read
    from .._user_code import load_user_object, reading_stored
    from .user import register_given

    for spec in args.code or ():  # imported on the user's word, before the store is opened
        try:
            register_given(load_user_object(spec, what="code", flag="--code")[0], spec)
        except ValueError as e:
            raise UsageError(f"deeplimits {cmd}: {one_line(e)}") from None

    with reading_stored(f"the run directory {args.target}"), open_store(args.target, create=False, cmd=cmd) as store:
        if args.dry_run:
            counts = store.counts()
            writes = {"show": [], "export": [args.csv, args.records_csv, args.json],
                      "plot": [os.path.join(args.target, "*.png"), os.path.join(args.target, "result.json"), args.json]}
            files = [f for f in writes[args.action] if f]
            print(f"deeplimits {cmd} --dry-run: reads {store.path} ({counts.get('done', 0)} done, "
                  f"{counts.get('failed', 0)} failed tasks), nothing is computed; "
                  + ("writes nothing" if not files else "a run writes " + ", ".join(files)), file=sys.stderr)
            return 0
        return {"show": _show, "export": _export, "plot": _plot}[args.action](args, store)


def _check_outputs(args, cmd):
    from .. import _validate as V

    if args.action == "export":
        given = [(f, p) for f, p in (("--csv", args.csv), ("--records-csv", args.records_csv), ("--json", args.json))
                 if p]
        if not given:
            raise UsageError("deeplimits runs export: give --csv PATH, --records-csv PATH and/or --json PATH")
        dash = [f for f, p in given if p == outputs.STDOUT]
        if len(dash) > 1:
            raise UsageError(f"deeplimits runs export: {' and '.join(f + ' -' for f in dash)} cannot both write to "
                             "standard output")
        for f, p in given:
            outputs.check_file(cmd, f, p)
    elif args.action == "plot":
        if os.path.isdir(args.target):
            try:
                V.writable_dir("the run directory", args.target)
            except ValueError as e:
                raise UsageError(f"deeplimits {cmd}: {one_line(e)}") from None
        outputs.check_file(cmd, "--json", args.json)


def _list(root) -> int:
    from ..runs import RunStoreError, find_runs

    runs = find_runs(root)
    if not runs:
        print(f"no runs under {root}")
    for d in runs:
        try:
            with open_store(d, create=False) as store:
                counts = store.counts()
                spec = _read(store, lambda s: s.spec)
                integrity = _read(store, lambda s: s.integrity_line())
            names = ", ".join(str(s.get("regime", s.get("study", "?"))) if isinstance(s, dict) else "?"
                              for s in (spec if isinstance(spec, list) else [spec]))
        except (UsageError, RunStoreError, ValueError) as e:
            print(f"{d}  unreadable: {one_line(e)}")
            continue
        print(f"{d}  [{names}]  {counts.get('done', 0)} tasks done, {counts.get('failed', 0)} failed"
              + (f"; {integrity}" if integrity else ""))
    return 0


def _show(args, store) -> int:
    meta = _read(store, lambda s: s.meta())
    counts = store.counts()
    print(f"run {args.target}: {counts.get('done', 0)} tasks done, {counts.get('failed', 0)} failed; "
          f"versions {meta.get('versions')}")
    integrity = _read(store, lambda s: s.integrity_line())
    if integrity:
        print(f"integrity: {integrity}")
    code = _read(store, lambda s: json.loads(s.meta().get("user_code") or "{}"))
    for name, info in code.items():
        print(f"user code: {name} (source sha256 {str(info.get('sha256'))[:16]}), recorded, never imported when read")
    for r in _read(store, _stored_results):
        print(r.report())
        print()
    return 0


def _export(args, store) -> int:
    from ..runs import tidy_rows, write_csv
    from ..studies._shared.points import COLUMNS

    records = _read(store, lambda s: s.records())
    results = _read(store, _stored_results)  # also imports the studies that registered the tasks (their axes)
    if args.json:
        outputs.write_records_json(records, args.json)
    if args.records_csv:
        write_csv(tidy_rows(records), args.records_csv)
    points = _read(store, lambda s: [row for r in results for row in r.points()]) if args.csv else []
    if args.csv:
        write_csv(points, args.csv, COLUMNS)
    told = f"; {len(points)} measured points" if args.csv else ""
    print(f"exported {len(records)} records{told}", file=outputs.report_stream(args.csv, args.records_csv, args.json))
    return 0


def _plot(args, store) -> int:
    results = _read(store, _stored_results)
    if not results:
        raise UsageError(f"deeplimits runs plot: {args.target} has no finished task yet")
    from ..errors import ParameterError

    try:  # a figure may build the run's block or law (the weights of a trained network)
        if _read(store, _study) is None:
            written = outputs.write_convergence(results, args.target, args.json, as_list=isinstance(store.spec, list))
        elif _read(store, _study) in ("train", "train-conv"):
            from ..studies import plan_from_dict

            written = outputs.write_training(results[0], _read(store, lambda s: plan_from_dict(s.spec)), args.target,
                                             args.json)
        else:
            written = outputs.write_study(results[0], args.target, args.json)
    except ParameterError as e:
        _needs_code(store, e)
        raise
    print("wrote " + ", ".join(written), file=outputs.report_stream(args.json))
    return 0
