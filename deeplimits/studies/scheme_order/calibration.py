"""How often the strong-order verdict is wrong: its size and power, measured
(docs/schemes.md, "How often the verdict is wrong").

A case (:mod:`.cases`) is a scheme on a test equation, or a regime, whose order is known. Its
tables are real runs' per-draw errors: ``tables`` blocks of ``draws`` draws, disjoint blocks of
one pool of ``pool_factor * draws`` draws computed once (with ``pool_factor >= tables``, the
default, every table is an independent run, so the intervals below are honest; a smaller pool is
resampled, and its tables share its mean's error). Each table goes through the statistics and the
verdict of a run (:func:`~deeplimits.studies.convergence.statistics.error_statistics`,
:class:`~deeplimits.studies.convergence.result.ConvergenceResult`).

* the **size**: the fraction of correct tables told ``disagrees`` (at most the level,
  :data:`~deeplimits.studies.expansion_fit.LEVEL`), with its 95% Wilson interval;
* the **agreement**: the fraction of correct tables told ``agrees`` at the default margin (the
  equivalence test's power at this size);
* the **power** against a leading exponent off by ``m`` (each of :data:`SHIFTS`, both signs): the
  tables with every draw's errors multiplied by ``(L / L_0)^-m``, read with the margin ``m`` (the
  boundary of the equivalence test): the fraction *not* told ``agrees``, at least ``1 -
  EQUIVALENCE_LEVEL`` by construction.

With a ``budget``, the same at the budget's size: each of ``budget_tables`` tables is a run sized
to decide (:mod:`~deeplimits.studies.sequential`) on fresh draws, its stages read at their shares
of the levels, stopped at the first decided verdict.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import numpy as np

from ..expansion_fit import LEVEL
from .presets import DEFAULTS
from .cases import CASES, Case, choose, regime_case, scheme_case  # noqa: F401 - the cases, public here too
from .result import Calibration, CalibrationRow
from .table_stats import RowStats, stats_path
from .sized import read_runs, read_tables, rule_fingerprint, sized_tables, table_verdict

__all__ = ["Case", "CASES", "scheme_case", "regime_case", "calibrate", "plan_calibration", "reread", "row_stats", "SHIFTS",
           "MAX_TABLES", "table_verdict", "draw_runs"]

SHIFTS = (0.05, 0.1)
"""The exponent errors the power is measured against (each with both signs), each read with itself as
the margin."""
SIZED_DRAWS = {"euler-maruyama/linear-sde": 16384, "milstein/linear-sde": 16384, "heun/linear-stratonovich": 16384,
               "euler-maruyama/ou": 16384, "euler-maruyama/sin-cos": 16384, "euler-maruyama/sde-regime": 16384,
               "ode": 64, "sde": 4096, "fbm-H0.6": 16384, "fbm-H0.75": 16384, "fbm-H0.9": 16384, "rough-H0.45": 16384,
               "rough-H0.4": 16384, "rough-H0.35": 16384}
"""The mean draws a run sized to decide of each shipped case drew at the budget of 300 seconds (every
reading decided, or its last stage; benchmarks/calibration.json, ``budget_drawn``; docs/schemes.md,
"How often the verdict is wrong"): the time model of :func:`plan_calibration`. A calibration's run
reads five things on the same draws (the correct scheme at two margins, the exponent off by -+0.05
and -+0.1), and one of them is still undecided at the last stage in nearly every run, so most cases
draw their last stage; the ode regime decides all five at its first look (64 draws of 4,096)."""
MAX_TABLES = 100_000
"""The most tables per case and shift: each is a whole verdict (about 25 ms), 1e5 tables at the 5 readings
about 3.5 hours per case on one core."""


def calibrate(cases=None, *, tables: int = DEFAULTS["tables"], pool_factor: int | None = None,
              shifts=SHIFTS, seed: int = 0, budget: float | None = None, budget_tables: int | None = None,
              budget_cases=None, progress: Callable[[str], None] | None = None, pools=None,
              stats=None) -> Calibration:
    """Measure the size and power of the verdict on ``cases`` (names of :data:`CASES`, or
    :class:`Case` objects; default all): ``tables`` tables per reading, taken from a pool of
    ``pool_factor * draws`` draws computed once with ``seed`` (default ``pool_factor = tables``:
    independent tables; module docstring); with ``budget`` (seconds), also ``budget_tables``
    (default ``tables``) runs sized to decide of each case (of ``budget_cases``, names among
    ``cases``, when given). Every size is checked first (:func:`plan_calibration`).
    ``progress`` is called with a line as each case's pool is drawn, every quarter of its tables,
    and when it ends. ``pools``: a directory of stored draws (:class:`~.pools.PoolStore`): a case's
    draws are read from it when it holds them (a changed verdict rule measured again in minutes),
    else drawn and stored. ``stats``: a directory where each case's statistics are written
    (:mod:`~.table_stats`; its runs sized to decide then draw every stage), for :func:`reread`."""
    from ... import _validate as V_
    from .pools import PoolStore

    shifts = [V_.real("shifts", s, low=0.0, low_open=True, high=1.0) for s in shifts]
    chosen = plan_calibration(cases, tables=tables, pool_factor=pool_factor, seed=seed, shifts=len(shifts),
                              budget=budget, budget_tables=budget_tables, budget_cases=budget_cases)
    progress = V_.callback("progress", progress)
    store = PoolStore(pools) if pools is not None else None
    rows = []
    for name, case, estimate in chosen:
        say = (lambda line: progress(f"{name}: {line}")) if progress is not None else None
        case = dataclasses.replace(case, name=name)
        record = {} if stats is not None else None
        row = calibrate_case(case, tables, pool_factor or tables, shifts, seed, progress=say, store=store, record=record)
        sized = budget is not None and (budget_cases is None or name in budget_cases)
        if sized:
            sized_tables(row, case, budget_tables or tables, shifts, seed, budget, say, store=store, record=record)
        if record is not None:
            row_stats(case, record, seed=seed, pool=row.pool, budget=budget if sized else None).save(stats_path(stats, name))
        rows.append(row)
        if say is not None:
            say(f"disagrees {100 * row.size:.1f}% of {row.tables} tables, agrees {100 * row.rate('0.0', 'agrees'):.0f}% "
                f"({row.seconds:.0f} s; estimated {estimate:.0f} s)")
    return Calibration(rows, LEVEL, list(shifts))


def plan_calibration(cases=None, *, tables: int = DEFAULTS["tables"], pool_factor: int | None = None,
                     seed: int = 0, shifts: int = len(SHIFTS), budget: float | None = None,
                     budget_tables: int | None = None, budget_cases=None) -> list[tuple]:
    """``(name, case, seconds)`` of each case :func:`calibrate` would run, built but not sampled,
    after every check of its sizes (``deeplimits order --calibrate --dry-run`` refuses what the run
    refuses): ``cases`` distinct, ``tables`` (and ``budget_tables``) in ``[1, MAX_TABLES]``,
    ``pool_factor >= 1`` (default ``tables``) with each pool (and, for a network regime, its run)
    within the machine's memory and the counts of :mod:`deeplimits._resources`, ``budget`` in
    seconds or ``None``. ``seconds``: the case's time model (:attr:`Case.seconds`) of its pool, its
    tables' verdicts at each reading (:func:`~deeplimits.studies.timing.verdict_seconds`) and, with
    a budget, the runs sized to decide: a shipped case's at the draws its measured runs drew on
    average (:data:`SIZED_DRAWS`), another's at its last stage (the most it can take)."""
    from ... import _resources as R_
    from ... import _validate as V_
    from ..sequential import check_budget, plan_stages
    from ..timing import verdict_seconds

    tables = V_.integer("tables", tables, high=MAX_TABLES)
    pool_factor = tables if pool_factor is None else V_.integer("pool_factor", pool_factor)
    budget = check_budget(budget)
    budget_tables = tables if budget_tables is None else V_.integer("budget_tables", budget_tables, high=MAX_TABLES)
    V_.integer("seed", seed, low=0)
    readings = 1 + 3 * shifts
    out = []
    for name, case in choose(cases):
        case = case() if callable(case) else case
        draws = pool_factor * case.draws
        R_.require_count(draws, R_.MAX_TASKS * 64, f"pool_factor={pool_factor} x {case.draws} draws of {name or case.name}"
                         " make too many draws", ("pool_factor",))
        R_.require_memory(4 * 8 * draws * len(case.depths), f"for the pool of {draws} draws of {name or case.name} "
                          "(its errors, a scaled copy per shift, the tables' picks)", ("pool_factor",))
        seconds = case.seconds(draws) + tables * readings * verdict_seconds(case.draws)
        if budget is not None and (budget_cases is None or (name or case.name) in budget_cases):
            stages = plan_stages(case.draws, case.seconds, budget)
            drawn = min(SIZED_DRAWS.get(name, stages[-1]), stages[-1])  # a case run at another budget: at most its last stage
            looks = 1 + sum(1 for n in stages[:-1] if n < drawn)
            seconds += budget_tables * (case.seconds(drawn) + looks * readings * verdict_seconds(drawn))
        out.append((name or case.name, case, seconds))
    return out


