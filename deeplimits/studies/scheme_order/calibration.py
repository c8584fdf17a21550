"""How often the strong-order verdict is wrong: its size and power, measured
(docs/schemes.md, "How often the verdict is wrong").

A case is a scheme on a test equation, or a regime, whose order is known. One pool of per-draw
errors is computed once, a real run of ``pool_factor * draws`` draws; ``tables`` tables of
``draws`` draws are taken from it (disjoint while the pool lasts, then resampled with
replacement), and each goes through the statistics and the verdict of a run
(:func:`~deeplimits.studies.convergence.study.error_statistics`,
:class:`~deeplimits.studies.convergence.result.ConvergenceResult`). The **size** is the fraction
told ``disagrees`` (at most the level, :data:`~deeplimits.studies.expansion_fit.LEVEL`, for a
correct case), with its Wilson interval. The **power** against a leading exponent off by
``delta`` is read on the same tables with every draw's errors multiplied by ``(L / L_0)^-delta``:
the fraction told ``disagrees``, and the fraction not told ``agrees`` (one minus the rate of a
false agreement). The tables of one pool share its mean: a pool ``f`` times larger than a table
adds about ``1 / f`` of a table's variance to every table's distance from the truth.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import numpy as np

from ..._names import CALIBRATION_CASES
from ..._plain import PlainData
from ..._stats import wilson
from ...orders import StrongOrder
from ..expansion_fit import LEVEL, VERDICTS
from ..presets import DEFAULTS

__all__ = ["Case", "CASES", "scheme_case", "regime_case", "calibrate", "plan_calibration", "Calibration", "SHIFTS"]

SHIFTS = (0.02, 0.05, 0.1)
"""The exponent errors the power is measured against (each with both signs)."""
#: ``deeplimits order``'s default depths and draws: the size a scheme's calibration runs at
ORDER_DEPTHS, ORDER_DRAWS = (8, 16, 32, 64, 128, 256, 512), 256


@dataclasses.dataclass(frozen=True)
class Case:
    """A case of known order: its per-draw errors ``sample(draws, seed) -> (draws, len(depths))``,
    the declared order and the nested reference's grid (``None``: exact or adaptive)."""

    name: str
    """The case in a few words (``'euler-maruyama/linear-sde'``, ``'sde'``)."""
    depths: tuple
    """The depths."""
    draws: int
    """The draws of one table (the main job's or ``deeplimits order``'s)."""
    order: StrongOrder
    """The declared order and expansion."""
    reference: int | None
    """The nested reference's grid (``None``: an exact or adaptive reference)."""
    sample: Callable = dataclasses.field(repr=False, compare=False)
    """``sample(draws, seed)``: per-draw errors ``max_k |H - h|``, ``(draws, len(depths))``."""


def scheme_case(scheme: str, problem: str, *, hurst: float | None = None, width: int | None = None,
                depths=ORDER_DEPTHS, draws: int = ORDER_DRAWS, reference: int | None = None) -> Case:
    """A shipped scheme on a test equation, as ``deeplimits order`` runs it (the exact solution
    where the problem has one, else the scheme on a grid 16 times finer than the deepest depth)."""
    import torch

    from ...schemes.problems import scheme_on
    from ..presets import REFERENCE_REFINEMENT
    from .study import OrderPlan, scheme_errors

    s, p = scheme_on(scheme, problem, width=width, hurst=hurst)
    grid = reference or REFERENCE_REFINEMENT * depths[-1]
    x0 = torch.ones(p.d, dtype=torch.float64)

    def sample(n, seed):
        plan = OrderPlan(s.order, hurst, x0, p.m, list(depths), n, grid, min(n, 4096), seed, torch.float64, None)
        return scheme_errors(s, plan, p.exact)[0]

    h = f" H={hurst:g}" if hurst is not None else ""
    return Case(f"{scheme}/{problem}{h}", tuple(depths), draws, s.order, None if p.exact else grid, sample)


def regime_case(regime: str, **options) -> Case:
    """A regime at its defaults (the main job's size), ``options`` as for
    :func:`~deeplimits.strong_convergence` (``hurst``, ``width``, ...)."""
    from ..._random import chunk_seed
    from ..convergence.study import plan_convergence
    from ..strong_error import run_chunk

    plan = plan_convergence(regime, **options)
    pair = plan.pair()

    def sample(n, seed):
        p = dataclasses.replace(plan, draws=n, seed=seed)
        return np.concatenate([run_chunk(pair, p.depths, p.reference, k, p.inputs, chunk_seed(seed, c), p.dtype)[0]
                               for c, k in enumerate(p.chunk_sizes)])

    name = regime + "".join(f" {k}={v:g}" if isinstance(v, float) else f" {k}={v}" for k, v in options.items())
    return Case(name, plan.depths, plan.draws, pair.order, plan.reference if pair.rough else None, sample)


