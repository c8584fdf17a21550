"""Signal propagation at initialisation, SPEC §4 (Marion, Fermanian, Biau, Vert, JMLR 2025).

For a residual network ``h_0 = A x``, ``h_{k+1} = h_k + L^-beta V_{k+1} g(h_k, W_{k+1})`` with a
scalar readout ``B`` and squared loss, the ratios

    r_h = ||h_L - h_0|| / ||h_0||,        r_p = ||p_0 - p_L|| / ||p_L||,   p_k = dl/dh_k,

tell identity (ratios -> 0), explosion (ratios -> infinity) and non-trivial (order one)
behaviour. Weights do not depend on beta: they are drawn once per depth and every beta is
run on them at once (beta is a batch dimension). ``p_k`` comes from the backward recursion
``p_k = p_{k+1} + alpha J_k^T p_{k+1}``, which needs no autograd graph.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np
import torch

from . import _validate as V_
from .drivers import Driver, IIDDriver
from .networks import ResNet

__all__ = ["stability", "StabilityResult", "theory_bounds", "CAP"]

CAP = 1e30  # a ratio above CAP (or non-finite) counts as exploded and is reported as CAP


def theory_bounds(beta: float, depth: int) -> tuple[float, float]:
    """``((1 + a^2/2)^L - 1, (1 + a^2)^L - 1)`` with ``a = L^-beta``: bounds on ``E r_h^2`` and
    ``E r_p^2`` (Lemma 15 and Proposition 8 of Marion et al.) for res-1/2/3 under their
    assumptions (i.i.d. weights of variance 1/d)."""
    a2 = float(depth) ** (-2 * beta)
    return math.expm1(depth * math.log1p(a2 / 2)), math.expm1(depth * math.log1p(a2))


def _stats(x: np.ndarray) -> dict:
    x = x.astype(np.float64)
    return {"mean": float(x.mean()), "median": float(np.median(x)), "q25": float(np.quantile(x, 0.25)),
            "q75": float(np.quantile(x, 0.75)), "mean_sq": float((x ** 2).mean())}


def classify(median: float) -> str:
    """``'identity'`` if the median ratio is below 0.1, ``'explosion'`` above 10, else ``'non-trivial'``."""
    return "identity" if median < 0.1 else "explosion" if median > 10 else "non-trivial"


@dataclasses.dataclass
class StabilityResult:
    """One record per (beta, depth): ratio statistics, exploded draws, theory bounds, regime."""

    arch: str
    driver: str
    width: int
    draws: int
    records: list[dict]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _ratios(net: ResNet, h0, B, weights, betas, depth):
    """r_h and r_p per (beta, draw) for one depth; weights shared by all betas."""
    n, m, d = h0.shape
    nb = len(betas)
    # betas ride along the inputs axis: (draws, betas * inputs, width), one clean batched matmul
    alpha = torch.tensor([float(depth) ** -b for b in betas], dtype=h0.dtype).repeat_interleave(m).view(1, -1, 1)
    h0 = h0.repeat(1, nb, 1)
    ws = tuple(weights.get(n) for n in ("V", "W", "b"))
    with torch.no_grad():
        states = list(net._states(h0, depth, zip(*(w or [None] * depth for w in ws)), alpha))
        h = states[-1]
        p_L = (h @ B.transpose(-1, -2)) @ B  # l = (B h_L)^2 / 2 with target 0: p_L = B^T B h_L
        p = net._gradients(states, p_L, ws, alpha)[0]
    r_h = (h - h0).norm(dim=-1) / h0.norm(dim=-1)
    r_p = (p - p_L).norm(dim=-1) / p_L.norm(dim=-1)
    # (betas, draws), averaged over the inputs of a draw
    return r_h.view(n, nb, m).mean(-1).T, r_p.view(n, nb, m).mean(-1).T


def stability(arch: str = "res-3", driver: Driver | None = None, *, activation=None, width: int = 40,
              n_in: int = 64, depths: Sequence[int] = (10, 100, 1000), betas: Sequence[float] = (0.25, 0.5, 1.0),
              draws: int = 50, inputs: int = 1, seed: int = 0, dtype: torch.dtype = torch.float32) -> StabilityResult:
    """Stability ratios of a residual network at initialisation over depths and betas.

    Args:
        arch: ``'res-1'``, ``'res-2'``, ``'res-3'`` or ``'inside'``.
        driver: law of the weights (default i.i.d. uniform, the papers' choice).
        width, n_in: hidden width ``d`` and input dimension; ``A`` and ``x`` are Gaussian with
            ``h_0 = A x`` of unit-variance entries, ``B`` has N(0, 1/d) entries.
        depths, betas: the grid; weights are drawn once per depth and reused for every beta.
        draws: independent draws of (weights, A, B, x); ``inputs`` inputs per draw.
        dtype: float32 by default (ratios need no more; non-finite or > CAP counts as exploded).
    """
    net = ResNet(arch, activation, beta=0.0)
    driver = IIDDriver("uniform") if driver is None else driver
    depths = [V_.integer("depths", L) for L in depths]
    betas = [V_.real("betas", b, low=0.0) for b in betas]
    width, n_in, draws = V_.integer("width", width), V_.integer("n_in", n_in), V_.integer("draws", draws)
    inputs = V_.integer("inputs", inputs)
    dtype = V_.dtype(dtype)
    names = {"res-1": ("V",), "res-2": ("V", "W"), "res-3": ("V", "W"), "inside": ("W", "b")}[arch]
    g = torch.Generator().manual_seed(V_.integer("seed", seed, low=0))
    shapes = {"V": (width, width), "W": (width, width), "b": (width,)}
    # everything random is drawn from g in a fixed order here; the weights themselves are then
    # materialised, one depth at a time, from their samples' own seeds
    samples, inputs_ = [], []
    for depth in depths:
        res = depth if getattr(driver, "needs_resolution", False) else None
        samples.append({n: driver.sample(shapes[n], draws=draws, resolution=res, generator=g, dtype=dtype)
                        for n in names})
        A = torch.randn(draws, width, n_in, generator=g, dtype=dtype) / math.sqrt(n_in)
        x = torch.randn(draws, inputs, n_in, generator=g, dtype=dtype)
        B = torch.randn(draws, 1, width, generator=g, dtype=dtype) / math.sqrt(width)
        inputs_.append((x @ A.transpose(-1, -2), B))

    def layers(i):  # per-layer views of the streamed chunks: no (depth, draws, d, d) copy
        return {n: [w for c in s.iter_weights(depths[i]) for w in c.unbind(0)] for n, s in samples[i].items()}

    records = []
    for i, depth in enumerate(depths):
        h0, B = inputs_[i]
        records += _records(net, driver, arch, h0, B, layers(i), betas, depth)
    return StabilityResult(arch, driver.name, width, draws, records)


def _records(net, driver, arch, h0, B, weights, betas, depth):
    r_h, r_p = _ratios(net, h0, B, weights, betas, depth)
    records = []
    for i, beta in enumerate(betas):
        rec = {"beta": beta, "depth": depth, "driver": driver.name}
        exploded = 0
        for name, r in (("r_h", r_h[i]), ("r_p", r_p[i])):
            r = r.numpy().astype(np.float64)
            bad = ~np.isfinite(r) | (r > CAP)
            exploded = max(exploded, int(bad.sum()))
            rec[name] = _stats(np.where(bad, CAP, r))
        rec["exploded"] = exploded
        lo, hi = theory_bounds(beta, depth) if arch != "inside" else (None, None)
        rec["theory_lower"], rec["theory_upper"] = lo, hi
        rec["regime"] = classify(rec["r_h"]["median"])
        records.append(rec)
    return records
