"""The phase boundary of the gradient ratio ``r_p`` across depths (Marion et al., JMLR 2025, Fig. 7(b);
docs/published.md, "The gradients' phase boundary").

At one depth the phase diagram (:mod:`~deeplimits.studies.propagation.phase`) reads the boundary
where the mean ``log10 r_p`` crosses 0. Whether a gap between that crossing and ``beta = H`` is a
finite-depth effect is a question about how the crossing moves with the depth, so this study runs
several depths on the SAME weights (fractional weights are nested: the depth-``L`` network is the
first ``L`` layers of the deepest one, :func:`~deeplimits.studies.propagation.core._run`) and keeps
each draw's numbers, for intervals over draws. Per Hurst index and depth it reports:

* ``crossing_p`` (``crossing_h``): the beta where the mean ``log10 r_p`` (``log10 r_h``) crosses 0,
  with a 95% percentile-bootstrap interval over draws;
* ``band_p``: the betas where the mean ``log10 r_p`` crosses +1 and -1. The published figure is
  drawn with a colour scale clipped at ``|log10 r| = 1`` (the authors' code: ``seaborn.heatmap(...,
  vmin=-1, vmax=1, center=0)``), so every cell outside this band has one of the two end colours:
  the band is what the figure shows of the boundary, its darkest cells (the scale's centre) at the
  crossing of 0;
* ``flat_p``: between consecutive depths, the beta where ``r_p`` does not change with the depth
  (the mean ``log10 r_p`` at both depths cross), free of the constant in front of the power law;
* ``limit_p``: the crossing extrapolated in depth, from the least-squares line of the crossing
  against ``1 / log10 L`` (exact for a ratio ``c L^(rho - beta)``: its crossing is
  ``rho + log10(c) / log10(L)``), with the bootstrap interval.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, ClassVar, Sequence

import numpy as np
import torch

from ... import _resources as R_
from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...paths import make_driver
from ...runs import register_task, Task
from ..plan import Plan, register_plan
from ..result import PlanResult, draw_into
from ..theory import critical_betas
from .core import CAP, _common, _grid, _network, _run
from .memory import propagation_bytes

__all__ = ["gradient_boundary", "plan_gradient_boundary", "BoundaryPlan", "BoundaryResult", "boundary_task", "BOOTSTRAP"]

BOOTSTRAP = 1000
"""Bootstrap resamples of the draws behind every interval of :class:`BoundaryResult`."""


@register_plan
@dataclasses.dataclass(frozen=True)
class BoundaryPlan(Plan):
    """A validated study of the phase boundary across depths (from :func:`plan_gradient_boundary`)."""

    study: ClassVar[str] = "phase-boundary"

    arch: str
    """The residual map."""
    activation: str
    """The activation's name."""
    hursts: tuple[float, ...]
    """The Hurst indices ``H`` of the fractional weights ``V`` and ``W``."""
    betas: tuple[float, ...]
    """The scaling exponents ``beta``."""
    depths: tuple[int, ...]
    """The depths, run as prefixes of the deepest network's weights."""
    width: int
    """The hidden width ``d``."""
    n_in: int
    """The input dimension (``h_0 = A x``)."""
    draws: int
    """Independent draws of (weights, ``A``, ``B``, ``x``) per Hurst index: one task each."""
    inputs: int
    """Inputs ``x`` per draw."""
    seed: int
    """The base seed."""
    dtype: str
    """The dtype, by name."""

    def estimate(self) -> R_.Estimate:
        """Peak bytes of one task (one draw at one Hurst index, every depth and beta)."""
        item = getattr(torch, self.dtype).itemsize
        peak = propagation_bytes(self.arch, make_driver("fractional", self.hursts[0]), self.width, self.n_in,
                                 list(self.depths), self.betas, self.inputs, 1, item, bias=False)
        return R_.Estimate(peak, len(self.hursts) * self.draws, len(self.hursts) * self.draws * len(self.depths)
                           * len(self.betas), 1, max(self.depths), R_.available_memory())

    def tasks(self) -> list:
        """One task per (Hurst index, draw): the draw's weights serve every depth and beta."""
        base = {k: v for k, v in self.to_dict().items() if k not in ("hursts", "seed", "study", "draws")}
        base["bias"] = False  # the published models: res-1/2/3 have none, inside is h + alpha sigma(W h)
        return [Task(f"phase-boundary/hurst-{h:.6f}/draw-{j}", "phase-boundary-draw",
                     {**base, "hurst": h, "draws": 1}, chunk_seed(self.seed, i * self.draws + j))
                for i, h in enumerate(self.hursts) for j in range(self.draws)]

    def progress_units(self, task) -> int:
        return 1

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> "BoundaryResult":
        """The crossings per Hurst index over its finished draws."""
        hursts = sorted({t.params["hurst"] for t in tasks})
        rp = [[r["log10_rp"] for t, r in zip(tasks, results) if t.params["hurst"] == h] for h in hursts]
        rh = [[r["log10_rh"] for t, r in zip(tasks, results) if t.params["hurst"] == h] for h in hursts]
        plan = dataclasses.replace(self, hursts=tuple(hursts))
        return BoundaryResult(plan, rp, rh, seconds)


