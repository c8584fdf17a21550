"""Convergence in law (docs/law.md; Kloeden & Platen §14.1; Talay & Tubaro 1990): the weak error
``E phi(h_L) - E phi(H_1)`` of a network with i.i.d. weights of a given law (a driver with a
:meth:`~deeplimits.paths.Driver.from_normal` hook; uniform by default) against its Itô limit, for a
block linear in its weights (res-1 tanh by default: ``dH = dX tanh(H)``) and test functions ``phi``
given by name or as functions (:mod:`.phis`).

:func:`plan_law` checks the arguments and sizes (a :class:`LawPlan`, nothing computed); its tasks
are chunks of draws (:func:`law_task`, seeded by :func:`~deeplimits._random.chunk_seed`), each
returning the sums and cross products of the test functions at every depth and on the SDE's grids
(and of the control variates), plus the norm ratios of a few draws for the distances between laws;
:meth:`LawPlan.summarise` turns them into a :class:`~.result.LawResult`. One task per chunk, stored
and resumable, in this process or on Dask like every study (docs/sweeps.md).
"""

from __future__ import annotations

import dataclasses
import time
from typing import ClassVar, Sequence

import numpy as np
import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed, single_threaded_torch
from ...errors import ParameterError
from ...runs import Task, chunk_sizes, register_task
from ..plan import Plan, register_plan
from ..settings import Compute, Network, grouped
from .presets import DEFAULT_PRESET, DEFAULTS, METHODS, PRESETS
from .result import LawResult

__all__ = ["LawPlan", "plan_law", "weak_law", "law_task", "chunk_values", "variances"]

_CPU = PRESETS[DEFAULT_PRESET]