def draw_runs(case, runs: range, stats, *, budget: float, seed: int = 0, shifts=SHIFTS,
              progress: Callable[[str], None] | None = None):
    """Draw the runs ``runs`` (indices ``a .. b - 1``) of the runs sized to decide within ``budget``
    seconds of ``case`` (a name of :data:`CASES`, or a :class:`Case`), as :func:`calibrate` with
    ``seed`` draws them (run ``t`` is seeded by ``t``: the same numbers), and store their statistics
    under ``stats`` as a part of the row (:func:`~.table_stats.part_path`; no table, no pool): a
    row's runs drawn by several processes or machines, then joined to its tables' statistics
    (:func:`~.table_stats.join_runs`) and read (:func:`reread`). Returns the part's path. Every size
    is checked first (:func:`plan_calibration`)."""
    from ... import _validate as V_
    from ...errors import ParameterError
    from .table_stats import part_path, table_stats

    if not isinstance(runs, range) or runs.step != 1 or not 0 <= runs.start < runs.stop <= MAX_TABLES:
        raise ParameterError("runs", f"runs must be a range a:b of run indices with 0 <= a < b <= {MAX_TABLES}, "
                                     f"got {f'{runs.start}:{runs.stop}' if isinstance(runs, range) else repr(runs)}")
    shifts = [V_.real("shifts", s, low=0.0, low_open=True, high=1.0) for s in shifts]
    (name, case, _), = plan_calibration([case], tables=1, seed=seed, shifts=len(shifts), budget=budget,
                                        budget_tables=len(runs))
    case = dataclasses.replace(case, name=name)
    progress = V_.callback("progress", progress)
    say = (lambda line: progress(f"{name}: {line}")) if progress is not None else None
    record = {"tables": table_stats(case, [])}  # a part holds runs only
    row = CalibrationRow(case.name, case.order.expansion_text, list(case.depths), case.draws, 0, 0, {}, 0.0,
                         rule=rule_fingerprint())
    sized_tables(row, case, len(runs), shifts, seed, budget, say, record=record, runs=runs)
    part = row_stats(case, record, seed=seed, pool=0, budget=budget)
    path = part_path(stats, name, runs)
    dataclasses.replace(part, meta={**part.meta, "runs": [runs.start, runs.stop]}).save(path)
    return path


