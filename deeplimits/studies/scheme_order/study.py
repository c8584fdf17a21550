"""The strong order of any one-step map on the package's coupled driver path (docs/schemes.md).

:func:`strong_order` runs a scheme ``(h, increment, t, dt) -> h`` (:mod:`deeplimits.schemes`)
at every depth on one Brownian or fractional Brownian sample per draw, against the same scheme
on the finest grid of that sample (or an exact solution), in the single pass of the convergence
engine (:func:`~deeplimits.studies.strong_error.sweep_errors`), and returns the convergence
study's :class:`~deeplimits.studies.convergence.result.ConvergenceResult`: errors, the declared
expansion fitted and tested, the rate and the verdict.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from typing import Callable, Sequence

import numpy as np
import torch

from ... import _validate as V_
from ..._random import chunk_seed, single_threaded_torch
from ...errors import ParameterError
from ...orders import StrongOrder
from ...pairs import PairSample
from ...runs import chunk_sizes
from ..convergence.result import ConvergenceResult
from ..equivalence import MARGIN
from ..settings import DEFAULT, Compute, Decision, Execution, grouped
from ..strong_error import sweep_errors
from .presets import default_reference
from .result import order_result

__all__ = ["strong_order", "plan_strong_order", "OrderPlan"]

#: the default number of draws
_DRAWS = 256
#: numbers of a fractional sample per chunk (its fGn is held on the finest grid)
_FGN_NUMBERS = 1 << 23


class _SchemePair:
    """The hooks of the convergence engine for a scheme: each depth steps the scheme on its grid,
    the reference steps the reference scheme (or reads the exact solution) on the finest one."""

    rough = True

    def __init__(self, scheme, reference_scheme, exact):
        self.scheme, self.reference_scheme, self.exact = scheme, reference_scheme, exact
        self.finest = 0  # the finest depth whose step was asked for: the exact solution is read on its grid

    @staticmethod
    def _stepper(scheme, n: int):
        counter, dt = itertools.count(), 1.0 / n  # the engine calls each depth's step once per layer, in order

        def step(h, parts):
            k = next(counter)
            out = scheme(h[:, 0], parts["W"], k * dt, dt)
            if k == 0 and (not isinstance(out, torch.Tensor) or out.shape != h[:, 0].shape):
                shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
                raise ParameterError("scheme", f"scheme must return the next state, a tensor of shape (batch, d) = "
                                               f"{tuple(h[:, 0].shape)}, got {shape}")
            return out.unsqueeze(1)

        return step

    def layer_step(self, depth: int):
        self.finest = max(self.finest, depth)
        return self._stepper(self.scheme, depth)

    def reference_step(self, sample, steps: int):
        if self.exact is None:
            return self._stepper(self.reference_scheme, steps)
        x0, path, counter = sample.h0[:, 0], [0.0], itertools.count(1)
        # sweep_errors asks for every depth's step first and reads the reference only at their grid
        # points, the multiples of steps / finest: elsewhere the exact solution is not computed
        every = steps // self.finest if self.finest and steps % self.finest == 0 else 1

        def exact(H, parts):
            k = next(counter)
            path[0] = path[0] + parts["W"]
            return H if k % every else self.exact(x0, path[0], k / steps).unsqueeze(1)

        return exact


def _check(scheme, x0, noise, order, hurst, exact, reference_scheme):
    if not callable(scheme):
        raise ParameterError("scheme", f"scheme must be a callable (h, increment, t, dt) -> h, got {scheme!r}")
    order = getattr(scheme, "order", None) if order is None else order
    if not isinstance(order, StrongOrder):
        raise ParameterError("order", "order must be a deeplimits.StrongOrder (the scheme declares none: pass "
                                      f"order=...), got {order!r}")
    hurst = getattr(scheme, "hurst", None) if hurst is None else hurst
    if hurst is not None and hurst != 0.5:  # a Young equation (H > 1/2); below 1/2 no such scheme has a strong limit
        hurst = V_.hurst(hurst, above_half=True)
    else:
        hurst = None
    for name, f in (("exact", exact), ("reference_scheme", reference_scheme)):
        if f is not None and not callable(f):
            raise ParameterError(name, f"{name} must be a callable or None, got {f!r}")
    try:
        x0 = torch.as_tensor(x0, dtype=torch.float64).reshape(-1)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        raise ParameterError("x0", f"x0 must be the initial state, d numbers, got {x0!r:.80}") from None
    x0 = V_.tensor("x0", x0, shape=(None,))
    if x0.numel() == 0:
        raise ParameterError("x0", "x0 must be the initial state, d >= 1 numbers, got an empty one")
    return order, hurst, x0, V_.integer("noise", noise)


def _driver(hurst):
    """The driver of the noise: Brownian (``hurst`` None), else fractional."""
    from ...paths import FractionalDriver, IIDDriver

    return IIDDriver("gaussian") if hurst is None else FractionalDriver(hurst)


def _chunk(scheme, d, noise, draws, reference, depths, chunk, dtype, device, driver) -> int:
    """Draws per chunk: given, or 4096 (a fractional sample: at most ``2^23`` numbers of fGn), lowered
    to fit the memory of ``device`` (:func:`~deeplimits.studies.scheme_order.memory.scheme_order_bytes`); refuses
    too many steps or chunks before any work."""
    from ... import _resources as R_
    from .memory import scheme_order_bytes

    R_.require_count(reference, R_.MAX_STEPS, f"reference={reference} makes too many steps per chunk", ("reference",))
    item = torch.empty((), dtype=dtype).element_size()
    default = max(1, _FGN_NUMBERS // (reference * noise)) if driver.stores_path else 4096
    milstein = type(scheme).__name__ == "Milstein"
    chunk = None if chunk is None else V_.integer("chunk", chunk)
    chunk = R_.fit_chunk(lambda n: scheme_order_bytes(n, d, noise, reference, depths, item, driver, milstein, device),
                         draws, chunk, default, f"at d={d}, noise={noise}, reference={reference}",
                         ("draws", "reference", "depths"), device=device)
    R_.require_count(R_.tasks_of(draws, chunk), R_.MAX_TASKS, f"draws={draws} in chunks of {chunk} draws makes too "
                                                             "many chunks", ("draws",))
    R_.require_kept(2 * draws * len(depths), f"of the result (draws={draws} x {len(depths)} depths, two errors each)",
                    ("draws",))
    return chunk


@dataclasses.dataclass(frozen=True)
class OrderPlan:
    """The checked arguments of :func:`strong_order` and its sizes, nothing computed
    (``deeplimits order --dry-run`` prints them)."""

    order: StrongOrder
    """The declared strong order and expansion."""
    hurst: float | None
    """The Hurst index of an fBm driver (``None``: Brownian)."""
    x0: list
    """The initial state (its length is the width ``d``)."""
    noise: int
    """The driver's dimension ``m``."""
    depths: tuple
    """The depths, increasing powers of two."""
    draws: int
    """Independent draws of the driver."""
    reference: int
    """The finest grid (the nested reference's, or where the exact solution is read)."""
    chunk: int
    """Draws per chunk (fitted to the memory)."""
    seed: int
    """Base seed; chunk ``i`` uses ``chunk_seed(seed, i)``."""
    dtype: torch.dtype
    """float32 or float64."""
    device: object
    """Where the chunks run."""
    milstein: bool = False
    """Whether the scheme is Milstein (its derivative tensors count in the memory)."""
    exact: bool = False
    """Whether an exact solution is read at the grid points (no scheme on the reference grid)."""
    margin: float = MARGIN
    """An ``agrees`` needs the leading exponent within this of the declared one."""
    stages: tuple = ()
    """The draws of each stage of a run sized to decide (:mod:`~deeplimits.studies.sequential`;
    ``()``: one run of ``draws``, the last stage's draws when there are stages)."""
    budget: float | None = None
    """The seconds a run sized to decide may take (``None``: one run)."""

    def estimate(self):
        """Peak memory of one chunk, chunks and networks (no allocation)."""
        from ... import _resources as R_
        from .memory import scheme_order_bytes

        n = min(self.chunk, self.draws)
        peak = scheme_order_bytes(n, len(self.x0), self.noise, self.reference, self.depths, self.dtype.itemsize,
                                  _driver(self.hurst), self.milstein, self.device)
        return R_.Estimate(peak, R_.tasks_of(self.draws, self.chunk), self.draws * len(self.depths), n,
                           self.reference, R_.available_memory(self.device))

    def seconds(self) -> float:
        """The estimated time in one process (:func:`~deeplimits.studies.timing.order_seconds`)."""
        from ..timing import order_seconds

        return order_seconds(len(self.x0), self.noise, self.depths, self.draws, self.reference, self.chunk, self.exact)