@register_task("phase-boundary-draw", axes=("depth", "beta"))
def boundary_task(params: dict, seed: int) -> dict:
    """One draw at one Hurst index: the mean over its inputs of ``log10 r_p`` and ``log10 r_h`` per
    (depth, beta), every depth a prefix of the same weights (an exploded ratio counts as
    ``log10 CAP``)."""
    out = _run(_network(params["arch"], params["activation"]), make_driver("fractional", params["hurst"]), params,
               params["depths"], seed, deviation=False)
    return {"log10_" + k.replace("_", ""): np.log10(np.maximum(out[k][0], 1 / CAP)).mean(-1).tolist()
            for k in ("r_p", "r_h")}


def plan_gradient_boundary(hursts: Sequence[float] = (0.5, 0.7, 0.9), betas: Sequence[float] | None = None,
                           depths: Sequence[int] = (1000, 3000, 10000), *, arch: str = "res-3",
                           activation: str | None = None, width: int = 40, n_in: int = 64, draws: int = 8,
                           inputs: int = 4, seed: int = 0, dtype=torch.float32) -> BoundaryPlan:
    """Validate the arguments of :func:`gradient_boundary`; betas default to 31 values in
    [0.2, 1.1] (where the mean ``log10 r_p`` goes from +1 to -1 at these depths)."""
    from ..presets import linspace

    net = _common(arch, activation, width, n_in, draws, inputs, seed, dtype)
    hursts = _grid("hursts", hursts, lambda h: round(V_.hurst(h, name="hursts"), 6))
    betas = _grid("betas", linspace(0.2, 1.1, 31) if betas is None else betas,
                  lambda b: V_.real("betas", b, low=0.0))
    depths = _grid("depths", depths, lambda L: V_.integer("depths", L, low=10))
    if len(depths) < 2:
        raise ParameterError("depths", f"depths must hold at least 2 depths (the crossing is extrapolated in depth), "
                                       f"got {depths}")
    if draws < 2:
        raise ParameterError("draws", f"draws must be at least 2 (the intervals resample the draws), got {draws}")
    plan = BoundaryPlan(net.arch, net.activation.name, tuple(hursts), tuple(betas), tuple(depths), width, n_in, draws,
                        inputs, seed, str(dtype).replace("torch.", ""))
    R_.require_memory(plan.estimate().peak_bytes, f"per draw at width={width}, depths up to {max(depths)}, "
                      f"{len(betas)} betas x {inputs} inputs", ("width", "depths", "betas", "inputs"))
    R_.require_count(max(depths), R_.MAX_STEPS, f"depths up to {max(depths)} make too many layers per task", ("depths",))
    return plan


def gradient_boundary(hursts: Sequence[float] = (0.5, 0.7, 0.9), betas: Sequence[float] | None = None,
                      depths: Sequence[int] = (1000, 3000, 10000), *,
                      progress: Callable[[int], None] | None = None, store=None, **settings) -> "BoundaryResult":
    """The crossings of the mean ``log10 r_p`` (and ``log10 r_h``) across ``depths`` per Hurst
    index, with bootstrap intervals over draws and the crossing extrapolated in depth (module
    docstring): ``plan_gradient_boundary(...).run(progress, store=store)``. ``settings``: ``arch``
    (res-3), ``activation``, ``width`` (40), ``n_in`` (64), ``draws`` (8), ``inputs`` (4),
    ``seed``, ``dtype``: the published phase protocol but for its depths and draws."""
    return plan_gradient_boundary(hursts, betas, depths, **settings).run(progress, store=store)


def _crossing(betas, y, level: float = 0.0) -> np.ndarray:
    """:func:`~deeplimits.studies.theory.critical_betas` of ``y - level`` (``y``: ``(..., betas)``; NaN
    without a crossing)."""
    return critical_betas(betas, np.asarray(y, dtype=np.float64) - level)


def _plain(x):
    """An array of crossings as plain data: floats, ``None`` for NaN (no crossing)."""
    if np.ndim(x) == 0:
        return None if np.isnan(x) else float(x)
    return [_plain(v) for v in x]


