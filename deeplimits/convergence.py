"""Strong convergence of networks to their limits, SPEC §4 ("Strong error").

For a regime and dyadic depths, estimate ``e(L) = E max_k ||H_{k/L} - h_k||`` and the terminal
error ``E ||H_1 - h_L||`` by Monte Carlo over independent (input, driver) draws, then fit
``e(L) ~ L^-rate`` on log-log with a bootstrap confidence interval over draws.

All depths and the reference share one driver sample per draw and are computed in ONE pass
over the finest grid: coarse increments are sums of fine ones (a tree of pairwise sums per
chunk of fine steps), each network advances when its grid point is reached and is compared
with the reference there. Brownian increments are streamed, so memory does not grow with
the finest depth.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Callable, Sequence

import numpy as np
import torch

from . import _resources as R_
from . import _validate as V_
from ._plain import PlainData, strict
from .drivers import PathSample, pair_sums
from .sweeps import chunk_seed, chunk_sizes
from .pairs import INSIDE_REGIMES, REGIMES, InsidePair, Pair, pair as _pair

__all__ = ["strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "ConvergenceResult", "fit_rate",
           "sweep_errors", "chunk_seed", "DEFAULTS", "MIN_FINITE_DRAWS", "MAX_CI_WIDTH"]



def fit_rate(depths: Sequence[int], errors: np.ndarray, *, n_boot: int = 2000, seed: int = 0,
             level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Least-squares rate of ``mean error ~ depth^-rate`` with a percentile bootstrap interval.

    Args:
        depths: the depths (columns of ``errors``).
        errors: per-draw errors, shape ``(draws, len(depths))``.
    Returns:
        ``(rate, (lo, hi))``.
    """
    e = np.asarray(errors, dtype=np.float64)
    if len(depths) < 2:  # a slope needs two depths
        return math.nan, (math.nan, math.nan)
    x = np.log(np.asarray(depths, dtype=np.float64))
    xc = x - x.mean()

    def rate(mean_err):
        y = np.log(mean_err)
        return -(y * xc).sum(-1) / (xc ** 2).sum()

    point = float(rate(e.mean(0)))
    if len(e) < 2:
        return point, (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    boot = np.empty(n_boot)
    for i in range(0, n_boot, 250):  # bounded memory: 250 resamples at a time
        idx = rng.integers(0, len(e), size=(min(250, n_boot - i), len(e)))
        boot[i:i + len(idx)] = rate(e[idx].mean(1))
    lo, hi = np.nanquantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return point, (float(lo), float(hi))


def _levels(chunk: torch.Tensor, top: int) -> dict[int, torch.Tensor]:
    """Sums of 1, 2, 4, ..., ``top`` consecutive fine increments of a chunk (pairwise tree)."""
    out = {1: chunk}
    r = 1
    while r < top:
        out[2 * r] = pair_sums(out[r], 2)
        r *= 2
    return out


def _fine_chunks(sample, rough, smooth, R, top):
    """Consecutive chunks of the finest grid as ``(c, levels)``: ``c`` fine steps and, per rough
    weight, the tree of coarse sums of its increments (:func:`_levels`). Streams of different
    block sizes (a matrix and a vector weight) are cut to the smallest block, which divides the
    others (all are powers of two)."""
    if not rough:
        c = min(sample.weights[n]._chunk_layers(1) for n in smooth)
        for j0 in range(0, R, c):
            yield min(c, R - j0), []
        return
    piece = min(getattr(sample.weights[n], "block", R) for n in rough)

    def transform(x):  # runs on the sample's drawing thread
        return [_levels(p, min(p.shape[0], top)) for p in x.split(piece)]

    streams = [itertools.chain.from_iterable(sample.weights[n].iter_increments(R, transform=transform))
               for n in rough]
    for lv in zip(*streams):
        yield lv[0][1].shape[0], list(lv)


def sweep_errors(p: Pair, sample, depths: Sequence[int], reference: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Errors of every depth against the reference, in one pass over the finest grid.

    Args:
        p: the pair.
        sample: a :class:`~deeplimits.pairs.PairSample` whose rough drivers have resolution
            ``reference`` (without rough drivers, the reference is the adaptive solve on
            ``k / reference``).
        depths: depths dividing ``reference``.
    Returns:
        ``(max_err, terminal_err)``, each ``(len(depths), draws, inputs)``.
    """
    h0 = sample.h0
    rough = [n for n, s in sample.weights.items() if isinstance(s, PathSample)]
    smooth = [n for n in sample.weights if n not in rough]
    R = reference
    steps = {L: p.layer_step(L) for L in depths}
    state = {L: h0 for L in depths}
    err = {L: torch.zeros(h0.shape[:-1], dtype=h0.dtype) for L in depths}
    acc = {L: None for L in depths}
    ref_step = p.reference_step(sample, R)
    H = h0
    H_ref = p.solve_limit(sample, h0, R) if ref_step is None else None
    j = 0  # fine steps done
    for c, lv in _fine_chunks(sample, rough, smooth, R, R // min(depths)):
        fine = [x[1] for x in lv]
        for L in depths:
            if rough and R // L > c:  # this depth's increment spans several chunks: accumulate whole chunks
                tot = [x[c][0] for x in lv]
                acc[L] = tot if acc[L] is None else [a + t for a, t in zip(acc[L], tot)]
        t = (torch.arange(j + 1, j + c + 1, dtype=torch.float64) / R).to(h0.dtype)  # right ends
        values = [sample.weights[n].at(t) for n in smooth]
        for i in range(c):
            j += 1
            at_t = {n: v[i] for n, v in zip(smooth, values)}
            if ref_step is None:
                H = H_ref[j]
            else:
                H = ref_step(H, dict(zip(rough, (x[i] for x in fine)), **at_t))
            for L in depths:
                r = R // L
                if j % r:
                    continue
                if not rough or r <= c:
                    w = [x[r][(i + 1) // r - 1] for x in lv]
                else:
                    w, acc[L] = acc[L], None
                state[L] = steps[L](state[L], dict(zip(rough, w), **at_t))
                e = (H - state[L]).norm(dim=-1)
                err[L] = torch.maximum(err[L], torch.nan_to_num(e, nan=math.inf))
    max_err = torch.stack([err[L] for L in depths])
    term = torch.stack([torch.nan_to_num((H - state[L]).norm(dim=-1), nan=math.inf) for L in depths])
    return max_err, term


@dataclasses.dataclass
class ConvergenceResult(PlainData):
    """Strong-error study of one pair: plain data, see :meth:`to_dict` for the JSON fields."""

    regime: str
    hurst: float | None
    width: int
    activation: str
    arch: str
    corrected: bool
    paths: int
    inputs: int
    reference: int
    seed: int
    dtype: str
    depths: list[int]
    error: list[float]
    stderr: list[float]
    terminal_error: list[float]
    terminal_stderr: list[float]
    rate: float
    rate_ci: list[float]
    theory_rate: float
    rate_note: str
    nonfinite: int
    seconds: float
    # inside regimes only (None elsewhere; results stored before they existed load with None)
    alpha: float | None = None
    beta: float | None = None
    sa: float | None = None
    sb: float | None = None
    ito_correction: bool | None = None

    @property
    def verdict_note(self) -> str | None:
        """Why there is no verdict (``None`` when there is one). A verdict needs

        * at least two depths (a rate is a slope);
        * at least :data:`MIN_FINITE_DRAWS` finite draws and at least half of the draws finite
          (a run where most draws blew up estimates the error of the survivors only);
        * a finite rate and a finite bootstrap interval, of width at most :data:`MAX_CI_WIDTH`
          (a wider interval contains any plausible rate: agreeing with it says nothing).
        """
        finite = self.paths - self.nonfinite
        if len(self.depths) < 2:
            return "fewer than two depths"
        if finite < max(MIN_FINITE_DRAWS, math.ceil(self.paths / 2)):
            return (f"only {finite} of {self.paths} draws finite (a verdict needs at least {MIN_FINITE_DRAWS} and "
                    f"at least half of them)")
        rate, (lo, hi) = self.rate, self.rate_ci
        if not all(x is not None and math.isfinite(x) for x in (rate, lo, hi)):
            return "rate not finite"
        if hi - lo > MAX_CI_WIDTH:
            return f"interval too wide (width {hi - lo:.2f} > {MAX_CI_WIDTH})"
        return None

    @property
    def verdict(self) -> str | None:
        """``'agrees'`` when the theory rate is within 0.1 of the fit or inside its interval,
        otherwise ``'faster'`` or ``'slower'`` than theory; ``None`` when the data cannot tell
        (see :attr:`verdict_note`)."""
        if self.verdict_note is not None:
            return None
        lo, hi = self.rate_ci
        if abs(self.rate - self.theory_rate) <= 0.1 or (lo <= self.theory_rate <= hi):
            return "agrees"
        return "faster" if self.rate > self.theory_rate else "slower"

    def to_dict(self) -> dict:
        """Plain strict JSON (non-finite numbers as ``None``) with the derived ``verdict`` and
        ``verdict_note``."""
        d = super().to_dict()
        d["verdict"] = self.verdict
        d["verdict_note"] = self.verdict_note
        return d

    @property
    def table(self):
        """The per-depth table as a :class:`pandas.DataFrame`."""
        import pandas as pd

        err = np.asarray(self.error)
        ratio = np.concatenate([[np.nan], err[:-1] / err[1:]])
        return pd.DataFrame({"depth": self.depths, "error": self.error, "stderr": self.stderr,
                             "ratio": ratio, "terminal_error": self.terminal_error,
                             "terminal_stderr": self.terminal_stderr})

    @property
    def label(self) -> str:
        h = f" H={self.hurst:g}" if self.hurst is not None else ""
        c = " corrected" if self.corrected else ""
        if self.regime in INSIDE_REGIMES:  # short enough for a figure title; alpha = 1 - beta is in report()
            b = f" beta={self.beta:g}" if self.beta is not None else ""
            ito = " no-Itô" if self.ito_correction is False else ""
            return f"{self.regime}{b}{ito} ({self.activation}, d={self.width}, sA={self.sa:g}, sb={self.sb:g})"
        return f"{self.regime}{h}{c} ({self.arch}, {self.activation}, d={self.width})"

    def report(self) -> str:
        """The table, the fitted rate against theory, and the verdict, as text."""
        alpha = f", alpha={self.alpha:g}" if self.regime == "inside-ode" else ""
        ito = ", limit without the Itô correction" if self.ito_correction is False else ""
        lines = [f"{self.label}: {self.paths} draws, reference grid 1/{self.reference}{alpha}{ito}",
                 f"{'depth':>7}  {'E max_k |H-h|':>14}  {'± se':>9}  {'ratio':>6}  {'E |H_1-h_L|':>12}"]
        for row in self.table.itertuples():
            ratio = "" if math.isnan(row.ratio) else f"{row.ratio:6.2f}"
            lines.append(f"{row.depth:7d}  {_num(row.error, '14.5g')}  {_num(row.stderr, '9.2g')}  {ratio:>6}  "
                         f"{_num(row.terminal_error, '12.5g')}")
        lo, hi = self.rate_ci
        verdict = self.verdict or f"no verdict: {self.verdict_note}"
        lines.append(f"rate {_num(self.rate, '.3f')}  95% CI [{_num(lo, '.3f')}, {_num(hi, '.3f')}]   "
                     f"theory {self.theory_rate:.3f}   -> {verdict}")
        if (self.regime == "fbm" and not self.corrected and self.width > 1) or self.regime == "inside-ode" \
                or self.ito_correction is False:
            lines.append(f"note: {self.rate_note}")
        if self.nonfinite == self.paths:
            lines.append(f"warning: all {self.paths} draws blew up (non-finite states): no error estimate")
        elif self.nonfinite:
            lines.append(f"warning: {self.nonfinite} draws blew up (non-finite states) and are excluded")
        return "\n".join(lines)

    def plot(self, ax=None, path: str | None = None):
        """Log-log plot of the error against depth with the theoretical slope drawn in."""
        from .plots import plot_convergence

        return plot_convergence([self], ax=ax, path=path)


def _num(x, fmt: str) -> str:
    """``x`` formatted, or ``'-'`` (right-aligned to the same width) when missing or not finite."""
    if x is None or not math.isfinite(x):
        return format("-", ">" + fmt.split(".")[0]) if fmt[0].isdigit() else "-"
    return format(x, fmt)


#: a verdict needs at least this many finite draws (and at least half of the draws)
MIN_FINITE_DRAWS = 8
#: a verdict needs a bootstrap interval of the rate at most this wide
MAX_CI_WIDTH = 0.5

DEFAULTS = {
    "sde": dict(width=16, depths=[8, 16, 32, 64, 128, 256, 512], paths=256, reference=8192),
    "ode": dict(width=16, depths=[8, 16, 32, 64, 128, 256, 512], paths=64, reference=None),
    "fbm": dict(width=8, depths=[8, 16, 32, 64, 128, 256, 512], paths=256, reference=8192),
    "inside-sde": dict(width=4, depths=[8, 16, 32, 64, 128, 256, 512], paths=256, reference=8192),
    "inside-ode": dict(width=4, depths=[8, 16, 32, 64, 128, 256, 512], paths=64, reference=None),
}
_INSIDE_FIELDS = ("alpha", "beta", "sa", "sb", "ito_correction")


@dataclasses.dataclass(frozen=True)
class ConvergencePlan:
    """A validated strong-error study: everything needed to run it, nothing computed yet.

    Draws are split into chunks (``chunk_sizes``); chunk ``i`` is seeded by
    :func:`chunk_seed` ``(seed, i)``, so any executor reproduces the same numbers.
    """

    regime: str
    width: int
    activation: object
    arch: str | None
    hurst: float | None
    corrected: bool
    depths: tuple[int, ...]
    paths: int
    inputs: int
    reference: int
    seed: int
    dtype: torch.dtype
    chunk: int
    # inside regimes only; defaults keep the specs of the other regimes (and older stores) valid
    alpha: float | None = None
    beta: float | None = None
    sa: float | None = None
    sb: float | None = None
    ito_correction: bool = True

    def pair(self) -> Pair:
        inside = {k: getattr(self, k) for k in _INSIDE_FIELDS} if self.regime in INSIDE_REGIMES else {}
        return _pair(self.regime, width=self.width, activation=self.activation, arch=self.arch,
                     hurst=self.hurst, corrected=self.corrected, **inside)

    @property
    def chunk_sizes(self) -> list[int]:
        return chunk_sizes(self.paths, self.chunk)

    def estimate(self) -> R_.Estimate:
        """Peak memory of one chunk, tasks and networks of the plan (no allocation)."""
        n = min(self.chunk, self.paths)
        peak = _chunk_bytes(self.pair(), n, self.inputs, self.reference, self.depths, self.dtype.itemsize)
        return R_.Estimate(peak, R_.tasks_of(self.paths, self.chunk), self.paths * len(self.depths), n,
                           self.reference, R_.available_memory())

    def to_spec(self) -> dict:
        """The plan as plain JSON (what a run store records)."""
        if self.activation is not None and not isinstance(self.activation, str):
            raise ValueError("activation must be given by name (a string) to run through a sweep or a run store")
        d = dataclasses.asdict(self)
        d["depths"] = list(self.depths)
        d["dtype"] = str(self.dtype).replace("torch.", "")
        if self.regime not in INSIDE_REGIMES:  # the spec (and store key) of the other regimes is unchanged
            for k in _INSIDE_FIELDS:
                del d[k]
        return d

    @classmethod
    def from_spec(cls, spec: dict) -> "ConvergencePlan":
        d = dict(spec)
        d["depths"] = tuple(d["depths"])
        d["dtype"] = getattr(torch, d["dtype"])
        return cls(**d)

    def tasks(self) -> list:
        """One sweep task per chunk of draws, keyed ``'<name>/chunk-<i>'`` (see :attr:`name`)."""
        from .sweeps import Task

        spec = self.to_spec()
        return [Task(f"{self.name}/chunk-{c:05d}", "deeplimits.convergence:run_task", {**spec, "draws": n},
                     chunk_seed(self.seed, c)) for c, n in enumerate(self.chunk_sizes)]

    @property
    def name(self) -> str:
        """``'<regime>[-H<hurst>][-corrected][-beta<beta>][-no-ito]'``."""
        h = f"-H{self.hurst:g}" if self.hurst is not None else ""
        b = f"-beta{self.beta:g}" if self.beta is not None else ""
        return f"{self.regime}{h}{'-corrected' if self.corrected else ''}{b}{'' if self.ito_correction else '-no-ito'}"


def plan_convergence(regime: str, *, depths: Sequence[int] | None = None, paths: int | None = None,
                     width: int | None = None, activation=None, arch: str | None = None,
                     hurst: float | None = None, corrected: bool = False, reference: int | None = None,
                     inputs: int = 1, seed: int = 0, dtype: torch.dtype = torch.float64,
                     chunk: int | None = None, alpha: float | None = None, beta: float | None = None,
                     sa: float | None = None, sb: float | None = None,
                     ito_correction: bool = True) -> ConvergencePlan:
    """Validate the arguments of :func:`strong_convergence` (all checks, before any work)."""
    regime = V_.choice("regime", regime, REGIMES)
    dflt = DEFAULTS[regime]
    width = dflt["width"] if width is None else width
    p = _pair(regime, width=width, activation=activation, arch=arch, hurst=hurst, corrected=corrected,
              alpha=alpha, beta=beta, sa=sa, sb=sb, ito_correction=ito_correction)
    # inside regimes: the resolved values (defaults filled in; inside-ode keeps beta, alpha = 1 - beta)
    inside = dict(beta=p.beta, sa=p.sa, sb=p.sb, ito_correction=ito_correction) if isinstance(p, InsidePair) else {}
    depths = V_.depths("depths", dflt["depths"] if depths is None else depths)
    paths = V_.integer("paths", dflt["paths"] if paths is None else paths)
    inputs = V_.integer("inputs", inputs)
    seed = V_.integer("seed", seed, low=0)
    dtype = V_.dtype(dtype)
    if not p.rough:
        if reference is not None:
            raise ValueError(f"reference applies only to the regimes with Brownian or fractional weights (sde, "
                             f"fbm, inside-sde), not {regime!r}: its ODE reference is adaptive")
        reference = depths[-1]
    else:
        reference = 16 * depths[-1] if reference is None else V_.power_of_two("reference", reference)
        if reference < 2 * depths[-1]:
            raise ValueError(f"reference must be at least 2 * max(depths) = {2 * depths[-1]}, got {reference}")
    # the default chunk (part of the spec, hence of the seeds) keeps its historical rule; it is
    # lowered only where it would not fit the machine, and a given chunk that does not fit is refused
    per_draw = width * width * inputs * (reference if regime == "fbm" else 1)
    default = int(max(1, min(paths, 64, (1 << 25) // max(1, per_draw))))
    chunk = None if chunk is None else V_.integer("chunk", chunk)
    item = torch.empty((), dtype=dtype).element_size()
    knobs = ("width", "inputs", "reference") if p.rough else ("width", "inputs", "depths")
    chunk = R_.fit_chunk(lambda n: _chunk_bytes(p, n, inputs, reference, depths, item), paths, chunk, default,
                         f"at width={width}, inputs={inputs}, reference={reference}, depths up to {depths[-1]}", knobs)
    R_.require_count(R_.tasks_of(paths, chunk), R_.MAX_TASKS,
                     f"paths={paths} in chunks of {chunk} draws makes too many tasks", ("paths",))
    R_.require_count(reference, R_.MAX_STEPS, f"reference={reference} makes too many steps per task",
                     ("reference" if p.rough else "depths",))
    return ConvergencePlan(regime, width, activation, arch, hurst, corrected, tuple(depths), paths, inputs,
                           reference, seed, dtype, chunk, **inside)


def _chunk_bytes(p: Pair, n: int, inputs: int, reference: int, depths, item: int) -> int:
    """Peak bytes of :func:`run_chunk` on ``n`` draws (see :mod:`deeplimits._resources`).

    * fractional weights: the fGn of every entry on the finest grid, ``reference x n x d^2``
      numbers, at its peak inside :func:`~deeplimits.drivers.fgn` (:func:`~deeplimits._resources.fgn_bytes`);
    * Brownian weights are streamed: blocks of ``_BLOCK_ELEMENTS`` numbers (at least one layer,
      ``n x entries``), the block in use, the one drawn ahead and their trees of pairwise sums,
      plus one accumulated increment per depth;
    * smooth weights: their spectral coefficients (``2M`` per entry) and values at a chunk of times;
    * states: the reference, the input and a state and two error maps per depth, ``n x inputs x d``
      each; the adaptive ODE references keep the solution at ``reference + 1`` times.
    """
    from .drivers import _BLOCK_ELEMENTS, FractionalDriver, _rbf_quadrature

    total = 0
    for name, drv in p.drivers.items():
        m = math.prod(p._weight_layout(name)[0])
        if isinstance(drv, FractionalDriver):
            total += R_.fgn_bytes(reference, n * m, item)
        elif drv.needs_resolution:
            total += item * (6 * min(reference * n * m, max(_BLOCK_ELEMENTS, n * m)) + len(depths) * n * m)
        else:
            total += item * (n * m * 2 * len(_rbf_quadrature(drv.length_scale)[0]) + 2 * max(_BLOCK_ELEMENTS, n * m))
    per_state = item * n * inputs * p.width
    total += per_state * (4 * len(depths) + 10)
    if not p.rough:
        total += 3 * per_state * (reference + 1)
    return int(total)


def strong_convergence(regime: str, *, progress: Callable[[int], None] | None = None, **kwargs) -> ConvergenceResult:
    """Estimate the strong error of a pair against depth and fit its rate.

    Args:
        regime: ``'sde'``, ``'ode'``, ``'fbm'``, ``'inside-sde'`` or ``'inside-ode'`` (see
            :func:`deeplimits.pair`).
        depths: increasing powers of two (defaults per regime in :data:`DEFAULTS`).
        paths: number of independent draws (driver sample and inputs).
        width, activation, arch, hurst, corrected, alpha, beta, sa, sb, ito_correction: as for
            :func:`deeplimits.pair`.
        reference: finest grid (power of two, at least ``2 * max(depths)``) on which the
            reference is solved for the sde, fbm and inside-sde regimes; default
            ``16 * max(depths)``. The ODE references (ode, inside-ode) are the adaptive solve
            read at ``k / max(depths)``.
        inputs: inputs per draw (errors are averaged over them within a draw).
        seed: base seed; chunk ``i`` of draws uses :func:`chunk_seed` ``(seed, i)``.
        dtype: float32 or float64.
        chunk: draws per chunk (bounded memory; default chosen from the sizes).
        progress: called with the number of draws finished after each chunk.

    Returns:
        A :class:`ConvergenceResult`.
    """
    return run_plan(plan_convergence(regime, **kwargs), progress=progress)


def run_plan(plan: ConvergencePlan, progress: Callable[[int], None] | None = None, *, store=None,
             workers: int | None = None, scheduler: str | None = None,
             timeout: float | None = None) -> ConvergenceResult:
    """Run the chunks of a plan and combine them.

    With a :class:`~deeplimits.sweeps.RunStore`, finished chunks are committed as they come
    and chunks already in the store are not recomputed; ``workers``/``scheduler`` run the
    chunks on a local or an existing Dask cluster (same numbers as in-process).
    ``progress`` is called with the number of draws of each finished chunk.
    """
    import time

    from .sweeps import run_sweep

    t0 = time.perf_counter()
    p = plan.pair()
    if plan.activation is not None and not isinstance(plan.activation, str):  # a callable: this process only
        if store is not None or workers is not None or scheduler is not None:
            raise ValueError("activation must be given by name (a string) to run through a sweep or a run store")
        parts = []
        for c, n in enumerate(plan.chunk_sizes):
            parts.append(run_chunk(p, plan.depths, plan.reference, n, plan.inputs, chunk_seed(plan.seed, c), plan.dtype))
            if progress is not None:
                progress(n)
    else:
        tasks = plan.tasks()
        done = run_sweep(tasks, store, workers=workers, scheduler=scheduler, timeout=timeout,
                         progress=None if progress is None else (lambda t: progress(t.params["draws"])))
        parts = [(_decode(done[t.key]["max_err"]), _decode(done[t.key]["terminal_err"])) for t in tasks]
    return summarise(p, plan.depths, plan.reference, np.concatenate([m for m, _ in parts]),
                     np.concatenate([t for _, t in parts]), inputs=plan.inputs, seed=plan.seed,
                     dtype=plan.dtype, seconds=time.perf_counter() - t0)


def run_task(params: dict, seed: int) -> dict:
    """Sweep task: one chunk of draws of a plan (``params`` = plan spec + ``draws``)."""
    spec = {k: v for k, v in params.items() if k != "draws"}
    plan = ConvergencePlan.from_spec(spec)
    mx, tm = run_chunk(plan.pair(), plan.depths, plan.reference, params["draws"], plan.inputs, seed, plan.dtype)
    return {"max_err": _encode(mx), "terminal_err": _encode(tm)}


def _encode(a: np.ndarray) -> list:
    """Per-draw errors as strict JSON: a blown-up draw's non-finite error is ``None``
    (read back as NaN by :func:`_decode`; :func:`summarise` excludes either)."""
    return strict(a.tolist())


def _decode(x) -> np.ndarray:
    """Per-draw errors from a task result (``None``, or ``Infinity`` in older stores, is non-finite)."""
    return np.asarray(x, dtype=np.float64)


def results_from_store(store) -> list[ConvergenceResult]:
    """Rebuild the results of a stored convergence run from its finished chunks (no simulation)."""
    from .sweeps import RunStoreError

    spec = store.spec
    try:
        plans = [ConvergencePlan.from_spec(s) for s in (spec if isinstance(spec, list) else [spec])]
    except (KeyError, TypeError, AttributeError) as e:
        raise RunStoreError(f"{store.path} does not hold a convergence run ({type(e).__name__}: {e})") from None
    done = store.results()
    seconds = {r["key"]: r["seconds"] or 0.0 for r in store.records()}
    out = []
    for plan in plans:
        tasks = [t for t in plan.tasks() if t.key in done]
        if not tasks:
            continue
        mx = np.concatenate([_decode(done[t.key]["max_err"]) for t in tasks])
        tm = np.concatenate([_decode(done[t.key]["terminal_err"]) for t in tasks])
        out.append(summarise(plan.pair(), plan.depths, plan.reference, mx, tm, inputs=plan.inputs, seed=plan.seed,
                             dtype=plan.dtype, seconds=sum(seconds[t.key] for t in tasks)))
    return out


def run_chunk(p: Pair, depths, reference, draws, inputs, seed, dtype) -> tuple[np.ndarray, np.ndarray]:
    """One chunk of draws: per-draw errors ``(draws, len(depths))`` (max over k, terminal),
    averaged over the inputs of each draw."""
    g = torch.Generator().manual_seed(seed)
    s = p.sample(draws, inputs=inputs, resolution=reference if p.rough else None,
                 generator=g, dtype=dtype)
    mx, tm = sweep_errors(p, s, depths, reference)
    return mx.mean(-1).T.numpy(), tm.mean(-1).T.numpy()


def summarise(p: Pair, depths, reference, max_err: np.ndarray, term_err: np.ndarray, *, inputs, seed,
              dtype, seconds) -> ConvergenceResult:
    """Combine per-draw errors into estimates, standard errors and the fitted rate."""
    ok = np.isfinite(max_err).all(1) & np.isfinite(term_err).all(1)
    e, t = max_err[ok], term_err[ok]
    n = len(e)
    se = lambda x: (x.std(0, ddof=1) / math.sqrt(n)) if n > 1 else np.full(x.shape[1], np.nan)  # noqa: E731
    if n:
        rate, ci = fit_rate(depths, e, seed=seed)
    else:
        rate, ci = math.nan, (math.nan, math.nan)
    net = p.network
    return ConvergenceResult(
        regime=p.regime, hurst=p.hurst, width=p.width, activation=net.activation.name, arch=net.arch,
        corrected=type(net).__name__ == "ModifiedEulerResNet", paths=int(len(max_err)), inputs=inputs,
        reference=reference, seed=seed, dtype=str(dtype).replace("torch.", ""), depths=list(depths),
        error=e.mean(0).tolist() if n else [math.nan] * len(depths), stderr=se(e).tolist() if n else [math.nan] * len(depths),
        terminal_error=t.mean(0).tolist() if n else [math.nan] * len(depths),
        terminal_stderr=se(t).tolist() if n else [math.nan] * len(depths),
        rate=rate, rate_ci=list(ci), theory_rate=p.theory_rate, rate_note=p.rate_note,
        nonfinite=int((~ok).sum()), seconds=seconds,
        **({k: getattr(p, k) for k in _INSIDE_FIELDS} if isinstance(p, InsidePair) else {}))
