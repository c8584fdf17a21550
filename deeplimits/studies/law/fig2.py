"""Marion et al.'s Fig. 2 (docs/law.md, "Marion et al., Fig. 2"): the quartiles of
``|h_L| / |h_0|`` of the res-3 network ``h_{k+1} = h_k + L^-1/2 V_k ReLU(W_k h_k)`` with i.i.d.
uniform weights of variance ``1/d`` (fresh ``V_k``, ``W_k`` at every layer), against its limit in law.

The limit (derived in docs/law.md): given ``h``, the increment ``L^-1/2 V ReLU(W h)`` is centred with
covariance ``|ReLU(W h)|^2 / (d L) I``, and ``E |ReLU(W h)|^2 = |h|^2 / 2`` (``W h`` has symmetric
entries of variance ``|h|^2 / d``); summed over layers these conditional covariances average out,
and the martingale central limit theorem gives the Itô SDE ``dH = |H| / sqrt(2 d) dB`` (``B`` a
``d``-dimensional Brownian motion). Then ``|H|^2`` is a geometric Brownian motion,
``d|H|^2 = |H|^2 (dt / 2 + sqrt(2 / d) dbeta)``, so
``|H_1| / |H_0| = exp(1/4 - 1/(2d) + Z / sqrt(2d))``, ``Z ~ N(0, 1)``: a log-normal law whose
quartiles at ``d = 100`` are 1.2181 and 1.3401 (Marion et al. quote about 1.22 and 1.34 at ``L = 1000``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import ClassVar, Sequence

import numpy as np
import torch

from ... import _random as R_
from ... import _resources as R2
from ... import _validate as V_
from ..._random import chunk_seed, single_threaded_torch
from ...runs import Task, chunk_sizes, register_task
from ..plan import Plan, register_plan
from ..result import PlanResult, draw_into
from .presets import FIG2

__all__ = ["Fig2Plan", "plan_fig2", "Fig2Result", "limit_quartiles", "res3_ratios", "MARION"]

MARION = (1.22, 1.34)
"""The quartiles Marion et al. quote at ``d = 100``, ``L = 1000`` (10^4 draws)."""
#: the 75% quantile of N(0, 1)
_Q75 = 0.6744897501960817


def limit_quartiles(d: int) -> list[float]:
    """The quartiles (25%, 50%, 75%) of ``|H_1| / |H_0|`` for the limit SDE (module docstring)."""
    mu, sigma = 0.25 - 1 / (2 * d), 1 / math.sqrt(2 * d)
    return [math.exp(mu - _Q75 * sigma), math.exp(mu), math.exp(mu + _Q75 * sigma)]


def res3_ratios(depth: int, d: int, draws: int, seed: int, dtype=torch.float32, device=None) -> np.ndarray:
    """``|h_L| / |h_0|`` of ``draws`` res-3 networks of depth ``depth``, width ``d``, ``h_0 = 1``,
    uniform weights of variance ``1/d`` drawn one layer at a time (layer ``k``: sub-stream ``k`` of ``seed``)."""
    a = math.sqrt(3.0 / d)
    h = torch.ones(draws, d, dtype=dtype, device=device)
    for k in range(depth):
        w = R_.uniform((2, draws, d, d), R_.mix_seed(seed, k), dtype, -a, a, device)
        u = torch.relu(torch.bmm(w[1], h.unsqueeze(-1)))
        h = h + torch.bmm(w[0], u).squeeze(-1) / math.sqrt(depth)
    return (h.norm(dim=1) / math.sqrt(d)).double().cpu().numpy()


@register_plan
@dataclasses.dataclass(frozen=True)
class Fig2Plan(Plan):
    """A validated Fig. 2 study (from :func:`plan_fig2`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "law-fig2"
    optional: ClassVar[tuple[str, ...]] = ("device",)

    width: int
    """The width ``d``."""
    depths: tuple[int, ...]
    """The depths ``L``."""
    draws: int
    """Draws per depth."""
    chunk: int
    """Draws per task."""
    seed: int
    """Base seed; task ``i`` uses ``chunk_seed(seed, i)``."""
    dtype: str
    """``'float32'`` or ``'float64'``."""
    device: str | None = None
    """Where the tasks run (``None``: the CPU)."""

    def tasks(self) -> list:
        out = []
        for L in self.depths:
            first = 0
            for n in chunk_sizes(self.draws, self.chunk):
                out.append(Task(f"law-fig2/L-{L:06d}/draws-{first:08d}", "law-fig2-chunk",
                                {"depth": L, "width": self.width, "draws": n, "dtype": self.dtype,
                                 "device": self.device}, chunk_seed(self.seed, len(out))))
                first += n
        return out

    def estimate(self) -> R2.Estimate:
        """Peak memory of one chunk, tasks and networks (no allocation)."""
        from .memory import fig2_bytes

        n = min(self.chunk, self.draws)
        return R2.Estimate(fig2_bytes(n, self.width, getattr(torch, self.dtype).itemsize),
                           len(self.depths) * R2.tasks_of(self.draws, self.chunk), self.draws * len(self.depths), n,
                           max(self.depths), R2.available_memory(self.device))

    def seconds(self) -> float:
        """The estimated seconds in one process: ``7.7 d^2`` ns a draw and layer (measured at d = 100)."""
        return self.draws * sum(self.depths) * 7.7e-9 * self.width ** 2

    def result_damage(self, task, result) -> str | None:
        """A chunk's stored ``ratios``: its draws' ``|h_L|/|h_0|``, finite and non-negative."""
        from .._result_checks import numbers_of

        ratios = result.get("ratios") if isinstance(result, dict) else None
        return numbers_of("ratios", ratios, (task.params["draws"],), low=0.0)[1]

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> "Fig2Result":
        by_depth: dict = {}
        for t, r in zip(tasks, results):
            by_depth.setdefault(t.params["depth"], []).extend(r["ratios"])
        return Fig2Result.from_ratios(self, by_depth, seconds)


@register_task("law-fig2-chunk")
def fig2_task(params: dict, seed: int) -> dict:
    """Sweep task: one depth, one chunk of draws: their ``ratios`` and ``seconds``."""
    t0 = time.perf_counter()
    with single_threaded_torch(params.get("device") is None):
        r = res3_ratios(params["depth"], params["width"], params["draws"], seed, getattr(torch, params["dtype"]),
                        params.get("device"))
    return {"ratios": np.round(r, 7).tolist(), "seconds": time.perf_counter() - t0}


def plan_fig2(*, width: int = FIG2["width"], depths: Sequence[int] = tuple(FIG2["depths"]), draws: int = FIG2["draws"],
              chunk: int | None = None, seed: int = 0, dtype=torch.float32, device=None) -> Fig2Plan:
    """Validate a Fig. 2 study: ``depths`` distinct positive depths, ``draws`` per depth (at least 8),
    ``chunk`` draws per task (default :data:`~.cases.FIG2`'s, fitted to the memory)."""
    from .memory import fig2_bytes

    depths = tuple(V_.sequence("depths", depths, lambda L: V_.integer("depths", L, high=10 ** 6), what="a list of depths"))
    if not depths or len(set(depths)) != len(depths):
        from ...errors import ParameterError

        raise ParameterError("depths", f"depths must be distinct depths, at least one, got {list(depths)}")
    width, draws = V_.integer("width", width, high=2000), V_.integer("draws", draws, low=8)
    dtype = V_.dtype(dtype)
    spec = V_.device_spec(device, dtype)
    item = torch.empty((), dtype=dtype).element_size()
    chunk = R2.fit_chunk(lambda n: fig2_bytes(n, width, item), draws, None if chunk is None else V_.integer("chunk", chunk),
                         FIG2["chunk"], f"at d={width}", ("chunk", "width"), device=spec)
    R2.require_count(len(depths) * R2.tasks_of(draws, chunk), R2.MAX_TASKS,
                     f"draws={draws} in chunks of {chunk} at {len(depths)} depths make too many tasks", ("draws",))
    R2.require_kept(draws * len(depths), f"of the result ({draws} draws x {len(depths)} depths of |h_L|/|h_0|)",
                    ("draws", "depths"))
    return Fig2Plan(width, tuple(sorted(depths)), draws, chunk, V_.integer("seed", seed, low=0),
                    str(dtype).split(".")[-1], spec)


def _quartiles(x: np.ndarray, rng, resamples: int = 1000) -> tuple[list, list]:
    """The quartiles of ``x`` and their 95% percentile-bootstrap intervals."""
    q = np.percentile(x, [25, 50, 75])
    boot = np.percentile(x[rng.integers(0, len(x), (resamples, len(x)))], [25, 50, 75], axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=1)
    return q.tolist(), [[float(a), float(b)] for a, b in zip(lo, hi)]


@dataclasses.dataclass
class Fig2Result(PlanResult):
    """The quartiles of ``|h_L| / |h_0|`` per depth with bootstrap intervals, and the limit's."""

    plan: object
    """The plan summarised (:class:`Fig2Plan`; :attr:`spec` its spec)."""
    depths: list
    """The depths with draws."""
    draws: list
    """Draws per depth."""
    quartiles: list
    """Per depth the 25%, 50%, 75% quantiles."""
    intervals: list
    """Per depth their 95% bootstrap intervals."""
    limit: list
    """The limit SDE's quartiles (:func:`limit_quartiles`)."""
    seconds: float
    """Compute seconds."""
    below: list = dataclasses.field(default_factory=list)
    """Per depth, the draws below each of the limit's quartiles (empty in results stored before the
    verdict: no verdict is read from them)."""

    @property
    def depth_readings(self) -> list:
        """Per depth, the tests of :func:`~.fig2_verdict.depth_reading`."""
        from .fig2_verdict import depth_reading

        return [depth_reading(b, n) for b, n in zip(self.below, self.draws)]

    @property
    def verdict(self) -> str:
        """Whether the network's quartiles are the limit's, at this size (:mod:`.fig2_verdict`)."""
        return self.verdict_note[0]

    @property
    def verdict_note(self) -> tuple[str, str]:
        """``(verdict, note)``: :func:`~.fig2_verdict.fig2_verdict` of :attr:`depth_readings`."""
        from .fig2_verdict import fig2_verdict

        if not self.below:
            return "insufficient evidence", "a result stored before the verdict: its counts were not kept"
        return fig2_verdict(self.depths, self.depth_readings)

    def readings(self) -> dict:
        """What its figure shows, read under today's rules: the verdict."""
        return {"verdict": self.verdict}

    def to_dict(self) -> dict:
        """Plain strict JSON with the derived ``verdict`` and ``verdict_note``."""
        verdict, note = self.verdict_note
        return {**super().to_dict(), "verdict": verdict, "verdict_note": note}

    @classmethod
    def from_ratios(cls, plan, by_depth: dict, seconds: float) -> "Fig2Result":
        """The result of ``plan`` from the norm ratios of every depth."""
        spec = plan.to_dict()
        rng = np.random.default_rng(spec["seed"])
        depths = sorted(by_depth)
        qs = [_quartiles(np.asarray(by_depth[L], dtype=float), rng) for L in depths]
        limit = limit_quartiles(spec["width"])
        below = [[int(np.sum(np.asarray(by_depth[L]) < q)) for q in limit] for L in depths]
        return cls(plan, depths, [len(by_depth[L]) for L in depths], [q for q, _ in qs], [i for _, i in qs],
                   limit, seconds, below)

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`): per
        depth the quartiles of ``|h_L|/|h_0|`` with their 95% bootstrap intervals."""
        from .._shared.points import point, setting

        where = setting(arch="res-3", width=self.spec["width"])
        return [point("law-fig2", where, L, f"quartile_{p}", v, ci=ci) for L, q, cis in
                zip(self.depths, self.quartiles, self.intervals) for p, v, ci in zip((25, 50, 75), q, cis)]

    def report(self) -> str:
        """The quartiles against depth and the limit's, as text."""
        verdict, note = self.verdict_note
        lines = [f"verdict: {verdict} ({note})",
                 f"Marion et al. Fig. 2: res-3 h + L^-1/2 V ReLU(W h), uniform weights, d = {self.spec['width']}, "
                 "h_0 = 1: quartiles of |h_L|/|h_0| (95% bootstrap intervals); the share of draws below each of the "
                 "limit's quartiles, its test (two-sided binomial) and reading"]
        readings = self.depth_readings or [None] * len(self.depths)
        for L, n, q, ci, r in zip(self.depths, self.draws, self.quartiles, self.intervals, readings):
            lines.append(f"L = {L:5d} ({n} draws): " + ", ".join(f"{v:.4f} [{a:.4f}, {b:.4f}]" for v, (a, b) in zip(q, ci)))
            if r is not None:
                lines.append("    below the limit's quartiles: " + ", ".join(f"{f:.3f}" for f in r["fractions"])
                             + f" (1/4, 1/2, 3/4); p = {r['pvalue']:.2g}: {r['reading']}")
        lo, med, hi = self.limit
        lines.append(f"limit SDE dH = |H|/sqrt(2d) dB (log-normal): {lo:.4f}, {med:.4f}, {hi:.4f}; Marion et al. quote "
                     f"about {MARION[0]} and {MARION[1]} at L = 1000; {self.seconds:.1f} s")
        return "\n".join(lines)

    def figures(self, out: str) -> list[str]:
        """Draw ``fig2.png`` into the directory ``out``; returns its path."""
        return draw_into(out, [("fig2.png", self.plot)])

    def plot(self, path=None, *, ax=None):
        """The quartile panel: the network's quartiles against ``L`` with their intervals, the
        limit's as lines, Marion et al.'s quoted values as crosses."""
        from ...plots import new_figure, save_figure

        fig, axes = new_figure(1, 1, (5.0, 3.8), path, ax)
        a, L = axes[0][0], np.asarray(self.depths, dtype=float)
        for i, name in enumerate(("25%", "50%", "75%")):
            q = np.array([x[i] for x in self.quartiles])
            ci = np.array([c[i] for c in self.intervals])
            a.errorbar(L, q, yerr=np.clip([q - ci[:, 0], ci[:, 1] - q], 0.0, None), fmt="o-", color=f"C{i}", ms=4, label=f"network {name}")
            a.axhline(self.limit[i], color=f"C{i}", ls=":", lw=1)
        a.plot([1000, 1000], MARION, "kx", label="Marion et al. (L = 1000)")
        a.set_xscale("log")
        a.set_xlabel("depth L")
        a.set_ylabel("|h_L| / |h_0|")
        a.set_title(f"res-3, uniform, d = {self.spec['width']} (dotted: the limit SDE)\n{self.verdict}", fontsize=9)
        a.legend(fontsize=7)
        return save_figure(fig, path, [self])


Fig2Result.plan_type = Fig2Plan