@grouped
def plan_strong_order(scheme, x0, *, noise: int = 1, depths: Sequence[int] = (8, 16, 32, 64, 128, 256, 512),
                      draws: int = _DRAWS, reference: int | None = None, exact: Callable | None = None,
                      reference_scheme: Callable | None = None, order: StrongOrder | None = None,
                      hurst: float | None = None, decision: Decision = Decision(margin=MARGIN, budget=None),
                      compute: Compute = Compute(seed=0, dtype=torch.float32, chunk=None, device=None)) -> OrderPlan:
    """Every check of :func:`strong_order` (its arguments, the same meaning) and its sizes, before
    any work: an :class:`OrderPlan`, or a :class:`~deeplimits.errors.ParameterError`. ``compute``:
    ``seed``, ``dtype``, ``chunk``, ``device`` (:class:`~deeplimits.studies.settings.Compute`, or
    its fields as keywords); ``decision``: ``margin``, ``budget``
    (:class:`~deeplimits.studies.settings.Decision`): with a budget, the stages of draws it fits,
    each a number of whole chunks (:func:`~deeplimits.studies.sequential.plan_stages`), sized as
    the last."""
    from ..equivalence import check_margin
    from ..sequential import check_budget, plan_stages
    from ..timing import order_seconds

    order, hurst, x0, noise = _check(scheme, x0, noise, order, hurst, exact, reference_scheme)
    margin, budget = check_margin(decision.margin), check_budget(decision.budget)
    depths = V_.depths("depths", depths)
    draws, seed = V_.integer("draws", draws), V_.integer("seed", compute.seed, low=0)
    dtype, device, chunk = V_.dtype(compute.dtype), V_.device("device", compute.device), compute.chunk
    reference = default_reference(depths, exact) if reference is None else V_.power_of_two("reference", reference)
    if reference < 2 * depths[-1]:
        raise ParameterError("reference", f"reference must be at least 2 * max(depths) = {2 * depths[-1]}, got "
                                          f"{reference}")
    chunk = _chunk(scheme, len(x0), noise, draws, reference, depths, chunk, dtype, device, _driver(hurst))
    stages = plan_stages(draws, lambda n: order_seconds(len(x0), noise, depths, n, reference, chunk, exact is not None),
                         budget, unit=chunk if budget is not None else 1)
    if len(stages) > 1:  # the last stage's counts and memory, in the same chunks
        _chunk(scheme, len(x0), noise, stages[-1], reference, depths, chunk, dtype, device, _driver(hurst))
    return OrderPlan(order, hurst, x0, noise, tuple(depths), stages[-1], reference, chunk, seed, dtype, device,
                     type(scheme).__name__ == "Milstein", exact is not None, margin,
                     stages if len(stages) > 1 else (), budget)


