"""The (H, beta) phase diagram with fractional weights and the critical scaling beta*(H)."""

from __future__ import annotations

import dataclasses
from typing import Callable, ClassVar, Sequence

import numpy as np
import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...networks import CorrectedResNet
from ...paths import make_driver
from ...runs import register_task, Task
from ..plan import Plan, register_plan
from ..presets import PHASE_PRESETS
from ..result import PlanResult, draw_into
from ..settings import Compute, Execution, Network, grouped
from .core import CAP, _common, _grid, _network, _phase_depths, _run, bias_field, estimate_phase
from ..theory import critical_beta

__all__ = ["phase_diagram", "plan_phase", "run_phase", "PhasePlan", "PhaseResult", "PHASE_PRESETS"]


@dataclasses.dataclass
class PhaseResult(PlanResult):
    """The (H, beta) phase diagram with fractional weights: plain data holding its plan
    (:class:`~deeplimits.studies.result.PlanResult`: ``hurst``, ``beta``, ``arch``, ... are the plan's).

    ``log10_rh[i][j]`` and ``log10_rp[i][j]`` are the means of ``log10 r_h`` and
    ``log10 r_p`` over draws and inputs at ``hurst[i]``, ``beta[j]`` (an exploded ratio counts
    as ``log10 CAP = 30``); ``exploded[i][j]`` counts exploded (draw, input) pairs;
    ``beta_star[i]`` is :func:`critical_beta` of row ``i`` (``None`` without a crossing), to
    compare with ``predicted[i] = max(H, 1/2)``.

    That crossing carries a finite-depth offset: near the boundary ``r_h ~ c L^(H - beta)``,
    so ``log10 r_h = 0`` at ``beta = H + log10(c) / log10(L)``; for res-3, ``c`` is about
    ``E ReLU(Z) / sd(Z) = 1/sqrt(2 pi)`` and the offset about -0.1 at L = 1000. The scaling
    estimate ``beta_star_scaling[i]`` is free of ``c``: the beta where ``r_h`` stops depending
    on the depth, i.e. where the mean ``log10 r_h`` at ``depth`` and at ``short_depth =
    depth // 10`` (the first tenth of the same weights, ``log10_rh_short``) cross.

    ``beta_star_p[i]``: the same crossing for ``log10 r_p``. ``slope_h[i][j]``: the log-log
    slope of ``r_h`` on ``L`` in the cell, ``(log10_rh - log10_rh_short) / log10(depth /
    short_depth)`` (``None`` where a draw exploded at ``depth``), beside ``predicted_slope[i][j]
    = max(H, 1/2) - beta`` (the identity side, ``beta > max(H, 1/2)``, is where it is a power law).
    """

    plan: PhasePlan
    """The plan of the Hurst indices summarised (``hurst``, ``beta``, ``arch``, ``width``, ... are read from it)."""
    log10_rh: list[list[float]]
    """Mean ``log10 r_h`` over draws and inputs per (H, beta)."""
    log10_rp: list[list[float]]
    """Mean ``log10 r_p`` over draws and inputs per (H, beta)."""
    exploded: list[list[int]]
    """Exploded (draw, input) pairs per (H, beta)."""
    beta_star: list[float | None]
    """Per H, the beta where the mean ``log10 r_h`` crosses 0 (:func:`critical_beta`; ``None`` without a
    crossing)."""
    predicted: list[float]
    """Per H, the predicted boundary ``max(H, 1/2)``."""
    beta_star_scaling: list[float | None]
    """Per H, the beta where ``r_h`` stops depending on the depth (free of the constant ``c``)."""
    short_depth: int | None
    """``depth // 10``, the depth of ``log10_rh_short``."""
    log10_rh_short: list[list[float]] | None
    """Mean ``log10 r_h`` at ``short_depth`` (the first tenth of the same weights)."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""
    beta_star_p: list[float | None] = dataclasses.field(default_factory=list)
    """Per H, the crossing of the mean ``log10 r_p`` with 0."""
    slope_h: list[list[float | None]] | None = None
    """Per (H, beta), the log-log slope of ``r_h`` on ``L`` (``None`` where a draw exploded)."""
    predicted_slope: list[list[float]] | None = None
    """Per (H, beta), the predicted slope ``max(H, 1/2) - beta``."""
    log10_rh_corrected: list[list[float]] | None = None
    """With ``corrected`` (res-1): mean ``log10 r_h`` of the corrected network on the same weights
    (:class:`~deeplimits.networks.CorrectedResNet`); ``None`` otherwise."""
    log10_rp_corrected: list[list[float]] | None = None
    """With ``corrected``: its mean ``log10 r_p``."""
    beta_star_corrected: list[float | None] | None = None
    """With ``corrected``: per H, the crossing of its mean ``log10 r_h`` with 0."""
    beta_star_scaling_corrected: list[float | None] | None = None
    """With ``corrected``: per H, the beta where its ``r_h`` stops depending on the depth."""

    shown: ClassVar[dict] = {"hurst": "hursts", "beta": "betas", "arch": "arch", "activation": "activation",
                             "width": "width", "n_in": "n_in", "depth": "depth", "draws": "draws",
                             "inputs": "inputs", "seed": "seed", "dtype": "dtype", "bias": "bias",
                             "corrected": "corrected"}
    """The plan's values the result shows: its JSON name -> the plan's field (see
    :class:`~deeplimits.studies.result.PlanResult`)."""

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies.propagation.points`)."""
        from .points import phase_points

        return phase_points(self)

    def report(self) -> str:
        """One line per H: the estimates of beta*, the prediction, and the mean gap between the
        measured and the predicted slope over the identity side of the row."""
        arch = self.arch + ("" if self.bias is None else " with bias" if self.bias else " without bias")
        lines = [f"phase diagram: {arch}, {self.activation}, d={self.width}, L={self.depth}, "
                 f"{len(self.hurst)} H x {len(self.beta)} beta, {self.draws} draws x {self.inputs} inputs",
                 f"{'H':>6} {'beta* (log10 r_h = 0)':>22} {'beta* (scaling)':>16} {'beta* (r_p)':>12} "
                 f"{'max(H,1/2)':>10} {'slope - predicted':>18}"]
        n = len(self.hurst)
        scaling = self.beta_star_scaling or [None] * n
        gaps = self.slope_gaps()
        fmt = lambda b: "-" if b is None else f"{b:.3f}"  # noqa: E731
        for h, b, bs, bp, p, g in zip(self.hurst, self.beta_star, scaling, self.beta_star_p or [None] * n,
                                      self.predicted, gaps):
            lines.append(f"{h:6.3f} {fmt(b):>22} {fmt(bs):>16} {fmt(bp):>12} {p:10.3f} {fmt(g):>18}")
        if self.slope_h is not None:
            lines.append(f"slope - predicted: mean over the cells with beta > max(H, 1/2) of the log-log slope of r_h "
                         f"between L = {self.short_depth} and {self.depth}, minus max(H, 1/2) - beta")
        if self.log10_rh_corrected is not None:
            lines += self._corrected_lines(fmt)
        return "\n".join(lines)

    def _corrected_lines(self, fmt) -> list[str]:
        """The corrected network beside the plain one: its beta* and the largest change of the mean
        ``log10 r_h`` over the betas, per H."""
        n = len(self.hurst)
        lines = ["corrected network (+ (L^-2beta / 2d) sigma' sigma per layer), same weights:",
                 f"{'H':>6} {'beta* (log10 r_h = 0)':>22} {'beta* (scaling)':>16} {'max |corrected - plain|':>24}"]
        for h, b, bs, new, old in zip(self.hurst, self.beta_star_corrected, self.beta_star_scaling_corrected or [None] * n,
                                      self.log10_rh_corrected, self.log10_rh):
            gap = max(abs(a - c) for a, c in zip(new, old))
            lines.append(f"{h:6.3f} {fmt(b):>22} {fmt(bs):>16} {gap:24.3f}")
        return lines

    def slope_gaps(self) -> list[float | None]:
        """Per H, the mean of ``slope_h - predicted_slope`` over the cells with
        ``beta > max(H, 1/2)`` and a slope (``None`` without such a cell)."""
        if self.slope_h is None:
            return [None] * len(self.hurst)
        out = []
        for row, pred, rho in zip(self.slope_h, self.predicted_slope, self.predicted):
            d = [s - p for s, p, b in zip(row, pred, self.beta) if s is not None and b > rho]
            out.append(float(np.mean(d)) if d else None)
        return out

    def figures(self, out: str) -> list[str]:
        """Draw the phase diagram into the directory ``out`` (``phase.png``); returns its path."""
        return draw_into(out, [("phase.png", self.plot)])

    def plot(self, path: str | None = None, *, ax=None):
        """Heat maps of mean log10 r_h and log10 r_p with beta*(H) against max(H, 1/2)."""
        from ...plots import plot_phase

        return plot_phase(self, path, ax=ax)


