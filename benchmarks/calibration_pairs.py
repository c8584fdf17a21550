"""Runs sized to decide on every shipped scheme-problem pair that the table of docs/schemes.md
("How often the verdict is wrong") does not hold: how often a correct scheme's run agrees and how
often a run whose exponent is off by 0.05 or 0.1 is refused ``agrees``, with the default budget
(``deeplimits order --budget 300``), at ``deeplimits order``'s usual depths and first stage.

    python benchmarks/calibration_pairs.py --pools benchmarks/pools --write          # every pair, 50 runs
    python benchmarks/calibration_pairs.py --pairs milstein/ou --runs 20 --resume    # one pair more
    python benchmarks/calibration_pairs.py --reread --write    # every row read again by today's rule, no draws

Each run is :func:`~deeplimits.studies.scheme_order.sized.sized_tables`'s (the calibration's runs
sized to decide: stage ``i`` of run ``t`` drawn with the seed ``mix_seed(mix_seed(seed + 1, t),
i)``, the shifted runs the same draws with every error multiplied by ``(L / L_0)^-m``). The pairs
are benchmarks/calibration_sizes.py's ``PAIRS``, less the table's cases. ``--write`` replaces the
text between ``<!-- calibration-pairs:begin -->`` and ``<!-- calibration-pairs:end -->`` of
docs/schemes.md; the JSON goes to benchmarks/calibration_pairs.json (``--resume`` keeps its rows).
Every run draws its every stage, and the statistics of each go to
benchmarks/calibration_stats/pairs/ (``--stats``; :mod:`deeplimits.studies.scheme_order.table_stats`):
``--reread`` reads every row of the JSON again from them, by today's rule, in minutes (a row
whose statistics are missing is drawn again with its runs, and its statistics written).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shlex
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import calibration_table  # noqa: E402 - the table's rule line and docs writer

JSON = ROOT / "benchmarks" / "calibration_pairs.json"
STATS = ROOT / "benchmarks" / "calibration_stats" / "pairs"
BEGIN, END = "<!-- calibration-pairs:begin -->", "<!-- calibration-pairs:end -->"
BUDGET = 300.0


def pairs() -> dict:
    """``name -> case`` of every shipped pair not among the table's cases (name as the case's)."""
    from calibration_sizes import PAIRS
    from deeplimits.studies.scheme_order.cases import CASES, scheme_case

    out = {}
    for scheme, problem, hurst in PAIRS:
        case = scheme_case(scheme, problem, hurst=hurst)
        if case.name not in CASES:
            out[case.name] = case
    return out


def table(rows: list, shifts) -> str:
    """The Markdown table of the rows (:class:`~deeplimits.studies.scheme_order.result.CalibrationRow`)."""
    from deeplimits.studies.equivalence import MARGIN

    head = ["pair", "expansion", "runs", "disagrees (size) [95% CI]", f"agrees (margin {MARGIN:g})"] + [
        f"not agrees, off by {m:g} (margin {m:g})" for m in shifts] + ["mean draws (correct)", "CPU seconds"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        runs = sum(r.budget_counts["0.0"].values())
        out.append("| " + " | ".join([r.case, r.expansion, str(runs)] + r.cells(r.budget_counts, shifts)
                                     + [f"{r.budget_draws:.0f}", f"{r.seconds:.0f}"]) + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    from deeplimits.studies.scheme_order.calibration import SHIFTS, reread, row_stats
    from deeplimits.studies.scheme_order.pools import PoolStore
    from deeplimits.studies.scheme_order.result import CalibrationRow
    from deeplimits.studies.scheme_order.sized import rule_fingerprint, sized_tables
    from deeplimits.studies.scheme_order.table_stats import RowStats, stats_path
    from deeplimits.studies.scheme_order.table_stats import table_stats as no_tables

    known = pairs()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=lambda s: s.split(","), help=f"comma-separated, of: {', '.join(known)} (default all)")
    ap.add_argument("--runs", type=int, default=50, help="runs sized to decide per pair (default 50)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pools", help="a directory of stored draws (deeplimits.studies.scheme_order.pools)")
    ap.add_argument("--resume", action="store_true", help="keep the pairs already in --json, run the others")
    ap.add_argument("--json", default=str(JSON))
    ap.add_argument("--write", action="store_true", help="write the table into docs/schemes.md")
    ap.add_argument("--stats", help="where each pair's statistics are written (and read by --reread)")
    ap.add_argument("--reread", action="store_true", help="read every row of --json again from --stats by today's "
                    "rule, drawing nothing (a row without statistics is drawn again as it was made; one today's rule "
                    "read already is kept)")
    args = ap.parse_args(argv)
    args.stats = args.stats or str(pathlib.Path(args.json).parent / "calibration_stats" / "pairs")  # beside the JSON
    for name in args.pairs or []:
        if name not in known:
            ap.error(f"--pairs: {name!r} is not one of {', '.join(known)}")
    if not 1 <= args.runs <= 10_000:
        ap.error(f"--runs must be in [1, 10000], got {args.runs}")
    path = pathlib.Path(args.json)
    old = json.loads(path.read_text()) if args.resume and path.exists() else {}
    rows = [CalibrationRow.from_dict(r) for r in old.get("rows", [])]
    commands = list(old.get("commands", [])) + [
        shlex.join(["python", "benchmarks/calibration_pairs.py", *(argv if argv is not None else sys.argv[1:])])]
    store = PoolStore(args.pools) if args.pools else None
    runs = {}

    def save() -> None:
        path.write_text(json.dumps({"rows": [r.to_dict() for r in rows], "shifts": list(SHIFTS), "budget": BUDGET,
                                    "seed": args.seed, "commands": commands}, indent=1))

    if args.reread:  # the rows whose statistics are there read again; the others drawn again below, as they were made
        if not path.exists() or args.pairs or args.resume:
            ap.error("--reread: reads every row of an existing --json again (no --pairs or --resume)")
        old = json.loads(path.read_text())
        args.seed = int(old.get("seed", args.seed))  # the seed the rows were drawn with
        runs = {r["case"]: sum(r["budget_counts"]["0.0"].values()) for r in old["rows"]}
        current = {r["case"]: r for r in old["rows"] if r.get("rule") == rule_fingerprint()}
        for name in runs:
            if name not in known:
                raise SystemExit(f"{path}: pair {name!r} is not one of today's pairs ({', '.join(known)})")
            if name in current:  # read by today's rule already (a reread stopped half way goes on)
                rows.append(CalibrationRow.from_dict(current[name]))
            elif stats_path(args.stats, name).exists():
                try:
                    rows.append(reread(known[name], RowStats.load(stats_path(args.stats, name)), SHIFTS))
                except ValueError as exc:
                    print(f"{name}: {exc}: drawn again", file=sys.stderr, flush=True)
        commands = list(old.get("commands", [])) + commands[-1:]
        save()
    done = {r.case for r in rows}
    for name in (list(runs) if args.reread else args.pairs or list(known)):
        if name in done:
            continue
        case = known[name]
        row = CalibrationRow(case.name, case.order.expansion_text, list(case.depths), case.draws, 0, 0, {}, 0.0,
                             rule=rule_fingerprint())
        record = {"tables": no_tables(case, [])}
        sized_tables(row, case, runs.get(name, args.runs), SHIFTS, args.seed, BUDGET,
                     progress=lambda line, n=name: print(f"{n}: {line}", file=sys.stderr, flush=True), store=store,
                     record=record)
        row_stats(case, record, seed=args.seed, pool=0, budget=BUDGET).save(stats_path(args.stats, name))
        rows.append(row)
        save()
        print(f"{name}: {row.budget_counts} mean draws {row.budget_draws:.0f}, {row.seconds:.0f} s", file=sys.stderr)
    order = list(runs) or list(known)
    rows.sort(key=lambda r: order.index(r.case) if r.case in order else len(order))  # as the JSON had them
    save()
    text = (table(rows, SHIFTS) + "\n\nMeasured with " + " then ".join(f"`{c}`" for c in commands)
            + f" (seed {args.seed}, budget {BUDGET:g} s, on a shared 2-core machine). "
            + calibration_table.rule_text({r.case: r.rule for r in rows}))
    print(text)
    if args.write:
        calibration_table.write_block(text, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