def _cases() -> dict:
    """The suite: the textbook schemes on equations with known orders, and the regimes."""
    return {
        "euler-maruyama/linear-sde": lambda: scheme_case("euler-maruyama", "linear-sde"),
        "milstein/linear-sde": lambda: scheme_case("milstein", "linear-sde"),
        "heun/linear-stratonovich": lambda: scheme_case("heun", "linear-stratonovich"),
        "euler-maruyama/ou": lambda: scheme_case("euler-maruyama", "ou"),
        "euler-maruyama/sin-cos": lambda: scheme_case("euler-maruyama", "sin-cos"),
        "euler-maruyama/sde-regime": lambda: scheme_case("euler-maruyama", "sde-regime"),
        "sde": lambda: regime_case("sde"),
        "ode": lambda: regime_case("ode"),
        **{f"fbm-H{h}": (lambda h=h: regime_case("fbm", hurst=h)) for h in (0.6, 0.75, 0.9)},
        **{f"rough-H{h}": (lambda h=h: regime_case("rough", hurst=h)) for h in (0.45, 0.4, 0.35)},
    }


CASES = CALIBRATION_CASES
"""The names of the calibration suite (``deeplimits order --calibrate --cases``), in its order."""


@dataclasses.dataclass
class CalibrationRow(PlainData):
    """One case: the verdicts of its tables at each exponent shift."""

    case: str
    """The case's name."""
    expansion: str
    """Its declared expansion."""
    depths: list
    """The depths."""
    draws: int
    """Draws per table."""
    pool: int
    """Draws in the pool the tables are taken from."""
    tables: int
    """Tables per shift."""
    counts: dict
    """``str(shift) -> {verdict: count}`` (shift ``0``: the correct case)."""
    seconds: float
    """Seconds of work."""

    def rate(self, shift: float, verdict: str) -> float:
        c = self.counts[str(float(shift))]
        return c.get(verdict, 0) / self.tables

    @property
    def size(self) -> float:
        """The fraction of correct tables told ``disagrees``."""
        return self.rate(0.0, "disagrees")

    @property
    def size_ci(self) -> tuple:
        """Its 95% Wilson interval."""
        return wilson(self.counts["0.0"].get("disagrees", 0), self.tables)

    def power(self, shift: float) -> tuple:
        """``(disagrees, not agrees)`` against a leading exponent off by ``shift``."""
        return self.rate(shift, "disagrees"), 1.0 - self.rate(shift, "agrees")


@dataclasses.dataclass
class Calibration(PlainData):
    """The size and power of the verdict over a suite of cases."""

    rows: list
    """One :class:`CalibrationRow` per case (as dicts in JSON)."""
    level: float
    """The verdict's level."""
    shifts: list
    """The exponent errors the power is measured against."""

    def table(self) -> str:
        """A Markdown table: size with its interval, the rate of ``agrees``, and per shift the
        rates of ``disagrees`` / not ``agrees``."""
        shifts = [s for d in self.shifts for s in (-d, d)]
        head = ("| case | expansion | depths, draws | disagrees (size) [95% CI] | agrees | "
                + " | ".join(f"{s:+g}" for s in shifts) + " |")
        out = [head, "|" + "---|" * (5 + len(shifts))]
        for r in (CalibrationRow(**x) if isinstance(x, dict) else x for x in self.rows):
            lo, hi = r.size_ci
            cells = [f"{100 * a:.0f}% / {100 * b:.0f}%" for a, b in map(r.power, shifts)]
            out.append(f"| {r.case} | {r.expansion} | {r.depths[0]}..{r.depths[-1]}, {r.draws} | "
                       f"{100 * r.size:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] | {100 * r.rate(0.0, 'agrees'):.0f}% | "
                       + " | ".join(cells) + " |")
        return "\n".join(out)


def calibrate(cases=None, *, tables: int = DEFAULTS["order"]["tables"],
              pool_factor: int = DEFAULTS["order"]["pool_factor"], shifts=SHIFTS, seed: int = 0,
              progress: Callable[[str], None] | None = None) -> Calibration:
    """Measure the size and power of the verdict on ``cases`` (names of :data:`CASES`, or
    :class:`Case` objects; default all): ``tables`` tables per shift, taken from a pool of
    ``pool_factor * draws`` draws computed once with ``seed`` (module docstring). ``progress``
    is called with a line after each case."""
    from ... import _validate as V_

    tables = V_.integer("tables", tables)
    pool_factor = V_.integer("pool_factor", pool_factor)
    seed = V_.integer("seed", seed, low=0)
    shifts = [V_.real("shifts", s, low=0.0, low_open=True, high=1.0) for s in shifts]
    chosen = _choose(cases)
    progress = V_.callback("progress", progress)
    rows = []
    for name, case in chosen:
        case = case() if callable(case) else case
        rows.append(calibrate_case(dataclasses.replace(case, name=name or case.name), tables, pool_factor, shifts, seed))
        if progress is not None:
            r = rows[-1]
            progress(f"{r.case}: disagrees {100 * r.size:.1f}% of {r.tables} tables, agrees "
                     f"{100 * r.rate(0.0, 'agrees'):.0f}% ({r.seconds:.0f} s)")
    return Calibration(rows, LEVEL, list(shifts))