def scheme_errors(scheme, plan: OrderPlan, exact: Callable | None = None, reference_scheme: Callable | None = None,
                  progress=None, *, chunks: range | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-draw errors ``(draws, len(depths))`` (max over the grid, terminal) of a checked scheme
    on the sizes of ``plan`` (:func:`plan_strong_order`'s, or one built whole: its ``x0`` a
    tensor); ``exact``, ``reference_scheme`` and ``progress`` as for :func:`strong_order`: chunk
    ``i`` of draws is seeded by ``chunk_seed(plan.seed, i)``; ``chunks``: which of them (default
    every chunk of ``plan.draws``)."""
    driver, x0, noise, dtype, device = _driver(plan.hurst), plan.x0, plan.noise, plan.dtype, plan.device
    pair = _SchemePair(scheme, reference_scheme or scheme, exact)
    sizes = chunk_sizes(plan.draws, plan.chunk)
    errs = []
    for c in range(len(sizes)) if chunks is None else chunks:
        n = sizes[c]
        g = torch.Generator().manual_seed(chunk_seed(plan.seed, c))
        with single_threaded_torch():  # small per-step operations (as in strong_error.run_chunk)
            w = driver.sample((noise,), draws=n, resolution=plan.reference, generator=g, dtype=dtype, scale=1.0,
                              device=device)
            h0 = x0.to(device, dtype).expand(n, 1, len(x0)).clone()
            mx, tm = sweep_errors(pair, PairSample({"W": w}, h0), plan.depths, plan.reference)
        errs.append((mx[..., 0].T.cpu().numpy(), tm[..., 0].T.cpu().numpy()))
        if progress is not None:
            progress(n)
    mx, tm = (np.concatenate(x) for x in zip(*errs))
    return mx, tm


@grouped
def strong_order(scheme, x0, *, execution: Execution = Execution(progress=None, store=DEFAULT, workers=DEFAULT,
                                                                  scheduler=DEFAULT, timeout=DEFAULT),
                 compute: Compute = Compute(seed=0, dtype=torch.float64, chunk=None, device=None),
                 **settings) -> ConvergenceResult:
    """Measure the strong error of a one-step map against depth and test its declared order.

    Args:
        scheme: ``scheme(h, increment, t, dt) -> h`` on states ``(batch, d)`` and increments
            ``(batch, noise)`` (a :class:`~deeplimits.schemes.Scheme`, or any callable with ``order``).
        x0: the initial state, ``d`` numbers (the same for every draw).
        execution: its ``progress`` (:class:`~deeplimits.studies.settings.Execution`), called
            with the draws of each finished chunk.
        compute: ``seed``, ``dtype`` (default float64), ``chunk``, ``device``
            (:class:`~deeplimits.studies.settings.Compute`), as for
            :func:`~deeplimits.strong_convergence` (chunk ``i`` of draws is seeded by
            ``chunk_seed(seed, i)``).
        **settings: the other arguments of :func:`plan_strong_order`:

            * ``noise``: the number of driver channels ``m``.
            * ``depths``: increasing powers of two; ``draws``: independent draws of the driver.
            * ``reference``: the finest grid (a power of two, at least ``2 * max(depths)``);
              default (:func:`~.presets.default_reference`) ``2 * max(depths)`` with ``exact``, else
              ``16 * max(depths)``: the reference is ``reference_scheme`` (default ``scheme``) on it.
            * ``exact``: ``exact(x0, W_t, t) -> X_t`` (``(batch, d)``, ``(batch, m)``): an exact
              solution read at the grid points instead of a nested reference.
            * ``order``: the declared :class:`~deeplimits.orders.StrongOrder` (default ``scheme.order``).
            * ``hurst``: the driver's Hurst index: ``None`` or 1/2 Brownian, else fractional
              (default ``scheme.hurst``).
    Returns:
        A :class:`~deeplimits.studies.convergence.result.ConvergenceResult` (``regime='scheme'``);
        its rate's bootstrap interval takes the resamples (at most 2000) that pin its endpoints to
        a Monte Carlo error of :data:`~deeplimits.studies.fits.ENDPOINT_TOL`
        (:func:`~deeplimits.studies.fits.resamples_for`).
    """
    op = plan_strong_order(scheme, x0, compute=compute, **settings)
    progress = V_.callback("progress", execution.progress)
    exact, reference_scheme = settings.get("exact"), settings.get("reference_scheme")
    if not op.stages:
        t0 = time.perf_counter()
        mx, tm = scheme_errors(scheme, op, exact, reference_scheme, progress)
        return order_result(scheme, op, exact, reference_scheme, mx, tm, time.perf_counter() - t0, 1.0)
    from ..sequential import run_stages

    done, t0 = [], time.perf_counter()

    def stage(n, share):  # the chunks of the first n draws, those of earlier stages reused
        have = sum(len(m) for m, _ in done)
        done.append(scheme_errors(scheme, op, exact, reference_scheme, progress,
                                  chunks=range(have // op.chunk, n // op.chunk)))
        mx, tm = (np.concatenate(x) for x in zip(*done))
        return order_result(scheme, op, exact, reference_scheme, mx, tm, time.perf_counter() - t0, share)

    return run_stages(op.stages, stage, op.budget)