def calibrate_case(case: Case, tables: int, pool_factor: int, shifts, seed: int, *,
                   progress: Callable[[str], None] | None = None, store=None, record: dict | None = None) -> CalibrationRow:
    """The verdicts of ``tables`` tables of ``case`` at each reading (module docstring); ``store``:
    a :class:`~.pools.PoolStore` the pool is read from or stored in; ``record``: a dict that
    receives the tables' statistics (``'tables'``, :class:`~.table_stats.TableStats`) and the
    pool's CPU seconds (``'pool_seconds'``), the row read again by :func:`reread`."""
    from ..._random import single_threaded_torch
    from .table_stats import table_stats

    t0 = time.process_time()  # CPU seconds of this process: the time model's unit, whatever the load
    n_pool, said = pool_factor * case.draws, [t0]

    def drawn(done: int) -> None:  # a line at most every 30 s of CPU while a network regime's pool is drawn
        if progress is not None and (time.process_time() - said[0] >= 30 or done == n_pool):
            said[0] = time.process_time()
            progress(f"pool: {done} of {n_pool} draws ({said[0] - t0:.0f} s of CPU)")

    sample = case.sample if store is None else (lambda n, s, **kw: store.sample(case, n, s, **kw))
    reused0 = store.reused_seconds if store is not None else 0.0
    with single_threaded_torch():
        pool = np.asarray(sample(n_pool, seed, progress=drawn) if case.progressive else sample(n_pool, seed), dtype=float)
    pool = pool[np.isfinite(pool).all(1)]
    reused = store.reused_seconds - reused0 if store is not None else 0.0  # the stored draws' CPU seconds, as if drawn
    pool_seconds = time.process_time() - t0 + reused
    if progress is not None:
        progress(f"pool of {len(pool)} draws in {pool_seconds:.0f} s of CPU; {tables} tables")
    rng = np.random.default_rng(seed)
    stats = table_stats(case, (pool[_pick(rng, len(pool), case.draws, i)] for i in range(tables)))  # one table at a time
    if record is not None:
        record.update(tables=stats, pool_seconds=pool_seconds)
    counts = read_tables(case, stats, shifts, progress=progress, t0=t0)
    return CalibrationRow(case.name, case.order.expansion_text, list(case.depths), case.draws, len(pool), tables,
                          counts, time.process_time() - t0 + reused, rule=rule_fingerprint())


