"""The readings of a calibration table (its verdict at a margin and a share of the levels) and
the calibration of runs sized to decide (docs/schemes.md, "How often the verdict is wrong"):
each table a real sequential run on fresh draws (:mod:`~deeplimits.studies.sequential`), its
stages read at their shares of the levels and stopped at the first decided verdict, at every
reading of :mod:`.calibration` (the correct scheme, and the exponent off by each shift read at
that shift as the margin)."""

from __future__ import annotations

import ast
import hashlib
import inspect
import sys
import textwrap
import time
from typing import Callable

import numpy as np

from ..._random import mix_seed, single_threaded_torch
from ..equivalence import MARGIN
from ..expansion_fit import VERDICTS
from ..sequential import DECIDED, plan_stages, shares
from .cases import Case

__all__ = ["sized_tables", "read_tables", "read_runs", "table_verdict", "table_result", "rule_fingerprint", "RULE"]

#: what a table's verdict is computed by (:func:`table_result`): whole modules, or some of a module's
#: objects (``module:name,name``), the modules relative to ``deeplimits``
RULE = ("studies._expansion_core", "studies._expansion_reading", "studies._fit_core", "studies.expansion_fit",
        "studies.equivalence", "studies.fits", "_stats", "orders:Term", "studies.strong_error:fit_rate",
        "studies.convergence.statistics:error_statistics,_statistics",
        "studies.convergence.result:LEVEL,EQUIVALENCE_LEVEL,MIN_FINITE_DRAWS,MAX_CI_WIDTH,ConvergenceResult.terms,"
        "ConvergenceResult.fit,ConvergenceResult.omitted,ConvergenceResult.nested,ConvergenceResult._evidence_note,"
        "ConvergenceResult.verdict", "studies.scheme_order.sized:table_result")


def _key(shift: float, margin: float) -> str:
    """The key of a tally: ``'0.0'`` (correct, default margin), ``'0.0@0.05'`` (correct, margin 0.05), ``'-0.1'``."""
    return str(float(shift)) + ("" if shift or margin == MARGIN else f"@{margin:g}")


def _readings(shifts) -> list[tuple[float, float]]:
    """``(shift, margin)`` of every reading: the correct tables at the default margin and at each
    shift's, then each shift with both signs at itself as the margin."""
    out = [(0.0, MARGIN)] + [(0.0, m) for m in shifts if m != MARGIN]
    return out + [(s, m) for m in shifts for s in (-m, m)]


def table_verdict(case: Case, errors: np.ndarray, *, margin: float = MARGIN, share: float = 1.0) -> str:
    """The verdict a run with these per-draw errors gets (its statistics with a bootstrap of 200),
    read with ``margin`` at the share ``share`` of the levels."""
    return table_result(case, errors, margin=margin, share=share).verdict


def table_result(case: Case, errors: np.ndarray, *, margin: float = MARGIN, share: float = 1.0):
    """The :class:`~deeplimits.studies.convergence.result.ConvergenceResult` of :func:`table_verdict`
    (its fit says, e.g., from which depth an agreement is read)."""
    from ..convergence.result import ConvergenceResult
    from ..convergence.statistics import error_statistics

    stats = error_statistics(list(case.depths), errors, errors, 0, case.order, n_boot=200)
    return ConvergenceResult(regime="calibration", hurst=None, width=1, activation="-", arch="-", corrected=False,
                             inputs=1, reference=case.reference or case.depths[-1], seed=0, dtype="float64",
                             theory_rate=case.order.rate, rate_note="", seconds=0.0,
                             nested_reference=case.reference is not None, margin=margin, level_share=share, **stats)


def rule_fingerprint() -> str:
    """The verdict rule's version: the SHA-256 (first 16 hex digits) of the code of :data:`RULE`, its
    syntax trees without docstrings (an edited docstring or comment keeps it; any change to the code or
    to a constant, e.g. :data:`~deeplimits.studies.expansion_fit.LEVEL`, changes it). A calibration
    records it (benchmarks/calibration_sizes.json): one read by another rule is stale."""
    from ... import _stats, orders  # noqa: F401 - every module of the rule imported (table_result's imports, and these)
    from .. import _expansion_reading, fits, strong_error  # noqa: F401
    from ..convergence import result, statistics  # noqa: F401

    h = hashlib.sha256()
    for part in RULE:
        module, _, names = part.partition(":")
        mod = sys.modules[f"deeplimits.{module}"]
        if not names:
            h.update(_code(inspect.getsource(mod)).encode())
        for name in filter(None, names.split(",")):
            obj = mod
            for attr in name.split("."):
                obj = inspect.getattr_static(obj, attr)
            obj = getattr(obj, "fget", getattr(obj, "func", obj))  # a property, a cached property
            text = inspect.getsource(obj) if callable(obj) else repr(obj)
            h.update(f"{part}:{name}={_code(textwrap.dedent(text)) if callable(obj) else text}".encode())
    return h.hexdigest()[:16]