def plan_calibration(cases=None, *, pool_factor: int = DEFAULTS["order"]["pool_factor"]) -> list[tuple]:
    """``(name, case, seconds)`` of each case :func:`calibrate` would run, built but not sampled:
    ``seconds`` the estimated time of its pool of ``pool_factor`` tables (a network regime's by
    :func:`~deeplimits.studies.timing.convergence_seconds`, a scheme's on its test equation by
    :func:`~deeplimits.studies.timing.order_seconds`); ``deeplimits order --calibrate --dry-run``."""
    from ..convergence.study import plan_convergence
    from ..presets import REFERENCE_REFINEMENT
    from ..timing import convergence_seconds, order_seconds

    out = []
    for name, case in _choose(cases):
        case = case() if callable(case) else case
        draws = pool_factor * case.draws
        regime, _, hurst = str(name).partition("-H")
        if regime in ("sde", "ode", "fbm", "rough"):
            plan = plan_convergence(regime, depths=case.depths, draws=draws, **({"hurst": float(hurst)} if hurst else {}))
            seconds = convergence_seconds(plan)
        else:
            seconds = order_seconds(1, 1, case.depths, draws, case.reference or REFERENCE_REFINEMENT * case.depths[-1],
                                    4096)
        out.append((name or case.name, case, seconds))
    return out


def _choose(cases) -> list:
    """``(name, case or its builder)`` of each case asked for (``name``: ``None`` for a Case object)."""
    from ...errors import ParameterError

    known = _cases()
    if cases is None:
        return list(known.items())
    out = []
    for c in cases:
        if isinstance(c, Case):
            out.append((None, c))
        elif c in known:
            out.append((c, known[c]))
        else:
            raise ParameterError("cases", f"cases must be names of {', '.join(CASES)} (or Case objects), got {c!r:.60}")
    if not out:
        raise ParameterError("cases", "cases must name at least one case")
    return out


def calibrate_case(case: Case, tables: int, pool_factor: int, shifts, seed: int) -> CalibrationRow:
    """The verdicts of ``tables`` tables of ``case`` at each shift (module docstring)."""
    from ..._random import single_threaded_torch

    t0 = time.perf_counter()
    with single_threaded_torch():
        pool = np.asarray(case.sample(pool_factor * case.draws, seed), dtype=float)
    pool = pool[np.isfinite(pool).all(1)]
    L = np.asarray(case.depths, dtype=float)
    rng = np.random.default_rng(seed)
    picks = [_pick(rng, len(pool), case.draws, i) for i in range(tables)]
    counts = {}
    for shift in [0.0] + [s for d in shifts for s in (-d, d)]:
        scaled = pool * (L / L[0]) ** -shift
        tally = dict.fromkeys(VERDICTS, 0)
        for idx in picks:
            tally[table_verdict(case, scaled[idx])] += 1
        counts[str(float(shift))] = tally
    return CalibrationRow(case.name, case.order.expansion_text, list(case.depths), case.draws, len(pool), tables,
                          counts, time.perf_counter() - t0)


def _pick(rng, n_pool: int, n: int, i: int) -> np.ndarray:
    """The draws of table ``i``: the ``i``-th disjoint block while the pool lasts, else a resample."""
    if (i + 1) * n <= n_pool:
        return np.arange(i * n, (i + 1) * n)
    return rng.integers(0, n_pool, size=n)


def table_verdict(case: Case, errors: np.ndarray) -> str:
    """The verdict a run with these per-draw errors gets (its statistics with a bootstrap of 200)."""
    from ..convergence.study import error_statistics
    from ..convergence.result import ConvergenceResult

    stats = error_statistics(list(case.depths), errors, errors, 0, case.order, n_boot=200)
    r = ConvergenceResult(regime="calibration", hurst=None, width=1, activation="-", arch="-", corrected=False,
                          inputs=1, reference=case.reference or case.depths[-1], seed=0, dtype="float64",
                          theory_rate=case.order.rate, rate_note="", seconds=0.0,
                          nested_reference=case.reference is not None, **stats)
    return r.verdict