def reread(case: Case, stats, shifts) -> CalibrationRow:
    """The row of ``case`` read by today's rule from its statistics ``stats``
    (:class:`~.table_stats.RowStats`: its tables and, if any, its runs sized to decide) without
    drawing: its seconds are the stored draws' CPU seconds and this reading's. A
    :class:`~deeplimits.errors.ParameterError` naming ``stats`` (one line) for statistics drawn as
    another case, or runs whose stages are not today's: draw them again."""
    stats.check(case)
    t0 = time.process_time()
    meta = stats.meta
    counts = read_tables(case, stats.tables, shifts) if len(stats.tables) else {}  # a row of runs sized to decide only
    row = CalibrationRow(case.name, case.order.expansion_text, list(case.depths), case.draws, int(meta["pool"]),
                         len(stats.tables), counts, 0.0, rule=rule_fingerprint())
    if stats.runs is not None:
        read_runs(row, case, stats, shifts)
    row.seconds += stats.pool_seconds + time.process_time() - t0
    return row


def row_stats(case, record: dict, *, seed: int, pool: int, budget: float | None = None) -> RowStats:
    """The :class:`~.table_stats.RowStats` of ``case`` from what :func:`calibrate_case` (and
    :func:`~.sized.sized_tables`) put in ``record``."""
    import torch

    from .pools import engine_fingerprint

    meta = dict(case=case.name, ident=case.ident, depths=list(case.depths), draws=int(case.draws),
                reference=case.reference, seed=int(seed), pool=int(pool), tables=len(record["tables"]),
                budget=budget, engine=engine_fingerprint(), torch=torch.__version__, numpy=np.__version__)
    runs = record.get("runs")
    return RowStats(meta, record["tables"], float(record.get("pool_seconds", 0.0)), runs,
                    tuple(record.get("stages", ())), record.get("run_seconds"))


def _pick(rng, n_pool: int, n: int, i: int) -> np.ndarray:
    """The draws of table ``i``: the ``i``-th disjoint block while the pool lasts, else a resample."""
    if (i + 1) * n <= n_pool:
        return np.arange(i * n, (i + 1) * n)
    return rng.integers(0, n_pool, size=n)
