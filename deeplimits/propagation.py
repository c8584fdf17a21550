"""Signal propagation at initialisation, SPEC §4 (Marion, Fermanian, Biau, Vert, JMLR 2025).

For a residual network ``h_0 = A x``, ``h_{k+1} = h_k + L^-beta V_{k+1} g(h_k, W_{k+1})`` with a
scalar readout ``B`` and squared loss, the ratios

    r_h = ||h_L - h_0|| / ||h_0||,        r_p = ||p_0 - p_L|| / ||p_L||,   p_k = dl/dh_k,

tell identity (ratios -> 0), explosion (ratios -> infinity) and non-trivial (order one)
behaviour. Three studies are built on one shared pass (:func:`_propagate`):

* :func:`stability`: ratio statistics over depths x betas, theory bounds, regimes, and the
  log-normal fits of ``||h_L||/||h_0||`` and ``||p_0||/||p_L||`` (criticality histograms);
* :func:`phase_diagram`: mean ``log10 r_h`` and ``log10 r_p`` over (H, beta) with fractional
  weights, and the critical scaling ``beta*(H)``.

Weights do not depend on beta, so every beta runs on the same weights at once (beta is a
batch column). For nested drivers (i.i.d. and fractional: the depth-L weights have the law of
the first L layers of a deeper network's) every depth runs on prefixes of ONE deepest
sample, in one forward and one backward pass. ``p_k`` comes from the backward recursion
``p_k = p_{k+1} + alpha J_k^T p_{k+1}``, which needs no autograd graph.

Overflow: a ratio that is non-finite or above :data:`CAP` counts as exploded and is
reported as ``CAP`` (``log10`` = 30), never as a NaN.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable, Sequence

import numpy as np
import torch

from . import _resources as R_
from . import _validate as V_
from ._plain import PlainData
from .activations import activation as _activation
from .drivers import _BLOCK_ELEMENTS, Driver, FractionalDriver, IIDDriver, SmoothDriver
from .networks import ResNet

__all__ = ["stability", "plan_stability", "run_stability", "StabilityResult", "phase_diagram", "plan_phase",
           "run_phase", "PhaseResult", "theory_bounds", "bounds_apply",
           "critical_beta", "classify", "make_driver", "estimate_stability", "estimate_phase", "DRIVERS", "CAP", "STABILITY_PRESETS", "PHASE_PRESETS"]

CAP = 1e30  # a ratio above CAP (or non-finite) counts as exploded and is reported as CAP
BUDGET = 1 << 30  # bytes of weights and stored states per task; draws are chunked to fit
_WEIGHTS = {"res-1": ("V",), "res-2": ("V", "W"), "res-3": ("V", "W"), "inside": ("W", "b")}

_IID_DEPTHS = [int(x) for x in np.linspace(10, 1000, 10)]
STABILITY_PRESETS = {
    # Marion et al. §4: res-3, d = 40, n_in = 64, depths 10..1000, 50 draws
    "iid": dict(arch="res-3", driver="uniform", width=40, n_in=64, depths=_IID_DEPTHS, betas=[0.25, 0.5, 1.0],
                draws=50),
    "smooth": dict(arch="res-3", driver="smooth", width=40, n_in=64, depths=_IID_DEPTHS, betas=[0.5, 1.0, 2.0],
                   draws=50),
    "iid-inside": dict(arch="inside", driver="uniform", width=40, n_in=64, depths=_IID_DEPTHS,
                       betas=[0.25, 0.5, 1.0], draws=50),
    "smooth-inside": dict(arch="inside", driver="smooth", width=40, n_in=64, depths=_IID_DEPTHS,
                          betas=[0.5, 1.0, 2.0], draws=50),
    # the distributions at criticality: beta = 1/2, L = 1000, d = 100, 10^4 draws
    "criticality": dict(arch="res-3", driver="uniform", width=100, n_in=64, depths=[1000], betas=[0.5],
                        draws=10_000, histograms=True),
    "criticality-inside": dict(arch="inside", driver="uniform", width=100, n_in=64, depths=[1000], betas=[0.5],
                               draws=10_000, histograms=True),
}
PHASE_PRESETS = {
    # res-3, d = 40, L = 1000, H = 51 values in [0.05, 0.97], beta = 70 values in [0, 1.3],
    # 5 weight draws per H with 10 inputs each
    "full": dict(hursts=np.linspace(0.05, 0.97, 51).round(6).tolist(), betas=np.linspace(0, 1.3, 70).round(6).tolist(),
                 arch="res-3", width=40, n_in=64, depth=1000, draws=5, inputs=10),
}


# ----------------------------------------------------------------------------------------
# theory
# ----------------------------------------------------------------------------------------

def theory_bounds(beta: float, depth: int) -> tuple[float, float]:
    """``((1 + a^2/2)^L - 1, (1 + a^2)^L - 1)`` with ``a = L^-beta``: bounds on ``E r_h^2`` and
    ``E r_p^2`` (Lemma 15 and Proposition 8 of Marion et al.); ``inf`` beyond the largest double."""
    beta, depth = V_.real("beta", beta, low=0.0), V_.integer("depth", depth)
    a2 = float(depth) ** (-2 * beta)

    def bound(c):
        x = depth * math.log1p(c * a2)
        return math.expm1(x) if x < 709.0 else math.inf

    return bound(0.5), bound(1.0)


def bounds_apply(arch: str, activation, driver: Driver) -> bool:
    """Whether :func:`theory_bounds` hold: i.i.d. weights, res-1/2/3, and an activation with
    ``x^2/2 <= sigma(x)^2 <= x^2`` (identity, leaky ReLU of slope in [1/sqrt(2), 1]), or ReLU
    behind a symmetric inner weight (res-2, res-3), for which ``E ReLU(Wh)_i^2 = E (Wh)_i^2 / 2``."""
    if arch == "inside" or not isinstance(driver, IIDDriver):
        return False
    name = _activation(activation).name
    if name == "identity" or (name == "relu" and arch != "res-1"):
        return True
    if name.startswith("leaky_relu:"):
        return float(name.split(":")[1]) >= 1 / math.sqrt(2) - 1e-6
    return False


def classify(median: float) -> str:
    """``'identity'`` if the median ratio is below 0.1, ``'explosion'`` above 10, else ``'non-trivial'``."""
    return "identity" if median < 0.1 else "explosion" if median > 10 else "non-trivial"


def critical_beta(betas: Sequence[float], log10_rh: Sequence[float]) -> float | None:
    """The first beta where the mean ``log10 r_h`` crosses 0 from above (linear interpolation
    between grid points), or ``None`` when the grid has no crossing."""
    b = np.asarray(betas, dtype=np.float64)
    y = np.asarray(log10_rh, dtype=np.float64)
    if b.ndim != 1 or b.shape != y.shape or not (np.diff(b) > 0).all():
        raise ValueError(f"betas must be increasing and log10_rh of the same length, got {len(b)} and {len(y)} values")
    idx = np.flatnonzero((y[:-1] > 0) & (y[1:] <= 0))
    if not len(idx):
        return None
    i = idx[0]
    return float(b[i] + (b[i + 1] - b[i]) * y[i] / (y[i] - y[i + 1]))


# ----------------------------------------------------------------------------------------
# the shared pass
# ----------------------------------------------------------------------------------------

def _propagate(net: ResNet, h0, B, layers, depths, betas):
    """One forward and one backward pass shared by several depths and betas.

    Args:
        h0: ``(draws, inputs, width)``; B: readout ``(draws, 1, width)``.
        layers: per-layer ``(V, W, b)`` of the deepest network; the network of depth ``L`` is
            its first ``L`` layers, scaled by ``L^-beta``.
    Columns ``(depth, beta, input)`` ride along the inputs axis, sorted by decreasing depth so
    that the columns still running at layer ``k`` are a prefix; in the backward pass a depth's
    columns enter at its last layer (``p`` is linear in ``p_L``).

    Returns:
        ``h_L, p_0, p_L``, each ``(draws, len(depths), len(betas), inputs, width)``, with the
        gradients scaled so that ``||p_L|| = 1`` (the loss ``(B h_L)^2 / 2`` times a constant).
    """
    n, m, d = h0.shape
    order = sorted(range(len(depths)), key=lambda j: -depths[j])
    Ls = [depths[j] for j in order]
    block = len(betas) * m
    alpha = torch.tensor([[float(L) ** -b for b in betas] for L in Ls], dtype=h0.dtype)
    alpha = alpha.repeat_interleave(m, dim=1).view(1, -1, 1)
    h = h0.repeat(1, len(Ls) * len(betas), 1)
    states, ends = [], []
    with torch.no_grad():
        for k in range(Ls[0]):
            c = block * sum(L > k for L in Ls)
            h = h[:, :c]
            states.append(h)
            h = net.step(h, alpha[:, :c], Ls[0], *layers[k])
            ends += [h[:, i * block:(i + 1) * block] for i, L in enumerate(Ls) if L == k + 1]
        hL = torch.stack(ends[::-1], 1)  # (n, depths, block, d), in the order of Ls (ends came shallowest first)
        pL = (hL @ B.unsqueeze(1).transpose(-1, -2)) @ B.unsqueeze(1)  # l = (B h_L)^2 / 2: p_L = B^T B h_L
        # p is linear in p_L and the ratios are scale-free: start from the unit vector, so that
        # p_0 overflows only when ||p_0|| / ||p_L|| does, not when ||h_L|| is merely large
        pL = pL / pL.norm(dim=-1, keepdim=True)
        p = h0.new_zeros(n, 0, d)
        for k in range(Ls[0] - 1, -1, -1):
            new = [pL[:, i] for i, L in enumerate(Ls) if L == k + 1]
            if new:
                p = torch.cat([p, *new], 1)
            p = net.step_vjp(states[k], p, alpha[:, :p.shape[1]], Ls[0], *layers[k])
        p0 = p.view(n, len(Ls), block, d)
    back = [order.index(j) for j in range(len(depths))]
    return tuple(x[:, back].reshape(n, len(depths), len(betas), m, d) for x in (hL, p0, pL))


def _capped(x: torch.Tensor) -> np.ndarray:
    x = x.numpy()
    return np.where(np.isfinite(x) & (x <= CAP), x, CAP)


def _ratios(h0, hL, p0, pL) -> dict[str, np.ndarray]:
    """``r_h, r_p`` and the norm ratios ``||h_L||/||h_0||``, ``||p_0||/||p_L||``, capped,
    each ``(draws, depths, betas, inputs)`` (norms in float64: no overflow of the squares)."""
    h0 = h0.double()[:, None, None]
    hL, p0, pL = hL.double(), p0.double(), pL.double()
    nh0, npL = h0.norm(dim=-1), pL.norm(dim=-1)
    return {"r_h": _capped((hL - h0).norm(dim=-1) / nh0), "r_p": _capped((p0 - pL).norm(dim=-1) / npL),
            "norm_h": _capped(hL.norm(dim=-1) / nh0), "norm_p": _capped(p0.norm(dim=-1) / npL)}


def _pow2_ceil(x: int) -> int:
    return 1 << (x - 1).bit_length()


def _draw(net: ResNet, driver: Driver, width, n_in, depths, draws, inputs, generator, dtype):
    """Everything random of one chunk of draws, in a fixed order: the weight samples (one per
    weight name), then ``A``, ``x`` and ``B``. Returns ``(samples, h0, B, top)`` where ``top``
    is the depth at which the samples are read (a power of two for path drivers)."""
    top = max(depths)
    res = _pow2_ceil(top) if driver.needs_resolution else None
    shapes = {"V": (width, width), "W": (width, width), "b": (width,)}
    samples = {nm: driver.sample(shapes[nm], draws=draws, resolution=res, generator=generator, dtype=dtype)
               for nm in _WEIGHTS[net.arch]}
    A = torch.randn(draws, width, n_in, generator=generator, dtype=dtype) / math.sqrt(n_in)
    x = torch.randn(draws, inputs, n_in, generator=generator, dtype=dtype)
    B = torch.randn(draws, 1, width, generator=generator, dtype=dtype) / math.sqrt(width)
    return samples, x @ A.transpose(-1, -2), B, res or top


def _layers(samples, depth, n):
    """The first ``n`` layers of the depth-``depth`` weights as per-layer ``(V, W, b)``."""
    ws = {nm: [w for c in s.iter_weights(depth) for w in c.unbind(0)][:n] for nm, s in samples.items()}  # views
    return list(zip(*(ws.get(nm, [None] * n) for nm in ("V", "W", "b"))))


def _run(net, driver, width, n_in, depths, betas, draws, inputs, seed, dtype) -> dict[str, np.ndarray]:
    """The ratios of one chunk of draws at every (depth, beta): nested drivers share one pass."""
    g = torch.Generator().manual_seed(seed)
    samples, h0, B, top = _draw(net, driver, width, n_in, depths, draws, inputs, g, dtype)
    if driver.nested:
        out = _propagate(net, h0, B, _layers(samples, top, max(depths)), depths, betas)
    else:  # the depth-L weights are read at k / L: one pass per depth, all betas at once
        parts = [_propagate(net, h0, B, _layers(samples, L, L), [L], betas) for L in depths]
        out = tuple(torch.cat(x, 1) for x in zip(*parts))
    return _ratios(h0, *out)


# ----------------------------------------------------------------------------------------
# driver specs (plain JSON, for run stores and sweep tasks)
# ----------------------------------------------------------------------------------------

DRIVERS = ("uniform", "gaussian", "rademacher", "fractional", "smooth")


def make_driver(name: str, hurst: float | None = None, length_scale: float | None = None) -> Driver:
    """The driver named ``name`` (one of :data:`DRIVERS`), validated."""
    name = V_.choice("driver", name, DRIVERS)
    if hurst is not None and name != "fractional":
        raise ValueError(f"hurst applies only to the fractional driver, not {name!r}")
    if length_scale is not None and name != "smooth":
        raise ValueError(f"length_scale applies only to the smooth driver, not {name!r}")
    if name == "fractional":
        if hurst is None:
            raise ValueError("hurst must be given for the fractional driver (a Hurst index in (0, 1))")
        return FractionalDriver(hurst)
    if name == "smooth":
        return SmoothDriver(0.1 if length_scale is None else length_scale)
    return IIDDriver(name)


def _driver_spec(driver: Driver) -> dict:
    if isinstance(driver, FractionalDriver):
        return {"driver": "fractional", "hurst": driver.hurst}
    if isinstance(driver, SmoothDriver):
        return {"driver": "smooth", "length_scale": driver.length_scale}
    if isinstance(driver, IIDDriver):
        return {"driver": driver.name}
    raise ValueError(f"driver must be an IIDDriver, FractionalDriver or SmoothDriver (or a name in "
                     f"{', '.join(DRIVERS)}), got {driver!r}")


def _chunk(per_draw_bytes: int, draws: int) -> int:
    return int(max(1, min(draws, BUDGET // max(1, per_draw_bytes))))


# ----------------------------------------------------------------------------------------
# resource estimates (plan time, arithmetic only)
# ----------------------------------------------------------------------------------------

def _task_bytes(arch, driver, width, n_in, depths, betas, inputs, n, item) -> int:
    """Peak bytes of :func:`_run` on ``n`` draws (see :mod:`deeplimits._resources`).

    * weights: every layer of the deepest network is held (``top`` layers: ``max(depths)``, or
      its power-of-two ceiling for path drivers) for each weight name, ``d^2`` entries for a
      matrix and ``d`` for a vector; fractional weights keep their fGn and its scaled copy
      (2x), and the last name drawn peaks inside :func:`~deeplimits.drivers.fgn`; smooth
      weights hold their spectral coefficients and one depth's layers at a time;
    * states: :func:`_propagate` stores ``h`` at every layer for the backward pass, with
      ``len(betas) * inputs`` columns per running depth: ``sum(depths)`` column-layers for
      nested drivers (one pass), ``max(depths)`` otherwise (one pass per depth);
    * outputs ``h_L, p_0, p_L`` and their float64 ratios, ``A``, ``x``, ``h_0``.
    """
    from ._resources import fgn_bytes

    ms = [width * width if nm != "b" else width for nm in _WEIGHTS[arch]]
    top = _pow2_ceil(max(depths)) if driver.needs_resolution else max(depths)
    if isinstance(driver, FractionalDriver):
        weights = max(sum(ms[:-1]) * top * n * item + fgn_bytes(top, n * ms[-1], item), 2 * sum(ms) * top * n * item)
    elif isinstance(driver, SmoothDriver):
        from .drivers import _rbf_quadrature

        modes = 2 * len(_rbf_quadrature(driver.length_scale)[0])
        weights = n * item * sum(ms) * (modes + max(depths))
    else:
        weights = sum(ms) * top * n * item + 2 * _BLOCK_ELEMENTS * item  # + blocks in flight
    cols = len(betas) * inputs
    states = n * cols * width * item * (sum(depths) if driver.nested else max(depths))
    outputs = n * len(depths) * cols * width * (4 * item + 5 * 8)
    inputs_ = n * item * (width * n_in + inputs * n_in + 2 * inputs * width)
    return int(weights + states + outputs + inputs_)


def _sizes(width, depths, betas, inputs) -> str:
    return f"at width={width}, depths up to {max(depths)}, {len(betas)} betas, inputs={inputs}"


def _check_steps(driver, depths) -> None:
    """A task runs ``max(depths)`` layers (nested drivers) or ``sum(depths)`` (one pass per depth)."""
    steps = max(depths) if driver.nested else sum(depths)
    R_.require_count(steps, R_.MAX_STEPS, f"depths up to {max(depths)} make too many layers per task", ("depths",))


def estimate_stability(spec: dict):
    """The resource :class:`~deeplimits._resources.Estimate` of a stability study (from
    :func:`plan_stability`): peak bytes of its largest task, tasks, networks."""
    driver = _spec_driver(spec)
    item = getattr(torch, spec["dtype"]).itemsize
    peak = _task_bytes(spec["arch"], driver, spec["width"], spec["n_in"], spec["depths"], spec["betas"],
                       spec["inputs"], min(spec["chunk"], spec["draws"]), item)
    return R_.Estimate(peak, R_.tasks_of(spec["draws"], spec["chunk"]),
                       spec["draws"] * len(spec["depths"]) * len(spec["betas"]), min(spec["chunk"], spec["draws"]),
                       max(spec["depths"]) if driver.nested else sum(spec["depths"]), R_.available_memory())


def _phase_depths(depth: int) -> list[int]:
    """The depths of a phase task: ``depth`` and, for the scaling estimate, a tenth of it."""
    return [depth] + ([depth // 10] if depth >= 20 else [])


def estimate_phase(spec: dict):
    """The resource :class:`~deeplimits._resources.Estimate` of a phase study (from
    :func:`plan_phase`): one task per Hurst index with all its draws."""
    item = getattr(torch, spec["dtype"]).itemsize
    depths = sorted(_phase_depths(spec["depth"]))
    peak = _task_bytes(spec["arch"], FractionalDriver(spec["hursts"][0]), spec["width"], spec["n_in"], depths,
                       spec["betas"], spec["inputs"], spec["draws"], item)
    return R_.Estimate(peak, len(spec["hursts"]), len(spec["hursts"]) * len(spec["betas"]) * spec["draws"] * len(depths),
                       spec["draws"], spec["depth"], R_.available_memory())


def _grid(name: str, values, check) -> list:
    """A non-empty list of distinct values, each passed through ``check``, sorted."""
    if isinstance(values, (int, float, str)) or values is None or len(values) == 0:
        raise ValueError(f"{name} must be a non-empty list, got {values!r}")
    out = [check(v) for v in values]
    if len(set(out)) != len(out):
        raise ValueError(f"{name} must be distinct, got {out}")
    return sorted(out)


def _common(arch, activation, width, n_in, draws, inputs, seed, dtype):
    """Checks shared by both studies; returns the network (validates arch and activation)."""
    net = ResNet(arch, activation, beta=0.0)
    if activation is not None and not isinstance(activation, str):
        raise ValueError("activation must be given by name (a string) for a propagation study "
                         "(its tasks may run in other processes)")
    V_.integer("width", width), V_.integer("n_in", n_in), V_.integer("draws", draws)
    V_.integer("inputs", inputs), V_.integer("seed", seed, low=0), V_.dtype(dtype)
    return net


def _sweep(tasks, progress, store, workers, scheduler, weight, timeout=None):
    from .sweeps import run_sweep

    return run_sweep(tasks, store, workers=workers, scheduler=scheduler, timeout=timeout,
                     progress=None if progress is None else (lambda t: progress(weight(t))))


# ----------------------------------------------------------------------------------------
# stability curves and criticality distributions
# ----------------------------------------------------------------------------------------

@dataclasses.dataclass
class StabilityResult(PlainData):
    """Stability ratios over (beta, depth): plain data (see :meth:`to_dict`).

    ``records``: one per (beta, depth) with ``r_h`` and ``r_p`` statistics over every
    (draw, input) (``mean, median, q25, q75, mean_sq``), ``exploded`` (draws with
    an input whose ratio overflowed, reported as :data:`CAP`), ``theory_lower`` and
    ``theory_upper`` (bounds on ``E r^2`` where :func:`bounds_apply`, else ``None``; also
    ``None`` where a bound exceeds the largest double),
    ``regime`` (:func:`classify` of the median ``r_h``) and ``lognormal_h``/``lognormal_p``:
    the normal fit ``(mu, sigma)`` of ``log ||h_L||/||h_0||`` (``log ||p_0||/||p_L||``) over
    every (draw, input) that did not explode, with the D'Agostino–Pearson normality test
    (``statistic``, ``pvalue``; ``None`` with fewer than 20 values).
    ``samples``: with ``histograms=True``, the norm ratios at the largest depth per beta.
    """

    arch: str
    driver: dict
    activation: str
    width: int
    n_in: int
    draws: int
    inputs: int
    seed: int
    dtype: str
    records: list[dict]
    samples: list[dict]
    seconds: float

    @property
    def label(self) -> str:
        drv = ", ".join(f"{k}={v}" for k, v in self.driver.items() if k != "driver")
        drv = self.driver["driver"] + (f" ({drv})" if drv else "")
        return f"{self.arch}, {self.activation}, {drv} weights, d={self.width}, {self.draws} draws"

    def report(self) -> str:
        """A table of medians and regimes, one line per (beta, depth)."""
        lines = [self.label, f"{'beta':>6} {'depth':>6} {'median r_h':>11} {'median r_p':>11} {'E r_h^2':>10} "
                             f"{'E r_p^2':>10} {'bounds on E r^2':>21} {'exploded':>8}  regime"]
        for r in self.records:
            b = (f"[{r['theory_lower']:.3g}, {r['theory_upper']:.3g}]" if r["theory_lower"] is not None
                 else "-")
            lines.append(f"{r['beta']:6.3g} {r['depth']:6d} {r['r_h']['median']:11.4g} {r['r_p']['median']:11.4g} "
                         f"{r['r_h']['mean_sq']:10.3g} {r['r_p']['mean_sq']:10.3g} {b:>21} {r['exploded']:8d}  "
                         f"{r['regime']}")
        for s in self.samples:
            rec = next(r for r in self.records if r["beta"] == s["beta"] and r["depth"] == s["depth"])
            for key, what in (("lognormal_h", "||h_L||/||h_0||"), ("lognormal_p", "||p_0||/||p_L||")):
                f = rec[key]
                if f is not None:
                    lines.append(f"beta {s['beta']:g}, L={s['depth']}: log {what} ~ N({f['mu']:.3f}, "
                                 f"{f['sigma']:.3f}^2); normality test p = {f['pvalue']:.3g} (n = {f['n']})")
        return "\n".join(lines)

    def plot(self, path: str | None = None):
        """Median ratios against depth with quartile bands, one line per beta."""
        from .plots import plot_stability

        return plot_stability(self, path=path)

    def plot_histograms(self, path: str | None = None):
        """Histograms of the norm ratios at the largest depth with the log-normal fits."""
        from .plots import plot_histograms

        return plot_histograms(self, path=path)


def _stats(x: np.ndarray) -> dict:
    return {"mean": float(x.mean()), "median": float(np.median(x)), "q25": float(np.quantile(x, 0.25)),
            "q75": float(np.quantile(x, 0.75)), "mean_sq": float((x ** 2).mean())}


def _lognormal(x: np.ndarray) -> dict | None:
    from scipy import stats

    y = np.log(x[(x < CAP) & (x > 0)])
    if len(y) < 20:
        return None
    test = stats.normaltest(y)
    return {"mu": float(y.mean()), "sigma": float(y.std(ddof=1)), "statistic": float(test.statistic),
            "pvalue": float(test.pvalue), "n": int(len(y))}


def plan_stability(arch: str = "res-3", driver: Driver | str | None = None, *, activation: str | None = None,
                   width: int = 40, n_in: int = 64, depths: Sequence[int] = (10, 100, 1000),
                   betas: Sequence[float] = (0.25, 0.5, 1.0), draws: int = 50, inputs: int = 1, seed: int = 0,
                   dtype: torch.dtype = torch.float32, histograms: bool = False, chunk: int | None = None) -> dict:
    """Validate the arguments of :func:`stability` (every check, before any work) and return
    the study as plain JSON (what a run store records)."""
    net = _common(arch, activation, width, n_in, draws, inputs, seed, dtype)
    driver = make_driver("uniform") if driver is None else make_driver(driver) if isinstance(driver, str) else driver
    dspec = _driver_spec(driver)
    depths = _grid("depths", depths, lambda L: V_.integer("depths", L))
    betas = _grid("betas", betas, lambda b: V_.real("betas", b, low=0.0))
    if not isinstance(histograms, bool):
        raise ValueError(f"histograms must be True or False, got {histograms!r}")
    item = torch.empty((), dtype=dtype).element_size()
    nw = sum(width * width if nm != "b" else width for nm in _WEIGHTS[net.arch])
    top = _pow2_ceil(max(depths)) if driver.needs_resolution else max(depths)
    # the default chunk (part of the spec, hence of the seeds) keeps its historical 1 GiB rule;
    # the peak estimate below then checks that it (or a given chunk) fits the machine
    per_draw = item * (top * nw * (4 if isinstance(driver, FractionalDriver) else 1)
                       + max(depths) * len(depths) * len(betas) * inputs * width)
    chunk = None if chunk is None else V_.integer("chunk", chunk)
    chunk = R_.fit_chunk(lambda n: _task_bytes(net.arch, driver, width, n_in, depths, betas, inputs, n, item),
                         draws, chunk, _chunk(per_draw, draws), _sizes(width, depths, betas, inputs),
                         ("width", "depths", "betas", "inputs"))
    _check_steps(driver, depths)
    R_.require_count(R_.tasks_of(draws, chunk), R_.MAX_TASKS,
                     f"draws={draws} in chunks of {chunk} draws makes too many tasks", ("draws",))
    return {"study": "stability", "arch": net.arch, **dspec, "activation": net.activation.name, "width": width,
            "n_in": n_in, "depths": depths, "betas": betas, "draws": draws, "inputs": inputs, "seed": seed,
            "dtype": str(dtype).replace("torch.", ""), "histograms": histograms, "chunk": chunk}


def _spec_driver(spec: dict) -> Driver:
    return make_driver(spec["driver"], spec.get("hurst"), spec.get("length_scale"))


def stability_tasks(spec: dict) -> list:
    """The sweep tasks of a stability study: chunks of draws, seeded by ``chunk_seed(seed, i)``."""
    from .sweeps import Task, chunk_seed, chunk_sizes

    base = {k: v for k, v in spec.items() if k not in ("draws", "chunk", "seed")}
    return [Task(f"stability/chunk-{i:05d}", "deeplimits.propagation:stability_task", {**base, "draws": n},
                 chunk_seed(spec["seed"], i)) for i, n in enumerate(chunk_sizes(spec["draws"], spec["chunk"]))]


def stability_task(params: dict, seed: int) -> dict:
    """Sweep task: the ratios of one chunk of draws, ``(draws, depths, betas, inputs)`` lists."""
    net = ResNet(params["arch"], params["activation"], beta=0.0)
    out = _run(net, _spec_driver(params), params["width"], params["n_in"], params["depths"], params["betas"],
               params["draws"], params["inputs"], seed, getattr(torch, params["dtype"]))
    return {k: v.tolist() for k, v in out.items()}


def summarise_stability(spec: dict, parts: Sequence[dict], seconds: float = 0.0) -> StabilityResult:
    """Combine the chunks of a stability study into a :class:`StabilityResult`."""
    a = {k: np.concatenate([np.asarray(p[k], dtype=np.float64) for p in parts]) for k in parts[0]}
    driver = _spec_driver(spec)
    apply = bounds_apply(spec["arch"], spec["activation"], driver)
    records, samples = [], []
    for i, beta in enumerate(spec["betas"]):
        for j, depth in enumerate(spec["depths"]):
            rec = {"beta": beta, "depth": depth, "driver": spec["driver"]}
            bad = np.zeros(len(a["r_h"]), dtype=bool)
            for name in ("r_h", "r_p"):
                x = a[name][:, j, i, :]  # (draws, inputs), already capped
                bad |= (x >= CAP).any(-1)
                rec[name] = _stats(x.ravel())
            rec["exploded"] = int(bad.sum())
            bounds = theory_bounds(beta, depth) if apply else (None, None)
            rec["theory_lower"], rec["theory_upper"] = (b if b is not None and math.isfinite(b) else None
                                                        for b in bounds)
            rec["regime"] = classify(rec["r_h"]["median"])
            rec["lognormal_h"] = _lognormal(a["norm_h"][:, j, i, :].ravel())
            rec["lognormal_p"] = _lognormal(a["norm_p"][:, j, i, :].ravel())
            records.append(rec)
            if spec["histograms"] and depth == spec["depths"][-1]:
                samples.append({"beta": beta, "depth": depth, "norm_h": a["norm_h"][:, j, i, :].ravel().tolist(),
                                "norm_p": a["norm_p"][:, j, i, :].ravel().tolist()})
    dspec = {k: spec[k] for k in ("driver", "hurst", "length_scale") if k in spec}
    return StabilityResult(spec["arch"], dspec, spec["activation"], spec["width"], spec["n_in"], spec["draws"],
                           spec["inputs"], spec["seed"], spec["dtype"], records, samples, seconds)


def stability(arch: str = "res-3", driver: Driver | str | None = None, *, activation: str | None = None,
              width: int = 40, n_in: int = 64, depths: Sequence[int] = (10, 100, 1000),
              betas: Sequence[float] = (0.25, 0.5, 1.0), draws: int = 50, inputs: int = 1, seed: int = 0,
              dtype: torch.dtype = torch.float32, histograms: bool = False, chunk: int | None = None,
              progress: Callable[[int], None] | None = None, store=None, workers: int | None = None,
              scheduler: str | None = None, timeout: float | None = None) -> StabilityResult:
    """Stability ratios of a residual network at initialisation over depths and betas.

    Args:
        arch: ``'res-1'``, ``'res-2'``, ``'res-3'`` or ``'inside'``.
        driver: law of the weights, a :class:`~deeplimits.drivers.Driver` or a name
            (``'uniform'``, the papers' default; ``'gaussian'``, ``'rademacher'``, ``'smooth'``).
        activation: a name (default tanh; ReLU for res-3).
        width, n_in: hidden width ``d`` and input dimension; ``A`` and ``x`` are Gaussian with
            ``h_0 = A x`` of unit-variance entries, ``B`` has N(0, 1/d) entries.
        depths, betas: the grid. Weights are reused for every beta, and, for i.i.d. and
            fractional weights, the depth-L network is the first L layers of the deepest one
            (the same law; depths are then coupled, each depth's statistics are exact).
        draws: independent draws of (weights, A, B, x); ``inputs`` inputs per draw.
        dtype: float32 by default (ratios need no more; non-finite or > CAP counts as exploded).
        histograms: keep the norm ratios at the largest depth (for :meth:`~StabilityResult.plot_histograms`).
        chunk: draws per task (default: as many as fit in 1 GiB).
        progress: called with the number of draws of each finished chunk.
        store, workers, scheduler: a :class:`~deeplimits.sweeps.RunStore` and an executor, as
            for :func:`~deeplimits.convergence.run_plan`.

    Returns:
        A :class:`StabilityResult`.
    """
    spec = plan_stability(arch, driver, activation=activation, width=width, n_in=n_in, depths=depths, betas=betas,
                          draws=draws, inputs=inputs, seed=seed, dtype=dtype, histograms=histograms, chunk=chunk)
    return run_stability(spec, progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout)


def run_stability(spec: dict, progress: Callable[[int], None] | None = None, *, store=None,
                  workers: int | None = None, scheduler: str | None = None,
                  timeout: float | None = None) -> StabilityResult:
    """Run the tasks of a stability study (from :func:`plan_stability`) and summarise them."""
    t0 = time.perf_counter()
    tasks = stability_tasks(spec)
    done = _sweep(tasks, progress, store, workers, scheduler, lambda t: t.params["draws"], timeout)
    return summarise_stability(spec, [done[t.key] for t in tasks], time.perf_counter() - t0)


# ----------------------------------------------------------------------------------------
# phase diagram over (H, beta)
# ----------------------------------------------------------------------------------------

@dataclasses.dataclass
class PhaseResult(PlainData):
    """The (H, beta) phase diagram with fractional weights: plain data.

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
    """

    hurst: list[float]
    beta: list[float]
    log10_rh: list[list[float]]
    log10_rp: list[list[float]]
    exploded: list[list[int]]
    beta_star: list[float | None]
    predicted: list[float]
    beta_star_scaling: list[float | None]
    short_depth: int | None
    log10_rh_short: list[list[float]] | None
    arch: str
    activation: str
    width: int
    n_in: int
    depth: int
    draws: int
    inputs: int
    seed: int
    dtype: str
    seconds: float

    def report(self) -> str:
        lines = [f"phase diagram: {self.arch}, {self.activation}, d={self.width}, L={self.depth}, "
                 f"{len(self.hurst)} H x {len(self.beta)} beta, {self.draws} draws x {self.inputs} inputs",
                 f"{'H':>6} {'beta* (log10 r_h = 0)':>22} {'beta* (scaling)':>16} {'max(H,1/2)':>10}"]
        scaling = self.beta_star_scaling or [None] * len(self.hurst)
        fmt = lambda b: "-" if b is None else f"{b:.3f}"  # noqa: E731
        for h, b, bs, p in zip(self.hurst, self.beta_star, scaling, self.predicted):
            lines.append(f"{h:6.3f} {fmt(b):>22} {fmt(bs):>16} {p:10.3f}")
        return "\n".join(lines)

    def plot(self, path: str | None = None):
        """Heat maps of mean log10 r_h and log10 r_p with beta*(H) against max(H, 1/2)."""
        from .plots import plot_phase

        return plot_phase(self, path=path)


def plan_phase(hursts: Sequence[float] | None = None, betas: Sequence[float] | None = None, *, arch: str = "res-3",
               activation: str | None = None, width: int = 40, n_in: int = 64, depth: int = 1000, draws: int = 5,
               inputs: int = 10, seed: int = 0, dtype: torch.dtype = torch.float32) -> dict:
    """Validate the arguments of :func:`phase_diagram` and return the study as plain JSON."""
    full = PHASE_PRESETS["full"]
    hursts = full["hursts"] if hursts is None else hursts
    betas = full["betas"] if betas is None else betas
    net = _common(arch, activation, width, n_in, draws, inputs, seed, dtype)
    hursts = _grid("hursts", hursts, lambda h: round(V_.hurst(h, name="hursts"), 6))  # task keys: 6 decimals
    betas = _grid("betas", betas, lambda b: V_.real("betas", b, low=0.0))
    depth = V_.integer("depth", depth)
    spec = {"study": "phase", "arch": net.arch, "activation": net.activation.name, "hursts": hursts, "betas": betas,
            "width": width, "n_in": n_in, "depth": depth, "draws": draws, "inputs": inputs, "seed": seed,
            "dtype": str(dtype).replace("torch.", "")}
    est = estimate_phase(spec)  # a task holds all draws of one Hurst index: not chunked
    R_.require_memory(est.peak_bytes, f"per Hurst index ({draws} draws x {inputs} inputs) at width={width}, "
                      f"depth={depth}, {len(betas)} betas", ("width", "depth", "betas", "draws", "inputs"))
    R_.require_count(depth, R_.MAX_STEPS, f"depth={depth} makes too many layers per task", ("depth",))
    return spec


def phase_tasks(spec: dict) -> list:
    """One task per Hurst index (its weights are drawn once and reused for every beta)."""
    from .sweeps import Task, chunk_seed

    base = {k: v for k, v in spec.items() if k not in ("hursts", "seed", "study")}
    return [Task(f"phase/hurst-{h:.6f}", "deeplimits.propagation:phase_task", {**base, "hurst": h},
                 chunk_seed(spec["seed"], i)) for i, h in enumerate(spec["hursts"])]


def phase_task(params: dict, seed: int) -> dict:
    """Sweep task: mean log10 ratios over draws and inputs at one H, for every beta, at the
    depth and (for the scaling estimate of beta*) at a tenth of it, on a prefix of the same weights."""
    net = ResNet(params["arch"], params["activation"], beta=0.0)
    depths = _phase_depths(params["depth"])
    out = _run(net, FractionalDriver(params["hurst"]), params["width"], params["n_in"], depths,
               params["betas"], params["draws"], params["inputs"], seed, getattr(torch, params["dtype"]))
    res = {}
    for name in ("r_h", "r_p"):
        x = out[name]  # (draws, depths, betas, inputs)
        res["log10_" + name.replace("_", "")] = np.log10(np.maximum(x[:, 0], 1 / CAP)).mean((0, 2)).tolist()
    if len(depths) == 2:
        res["log10_rh_short"] = np.log10(np.maximum(out["r_h"][:, 1], 1 / CAP)).mean((0, 2)).tolist()
    res["exploded"] = ((out["r_h"][:, 0] >= CAP) | (out["r_p"][:, 0] >= CAP)).sum((0, 2)).tolist()
    return res


def summarise_phase(spec: dict, parts: Sequence[dict], seconds: float = 0.0) -> PhaseResult:
    """Combine the per-H tasks of a phase study into a :class:`PhaseResult`."""
    rh = [p["log10_rh"] for p in parts]
    short = [p.get("log10_rh_short") for p in parts]
    scaling = [None if s is None else critical_beta(spec["betas"], np.subtract(r, s)) for r, s in zip(rh, short)]
    return PhaseResult(spec["hursts"], spec["betas"], rh, [p["log10_rp"] for p in parts],
                       [p["exploded"] for p in parts], [critical_beta(spec["betas"], r) for r in rh],
                       [max(h, 0.5) for h in spec["hursts"]], scaling, spec["depth"] // 10 if short[0] else None,
                       short if short[0] else None, spec["arch"], spec["activation"], spec["width"],
                       spec["n_in"], spec["depth"], spec["draws"], spec["inputs"], spec["seed"], spec["dtype"],
                       seconds)


def phase_diagram(hursts: Sequence[float] | None = None, betas: Sequence[float] | None = None, *,
                  arch: str = "res-3", activation: str | None = None, width: int = 40, n_in: int = 64,
                  depth: int = 1000, draws: int = 5, inputs: int = 10, seed: int = 0,
                  dtype: torch.dtype = torch.float32, progress: Callable[[int], None] | None = None, store=None,
                  workers: int | None = None, scheduler: str | None = None,
                  timeout: float | None = None) -> PhaseResult:
    """The (H, beta) phase diagram of SPEC §4 with fractional weights V and W.

    For each Hurst index, ``draws`` weight samples (fGn along depth, exact) with ``inputs``
    inputs each are drawn ONCE and every beta runs on them in one forward and one backward
    pass. The critical scaling ``beta*(H)`` is where the mean ``log10 r_h`` crosses 0; the
    prediction is ``max(H, 1/2)`` (Marion et al. §4).

    Args:
        hursts, betas: the grid (default: the published one, 51 H in [0.05, 0.97] and 70 beta
            in [0, 1.3]).
        arch, activation, width, n_in, depth, draws, inputs, seed, dtype: as for :func:`stability`.
        progress: called with 1 after each finished Hurst index.
        store, workers, scheduler: run store and executor (see :func:`stability`).
    """
    spec = plan_phase(hursts, betas, arch=arch, activation=activation, width=width, n_in=n_in, depth=depth,
                      draws=draws, inputs=inputs, seed=seed, dtype=dtype)
    return run_phase(spec, progress, store=store, workers=workers, scheduler=scheduler, timeout=timeout)


def run_phase(spec: dict, progress: Callable[[int], None] | None = None, *, store=None,
              workers: int | None = None, scheduler: str | None = None,
              timeout: float | None = None) -> PhaseResult:
    """Run the tasks of a phase study (from :func:`plan_phase`) and summarise them."""
    t0 = time.perf_counter()
    tasks = phase_tasks(spec)
    done = _sweep(tasks, progress, store, workers, scheduler, lambda t: 1, timeout)
    return summarise_phase(spec, [done[t.key] for t in tasks], time.perf_counter() - t0)


def results_from_store(store):
    """Rebuild a stored stability or phase study from its finished tasks (no simulation);
    ``None`` when no task has finished yet."""
    spec = store.spec
    tasks = stability_tasks(spec) if spec["study"] == "stability" else phase_tasks(spec)
    done = store.results()
    tasks = [t for t in tasks if t.key in done]
    if not tasks:
        return None
    seconds = sum(r["seconds"] or 0.0 for r in store.records() if r["key"] in done)
    parts = [done[t.key] for t in tasks]
    if spec["study"] == "stability":
        return summarise_stability({**spec, "draws": sum(t.params["draws"] for t in tasks)}, parts, seconds)
    return summarise_phase({**spec, "hursts": [t.params["hurst"] for t in tasks]}, parts, seconds)