def _interval(values: np.ndarray) -> list:
    """The 95% percentile intervals over the first axis of bootstrap values (``[None, None]`` where
    more than 2.5% of the resamples have no crossing)."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf where a resample has no crossing: masked below
        q = np.nanquantile(np.where(np.isnan(v), np.inf, v), [0.025, 0.975], axis=0) if v.size else v
    q = np.moveaxis(np.asarray(q), 0, -1)
    q[np.isnan(v).mean(0) > 0.025] = np.nan
    return _plain(q)


def _extrapolated(depths, crossings: np.ndarray) -> np.ndarray:
    """The intercept at ``1 / log10 L = 0`` of the least-squares line of the crossings (``(..., depths)``)
    against ``1 / log10 L`` (NaN where a depth has no crossing)."""
    x = 1.0 / np.log10(np.asarray(depths, dtype=np.float64))
    X = np.stack([np.ones_like(x), x], 1)
    coef = np.linalg.lstsq(X, np.nan_to_num(np.moveaxis(np.atleast_2d(crossings), -1, 0)), rcond=None)[0]
    out = coef[0].reshape(np.shape(crossings)[:-1])
    return np.where(np.isnan(crossings).any(-1), np.nan, out)


@dataclasses.dataclass
class BoundaryResult(PlanResult):
    """The phase boundary across depths (:func:`gradient_boundary`): plain data holding its plan.

    ``log10_rp[i][j][l][b]`` (``log10_rh``): draw ``j`` at ``hursts[i]``, depth ``depths[l]``,
    ``betas[b]``: the mean over the draw's inputs. Everything else (:meth:`summary`) is computed from
    these."""

    plan: BoundaryPlan
    """The plan summarised (``hursts`` are those with finished draws)."""
    log10_rp: list[list[list[list[float]]]]
    """Per (H, draw, depth, beta), the mean ``log10 r_p`` over the draw's inputs."""
    log10_rh: list[list[list[list[float]]]]
    """Per (H, draw, depth, beta), the mean ``log10 r_h`` over the draw's inputs."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""

    shown: ClassVar[dict] = {"hurst": "hursts", "beta": "betas", "depths": "depths", "arch": "arch",
                             "activation": "activation", "width": "width", "draws": "draws", "inputs": "inputs",
                             "seed": "seed"}

    def summary(self) -> list[dict]:
        """Per Hurst index: ``crossing_p``, ``crossing_h`` (per depth), ``band_p``, ``band_h`` (per
        depth, ``[beta where the mean log10 r = +1, beta where it is -1]``), ``flat_p`` (per consecutive
        pair of depths), ``limit_p`` (the extrapolated crossing), each crossing with its 95% bootstrap
        interval over draws (``*_ci``, :data:`BOOTSTRAP` resamples seeded by the plan's seed); ``None``
        where there is no crossing."""
        cached = self.__dict__.get("_summary")
        if cached is None:
            cached = self.__dict__["_summary"] = self._summarise()
        return cached

    def _summarise(self) -> list[dict]:
        rng = np.random.default_rng(self.seed)
        b = self.beta
        flat = lambda m: _crossing(b, m[..., 1:, :] - m[..., :-1, :])  # noqa: E731  (..., depth pairs)
        out = []
        for h, rp, rh in zip(self.hurst, self.log10_rp, self.log10_rh):
            rp, rh = np.asarray(rp, dtype=np.float64), np.asarray(rh, dtype=np.float64)  # (draws, depths, betas)
            idx = rng.integers(0, len(rp), size=(BOOTSTRAP, len(rp)))
            boot_p, boot_h = rp[idx].mean(1), rh[idx].mean(1)  # (resamples, depths, betas)
            mp, mh = rp.mean(0), rh.mean(0)
            rec = {"hurst": h, "predicted": max(h, 0.5), "draws": len(rp),
                   "crossing_p": _plain(_crossing(b, mp)), "crossing_p_ci": _interval(_crossing(b, boot_p)),
                   "crossing_h": _plain(_crossing(b, mh)), "crossing_h_ci": _interval(_crossing(b, boot_h)),
                   "band_p": _plain(np.stack([_crossing(b, mp, 1.0), _crossing(b, mp, -1.0)], -1)),
                   "band_h": _plain(np.stack([_crossing(b, mh, 1.0), _crossing(b, mh, -1.0)], -1)),
                   "flat_p": _plain(flat(mp)), "flat_p_ci": _interval(flat(boot_p)),
                   "limit_p": _plain(_extrapolated(self.depths, _crossing(b, mp))),
                   "limit_p_ci": _interval(_extrapolated(self.depths, _crossing(b, boot_p))[:, None])[0]}
            out.append(rec)
        return out

    def report(self) -> str:
        """Per Hurst index and depth: the crossings of ``r_p`` and ``r_h`` with their intervals, the
        band the published colour scale shows, the depth-flat beta and the extrapolated crossing
        (:func:`~.report.boundary_report`)."""
        from .report import boundary_report

        return boundary_report(self)

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies.propagation.points`)."""
        from .points import boundary_points

        return boundary_points(self)

    def figures(self, out: str) -> list[str]:
        """Draw ``boundary.png`` into the directory ``out``; returns its path."""
        return draw_into(out, [("boundary.png", self.plot)])

    def plot(self, path: str | None = None):
        """The mean ``log10 r_p`` and ``log10 r_h`` against beta per Hurst index and depth
        (:func:`~.plots.plot_boundary`)."""
        from .plots import plot_boundary

        return plot_boundary(self, path)


BoundaryResult.plan_type = BoundaryPlan
