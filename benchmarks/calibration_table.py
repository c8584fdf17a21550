"""Regenerate the table of docs/schemes.md, "How often the verdict is wrong": the size, agreement and
power of the strong-order verdict on the shipped cases, at their usual size and, with ``--budget``,
as runs sized to decide (deeplimits.studies.scheme_order.calibration.calibrate).

    python benchmarks/calibration_table.py --write                       # every case, 200 tables
    python benchmarks/calibration_table.py --cases euler-maruyama/ou --tables 50
    python benchmarks/calibration_table.py --budget 300 --budget-tables 100 --write
    python benchmarks/calibration_table.py --cases sde --tables 50 --resume --write   # add a case
    python benchmarks/calibration_table.py --pools benchmarks/pools --write          # draws stored, reused
    python benchmarks/calibration_table.py --reread --write     # every row read again by today's rule, no draws
    python benchmarks/calibration_table.py --reread --seed 1 --json benchmarks/calibration_seed1.json
    python benchmarks/calibration_table.py --cases fbm-H0.75 --budget 300 --runs 0:10    # a part of a row's runs
    python benchmarks/calibration_table.py --cases fbm-H0.75 --join --write   # its parts joined, the row read

``--resume`` keeps the cases already in the JSON (a crash loses no finished case; a case can be
added later with its own number of tables) and runs only the others; with ``--redo``, the cases
named by ``--cases`` run again and replace their rows (say, to add runs sized to decide).

Each case's statistics (its tables' and its sized runs' stages': draws, mean errors, covariance,
rate; :mod:`deeplimits.studies.scheme_order.table_stats`) go to ``calibration_stats/`` beside the
JSON, under its name (benchmarks/calibration_stats/calibration/; ``--stats``); ``--reread`` reads every row of the JSON again from them by today's
verdict rule, drawing nothing (a row whose statistics are missing is drawn again as it was made:
its tables, budget and runs, with ``--seed``, and its statistics written).

A row's runs sized to decide can be drawn in parts, by several processes or machines: ``--runs A:B``
draws runs ``A .. B - 1`` of the one case ``--cases`` names (each run is seeded by its index: the same
numbers as in a whole row) into a part beside the row's statistics, and writes nothing else;
``--join`` joins the parts of the ``--cases`` to their rows' statistics (they must continue the runs
a row holds, without a gap or an overlap; joined, the parts are removed) and reads those rows again
into the JSON (deeplimits.studies.scheme_order.calibration.draw_runs, .table_stats.join_runs).

``--write`` replaces the text between the markers ``<!-- calibration:begin -->`` and
``<!-- calibration:end -->`` of docs/schemes.md with the table, the command and the time each case
took against the time model's estimate; the JSON goes to benchmarks/calibration.json (or ``--json``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DOC = ROOT / "docs" / "schemes.md"
BEGIN, END = "<!-- calibration:begin -->", "<!-- calibration:end -->"


def estimate(row: dict) -> float:
    """The seconds today's time model gives the run that made ``row`` (its tables and, if any, its
    runs sized to decide): what ``deeplimits order --calibrate --dry-run`` prints for it."""
    from deeplimits.studies.scheme_order.calibration import plan_calibration

    kw = dict(tables=row["tables"])
    if row.get("budget"):
        kw.update(budget=row["budget"], budget_tables=sum(row["budget_counts"]["0.0"].values()))
    return plan_calibration([row["case"]], **kw)[0][2]


def rule_text(rules: dict) -> str:
    """The sentence under a table naming the verdict rule that read its rows (``case -> rule``)."""
    from deeplimits.studies.scheme_order.sized import rule_fingerprint

    rule = rule_fingerprint()
    older = [case for case, r in rules.items() if r != rule]
    return (f"Every row was read by the verdict rule of today (`rule_fingerprint()` {rule})." if not older else
            f"Read by an older verdict rule than today's ({rule}), to be measured again: {', '.join(older)}.")


def write_block(text: str, begin: str = BEGIN, end: str = END) -> None:
    """Replace the text between the markers ``begin`` and ``end`` of docs/schemes.md with ``text``."""
    doc = DOC.read_text()
    a, b = doc.index(begin) + len(begin), doc.index(end)
    DOC.write_text(doc[:a] + "\n" + text + "\n" + doc[b:])


def write_json(path, cal, estimates: dict, commands: list) -> None:
    """The calibration ``cal`` (its rows so far), each case's estimated seconds and the commands that
    made it, written to the JSON ``path``."""
    pathlib.Path(path).write_text(json.dumps({**cal.to_dict(), "estimated_seconds": estimates, "commands": commands},
                                             indent=1))


def reread_rows(path, stats, seed: int = 0, pools=None):
    """Each row of the JSON ``path`` read again by today's rule from its statistics under ``stats``
    (yielded one by one; a row today's rule read already as it is); a row whose statistics are not
    there, or were drawn as another case or with other stages, is drawn again as it was made (its
    tables, one table's draws a table in its pool, its budget and runs, ``seed``) and its
    statistics written."""
    from deeplimits.studies.scheme_order.calibration import SHIFTS, calibrate, choose, reread
    from deeplimits.studies.scheme_order.sized import rule_fingerprint
    from deeplimits.studies.scheme_order.table_stats import RowStats, stats_path

    rule = rule_fingerprint()
    for row in json.loads(pathlib.Path(path).read_text())["rows"]:
        if row.get("rule") == rule:  # read by today's rule already (a reread stopped half way goes on)
            yield row
            continue
        (name, case), = choose([row["case"]])
        case = dataclasses.replace(case() if callable(case) else case, name=name)
        where, why = stats_path(stats, name), "no statistics"
        if where.exists():
            try:
                yield reread(case, RowStats.load(where), SHIFTS).to_dict()
                continue
            except ValueError as exc:
                why = str(exc)
        runs = sum(row["budget_counts"]["0.0"].values()) if row.get("budget") else None
        print(f"{name}: {why} ({where}): drawn again", file=sys.stderr, flush=True)
        yield from calibrate([name], tables=row["tables"], seed=seed, budget=row.get("budget"), budget_tables=runs,
                             pools=pools, stats=stats, progress=lambda line: print(line, file=sys.stderr, flush=True)
                             ).to_dict()["rows"]


def _runs(text: str) -> range:
    """``A:B`` -> ``range(A, B)`` (checked by draw_runs)."""
    a, _, b = text.partition(":")
    try:
        return range(int(a), int(b))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--runs must be A:B, two run indices, got {text!r}") from None


def main(argv=None) -> int:
    from deeplimits.studies.scheme_order.calibration import calibrate, plan_calibration

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=lambda s: s.split(","), help="comma-separated case names (default all)")
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--pool-factor", type=int, help="default: --tables (independent tables)")
    ap.add_argument("--budget", type=float, help="also runs sized to decide within this many seconds")
    ap.add_argument("--budget-tables", type=int, help="runs sized to decide per case (default --tables)")
    ap.add_argument("--budget-cases", type=lambda s: s.split(","), help="the cases sized (default all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", action="store_true", help="write the table into docs/schemes.md")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "calibration.json"))
    ap.add_argument("--resume", action="store_true", help="keep the cases already in --json, run the others")
    ap.add_argument("--pools", help="a directory of stored draws: read when it holds a case's draws (a changed "
                    "verdict rule measured again in minutes), else drawn and stored (deeplimits.studies.scheme_order.pools)")
    ap.add_argument("--redo", action="store_true", help="with --resume: run the --cases again, replacing their rows")
    ap.add_argument("--stats", help="where each case's statistics are written and read by --reread (default: "
                    "calibration_stats/ beside the JSON, and the JSON's name)")
    ap.add_argument("--reread", action="store_true", help="read every row of --json again from --stats by today's "
                    "rule, drawing nothing (a row without statistics is drawn again as it was made, with --seed; one "
                    "today's rule read already is kept)")
    ap.add_argument("--runs", type=_runs, help="A:B: draw only runs A..B-1 sized to decide of the one --cases "
                    "(with --budget) into a part of its row's statistics (--join joins the parts)")
    ap.add_argument("--join", action="store_true", help="join the parts of the --cases' runs to their rows' "
                    "statistics and read those rows again into --json")
    args = ap.parse_args(argv)
    stats = args.stats or str(pathlib.Path(args.json).parent / "calibration_stats" / pathlib.Path(args.json).stem)
    command = "python benchmarks/calibration_table.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.runs is not None:
        extra = [flag for flag, on in (("--join", args.join), ("--reread", args.reread), ("--write", args.write),
                                       ("--resume", args.resume), ("--redo", args.redo), ("--pools", args.pools),
                                       ("--budget-tables", args.budget_tables), ("--budget-cases", args.budget_cases))
                 if on]
        if not (args.cases and len(args.cases) == 1 and args.budget is not None) or extra:
            ap.error("--runs: draws a part of one case's runs into its statistics: needs one --cases and --budget"
                     + (f" (not {', '.join(extra)})" if extra else ""))
        from deeplimits.errors import ParameterError
        from deeplimits.studies.scheme_order.calibration import draw_runs

        try:
            path = draw_runs(args.cases[0], args.runs, stats, budget=args.budget, seed=args.seed,
                             progress=lambda line: print(line, file=sys.stderr, flush=True))
        except ParameterError as exc:
            ap.error(f"--runs {args.runs.start}:{args.runs.stop}: {exc}")
        print(f"runs {args.runs.start}..{args.runs.stop - 1} of {args.cases[0]}: {path}")
        return 0
    if args.join and (not args.cases or args.reread or args.resume or not pathlib.Path(args.json).exists()):
        ap.error("--join: joins the parts of --cases to rows of an existing --json (no --reread or --resume)")
    if args.reread and (args.cases or args.resume or args.redo or not pathlib.Path(args.json).exists()):
        ap.error("--reread: reads every row of an existing --json again (no --cases, --resume or --redo)")
    old = (json.loads(pathlib.Path(args.json).read_text()) if (args.resume or args.reread or args.join) and
           pathlib.Path(args.json).exists() else {})
    kw = dict(tables=args.tables, pool_factor=args.pool_factor, seed=args.seed, budget=args.budget,
              budget_tables=args.budget_tables, budget_cases=args.budget_cases)
    if args.redo and not (args.resume and args.cases):
        ap.error("--redo: needs --resume and --cases (the rows it replaces)")
    redone = set(args.cases or []) if args.redo else set()
    rows = [r for r in old.get("rows", []) if r["case"] not in redone]
    estimates = dict(old.get("estimated_seconds", {}))
    commands = list(old.get("commands", [])) + [command.strip()]
    if args.reread:  # row by row, the JSON written after each (a crash loses no finished row)
        from deeplimits.studies.scheme_order.calibration import Calibration

        done = [r["case"] for r in rows]
        for row in reread_rows(args.json, stats, args.seed, args.pools):
            rows[done.index(row["case"])] = row
            write_json(args.json, Calibration.from_dict({**old, "rows": rows}), estimates, commands)
    if args.join:  # case by case, the JSON written after each: a joined row always reaches it
        from deeplimits.errors import DamagedFileError, ParameterError
        from deeplimits.studies.scheme_order.calibration import SHIFTS, Calibration, choose, reread
        from deeplimits.studies.scheme_order.table_stats import RowStats, join_runs, stats_path

        done = [r["case"] for r in rows]
        for name in args.cases:
            if name not in done:
                ap.error(f"--join: {name!r} has no row in {args.json}")
        for name, case in choose(args.cases):
            try:
                seed = RowStats.load(stats_path(stats, name)).meta.get("seed") if stats_path(stats, name).exists() else None
                if seed is not None and seed != args.seed:
                    ap.error(f"--join: the row of {name!r} was drawn with --seed {seed}: join with --seed {seed}")
                joined = join_runs(stats, name)
            except (ParameterError, DamagedFileError) as exc:
                ap.error(str(exc))
            case = dataclasses.replace(case() if callable(case) else case, name=name)
            rows[done.index(name)] = reread(case, joined, SHIFTS).to_dict()
            estimates[name] = estimate(rows[done.index(name)])
            budget = joined.meta["budget"]
            commands[-1:-1] = [f"python benchmarks/calibration_table.py --cases {name} --budget {budget:g} --runs {a}:{b}"
                               + (f" --seed {args.seed}" if args.seed else "") for a, b in joined.meta["parts"]
                               if f"--cases {name} --budget {budget:g} --runs {a}:{b}" not in " ".join(commands)]
            print(f"{name}: {len(joined.run_seconds)} runs sized to decide joined and read", file=sys.stderr)
            write_json(args.json, Calibration.from_dict({**old, "rows": rows}), estimates, commands)
    done = {r["case"] for r in rows}
    planned = ([p for p in plan_calibration(args.cases, **kw) if p[0] not in done]
               if not (args.reread or args.join) else [])
    estimates.update({name: s for name, _, s in planned})
    cal = None
    for name, _, _ in planned:  # one case at a time: the table so far is written after each
        one = calibrate([name], **kw, pools=args.pools, stats=stats,
                        progress=lambda line: print(line, file=sys.stderr, flush=True))
        rows += one.to_dict()["rows"]
        cal = type(one)(rows, one.level, one.shifts)
        write_json(args.json, cal, estimates, commands)
    if cal is None:
        from deeplimits.studies.scheme_order.calibration import Calibration
        cal = Calibration.from_dict({**old, "rows": rows})
    today = {r["case"]: estimate(r) for r in cal.to_dict()["rows"]}  # what --dry-run prints today for each row
    times = "\n".join(f"| {r['case']} | {r['tables']} | {r['seconds']:.0f} | {today[r['case']]:.0f} | "
                      f"{r['seconds'] / max(today[r['case']], 1e-9):.2f} |" for r in cal.to_dict()["rows"])
    text = (f"{cal.table()}\n\nMeasured with " + " then ".join(f"`{c}`" for c in commands) +
            f" (seed {args.seed}, on a shared 2-core machine). Each case's CPU seconds against the time model "
            "that `deeplimits order --calibrate --dry-run` prints:\n\n"
            "| case | tables | CPU seconds | estimated | ratio |\n|---|---|---|---|---|\n" + times)
    text += "\n\n" + rule_text({r["case"]: r.get("rule") for r in cal.to_dict()["rows"]})
    print(text)
    if args.write:
        write_block(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
