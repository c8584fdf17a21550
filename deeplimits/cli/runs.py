"""``deeplimits runs list|show|export|plot``: stored runs, read without recomputing."""

from __future__ import annotations

import json
import os
import sys

from . import outputs
from .errors import UsageError, one_line
from .execution import RUNS, open_store

__all__ = ["run_runs"]

#: the flags each action takes
FLAGS = {"list": (), "show": (), "export": ("csv", "json"), "plot": ("json",)}


def _read(store, what, *a):
    """``what(store)``; a store whose content cannot be read is a RunStoreError (exit 1)."""
    from ..errors import RunStoreError

    try:
        return what(store, *a)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:  # a RunStoreError goes through
        raise RunStoreError(f"{store.path} is damaged ({type(e).__name__}: {one_line(e)}); "
                            f"move it away or recompute the run") from None


def _stored_results(store) -> list:
    """The results of a stored run of any command, rebuilt from its finished tasks."""
    from ..studies import results_from_store

    return results_from_store(store)


def _study(store):
    spec = store.spec
    return spec.get("study") if isinstance(spec, dict) else None


def run_runs(args) -> int:
    cmd = f"runs {args.action}"
    for name in ("csv", "json"):
        if getattr(args, name) is not None and name not in FLAGS[args.action]:
            uses = " and ".join(f"runs {a}" for a, f in FLAGS.items() if name in f)
            raise UsageError(f"deeplimits {cmd}: --{name} applies only to {uses}")
    if args.action == "list":
        if args.dry_run:
            print(f"deeplimits runs list --dry-run: reads the run stores under {args.target or RUNS}, writes nothing",
                  file=sys.stderr)
            return 0
        return _list(args.target or RUNS)
    if not args.target:
        raise UsageError(f"deeplimits {cmd}: give the run directory")
    _check_outputs(args, cmd)  # outputs are checked before the store is read
    from .._user_code import reading_stored

    with reading_stored(f"the run directory {args.target}"), open_store(args.target, create=False) as store:
        if args.dry_run:
            counts = store.counts()
            writes = {"show": [], "export": [args.csv, args.json],
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
        if not (args.csv or args.json):
            raise UsageError("deeplimits runs export: give --csv PATH and/or --json PATH")
        if args.csv == outputs.STDOUT and args.json == outputs.STDOUT:
            raise UsageError("deeplimits runs export: --csv - and --json - cannot both write to standard output")
        outputs.check_file(cmd, "--csv", args.csv)
        outputs.check_file(cmd, "--json", args.json)
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
    records = _read(store, lambda s: s.records())
    if args.json:
        outputs.write_records_json(records, args.json)
    if args.csv:
        from ..runs import tidy_rows, write_csv

        _read(store, _stored_results)  # imports the studies that registered the tasks (their axes)
        write_csv(tidy_rows(records), args.csv)
    print(f"exported {len(records)} records", file=outputs.report_stream(args.csv, args.json))
    return 0


def _plot(args, store) -> int:
    results = _read(store, _stored_results)
    if not results:
        raise UsageError(f"deeplimits runs plot: {args.target} has no finished task yet")
    if _read(store, _study) is None:
        written = outputs.write_convergence(results, args.target, args.json, as_list=isinstance(store.spec, list))
    elif _read(store, _study) in ("train", "train-conv"):
        from ..studies import plan_from_dict

        written = outputs.write_training(results[0], plan_from_dict(store.spec), args.target, args.json)
    else:
        written = outputs.write_study(results[0], args.target, args.json)
    print("wrote " + ", ".join(written), file=outputs.report_stream(args.json))
    return 0