@register_plan
@dataclasses.dataclass(frozen=True)
class LawPlan(Plan):
    """A validated law study (from :func:`plan_law`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "law"
    optional: ClassVar[tuple[str, ...]] = ("device", "arch", "activation", "phis", "law_options", "margin",
                                            "variance_decay")

    law: str
    """The weight law: a registered driver's name (:data:`~.cases.LAWS` describes the built-in ones)."""
    mean: float
    """The weights' mean in units of ``1/sqrt(d)`` (0: the centred law; else a law built to say no)."""
    variance: float
    """The weights' variance in units of ``1/d`` (1: the limit's; else a law built to say no)."""
    width: int
    """The width ``d``."""
    depths: tuple[int, ...]
    """The network depths, increasing powers of two."""
    fine: int
    """The finest Euler-Maruyama grid of the SDE (also ``fine / 2`` and ``fine / 4``)."""
    draws: int
    """Independent draws."""
    chunk: int
    """Draws per task."""
    samples: int
    """Draws whose norm ratios are kept for the distances between laws (spread over the tasks)."""
    coupled: bool
    """One Brownian path per draw drives the SDE and, through quantile transforms, every network
    (``False``: plain Monte Carlo, each network its own weights)."""
    controls: bool
    """Martingale control variates (coupled, non-Gaussian laws only)."""
    seed: int
    """Base seed; chunk ``i`` uses ``chunk_seed(seed, i)``."""
    dtype: str
    """``'float32'`` or ``'float64'``."""
    device: str | None = None
    """Where the tasks run (``None``: the CPU)."""
    arch: str | None = None
    """The block (a registered name; ``None``: res-1)."""
    activation: str | None = None
    """Its activation (``None``: tanh)."""
    phis: tuple | None = None
    """The test functions, by name (``None``: :data:`~.phis.DEFAULT_PHIS`)."""
    law_options: dict | None = None
    """The law's declared parameters (a registered driver of your own with parameters)."""
    margin: float | None = None
    """The margin of an ``agrees``: the weak rate within it of 1 (``None``: :data:`~.fit.MARGIN`)."""
    variance_decay: tuple | None = None
    """``(c, p)``: the weights' variance at depth ``L`` is ``variance + c L^-p`` in units of ``1/d``, a law
    whose variance reaches the limit's at rate ``L^-p`` (its weak error then falls like ``L^-p``: a law
    built to say no; ``None``: ``variance`` at every depth)."""

    def tasks(self) -> list:
        base = {k: v for k, v in self.to_dict().items() if k not in ("study", "chunk", "draws", "samples", "margin")}
        sizes = chunk_sizes(self.draws, self.chunk)
        keep = -(-self.samples // len(sizes))
        out, first = [], 0
        for i, n in enumerate(sizes):
            out.append(Task(f"law/{self.law}/draws-{first:010d}", "law-chunk", {**base, "draws": n,
                                                                                 "keep": min(keep, n)},
                            chunk_seed(self.seed, i)))
            first += n
        return out

    def estimate(self) -> R_.Estimate:
        """Peak memory of one chunk, tasks and networks (no allocation)."""
        from .memory import law_bytes

        n = min(self.chunk, self.draws)
        peak = law_bytes(n, self.width, self.depths, self.fine, getattr(torch, self.dtype).itemsize, self.controls,
                         **_sizes(self.to_dict()))
        return R_.Estimate(peak, R_.tasks_of(self.draws, self.chunk), self.draws * (len(self.depths) + 3), n,
                           self.fine, R_.available_memory(self.device))

    def seconds(self) -> float:
        """The estimated seconds in one process: ``(60 + 2.2 E)`` ns a draw and layer, ``E`` the
        numbers of a layer's weights (``d^2`` for res-1; measured at d = 4), the networks' layers
        twice with control variates."""
        layers = sum(self.depths) * (2 if self.controls else 1) + 1.75 * self.fine
        return self.draws * layers * (60 + 2.2 * _sizes(self.to_dict())["entries"]) * 1e-9

    def result_damage(self, task, result) -> str | None:
        """A chunk's stored sums: ``n`` its draws, ``sum`` and ``outer`` of its vectors' numbers
        (:func:`~.result.per_draw_numbers`), ``ratios`` of its kept draws at every depth and the SDE."""
        from .._result_checks import numbers_of
        from .result import per_draw_numbers

        if not isinstance(result, dict) or result.get("n") != task.params["draws"]:
            return f"n is not the chunk's {task.params['draws']} draws"
        D = per_draw_numbers(self.to_dict())
        for name, shape, low in (("sum", (D,), None), ("outer", (D, D), None),
                                 ("ratios", (task.params["keep"], len(self.depths) + 1), 0.0)):
            why = numbers_of(name, result.get(name), shape, **({} if low is None else {"low": low}))[1]
            if why is not None:
                return why
        return None

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> LawResult:
        return LawResult.from_tasks(self, results, seconds)


def chunk_values(params: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One chunk's per-draw vectors ``x`` (the test functions of every network and SDE grid, then the
    control variates; :meth:`~.result.LawResult.layout`) and the norm ratios ``|h_L| / |h_0|``
    (every depth, then the finest SDE grid), both ``(draws, ...)`` in float64."""
    from .engine import phi_values, simulate

    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    h0 = torch.ones(params["width"], dtype=dtype, device=device)
    law, block, names = spec_objects(params)
    out, cv = simulate(law, h0, params["depths"], params["fine"], params["draws"], seed,
                       coupled=params["coupled"], mean=params["mean"], variance=variances(params),
                       controls=params["controls"], block=block, phis=names)
    phis = torch.stack([phi_values(out[:, j], names) for j in range(out.shape[1])], dim=1)  # (n, grids, phis)
    x = [phis.transpose(1, 2).reshape(len(out), -1)]
    if cv is not None:
        x.append(cv.transpose(1, 2).reshape(len(out), -1))
    ratios = out[:, list(range(len(params["depths"]))) + [-1]].norm(dim=-1) / h0.norm()
    return torch.cat(x, dim=1).double().cpu().numpy(), ratios.double().cpu().numpy()


LawResult.plan_type = LawPlan


@register_task("law-chunk")
def law_task(params: dict, seed: int) -> dict:
    """Sweep task: one chunk of draws, on one thread: ``n``, ``sum`` and ``outer`` (the sums and
    cross products of :func:`chunk_values`' vectors), ``ratios`` of the first ``keep`` draws, ``seconds``."""
    t0 = time.perf_counter()
    with single_threaded_torch():  # small per-layer products: threads only wait on each other
        x, ratios = chunk_values(params, seed)
    return {"n": len(x), "sum": x.sum(axis=0).tolist(), "outer": (x.T @ x).tolist(),
            "ratios": np.round(ratios[:params["keep"]], 7).tolist(), "seconds": time.perf_counter() - t0}


def spec_objects(spec: dict) -> tuple:
    """The law (a driver), the block and the test functions' names of a spec (or a task's parameters):
    res-1 tanh and the built-in four where the spec names none."""
    from ...blocks import make_block
    from ...paths import driver_from_spec
    from .phis import DEFAULT_PHIS

    law = driver_from_spec({"driver": spec["law"], **(spec.get("law_options") or {})})
    block = make_block(spec.get("arch") or "res-1", spec.get("activation") or ("tanh" if not spec.get("arch") else None))
    return law, block, tuple(spec.get("phis") or DEFAULT_PHIS)


def _sizes(spec: dict) -> dict:
    """``entries`` (numbers of one layer's weights) and ``phis`` (test functions) of a spec."""
    from .engine import Layout

    _, block, names = spec_objects(spec)
    return {"entries": Layout(block, spec["width"]).entries, "phis": len(names)}


def _check_law(law, shift, method) -> tuple:
    """The law's driver (an i.i.d. law with :meth:`~deeplimits.paths.Driver.from_normal`), the checked
    ``shift`` ``(mean, variance)`` and ``method``'s ``(coupled, controls)``."""
    from .inputs import law_of

    law = law_of(law)
    shift = (DEFAULTS["mean"], DEFAULTS["variance"]) if shift is None else shift
    if not isinstance(shift, (tuple, list)) or len(shift) != 2:
        raise ParameterError("shift", f"shift must be a pair (mean, variance), got {shift!r:.60}")
    mean = V_.real("shift", shift[0], low=-10.0, high=10.0, context=" (its mean, in units of 1/sqrt(d))")
    variance = V_.real("shift", shift[1], low=0.0, high=100.0, low_open=True, context=" (its variance, in units of 1/d)")
    method = V_.choice("method", method, METHODS)
    return law, mean, variance, method != "plain", method == "controls"


#: draws per number of one draw's vector at least (its covariance is estimated from the draws)
MIN_DRAWS_PER_NUMBER = 10


@grouped
def plan_law(*, law=DEFAULTS["law"], depths: Sequence[int] = tuple(_CPU["depths"]), fine: int = _CPU["fine"],
             draws: int = _CPU["draws"], samples: int | None = None, method: str = DEFAULTS["method"],
             shift: tuple | None = None, variance_decay: tuple | None = None, phis=None,
             margin: float | None = None,
             network: Network = Network(arch=DEFAULTS["arch"], activation=DEFAULTS["activation"], width=DEFAULTS["width"]),
             compute: Compute = Compute(seed=DEFAULTS["seed"], dtype=torch.float32, device=None, chunk=None)) -> LawPlan:
    """Validate a law study (every check before any work). ``law``: a registered i.i.d. driver with a
    ``from_normal`` hook, by name or as an object (:func:`.inputs.law_of`; a law of your own too);
    ``depths``: increasing powers of two (at least two); ``fine``: a power of two, at least ``4
    max(depths)`` (the SDE's grids are ``fine / 4``, ``fine / 2``, ``fine``); ``draws``: at least
    :data:`MIN_DRAWS_PER_NUMBER` times the numbers each draw gives (:func:`~.result.per_draw_numbers`:
    their covariance is estimated from them); ``samples``: draws whose
    norm ratios are kept (at most ``draws``; default :data:`~.cases.DEFAULTS`' or all the draws if
    fewer); ``method``: ``'controls'`` (coupled through one path, with the control variates:
    non-Gaussian laws only), ``'coupled'`` or ``'plain'`` (plain Monte Carlo); ``shift``: ``(mean,
    variance)`` of the weights in units ``1/sqrt(d)`` and ``1/d`` (default ``(0, 1)``; others build
    laws that must be told no); ``variance_decay``: ``(c, p)``, the variance at depth ``L`` is
    ``variance + c L^-p`` (``p`` in ``(0, 4]``; the weak error then falls like ``L^-p``: a law that must
    not be told ``agrees`` for ``p < 3/4``); ``phis``: the test functions (names, :class:`~.phis.TestFunction` s
    or named functions of the output; default the built-in four); ``margin``: an ``agrees`` needs the
    weak rate within it of 1 (default :data:`~.fit.MARGIN`); ``network``: ``arch``, a block
    linear in its weights (res-1 by default), its ``activation`` (tanh) and ``width``; ``compute``:
    ``seed``, ``dtype``, ``device``, ``chunk`` (draws per task). Groups of
    :mod:`deeplimits.studies.settings`, or their fields as keywords."""
    from .inputs import block_of, phis_of

    law, mean, variance, coupled, controls = _check_law(law, shift, method)
    depths = V_.depths("depths", depths)
    if len(depths) < 2:
        raise ParameterError("depths", f"depths must hold at least two depths, got {depths}")
    decay = _check_decay(variance_decay, variance, depths[0])
    fine = V_.power_of_two("fine", fine)
    if fine < 4 * depths[-1]:
        raise ParameterError("fine", f"fine must be at least 4 * max(depths) = {4 * depths[-1]}, got {fine}")
    width = V_.integer("width", network.width, high=1000)
    block = block_of(network.arch, network.activation, width)
    names = phis_of(phis, width)
    dtype = V_.dtype(compute.dtype)
    spec = V_.device_spec(compute.device, dtype)
    item = torch.empty((), dtype=dtype).element_size()
    controls = controls and coupled and not law.gaussian
    own = _recorded(law, block, names)
    from .result import per_draw_numbers

    # the covariance of the numbers of one draw is estimated from the draws: far more draws than numbers
    least = MIN_DRAWS_PER_NUMBER * per_draw_numbers({"depths": depths, "controls": controls, **own})
    draws = V_.integer("draws", draws, low=least)
    sizes = _sizes({"law": law.name, "width": width, **own})
    from .memory import law_bytes

    chunk = R_.fit_chunk(lambda n: law_bytes(n, width, depths, fine, item, controls, **sizes), draws,
                         None if compute.chunk is None else V_.integer("chunk", compute.chunk), DEFAULTS["chunk"],
                         f"at d={width}, fine={fine}", ("chunk", "width", "fine"), device=spec)
    R_.require_count(R_.tasks_of(draws, chunk), R_.MAX_TASKS, f"draws={draws} in chunks of {chunk} makes too many "
                                                              "chunks", ("draws",))
    samples = min(DEFAULTS["samples"], draws) if samples is None else V_.integer("samples", samples, low=2, high=draws)
    R_.require_kept(samples * (len(depths) + 1), f"of the result ({samples} samples x {len(depths) + 1} ratios "
                    "|h_L|/|h_0|)", ("samples",))
    from ..equivalence import check_margin

    return LawPlan(law.name, mean, variance, width, tuple(depths), fine, draws, chunk, samples, coupled, controls,
                   V_.integer("seed", compute.seed, low=0), str(dtype).split(".")[-1], spec, **own,
                   margin=None if margin is None else check_margin(margin), variance_decay=decay)


def variances(spec: dict) -> list:
    """The weights' variance of each depth's network, in units of ``1/d``: ``variance + c L^-p`` with the
    spec's ``variance_decay`` ``(c, p)``, else ``variance``."""
    c, p = spec.get("variance_decay") or (0.0, 1.0)
    return [spec["variance"] + c * L ** -p for L in spec["depths"]]


def _check_decay(decay, variance: float, shallowest: int) -> tuple | None:
    """The checked ``variance_decay`` ``(c, p)``: ``c`` in ``[-10, 10]``, ``p`` in ``(0, 4]``, and the
    variance ``variance + c L^-p`` positive at every depth (``None`` where ``c`` is 0 or none is given)."""
    if decay is None:
        return None
    if not isinstance(decay, (tuple, list)) or len(decay) != 2:
        raise ParameterError("variance_decay", f"variance_decay must be a pair (c, p), got {decay!r:.60}")
    c = V_.real("variance_decay", decay[0], low=-10.0, high=10.0, context=" (its coefficient c of L^-p)")
    p = V_.real("variance_decay", decay[1], low=0.0, high=4.0, low_open=True, context=" (its power p)")
    if variance + c * shallowest ** -p <= 0:
        raise ParameterError("variance_decay", f"variance_decay ({c:g}, {p:g}) makes the variance {variance:g} + "
                                               f"{c:g} L^-{p:g} at most 0 at depth {shallowest}: it must be positive")
    return None if c == 0 else (c, p)


def _recorded(law, block, names) -> dict:
    """The optional fields of the spec: the block, its activation, the test functions and the law's
    parameters, each only where it is not the study's default (a spec of the default study is the
    one stored before they could be chosen)."""
    from .phis import DEFAULT_PHIS

    options = {k: v for k, v in law.spec().items() if k != "driver"}
    default = block.name == DEFAULTS["arch"] and block.activation.name == DEFAULTS["activation"]
    return {"arch": None if default else block.name, "activation": None if default else block.activation.name,
            "phis": None if names == DEFAULT_PHIS else names, "law_options": options or None}


def weak_law(law=DEFAULTS["law"], *, progress=None, store=None, **kw):
    """Run a law study (:func:`plan_law`'s arguments) and return its :class:`~.result.LawResult`:
    the weak errors of every test function against depth, the fitted expansion, the rate and the
    verdict, the Richardson-extrapolated errors, the distances between laws."""
    return plan_law(law=law, **kw).run(progress, store=store)
