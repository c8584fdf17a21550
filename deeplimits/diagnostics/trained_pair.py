"""Distances between trained networks of a depth family and its reference depth, and the rule
that reads their decay with depth (docs/trained-limit.md).

For a depth ``L`` dividing the reference depth ``R`` (layer ``k`` of depth ``L`` sits at time
``k/L``, as does layer ``k R / L`` of the reference):

* the weight distance ``max_k ||A^(L)_k - A^(R)(k/L)||`` (Frobenius norm, the largest over the
  residual weights ``V``, ``W``), per configuration;
* the hidden-state distance ``sup_k ||h^(L)_k - h^(R)_(k/L)||`` on each input, averaged over the
  inputs (as the strong error ``E max_k ||H_{k/L} - h_k||`` of docs/mathematics.md), per configuration.

A family has a common limit when these fall with depth. :func:`limit_verdict` says so from the
fitted slope of ``log distance`` against ``log L`` and its bootstrap interval over seeds.
"""

from __future__ import annotations

import math

import torch

__all__ = ["on_grid", "weight_distance", "state_distance", "MIN_RATE", "ZERO", "limit_verdict", "reference_slope",
           "family_verdict"]

MIN_RATE = 0.25
"""A distance "falls" when the whole 95% interval of its rate lies above this (``L^-1/4``)."""
ZERO = 1e-12
"""Distances at most this times the size of the reference are zero (the same numbers, up to rounding)."""


def on_grid(snap: dict, depth: int, finest: int) -> dict:
    """A reference :func:`~deeplimits.training.family.snapshot` kept on the grid of the finest
    depth ``finest``, read on the grid ``k / depth`` (``depth`` divides ``finest``)."""
    s = finest // depth
    return {"weights": {n: w[s - 1::s] for n, w in snap["weights"].items()}, "states": snap["states"][::s]}


def weight_distance(weights: dict, reference: dict) -> torch.Tensor:
    """``max_k ||A_k - A^ref_k||`` (Frobenius, the largest over the names) per configuration
    ``(C,)``: ``weights`` and ``reference`` map names to ``(L, C, ...)`` tensors on one grid."""
    out = None
    for name, w in weights.items():
        d = (w - reference[name]).flatten(2).norm(dim=-1).amax(0)
        out = d if out is None else torch.maximum(out, d)
    return out


def state_distance(states: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """``mean_inputs max_k ||h_k - h^ref_k||`` per configuration ``(C,)`` of states
    ``(L + 1, C, n, d)`` on one grid."""
    return (states - reference).norm(dim=-1).amax(0).mean(-1)


def reference_slope(depths, reference: int, rate: float = 1.0) -> float:
    """The least-squares slope of ``log(L^-rate - R^-rate)`` against ``log L`` over ``depths``:
    what a distance ``c (L^-rate - R^-rate)`` to a reference of finite depth ``R`` shows (slightly
    steeper than ``-rate``: e.g. -1.034 over 8..256 against R = 2048)."""
    xs = [math.log(L) for L in depths]
    ys = [math.log(L ** -rate - reference ** -rate) for L in depths]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def limit_verdict(rate: float | None, ci, *, zero: bool = False) -> str:
    """The reading of a distance's decay: ``rate = -slope`` with its 95% interval ``ci``.

    * ``'zero'``: the distance is zero at every depth (``zero``: the same numbers up to rounding);
    * ``'falls'``: the whole interval lies above :data:`MIN_RATE` (the distance falls at least as
      ``L^-1/4``: the depths approach a common limit at the fitted rate);
    * ``'no common limit'``: the whole interval lies below :data:`MIN_RATE` (over these depths the
      distance does not fall as any practical rate would make it);
    * ``'inconclusive'``: the interval straddles :data:`MIN_RATE`, or is not finite.
    """
    if zero:
        return "zero"
    lo, hi = (math.nan, math.nan) if ci is None else ci
    if rate is None or not all(v is not None and math.isfinite(v) for v in (rate, lo, hi)):
        return "inconclusive"
    if lo > MIN_RATE:
        return "falls"
    if hi < MIN_RATE:
        return "no common limit"
    return "inconclusive"


def family_verdict(weights: str, states: str) -> str:
    """What a family's two readings (:func:`limit_verdict` of the weight and of the hidden-state
    distance) say together: ``'common limit'`` (both fall, or the weights are equal and the
    states fall), ``'states converge, weights do not'`` (e.g. i.i.d. weights read off one
    Brownian path: an SDE limit of the states, none of the weights), ``'no common limit'`` (the
    hidden states do not approach each other), else ``'inconclusive'``."""
    if states == "no common limit":
        return "no common limit"
    if states in ("falls", "zero"):
        if weights in ("falls", "zero"):
            return "common limit"
        if weights == "no common limit":
            return "states converge, weights do not"
    return "inconclusive"
