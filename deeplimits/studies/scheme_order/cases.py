"""The cases of known order the strong-order verdict is calibrated on (``deeplimits order
--calibrate``, docs/schemes.md, "How often the verdict is wrong"): a shipped scheme on a test
equation, or a regime, as its usual run measures it, with the per-draw errors of any number of
draws (:attr:`Case.sample`)."""

from __future__ import annotations

import dataclasses
import json
from typing import Callable

import numpy as np

from ..._names import CALIBRATION_CASES
from ...orders import StrongOrder

__all__ = ["Case", "CASES", "scheme_case", "regime_case", "choose", "ORDER_DEPTHS", "ORDER_DRAWS"]

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
    seconds: Callable = dataclasses.field(default=lambda n: 0.0, repr=False, compare=False)
    """``seconds(draws)``: the time model of :attr:`sample` (:mod:`~deeplimits.studies.timing`)."""
    progressive: bool = False
    """Whether :attr:`sample` also takes ``progress=`` (called with the draws done after each chunk:
    a network regime's pool takes minutes)."""
    ident: str | None = dataclasses.field(default=None, compare=False)
    """Everything its draws depend on besides the draws and the seed (the builder's arguments and
    plan, as text): what a store of draws keys them by (:class:`~.pools.PoolStore`; ``None``: a
    case whose draws are never stored)."""


def scheme_case(scheme: str, problem: str, *, hurst: float | None = None, width: int | None = None,
                depths=ORDER_DEPTHS, draws: int = ORDER_DRAWS, reference: int | None = None) -> Case:
    """A shipped scheme on a test equation, as ``deeplimits order`` runs it (the exact solution
    where the problem has one, its path on a grid twice as fine as the deepest depth, else the scheme
    on a grid 16 times finer: :func:`~.presets.default_reference`)."""
    import torch

    from ...schemes.problems import scheme_on
    from .presets import default_reference
    from .study import OrderPlan, scheme_errors

    s, p = scheme_on(scheme, problem, width=width, hurst=hurst)
    grid = reference or default_reference(depths, p.exact)
    x0 = torch.ones(p.d, dtype=torch.float64)

    def sample(n, seed):
        plan = OrderPlan(s.order, hurst, x0, p.m, list(depths), n, grid, min(n, 4096), seed, torch.float64, None)
        return scheme_errors(s, plan, p.exact)[0]

    def seconds(n):
        from ..timing import order_seconds

        return order_seconds(p.d, p.m, depths, n, grid, min(n, 4096), p.exact is not None)

    h = f" H={hurst:g}" if hurst is not None else ""
    ident = f"scheme_case({scheme!r}, {problem!r}, hurst={hurst!r}, width={width!r}, depths={tuple(depths)}, grid={grid})"
    return Case(f"{scheme}/{problem}{h}", tuple(depths), draws, s.order, None if p.exact else grid, sample, seconds,
                ident=ident)


def regime_case(regime: str, **options) -> Case:
    """A regime at its defaults (the main job's size), ``options`` as for
    :func:`~deeplimits.strong_convergence` (``hurst``, ``width``, ...)."""
    from ..._random import chunk_seed
    from ..convergence.study import plan_convergence
    from ..strong_error import run_chunk

    plan = plan_convergence(regime, **options)
    pair = plan.pair()

    def sample(n, seed, progress=None):
        p, out = dataclasses.replace(plan, draws=n, seed=seed), []
        for c, k in enumerate(p.chunk_sizes):
            out.append(run_chunk(pair, p.depths, p.reference, k, p.inputs, chunk_seed(seed, c), p.dtype)[0])
            if progress is not None:
                progress(sum(map(len, out)))
        return np.concatenate(out)

    def seconds(n):
        from ..timing import convergence_seconds

        return convergence_seconds(dataclasses.replace(plan, draws=n))

    name = regime + "".join(f" {k}={v:g}" if isinstance(v, float) else f" {k}={v}" for k, v in options.items())
    ident = f"regime_case({regime!r}, {json.dumps(plan.to_dict(), sort_keys=True, default=str)})"
    return Case(name, plan.depths, plan.draws, pair.order, plan.reference if pair.rough else None, sample, seconds,
                progressive=True, ident=ident)


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



def choose(cases) -> list:
    """``(name, case or its builder)`` of each case asked for (``name``: ``None`` for a Case object)."""
    from ...errors import ParameterError

    known = _cases()
    if cases is None:
        return list(known.items())
    if isinstance(cases, (str, Case)):
        cases = [cases]
    out = []
    for c in cases:
        if isinstance(c, Case):
            out.append((None, c))
        elif isinstance(c, str) and c in known:
            out.append((c, known[c]))
        else:
            raise ParameterError("cases", f"cases must be names of {', '.join(CASES)} (or Case objects), got {c!r:.60}")
    if not out:
        raise ParameterError("cases", "cases must name at least one case")
    names = [n for n, _ in out if n is not None]
    if len(set(names)) != len(names):
        raise ParameterError("cases", f"cases must be distinct, got {', '.join(names)}")
    return out
