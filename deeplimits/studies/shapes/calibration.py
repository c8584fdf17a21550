"""How often the shapes study's verdicts are wrong (docs/shapes.md, "How often the verdicts are wrong"):
each verdict's size (the rate of ``disagrees`` on the published protocol, which the law describes) and
its power (the rate of ``agrees`` there, and of ``disagrees`` on the case built to say no: a residual
scale ``alpha/(sqrt(L) M)`` for the L <-> M swap, embeddings not shared across ``D`` for the U in ``D``), over
many small studies seeded ``chunk_seed(seed, study)``; the rates carry 95% Wilson intervals.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from ..._plain import PlainData
from ..._random import chunk_seed
from ..._stats import wilson

__all__ = ["GRIDS", "CASES_OF", "run_verdict", "calibrate_shapes", "CalibrationResult"]

GRIDS = {
    # one swap pair per embedding size: (32, 64, D) against (64, 32, D)
    "swap": dict(depths=[32, 64], widths=[32, 64], dims=[16, 64], fit_min=[0, 0, 0]),
    # two slices M L = 2048, 4096 at L = 64 over embedding sizes around D* (about 40 and 55)
    "ushape": dict(depths=[64], widths=[32, 64], dims=[8, 16, 32, 64, 128], fit_min=[0, 0, 0]),
}
"""The small grids each verdict is calibrated on (every cell read: ``fit_min`` 0)."""

CASES_OF = {"swap": ("linear", "sqrt-depth"), "ushape": ("linear", "unshared")}
"""Per verdict: the correct case, and the case built to say no."""


def run_verdict(verdict: str, case: str, seeds: int, seed: int) -> dict:
    """One small study (:data:`GRIDS`) of ``case`` run in this process: its ``verdict`` record
    (:attr:`~.result.ShapesResult.swap` or ``ushape``)."""
    from .study import plan_shapes

    result = plan_shapes(case=case, seeds=seeds, seed=seed, **GRIDS[verdict]).run()
    return getattr(result, verdict)


@dataclasses.dataclass
class CalibrationResult(PlainData):
    """Per verdict and case the verdicts of every study, their counts and rates with intervals."""

    settings: dict
    """Studies per case, runs per cell, the grids, the seed."""
    cases: list
    """Per (verdict, case): ``verdict``, ``case``, ``correct`` (the case the law describes), ``counts``
    (verdict -> studies), ``disagrees`` and ``agrees`` (rates) with their 95% Wilson ``intervals``, and
    ``power_agree`` / ``power_disagree``: the mean of each study's own power at its size."""

    def report(self) -> str:
        """The size and power table, as text."""
        s = self.settings
        lines = [f"shapes verdict calibration: {s['studies']} studies per case, {s['seeds']} runs per cell",
                 f"{'verdict':8} {'case':10} {'kind':6} {'disagrees':>10} {'95% interval':>16} {'agrees':>8} "
                 f"{'95% interval':>16}  stated power (agree, disagree)"]
        for c in self.cases:
            (dl, dh), (al, ah) = c["intervals"]["disagrees"], c["intervals"]["agrees"]
            kind = "size" if c["correct"] else "power"
            lines.append(f"{c['verdict']:8} {c['case']:10} {kind:6} {c['disagrees']:10.3f} [{dl:.3f}, {dh:.3f}] "
                         f"{c['agrees']:8.3f} [{al:.3f}, {ah:.3f}]  {c['power_agree']:.2f}, {c['power_disagree']:.2f}")
        return "\n".join(lines)


def _mean_power(records: list, key: str) -> float:
    import math

    vals = [t[key] for r in records for t in r["tests"] if math.isfinite(t.get(key, math.nan))]
    return sum(vals) / len(vals) if vals else math.nan


def calibrate_shapes(*, verdicts: Sequence[str] = ("swap", "ushape"), studies: int = 100, seeds: int = 16,
                     seed: int = 0, progress=None) -> CalibrationResult:
    """Run ``studies`` small studies (:data:`GRIDS`, ``seeds`` runs per cell) of each case of
    :data:`CASES_OF` for each of ``verdicts`` and count the verdicts; ``progress`` (``None`` or a
    function) is called with 1 after each study."""
    out = []
    for verdict in verdicts:
        for i, case in enumerate(CASES_OF[verdict]):
            records = []
            for k in range(studies):
                records.append(run_verdict(verdict, case, seeds, chunk_seed(seed, k)))
                if progress is not None:
                    progress(1)
            counts: dict = {}
            for r in records:
                counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
            n_dis, n_agr = counts.get("disagrees", 0), counts.get("agrees", 0)
            out.append({"verdict": verdict, "case": case, "correct": i == 0, "counts": counts,
                        "disagrees": n_dis / studies, "agrees": n_agr / studies,
                        "intervals": {"disagrees": list(wilson(n_dis, studies)),
                                      "agrees": list(wilson(n_agr, studies))},
                        "power_agree": _mean_power(records, "power_agree"),
                        "power_disagree": _mean_power(records, "power_disagree")})
    return CalibrationResult({"studies": studies, "seeds": seeds, "seed": seed,
                              "grids": {v: GRIDS[v] for v in verdicts}}, out)