@register_plan
@dataclasses.dataclass(frozen=True)
class PhasePlan(Plan):
    """A validated phase-diagram study (from :func:`plan_phase`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "phase"
    optional: ClassVar[tuple[str, ...]] = ("device", "bias", "corrected")

    arch: str
    """The residual map."""
    activation: str
    """The activation's name."""
    hursts: tuple[float, ...]
    """The Hurst indices ``H`` of the fractional weights."""
    betas: tuple[float, ...]
    """The scaling exponents ``beta``."""
    width: int
    """The hidden width ``d``."""
    n_in: int
    """The input dimension (``h_0 = A x``)."""
    depth: int
    """The depth ``L``."""
    draws: int
    """Independent draws of (weights, ``A``, ``B``, ``x``)."""
    inputs: int
    """Inputs ``x`` per draw."""
    seed: int
    """The base seed."""
    dtype: str
    """The dtype, by name."""
    device: str | None = None  # None: the CPU (CPU specs are unchanged)
    """Where the tasks run (``None``: the CPU)."""
    bias: bool | None = None  # the inside model only; a spec without it (an older run) had the bias
    """For ``inside`` only: whether the model has the bias ``b``."""
    corrected: bool | None = None  # res-1 only, recorded when True
    """For ``res-1`` only: whether the corrected network runs too, on the same weights (``None``: not)."""

    def estimate(self) -> R_.Estimate:
        """Peak bytes of one task (all draws of one Hurst index), tasks and networks."""
        return estimate_phase(self.to_dict())

    def tasks(self) -> list:
        """One task per Hurst index (its weights are drawn once and reused for every beta)."""
        base = {k: v for k, v in self.to_dict().items() if k not in ("hursts", "seed", "study")}
        return [Task(f"phase/hurst-{h:.6f}", "phase-hurst", {**base, "hurst": h}, chunk_seed(self.seed, i))
                for i, h in enumerate(self.hursts)]

    def progress_units(self, task) -> int:
        return 1

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> PhaseResult:
        """The diagram over the Hurst indices of the finished tasks."""
        spec = {**self.to_dict(), "hursts": [t.params["hurst"] for t in tasks]}
        return summarise_phase(spec, results, seconds)


