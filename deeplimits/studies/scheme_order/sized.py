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

__all__ = ["sized_tables", "table_verdict", "table_result", "rule_fingerprint", "RULE"]

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


def sized_tables(row, case, tables: int, shifts, seed: int, budget: float,
                 progress: Callable[[str], None] | None = None, store=None) -> None:
    """Fill ``row``'s ``budget``, ``budget_counts``, ``budget_draws`` (the mean draws at which a
    correct scheme's run ended) and ``budget_drawn`` (the mean draws a run drew: its every reading
    decided, or its last stage) with ``tables`` runs of
    ``case`` sized to decide within ``budget`` seconds (stages from the case's time model); run
    ``t`` draws its stage ``i`` with the seed ``mix_seed(mix_seed(seed + 1, t), i)`` (read from
    ``store``, a :class:`~.pools.PoolStore`, when it holds them)."""
    stages, readings = plan_stages(case.draws, case.seconds, budget), _readings(shifts)
    split, L = shares(len(stages)), np.asarray(case.depths, dtype=float)
    counts = {_key(s, m): dict.fromkeys(VERDICTS, 0) for s, m in readings}
    sample = case.sample if store is None else (lambda n, s: store.sample(case, n, s))
    used, drawn = [], []  # the draws at which the correct scheme's reading ended; those each run drew
    t0, reused = time.process_time(), store.reused_seconds if store is not None else 0.0  # CPU seconds
    for t in range(tables):
        errors, pending = np.empty((0, len(L))), list(readings)
        for i, n in enumerate(stages):
            with single_threaded_torch():
                new = np.asarray(sample(n - len(errors), mix_seed(mix_seed(seed + 1, t), i)), dtype=float)
            errors = np.concatenate([errors, new[np.isfinite(new).all(1)]])
            for shift, margin in list(pending):
                verdict = table_verdict(case, errors * (L / L[0]) ** -shift, margin=margin, share=split[i])
                if verdict in DECIDED or i + 1 == len(stages):
                    counts[_key(shift, margin)][verdict] += 1
                    pending.remove((shift, margin))
                    if (shift, margin) == readings[0]:
                        used.append(len(errors))
            if not pending:
                break
        drawn.append(len(errors))
        if progress is not None and (t + 1) % max(1, tables // 4) == 0:
            progress(f"{t + 1} of {tables} sized runs ({time.process_time() - t0:.0f} s of CPU)")
    row.budget, row.budget_counts, row.budget_draws = budget, counts, float(np.mean(used))
    row.budget_drawn = float(np.mean(drawn))
    row.seconds += time.process_time() - t0 + (store.reused_seconds - reused if store is not None else 0.0)
