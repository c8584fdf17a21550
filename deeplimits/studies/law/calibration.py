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

__all__ = ["calibrate_law", "calibrate_fit", "synthetic_truths", "CalibrationResult", "SHIFTS", "correct_laws",
           "SYNTHETIC", "run_verdict"]


def correct_laws() -> dict:
    """The correct laws, name -> the study's arguments: every i.i.d. law the study accepts, the
    package's and those a user registered (:func:`~.inputs.iid_laws`); the verdict must not say
    ``disagrees`` on them more often than its level."""
    from .inputs import iid_laws

    return {law: dict(law=law) for law in iid_laws()}


SHIFTS = {
    "uniform, mean 0.3/sqrt(d)": dict(law="uniform", shift=(0.3, 1.0)),
    "uniform, variance 1.2/d": dict(law="uniform", shift=(0.0, 1.2)),
}
"""Laws built to say no: the verdict must say ``disagrees``."""


def run_verdict(plan) -> dict:
    """The joint fit (:func:`~.fit.fit_weak`) of a :class:`~.study.LawPlan` run in this process,
    without the distances, with the table it read (``error``, ``cov``: the verdict can be read again)."""
    from .fit import fit_weak
    from .result import weak_estimates
    from .study import law_task

    results = [law_task(t.params, t.seed) for t in plan.tasks()]
    total = np.sum([r["sum"] for r in results], axis=0)
    outer = np.sum([r["outer"] for r in results], axis=0)
    est = weak_estimates(plan.to_dict(), sum(r["n"] for r in results), total, outer)
    return {**fit_weak(plan.depths, est["error"], est["cov"]), "error": est["error"].tolist(),
            "cov": est["cov"].tolist()}


@dataclasses.dataclass
class CalibrationResult(PlainData):
    """Per case the verdicts of every run, their counts and the rate of ``disagrees`` with its interval."""

    settings: dict
    """Runs, draws, depths, fine grid, width, seed."""
    cases: list
    """Per case: ``case``, ``correct`` (bool), ``counts`` (verdict -> runs), ``disagrees`` (rate),
    ``interval`` (95% Wilson), ``rates`` (the fitted rate of each run), ``tables`` (each run's joint
    errors and their covariance, :func:`~.fit.fit_weak`'s input: the verdicts can be read again)."""

    def report(self) -> str:
        """The size and power table, as text."""
        s = self.settings
        size = (f"{s['runs']} Gaussian tables about each truth (a measured table's covariance / factor)"
                if s["draws"] == "synthetic" else f"{s['runs']} runs of {s['draws']} draws, fine {s['fine']}, d = {s['width']}")
        lines = [f"law verdict calibration: {size}, depths {s['depths']}",
                 f"{'case':32} {'kind':6} {'disagrees':>10} {'95% interval':>16}  verdicts"]
        for c in self.cases:
            lo, hi = c["interval"]
            counts = ", ".join(f"{k} {v}" for k, v in c["counts"].items() if v)
            lines.append(f"{c['case']:32} {'size' if c['correct'] else 'power':6} {c['disagrees']:10.3f} "
                         f"[{lo:.3f}, {hi:.3f}]  {counts}")
        return "\n".join(lines)


def calibrate_law(*, cases: Sequence[str] | None = None, runs: int = 50, draws: int = 16384,
                  depths: Sequence[int] = (4, 8, 16, 32), fine: int = 128, width: int = 4, seed: int = 0,
                  progress=None, keep=None) -> CalibrationResult:
    """Run every case of :func:`correct_laws` and :data:`SHIFTS` (or those named in ``cases``) ``runs``
    times at these sizes and count the verdicts; ``progress`` (``None`` or a function) is called
    with 1 after each run, ``keep`` (``None`` or a function) with the case's name and each run's
    fit (a long calibration loses no finished run)."""
    from .fit import VERDICTS
    from .study import plan_law

    from ...errors import ParameterError

    table = {**correct_laws(), **SHIFTS}
    names = list(table) if cases is None else list(cases)
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ParameterError("cases", f"cases must name registered i.i.d. laws or cases of SHIFTS ({', '.join(table)}); "
                                      f"got {unknown[0]!r:.60}")
    out = []
    for name in names:
        counts, rates, tables = dict.fromkeys(VERDICTS, 0), [], []
        for i in range(runs):
            plan = plan_law(**table[name], depths=depths, fine=fine, draws=draws, width=width, samples=2,
                            seed=chunk_seed(seed, i))
            f = run_verdict(plan)
            counts[f["verdict"]] += 1
            rates.append(f["rate"])
            tables.append({"error": f["error"], "cov": f["cov"]})
            if keep is not None:
                keep(name, f)
            if progress is not None:
                progress(1)
        k = counts["disagrees"]
        out.append({"case": name, "correct": name not in SHIFTS, "counts": counts, "disagrees": k / runs,
                    "interval": list(wilson(k, runs)), "rates": rates, "tables": tables})
    return CalibrationResult({"runs": runs, "draws": draws, "depths": list(depths), "fine": fine, "width": width,
                              "seed": seed}, out)