PhaseResult.plan_type = PhasePlan


@grouped
def plan_phase(hursts: Sequence[float] | None = None, betas: Sequence[float] | None = None, *, arch: str = "res-3",
               n_in: int = 64, draws: int = 5, inputs: int = 10, corrected: bool = False,
               network: Network = Network(activation=None, width=40, depth=1000, bias=None),
               compute: Compute = Compute(seed=0, dtype=torch.float32, device=None)) -> PhasePlan:
    """Validate the arguments of :func:`phase_diagram` and return the study as a :class:`PhasePlan`
    (its spec records ``"device"`` only when not the CPU, ``"bias"`` only for ``inside``).
    ``network``: ``activation``, ``width``, ``depth``, ``bias``; ``compute``: ``seed``, ``dtype``,
    ``device`` (groups of :mod:`deeplimits.studies.settings`, or their fields as keywords).
    ``corrected`` (res-1 only): also run the corrected network on the same weights (its spec
    records ``"corrected": true``)."""
    activation, width, depth, bias = network.activation, network.width, network.depth, network.bias
    seed, dtype = compute.seed, compute.dtype
    where = {"device": V_.device_spec(compute.device, dtype)}
    full = PHASE_PRESETS["full"]
    hursts = full["hursts"] if hursts is None else hursts
    betas = full["betas"] if betas is None else betas
    net = _common(arch, activation, width, n_in, draws, inputs, seed, dtype)
    where.update(bias_field(net.block, bias))
    if V_.flag("corrected", corrected):
        if not net.block.rough_correction:
            raise ParameterError("corrected", f"corrected applies only to arch 'res-1' (the correction is that of h + "
                                              f"alpha V sigma(h): Block.rough_correction), got arch {net.arch!r}")
        where["corrected"] = True
    hursts = _grid("hursts", hursts, lambda h: round(V_.hurst(h, name="hursts"), 6))  # task keys: 6 decimals
    betas = _grid("betas", betas, lambda b: V_.real("betas", b, low=0.0))
    depth = V_.integer("depth", depth)
    plan = PhasePlan(net.arch, net.activation.name, tuple(hursts), tuple(betas), width, n_in, depth, draws, inputs,
                     seed, str(dtype).replace("torch.", ""), **where)
    est = plan.estimate()  # a task holds all draws of one Hurst index: not chunked
    R_.require_memory(est.peak_bytes, f"per Hurst index ({draws} draws x {inputs} inputs) at width={width}, "
                      f"n_in={n_in}, depth={depth}, {len(betas)} betas", ("width", "n_in", "depth", "betas", "draws", "inputs"),
                      device=where.get("device"))
    R_.require_count(depth, R_.MAX_STEPS, f"depth={depth} makes too many layers per task", ("depth",))
    return plan


