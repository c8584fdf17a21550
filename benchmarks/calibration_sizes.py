"""The size of the strong-order verdict on every shipped scheme-problem pair and regime, 200 tables
each, and its power on the sde regime at the main job's size: the calibration that
tests/test_calibration.py ran in the suite until issue 56 (37 minutes of a 38-minute suite under load),
now run here and committed as benchmarks/calibration_sizes.json, which the test reads (each row within
the level, read by the current rule: :func:`~deeplimits.studies.scheme_order.sized.rule_fingerprint`).

    python benchmarks/calibration_sizes.py                  # every case, into benchmarks/calibration_sizes.json
    python benchmarks/calibration_sizes.py --resume         # keep the rows already there, run the others
    python benchmarks/calibration_sizes.py --pools          # the small stored pools of tests/data/ (and their hash)
    python benchmarks/calibration_sizes.py --reread         # every row read again by today's rule, no draws

Sizes (as the test had them): the schemes at depths 8..128 with 128 draws (nested references 16
times finer), the regimes at width 4 and depths 8..128, each case's pool 16 times a table (the
tables of a smaller pool share its mean's error: at 4 times, Milstein on the sde regime's noise read
8 of 200 tables ``disagrees``; its 200 fully disjoint tables, 1); the rough regime at width 1 against
the exact solution at depths 8..2048, and at width 4 against the corrected scheme at depths 8..128,
64-draw tables; the power on the main job's sde panel (width 16, depths 8..512, 256 draws, reference
8192), 100 tables from a pool of 4 times a table recentred on the declared exponent (not recentred, it
reads 0.506, and the tables off by -0.05 agreed 18 times in 100 while those off by +0.05 never did:
the pool's error, not the rule's).

Each row's tables' statistics go to benchmarks/calibration_stats/sizes/ (``--stats``;
:mod:`deeplimits.studies.scheme_order.table_stats`): ``--reread`` reads every row again from them.

``--pools`` writes tests/data/calibration_pools.npz: per family of cases, 40 tables of one case drawn
with seed 1 (independent of the rows here), and the power's pool of 4 times a table, the one of its
row here (seed 0; recentred where it is read: the pool of seed 1 reads a best exponent of 0.000,
its profile's minimum at the shift -1/2, and cannot be recentred), stored as float32; the
suite reads their verdicts (tests/test_calibration.py, a check that fails on a miscalibrated rule)
and checks the file's SHA-256 against the one this prints.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

JSON = ROOT / "benchmarks" / "calibration_sizes.json"
STATS = ROOT / "benchmarks" / "calibration_stats" / "sizes"
POOLS = ROOT / "tests" / "data" / "calibration_pools.npz"
SMALL = dict(depths=(8, 16, 32, 64, 128), draws=128)
#: the shipped scheme-problem pairs whose order is known (a Stratonovich scheme on an Itô problem
#: converges to another equation: those pairs must say no, tests/test_calibration.py)
PAIRS = [("euler-maruyama", "linear-sde", None), ("milstein", "linear-sde", None),
         ("heun", "linear-stratonovich", None), ("euler-maruyama", "ou", None), ("milstein", "ou", None),
         ("heun", "ou", None), ("euler-maruyama", "sin-cos", None), ("milstein", "sin-cos", None),
         ("heun", "sin-cos", None), ("euler-maruyama", "sde-regime", None), ("milstein", "sde-regime", None),
         ("heun", "sde-regime", None), ("torchsde-euler", "linear-sde", None),
         ("torchsde-milstein", "linear-sde", None), ("modified-euler", "linear-young", 0.6),
         ("modified-euler", "linear-young", 0.75), ("modified-euler", "linear-young", 0.9)]
REGIMES = [("sde", {}), ("ode", {}), ("fbm", {"hurst": 0.6}), ("fbm", {"hurst": 0.75}), ("fbm", {"hurst": 0.9}),
           ("fbm", {"hurst": 0.75, "corrected": True}), ("inside-sde", {}), ("inside-ode", {"beta": 0.5})]
ROUGH = [(0.45, 1), (0.4, 1), (0.35, 1), (0.45, 4), (0.4, 4)]
TABLES, POOL_FACTOR = 200, 16
POWER = "power sde"
#: the stored pools: (family, case name in :func:`suite`, tables)
FAMILIES = [("scheme, exact solution", "pair milstein/linear-sde", 40),
            ("scheme, nested reference", "pair euler-maruyama/ou", 40),
            ("network regime", "regime sde", 40), ("rough regime", "rough H=0.4 width=1", 40)]


def pair_case(scheme, problem, hurst):
    from deeplimits.studies.scheme_order import calibration as C

    return C.scheme_case(scheme, problem, hurst=hurst, **SMALL)


def regime_case(regime, options):
    from deeplimits.studies.scheme_order import calibration as C

    draws = 16 if regime == "ode" else 64
    ref = {} if regime in ("ode", "inside-ode") else {"reference": 2048}
    return C.regime_case(regime, width=4, depths=[8, 16, 32, 64, 128], draws=draws, **ref, **options)


def rough_case(hurst, width):
    from deeplimits.studies.scheme_order import calibration as C

    depths = [8, 16, 32, 64, 128, 256, 512, 1024, 2048] if width == 1 else [8, 16, 32, 64, 128]
    return C.regime_case("rough", hurst=hurst, width=width, depths=depths, draws=64)


def _options(options):
    return "".join(f" {'H' if k == 'hurst' else k}={v}" for k, v in options.items())


def suite() -> dict:
    """``name -> case builder`` of every size case (built, not sampled)."""
    out = {f"pair {s}/{p}" + (f" H={h}" if h else ""): (lambda a=(s, p, h): pair_case(*a)) for s, p, h in PAIRS}
    out.update({f"regime {r}{_options(o)}": (lambda a=(r, o): regime_case(*a)) for r, o in REGIMES})
    out.update({f"rough H={h} width={w}": (lambda a=(h, w): rough_case(*a)) for h, w in ROUGH})
    return out


def recentred_sde(seed: int = 0, *, pool=None):
    """The main job's sde case whose draws are a pool of 4 times a table (``pool``, else drawn with
    ``seed``) recentred on the declared exponent: ``(case, the pool's exponent before)``."""
    from deeplimits._random import single_threaded_torch
    from deeplimits.studies.scheme_order import calibration as C
    from deeplimits.studies.scheme_order.sized import table_result

    case = C.regime_case("sde")
    if pool is None:
        with single_threaded_torch():
            pool = np.asarray(case.sample(4 * case.draws, seed), dtype=float)
    best = table_result(case, pool).fit.best_exponent
    L = np.asarray(case.depths, dtype=float)
    centred = pool * (L / L[0]) ** (best - case.order.rate)
    return dataclasses.replace(case, name=POWER, sample=lambda n, s: centred[:n], progressive=False), best


def run_case(name: str, stats=STATS) -> dict:
    """The row of one case (:func:`~deeplimits.studies.scheme_order.calibration.calibrate_case`), its
    statistics written under ``stats``."""
    from deeplimits.studies.scheme_order import calibration as C
    from deeplimits.studies.scheme_order.table_stats import stats_path

    record, extra = {}, {}
    if name == POWER:
        case, extra["pool_exponent"] = recentred_sde(0)
        row = C.calibrate_case(case, 100, 4, (0.05,), seed=0, record=record)
    else:
        case = dataclasses.replace(suite()[name](), name=name)
        row = C.calibrate_case(case, TABLES, POOL_FACTOR, (), seed=0, record=record)
    C.row_stats(case, record, seed=0, pool=row.pool).save(stats_path(stats, name))
    return {**dataclasses.asdict(row), **extra}


def reread_case(row: dict, stats=STATS) -> dict:
    """``row`` read again by today's rule from its statistics under ``stats`` (no draws)."""
    from deeplimits.studies.scheme_order import calibration as C
    from deeplimits.studies.scheme_order.table_stats import RowStats, stats_path

    name = row["case"]
    case = dataclasses.replace(C.regime_case("sde") if name == POWER else suite()[name](), name=name)
    shifts = (0.05,) if name == POWER else ()
    new = dataclasses.asdict(C.reread(case, RowStats.load(stats_path(stats, name)), shifts))
    return {**new, **{k: v for k, v in row.items() if k not in new}}  # the power's pool exponent kept


def reread_or_run(row: dict, stats) -> dict:
    """``row`` read again by today's rule (:func:`reread_case`), or drawn again where its statistics
    are missing or were drawn as another case; the power's row is drawn again (51 s of CPU): its
    tables are recentred on the exponent today's rule reads from its pool."""
    from deeplimits.studies.scheme_order.table_stats import stats_path

    name = row["case"]
    if name != POWER and stats_path(stats, name).exists():
        try:
            return reread_case(row, stats)
        except ValueError as exc:
            print(f"{name}: {exc}: drawn again", file=sys.stderr, flush=True)
    return run_case(name, stats)


def write_pools(path=POOLS) -> str:
    """The stored pools (module docstring); returns the file's SHA-256."""
    from deeplimits._random import single_threaded_torch

    arrays = {}
    for _, name, tables in FAMILIES:
        case = suite()[name]()
        with single_threaded_torch():
            arrays[name] = np.asarray(case.sample(tables * case.draws, 1), dtype=np.float32)
    from deeplimits.studies.scheme_order import calibration as C

    case = C.regime_case("sde")
    with single_threaded_torch():
        arrays[POWER] = np.asarray(case.sample(4 * case.draws, 0), dtype=np.float32)
    path.parent.mkdir(exist_ok=True)
    np.savez_compressed(path, **arrays)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv=None) -> int:
    from deeplimits.studies.expansion_fit import LEVEL
    from deeplimits.studies.scheme_order.sized import rule_fingerprint

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=lambda s: s.split(","), help="comma-separated names (default all)")
    ap.add_argument("--json", default=str(JSON))
    ap.add_argument("--resume", action="store_true", help="keep the rows already in --json, run the others")
    ap.add_argument("--pools", action="store_true", help="write the stored pools of tests/data/ instead")
    ap.add_argument("--stats", help="where each row's statistics are written (and read by --reread)")
    ap.add_argument("--reread", action="store_true", help="read every row of --json again from --stats, drawing nothing (a row without "
                    "statistics is drawn again)")
    args = ap.parse_args(argv)
    args.stats = args.stats or str(pathlib.Path(args.json).parent / "calibration_stats" / "sizes")  # beside the JSON
    if args.pools:
        print(f"{POOLS.relative_to(ROOT)}: sha256 {write_pools()}")
        return 0
    path, rule = pathlib.Path(args.json), rule_fingerprint()
    command = ("python benchmarks/calibration_sizes.py " + " ".join(argv if argv is not None else sys.argv[1:])).strip()
    if args.reread:
        old, rows = json.loads(path.read_text()), []
        for r in old["rows"]:  # the JSON is written once, all of it read by one rule; progress meanwhile
            t0 = time.process_time()
            rows.append(reread_or_run(r, args.stats))
            print(f"{r['case']}: {rows[-1]['counts']['0.0']} ({time.process_time() - t0:.0f} s of CPU, "
                  f"{len(rows)} of {len(old['rows'])})", flush=True)
        path.write_text(json.dumps({"rule": rule, "level": LEVEL, "rows": rows,
                                    "commands": old.get("commands", []) + [command]}, indent=1))
        return 0
    old = json.loads(path.read_text()) if args.resume and path.exists() else {}
    if old and old.get("rule") != rule:
        raise SystemExit(f"{path} was read by another rule ({old.get('rule')}, now {rule}): run without --resume")
    rows = {r["case"]: r for r in old.get("rows", [])}
    names = [n for n in (args.cases or [*suite(), POWER]) if n not in rows]
    for name in names:
        t0 = time.process_time()
        rows[name] = run_case(name, args.stats)
        print(f"{name}: {rows[name]['counts']['0.0']} ({time.process_time() - t0:.0f} s of CPU)", flush=True)
        path.write_text(json.dumps({"rule": rule, "level": LEVEL, "rows": list(rows.values()),
                                    "commands": old.get("commands", []) + [command]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