SYNTHETIC = ("order 1, two terms", "order 1, three terms", "rate 1/2", "a constant offset", "rate 3/4",
             "rate 5/4")
"""The truths :func:`synthetic_truths` derives from a measured table: two of order 1 (the verdict
must not say ``disagrees``), two not (it should), and two off by the default margin (``agrees`` at
most the equivalence level often)."""


def synthetic_truths(depths, error, cov, *, offset: float = 4.0) -> dict:
    """Mean tables of known truth shaped like a measured one (``error`` of one or more test functions,
    ``cov`` its covariance: :func:`~.fit.fit_weak`'s input), each the generalised least squares fit to it
    of: ``a/L + b/L^2`` and ``a/L + b/L^2 + c/L^3`` (the declared order with its next term: as correct
    as the first, with the pre-asymptotic term the data allow), ``a L^-1/2 + b L^-3/2`` (the wrong
    rate), ``a/L + b/L^2`` plus a constant of ``offset`` standard errors of the deepest depth (a
    network converging to another limit), and ``a L^-3/4 + b L^-7/4`` and ``a L^-5/4 + b L^-9/4``
    (off by the default margin)."""
    from .fit import _design, _inverse, gls

    L, e = np.asarray(depths, dtype=float), np.asarray(error, dtype=float)
    blocks, cinv = len(e) // len(L), _inverse(cov)

    def fitted(r, terms):
        X = _design(L, r, terms, blocks)
        return X @ gls(X, e, cinv)[0]

    deepest = np.sqrt(np.diag(np.asarray(cov, dtype=float))).reshape(blocks, len(L))[:, -1]
    return dict(zip(SYNTHETIC, (fitted(1.0, 2), fitted(1.0, 3), fitted(0.5, 2),
                                fitted(1.0, 2) + offset * np.repeat(deepest, len(L)), fitted(0.75, 2),
                                fitted(1.25, 2))))


def calibrate_fit(depths, error, cov, *, runs: int = 400, factors: Sequence[float] = (0.25, 1, 4, 16), seed: int = 0,
                  offset: float = 4.0, deeper: bool = True) -> CalibrationResult:
    """The verdict's size and power on tables of known truth (:func:`synthetic_truths` of a measured
    table), each run a Gaussian draw about the truth with the covariance ``cov / factor``: the table
    ``factor`` times as many draws would give. The errors of a study are means of many draws, so
    Gaussian to a good approximation; this calibrates the fit and the verdict (not the estimates,
    which :func:`calibrate_law` does with whole studies) in seconds, at sizes no study here reaches.
    ``deeper``: :func:`~.fit.fit_weak`'s (``False``: every depth read alone)."""
    from .fit import VERDICTS, fit_weak

    rng = np.random.default_rng(seed)
    cov = np.asarray(cov, dtype=float)
    out = []
    for name, mean in synthetic_truths(depths, error, cov, offset=offset).items():
        for factor in factors:
            c = cov / factor
            root = np.linalg.cholesky(c + np.eye(len(c)) * 1e-12 * float(np.trace(c)) / len(c))
            counts = dict.fromkeys(VERDICTS, 0)
            for _ in range(runs):
                table = mean + root @ rng.standard_normal(len(mean))
                counts[fit_weak(depths, table, c, deeper=deeper)["verdict"]] += 1
            k = counts["disagrees"]
            out.append({"case": f"{name}, draws x{factor:g}", "correct": name in SYNTHETIC[:2], "counts": counts,
                        "disagrees": k / runs, "interval": list(wilson(k, runs)), "rates": [], "tables": []})
    return CalibrationResult({"runs": runs, "draws": "synthetic", "depths": [float(x) for x in depths], "fine": None,
                              "width": None, "seed": seed, "factors": list(factors), "offset": offset,
                              "deeper": deeper}, out)