def _code(source: str) -> str:
    """The syntax tree of ``source`` without its docstrings, written out field by field (empty fields
    left out: the same text whatever Python version writes the tree)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return _dump(tree)


def _dump(node) -> str:
    if isinstance(node, list):
        return "[" + ",".join(map(_dump, node)) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = ((f, _dump(getattr(node, f, None))) for f in node._fields)
    return f"{type(node).__name__}(" + ",".join(f"{f}={v}" for f, v in fields if v not in ("None", "[]")) + ")"


def read_tables(case: Case, stats, shifts, *, progress: Callable[[str], None] | None = None,
                t0: float | None = None) -> dict:
    """``key -> {verdict: count}`` of the tables ``stats`` (:class:`~.table_stats.TableStats`) at
    every reading of ``shifts`` (:func:`_readings`); ``progress`` told every quarter of the readings
    (CPU seconds since ``t0``)."""
    t0 = time.process_time() if t0 is None else t0
    counts, readings = {}, _readings(shifts)
    for k, (shift, margin) in enumerate(readings):
        tally = dict.fromkeys(VERDICTS, 0)
        for i in range(len(stats)):
            tally[stats.verdict(case, i, shift=shift, margin=margin)] += 1
        counts[_key(shift, margin)] = tally
        if progress is not None and k % max(1, len(readings) // 4) == 0:
            progress(f"reading {k + 1} of {len(readings)} ({time.process_time() - t0:.0f} s of CPU)")
    return counts


def sized_tables(row, case, tables: int, shifts, seed: int, budget: float,
                 progress: Callable[[str], None] | None = None, store=None, record: dict | None = None,
                 runs: range | None = None) -> None:
    """Fill ``row``'s ``budget``, ``budget_counts``, ``budget_draws`` (the mean draws at which a
    correct scheme's run ended) and ``budget_drawn`` (the mean draws a run drew: its every reading
    decided, or its last stage) with ``tables`` runs of
    ``case`` sized to decide within ``budget`` seconds (stages from the case's time model); run
    ``t`` draws its stage ``i`` with the seed ``mix_seed(mix_seed(seed + 1, t), i)`` (read from
    ``store``, a :class:`~.pools.PoolStore`, when it holds them). With ``record`` (a dict), every
    run draws every stage, so that another rule can read it again (:func:`read_runs`), and
    ``record`` receives ``'runs'`` (their statistics, run by run, stage by stage),
    ``'stages'`` and ``'run_seconds'`` (each run's CPU seconds of drawing at the end of each
    stage); the row's seconds count each run's drawing up to the stage it ended at, and its reading.
    ``runs``: the runs drawn (default ``range(tables)``): a part of a row, drawn in its own process
    (the same numbers as in the whole row; joined by :func:`~.table_stats.join_runs`)."""
    from .table_stats import TableStats, table_stats

    stages, readings = plan_stages(case.draws, case.seconds, budget), _readings(shifts)
    split, L = shares(len(stages)), np.asarray(case.depths, dtype=float)
    sample = case.sample if store is None else (lambda n, s: store.sample(case, n, s))
    todo = range(tables) if runs is None else runs
    runs, spent, ends, reading = [], [], [], 0.0  # each run's statistics, drawing seconds, readings' ends
    for done, t in enumerate(todo, 1):
        errors, ended, run, secs, drawing = np.empty((0, len(L))), {}, [], [], 0.0
        for i, n in enumerate(stages):
            c0, reused = time.process_time(), store.reused_seconds if store is not None else 0.0
            with single_threaded_torch():
                new = np.asarray(sample(n - len(errors), mix_seed(mix_seed(seed + 1, t), i)), dtype=float)
            errors = np.concatenate([errors, new[np.isfinite(new).all(1)]])
            run.append(table_stats(case, [errors]))
            drawing += time.process_time() - c0 + (store.reused_seconds - reused if store is not None else 0.0)
            secs.append(drawing)
            c0 = time.process_time()
            if len(ended) < len(readings):
                _read_stage(case, run[-1], i, split, readings, ended)
            reading += time.process_time() - c0
            if len(ended) == len(readings) and record is None:
                break
        runs.append(run)
        spent.append(secs)
        ends.append(ended)
        if progress is not None and (done % max(1, len(todo) // 4) == 0 or len(todo) < 8):
            progress(f"{done} of {len(todo)} sized runs ({sum(s[-1] for s in spent) + reading:.0f} s of CPU)")
    if record is not None:
        k = len(L)
        flat = [st for r in runs for st in r]
        record.update(runs=TableStats(*(np.concatenate([getattr(st, f) for st in flat]) if flat else np.zeros(shape)
                                        for f, shape in (("draws", (0,)), ("error", (0, k)), ("cov", (0, k, k)),
                                                         ("rate", (0, 3))))),
                      stages=tuple(stages), run_seconds=np.asarray(spent, dtype=float).reshape(len(runs), len(stages)))
    _tally(row, runs, spent, ends, readings, budget, reading)


def read_runs(row, case, stats, shifts) -> None:
    """Fill ``row``'s budget fields as :func:`sized_tables` does, from the runs' statistics ``stats``
    (:class:`~.table_stats.RowStats`, every stage of every run) read by today's rule, without drawing;
    a :class:`~deeplimits.errors.ParameterError` naming ``stats`` when today's time model plans other
    stages (the runs must be drawn again)."""
    from ...errors import ParameterError
    from .table_stats import TableStats

    budget, readings = float(stats.meta["budget"]), _readings(shifts)
    k, per = len(stats.runs), len(stats.stages)
    if tuple(stats.stages) != plan_stages(case.draws, case.seconds, budget):
        raise ParameterError("stats", f"stats of {case.name!r}: the stored runs' stages {list(stats.stages)} are not "
                                      "today's: draw them again")
    runs = [[TableStats(*(getattr(stats.runs, f)[j:j + 1] for f in ("draws", "error", "cov", "rate")))
             for j in range(t, t + per)] for t in range(0, k, per)]
    t0, split, ends = time.process_time(), shares(per), []
    for run in runs:
        ended = {}
        for i, st in enumerate(run):
            _read_stage(case, st, i, split, readings, ended)
            if len(ended) == len(readings):
                break
        ends.append(ended)
    _tally(row, runs, stats.run_seconds.tolist(), ends, readings, budget, time.process_time() - t0)


def _read_stage(case, st, i: int, split, readings, ended: dict) -> None:
    """Read stage ``i`` (its statistics ``st``) at every reading not yet ``ended`` (reading ->
    ``(verdict, stage)``): a decided verdict, or any at the last stage, ends it."""
    for shift, margin in readings:
        if (shift, margin) not in ended:
            verdict = st.verdict(case, 0, shift=shift, margin=margin, share=split[i])
            if verdict in DECIDED or i + 1 == len(split):
                ended[(shift, margin)] = (verdict, i)


def _tally(row, runs, spent, ends, readings, budget: float, reading: float) -> None:
    """The budget fields of ``row`` from ``runs`` (each a list of its stages' statistics), their
    drawing seconds ``spent`` and where each reading ended (``ends``); the seconds: each run's
    drawing up to its last stage read, and the ``reading``."""
    counts = {_key(s, m): dict.fromkeys(VERDICTS, 0) for s, m in readings}
    used, drawn, seconds = [], [], 0.0
    for run, secs, ended in zip(runs, spent, ends):
        for (shift, margin), (verdict, _) in ended.items():
            counts[_key(shift, margin)][verdict] += 1
        last = max(i for _, i in ended.values())
        used.append(int(run[ended[readings[0]][1]].draws[0]))
        drawn.append(int(run[last].draws[0]))
        seconds += secs[last]
    row.budget, row.budget_counts = budget, counts
    row.budget_draws = float(np.mean(used)) if used else None
    row.budget_drawn = float(np.mean(drawn)) if drawn else None
    row.seconds += seconds + reading