@register_task("phase-hurst", axes=("beta",))
def phase_task(params: dict, seed: int) -> dict:
    """Sweep task: mean log10 ratios over draws and inputs at one H, for every beta, at the
    depth and (for the scaling estimate of beta*) at a tenth of it, on a prefix of the same weights;
    with ``corrected``, the same for the corrected network on the same weights (same seed)."""
    driver = make_driver("fractional", params["hurst"])
    depths = _phase_depths(params["depth"])
    res = _means(_run(_network(params["arch"], params["activation"]), driver, params, depths, seed, deviation=False))
    if params.get("corrected"):
        fixed = _run(CorrectedResNet(params["activation"]), driver, params, depths, seed, deviation=False)
        res.update({f"{k}_corrected": v for k, v in _means(fixed).items() if k != "exploded"})
    return res


def _means(out: dict) -> dict:
    """The task's numbers from the ratios ``out`` of one network: the mean log10 ratios at the depth
    (and at a tenth of it), and the exploded counts."""
    res = {}
    for name in ("r_h", "r_p"):
        x = out[name]  # (draws, depths, betas, inputs)
        res["log10_" + name.replace("_", "")] = np.log10(np.maximum(x[:, 0], 1 / CAP)).mean((0, 2)).tolist()
    if out["r_h"].shape[1] == 2:
        res["log10_rh_short"] = np.log10(np.maximum(out["r_h"][:, 1], 1 / CAP)).mean((0, 2)).tolist()
    res["exploded"] = ((out["r_h"][:, 0] >= CAP) | (out["r_p"][:, 0] >= CAP)).sum((0, 2)).tolist()
    return res


