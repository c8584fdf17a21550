"""How often the law study's verdict is wrong (docs/law.md, "How often the verdict is wrong"): its
size, the rate of ``disagrees`` on correct laws over many seeded runs, and its power, the rate of
``disagrees`` on laws built to say no (:data:`SHIFTS`: weights with a nonzero mean, which do not
converge to this SDE at all, or with the wrong variance, which converge to another one).

Each run is a small law study (its joint verdict over every test function, no distances), seeded
``chunk_seed(seed, run)``; the rates carry 95% Wilson intervals.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from ..._plain import PlainData
from ..._random import chunk_seed
from ..._stats import wilson

__all__ = ["calibrate_law", "CalibrationResult", "SHIFTS", "CORRECT", "run_verdict"]

CORRECT = {law: dict(law=law) for law in ("uniform", "rademacher", "gaussian")}
"""The correct laws: the verdict must not say ``disagrees`` more often than its level."""
SHIFTS = {
    "uniform, mean 0.3/sqrt(d)": dict(law="uniform", shift=(0.3, 1.0)),
    "uniform, variance 1.2/d": dict(law="uniform", shift=(0.0, 1.2)),
}
"""Laws built to say no: the verdict must say ``disagrees``."""


def run_verdict(plan) -> dict:
    """The joint fit (:func:`~.fit.fit_weak`) of a :class:`~.study.LawPlan` run in this process,
    without the distances."""
    from .fit import fit_weak
    from .result import weak_estimates
    from .study import law_task

    results = [law_task(t.params, t.seed) for t in plan.tasks()]
    total = np.sum([r["sum"] for r in results], axis=0)
    outer = np.sum([r["outer"] for r in results], axis=0)
    est = weak_estimates(plan.to_dict(), sum(r["n"] for r in results), total, outer)
    return fit_weak(plan.depths, est["error"], est["cov"])


@dataclasses.dataclass
class CalibrationResult(PlainData):
    """Per case the verdicts of every run, their counts and the rate of ``disagrees`` with its interval."""

    settings: dict
    """Runs, draws, depths, fine grid, width, seed."""
    cases: list
    """Per case: ``case``, ``correct`` (bool), ``counts`` (verdict -> runs), ``disagrees`` (rate),
    ``interval`` (95% Wilson), ``rates`` (the fitted rate of each run)."""

    def report(self) -> str:
        """The size and power table, as text."""
        s = self.settings
        lines = [f"law verdict calibration: {s['runs']} runs of {s['draws']} draws, depths {s['depths']}, fine "
                 f"{s['fine']}, d = {s['width']}",
                 f"{'case':32} {'kind':6} {'disagrees':>10} {'95% interval':>16}  verdicts"]
        for c in self.cases:
            lo, hi = c["interval"]
            counts = ", ".join(f"{k} {v}" for k, v in c["counts"].items() if v)
            lines.append(f"{c['case']:32} {'size' if c['correct'] else 'power':6} {c['disagrees']:10.3f} "
                         f"[{lo:.3f}, {hi:.3f}]  {counts}")
        return "\n".join(lines)


def calibrate_law(*, cases: Sequence[str] | None = None, runs: int = 50, draws: int = 16384,
                  depths: Sequence[int] = (4, 8, 16, 32), fine: int = 128, width: int = 4, seed: int = 0,
                  progress=None) -> CalibrationResult:
    """Run every case of :data:`CORRECT` and :data:`SHIFTS` (or those named in ``cases``) ``runs``
    times at these sizes and count the verdicts; ``progress`` (``None`` or a function) is called
    with 1 after each run."""
    from .fit import VERDICTS
    from .study import plan_law

    table = {**CORRECT, **SHIFTS}
    names = list(table) if cases is None else list(cases)
    out = []
    for name in names:
        counts, rates = dict.fromkeys(VERDICTS, 0), []
        for i in range(runs):
            plan = plan_law(**table[name], depths=depths, fine=fine, draws=draws, width=width, samples=2,
                            seed=chunk_seed(seed, i))
            f = run_verdict(plan)
            counts[f["verdict"]] += 1
            rates.append(f["rate"])
            if progress is not None:
                progress(1)
        k = counts["disagrees"]
        out.append({"case": name, "correct": name in CORRECT, "counts": counts, "disagrees": k / runs,
                    "interval": list(wilson(k, runs)), "rates": rates})
    return CalibrationResult({"runs": runs, "draws": draws, "depths": list(depths), "fine": fine, "width": width,
                              "seed": seed}, out)
