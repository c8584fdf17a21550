"""A run sized to decide (docs/schemes.md, "A run sized to decide"): the draws grown in stages,
reusing every finished draw, until the verdict is decided at the margin or a budget of time is
spent, with the levels spent across the looks so that the sequence keeps its size.

The stages are ``draws, GROWTH draws, GROWTH^2 draws, ...``, at most :data:`MAX_LOOKS`, as many as
the plan's time model fits in the budget (fixed before any draw, so that the split below is
too). Look ``i`` of ``K`` spends the share :func:`shares` ``(K)[i]`` of both levels (the
``disagrees`` tests' and the equivalence test's): ``1/8, 1/8, 1/4, 1/2`` for four looks, most of
it at the last, where the most draws are. By Bonferroni's inequality a correct scheme reads
``disagrees`` at some look at most ``LEVEL`` often, and a scheme off by the margin reads
``agrees`` at some look at most ``EQUIVALENCE_LEVEL`` often, however the looks depend on each
other. The run stops at the first decided verdict (:data:`DECIDED`), at an ``insufficient
evidence`` that only more depths can decide (no degree of freedom left to test the expansion with
its next term), or when the next stage, at the pace measured so far, would overrun the budget.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

from ..errors import ParameterError

__all__ = ["MAX_LOOKS", "GROWTH", "DEFAULT_BUDGET", "DECIDED", "shares", "plan_stages", "run_stages", "check_budget",
           "stages_text"]

MAX_LOOKS = 4
"""The most stages (looks) of a sized run."""
GROWTH = 4
"""Each stage's draws over the previous one's: the estimate's standard error halves."""
DEFAULT_BUDGET = 300.0
"""The budget of ``--budget`` given without a number: 5 minutes of one process on 2 cores."""
DECIDED = ("agrees", "disagrees", "faster than declared")
"""The verdicts that end a sized run."""


def check_budget(budget) -> float | None:
    """``None`` (one run) or a budget in seconds, in (0, 10^7] (one line naming ``budget`` otherwise)."""
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not 0 < budget <= 1e7:
        raise ParameterError("budget", f"budget must be None (one run) or seconds in (0, 1e7], got {budget!r:.40}")
    return float(budget)


def shares(looks: int) -> list[float]:
    """The share of the levels each of ``looks`` looks spends: ``2^-(K-1)`` at the first, then
    doubling, summing to 1 (one look: all of it)."""
    return [2.0 ** (1 - looks)] + [2.0 ** (i - 1 - looks) for i in range(2, looks + 1)]


def plan_stages(draws: int, seconds_of: Callable[[int], float], budget: float | None, unit: int = 1) -> tuple:
    """The draws of each stage: ``(draws,)`` without a budget; else ``draws`` grown by
    :data:`GROWTH` while the time model ``seconds_of(draws)`` of the next stage (a stage reuses the
    draws of the ones before: its time is the run's so far) fits in ``budget``, at most
    :data:`MAX_LOOKS`; each a multiple of ``unit`` (the draws of a chunk)."""
    first = unit * math.ceil(draws / unit)
    stages = [first]
    while budget is not None and len(stages) < MAX_LOOKS and seconds_of(stages[-1] * GROWTH) <= budget:
        stages.append(stages[-1] * GROWTH)
    return tuple(stages)


def stages_text(stages, seconds: float) -> str:
    """``'stages 256, 1024, 4096 draws (3 looks, levels shared 1/4, 1/4, 1/2), about 2 min'``."""
    from .timing import duration

    if len(stages) < 2:
        return f"one stage of {stages[0]} draws (the budget fits no second one)"
    parts = ", ".join(f"1/{round(1 / s)}" for s in shares(len(stages)))
    return (f"stages {', '.join(map(str, stages))} draws ({len(stages)} looks, levels shared {parts}), at most "
            f"about {duration(seconds)}")


def _needs_depths(result) -> bool:
    """Whether only more depths, not more draws, can decide the result's ``insufficient evidence``
    (:attr:`~deeplimits.studies.expansion_fit.ExpansionFit.needs_depths`): the run stops there."""
    return bool(getattr(getattr(result, "fit", None), "needs_depths", False))


def run_stages(stages, run_stage: Callable[[int, float], object], budget: float | None, *,
               clock: Callable[[], float] = time.perf_counter):
    """Run the stages: ``run_stage(draws, share)`` returns the result of the first ``draws`` draws
    read at the share ``share`` of the levels (reusing the draws of earlier stages); the result of
    the last stage run, its ``stages`` field the list ``[{'draws', 'verdict', 'seconds'}, ...]``."""
    t0, done, split = clock(), [], shares(len(stages))
    result = None
    for i, n in enumerate(stages):
        result = run_stage(n, split[i])
        done.append({"draws": int(n), "verdict": result.verdict, "seconds": clock() - t0})
        if result.verdict in DECIDED or _needs_depths(result) or i + 1 == len(stages):
            break
        pace = (clock() - t0) / n
        if budget is not None and pace * stages[i + 1] > budget:
            break
    return dataclasses.replace(result, stages=done) if len(stages) > 1 else result