def summarise_phase(spec: dict, parts: Sequence[dict], seconds: float = 0.0) -> PhaseResult:
    """Combine the per-H tasks of a phase study into a :class:`PhaseResult`."""
    rh = [p["log10_rh"] for p in parts]
    rp = [p["log10_rp"] for p in parts]
    short = [p.get("log10_rh_short") for p in parts]
    scaling = [None if s is None else critical_beta(spec["betas"], np.subtract(r, s)) for r, s in zip(rh, short)]
    short_depth = spec["depth"] // 10 if short[0] else None
    slope = predicted = None
    if short_depth:
        span = np.log10(spec["depth"] / short_depth)
        slope = [[None if e else (a - b) / span for a, b, e in zip(r, s, p["exploded"])]
                 for r, s, p in zip(rh, short, parts)]
        predicted = [[max(h, 0.5) - b for b in spec["betas"]] for h in spec["hursts"]]
    return PhaseResult(PhasePlan.from_dict(spec), rh, rp, [p["exploded"] for p in parts],
                       [critical_beta(spec["betas"], r) for r in rh], [max(h, 0.5) for h in spec["hursts"]], scaling,
                       short_depth, short if short[0] else None, seconds, [critical_beta(spec["betas"], r) for r in rp],
                       slope, predicted, **_corrected(spec["betas"], parts))


def _corrected(betas, parts) -> dict:
    """The corrected network's fields of a :class:`PhaseResult` (none without it)."""
    if "log10_rh_corrected" not in parts[0]:
        return {}
    rh = [p["log10_rh_corrected"] for p in parts]
    short = [p.get("log10_rh_short_corrected") for p in parts]
    return dict(log10_rh_corrected=rh, log10_rp_corrected=[p["log10_rp_corrected"] for p in parts],
                beta_star_corrected=[critical_beta(betas, r) for r in rh],
                beta_star_scaling_corrected=None if short[0] is None else
                [critical_beta(betas, np.subtract(r, s)) for r, s in zip(rh, short)])


@grouped
def phase_diagram(hursts: Sequence[float] | None = None, betas: Sequence[float] | None = None, *,
                  execution: Execution = Execution(), **settings) -> PhaseResult:
    """The (H, beta) phase diagram (docs/mathematics.md, "Signal propagation at initialisation") with fractional
    weights V and W: ``execution.run(plan_phase(hursts, betas, **settings))``.

    For each Hurst index, ``draws`` weight samples (fGn along depth, exact) with ``inputs``
    inputs each are drawn ONCE and every beta runs on them in one forward and one backward
    pass. The critical scaling ``beta*(H)`` is where the mean ``log10 r_h`` crosses 0; the
    prediction is ``max(H, 1/2)`` (Marion et al. §4).

    Args:
        hursts, betas: the grid (default: the published one, 51 H in [0.05, 0.97] and 70 beta
            in [0, 1.3]).
        execution: how the tasks run (:class:`~deeplimits.studies.settings.Execution`: ``progress``,
            called with 1 after each finished Hurst index; ``store``, ``workers``, ``scheduler``,
            ``timeout``: a run store and an executor, see :func:`stability`).
        **settings: the arguments of :func:`plan_phase` (``arch``, ``n_in``, ``draws``,
            ``inputs`` as for :func:`stability`; ``network``: ``activation``, ``width``,
            ``depth``, ``bias``, for ``arch='inside'`` only, default False, the published ``h +
            alpha sigma(W h)``; ``compute``: ``seed``, ``dtype``, ``device``, where the tasks run,
            default the CPU, recorded in the spec only when not the CPU), or the groups' fields
            as keywords.
    """
    return execution.run(plan_phase(hursts, betas, **settings))


def run_phase(plan: PhasePlan | dict, progress: Callable[[int], None] | None = None, *, store=None,
              workers: int | None = None, scheduler: str | None = None,
              timeout: float | None = None) -> PhaseResult:
    """Run a phase study (a :class:`PhasePlan`, or its spec as stored) and summarise it."""
    plan = plan if isinstance(plan, PhasePlan) else PhasePlan.from_dict(plan)
    return plan.run(progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout)
