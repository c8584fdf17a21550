"""Strong convergence of networks to their limits, docs/mathematics.md, "One sample, every depth, and the measured rate".

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

import itertools
import math
from typing import Sequence

import numpy as np
import torch

from .. import _validate as V_
from .._random import single_threaded_torch
from ..errors import ParameterError
from ..paths import pair_sums
from ..pairs import Pair
from .fits import bootstrap_fit


#: the most bootstrap resamples of :func:`fit_rate` (its default is 2000; each resample is a pass over the draws)
MAX_BOOT = 1_000_000


def fit_rate(depths: Sequence[int], errors: np.ndarray, *, n_boot: int = 2000, seed: int = 0,
             level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Least-squares rate of ``mean error ~ depth^-rate`` with a percentile bootstrap interval
    over draws (:func:`~deeplimits.studies.fits.bootstrap_fit` of the mean on ``log L``).

    Args:
        depths: the depths (columns of ``errors``), reals > 0.
        errors: per-draw errors, shape ``(draws, len(depths))`` with ``draws >= 1``, finite and
            ``>= 0``.
        n_boot: bootstrap resamples, in [1, :data:`MAX_BOOT`]; seed: their seed (>= 0); level: in (0, 1).
    Returns:
        ``(rate, (lo, hi))``.
    """
    depths = V_.sequence("depths", depths, lambda L: V_.real("depths", L, low=0.0, low_open=True),
                         what="a list of depths > 0")
    if not depths:
        raise ParameterError("depths", "depths must be a non-empty list of depths > 0, got []")
    try:
        errors = np.asarray(errors, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("errors", f"errors must be an array of shape (draws, {len(depths)}) of reals, got "
                                       f"{errors!r:.80}") from None
    if errors.ndim != 2 or errors.shape[0] < 1 or errors.shape[1] != len(depths):
        raise ParameterError("errors", f"errors must have shape (draws, {len(depths)}) with draws >= 1, got "
                                       f"{errors.shape}")
    if not (np.isfinite(errors).all() and (errors >= 0).all()):
        raise ParameterError("errors", "errors must be finite and >= 0")
    n_boot = V_.integer("n_boot", n_boot, high=MAX_BOOT)
    seed = V_.integer("seed", seed, low=0)
    level = V_.real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    slope, _, (lo, hi) = bootstrap_fit(np.log(np.asarray(depths, dtype=np.float64)), errors, np.mean,
                                       n_boot=n_boot, seed=seed, level=level)
    return -slope, (-hi, -lo)


def _levels(chunk: torch.Tensor, top: int, bufs: dict | None = None) -> dict[int, torch.Tensor]:
    """Sums of 1, 2, 4, ..., ``top`` consecutive fine increments of a chunk (pairwise tree), into
    the buffers ``bufs`` (level -> tensor, kept from chunk to chunk) when given."""
    out = {1: chunk}
    r = 1
    while r < top:
        x = out[r]
        if bufs is None:
            out[2 * r] = pair_sums(x, 2)
        else:
            b = bufs.get(2 * r)
            if b is None or b.shape[0] != x.shape[0] // 2:
                b = bufs[2 * r] = x.new_empty((x.shape[0] // 2, *x.shape[1:]))
            out[2 * r] = torch.add(x[0::2], x[1::2], out=b)
        r *= 2
    return out


#: the fewest fine steps :func:`_fine_chunks` asks a chunk of a rough sample to hold (a power of two)
_MIN_CHUNK = 64


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

    def transform(ring):  # the levels of a stream: a set of buffers per chunk alive at once, in turn
        calls = itertools.count()

        def levels(x):  # runs on the sample's drawing thread
            bufs = ring[next(calls) % len(ring)]
            return [_levels(p, min(p.shape[0], top), bufs.setdefault(i, {})) for i, p in enumerate(x.split(piece))]
        return levels

    # chunks of top / 2 fine steps hold half the memory of chunks of top and give the same sums: a depth
    # spanning two chunks adds their two top-level sums, the tree's last pair sum (below _MIN_CHUNK, the
    # power of two _MIN_CHUNK is at least top: chunks that hold every depth's increment)
    most = max(top // 2, _MIN_CHUNK)
    streams = [itertools.chain.from_iterable(sample.weights[n].iter_increments(
        R, transform=transform([{} for _ in range(sample.weights[n].ahead + 1)]), reuse=True, most=most))
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
    rough = [n for n, s in sample.weights.items() if s.rough]
    smooth = [n for n in sample.weights if n not in rough]
    R = reference
    steps = {L: p.layer_step(L) for L in depths}
    state = {L: h0 for L in depths}
    err = {L: torch.zeros(h0.shape[:-1], dtype=h0.dtype, device=h0.device) for L in depths}
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
                acc[L] = [t.clone() for t in tot] if acc[L] is None else [a.add_(t) for a, t in zip(acc[L], tot)]
        t = (torch.arange(j + 1, j + c + 1, dtype=torch.float64, device=h0.device) / R).to(h0.dtype)  # right ends
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
                # a NaN error stays NaN in the running maximum (torch.maximum propagates it): inf below
                torch.maximum(err[L], torch.linalg.vector_norm(H - state[L], dim=-1), out=err[L])
    max_err = torch.nan_to_num(torch.stack([err[L] for L in depths]), nan=math.inf)
    term = torch.stack([torch.nan_to_num((H - state[L]).norm(dim=-1), nan=math.inf) for L in depths])
    return max_err, term



def run_chunk(p: Pair, depths, reference, draws, inputs, seed, dtype, device=None) -> tuple[np.ndarray, np.ndarray]:
    """One chunk of draws: per-draw errors ``(draws, len(depths))`` (max over k, terminal),
    averaged over the inputs of each draw, computed on ``device`` (the CPU by default), with torch
    on one thread (:func:`~deeplimits._random.single_threaded_torch`: the sweep's per-step products
    are small, benchmarks/RESULTS.md)."""
    g = torch.Generator().manual_seed(seed)
    with single_threaded_torch():
        s = p.sample(draws, inputs=inputs, resolution=reference if p.rough else None,
                     generator=g, dtype=dtype, device=device)
        mx, tm = sweep_errors(p, s, depths, reference)
    return mx.mean(-1).T.cpu().numpy(), tm.mean(-1).T.cpu().numpy()
