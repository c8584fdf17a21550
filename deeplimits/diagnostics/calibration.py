"""Weight families whose hypothesis is known, and how often the verdict names it (docs/weights.md,
"How often the verdict is wrong"): the verdict of :mod:`.verdict` is a test, and this measures
its wrong-verdict rate and its power on seeded families of each kind (Cohen, Cont, Rossier & Xu,
ICML 2021, §2.3 and §3.2):

* ``'smooth'``, Hypothesis 1: ``A_k = L^-beta A(k/L)``, one ``A`` for every depth, ``beta`` in
  {0, 0.25, 0.5, 0.75, 1}; ``A`` a smooth function (``nu = 1``: a constant plus two Fourier modes
  of random frequencies and phases) or a fixed path of fractional Brownian motion of Hurst index
  ``nu`` in {0.75, 0.5} (``nu``-Hölder);
* ``'rough'``, Hypothesis 2: ``A_k = L^-beta A(k/L) + W_{(k+1)/L} - W_{k/L}``, ``beta`` in
  {0.5, 0.75, 1}, ``A`` smooth as above, ``W`` a Brownian motion of scale ``sigma`` in [0.5, 2]
  (drawn afresh at every depth: each depth is a network of its own);
* ``'sparse'``, Hypothesis 3: 1 to 4 layers of constant order (fixed matrices of norm 0.5 to
  2, at fixed fractions of the depth) among small ones whose root sum of squares is 1% to 10%
  of theirs (i.i.d., or a smooth function of depth), constant or shrinking like ``L^-1/2``;
* ``'none'``, built to say no: a noise that shrinks with its trend (``L^-1 (A(k/L) + xi_k)``),
  a noise of the trend's size at ``beta = 0.3`` (its quadratic variation grows), and large
  layers whose number grows like ``L^1/2``.

Each layer is a ``width x width`` matrix, the scaling study's weights (``width`` 10).
"""

from __future__ import annotations

import math
from typing import Sequence

import torch

from .. import _validate as V_
from ..errors import ParameterError

__all__ = ["KINDS", "known_family", "family_seed", "calibrate", "calibration_table"]

#: the kinds of family, named by the verdict they should get ('none': no hypothesis)
KINDS = ("smooth", "rough", "sparse", "none")
_FINE = 2 ** 12  # the grid of the fixed fBm paths read at every depth


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def _smooth_function(g: torch.Generator, width: int):
    """``t -> M_0 + cos(2 pi f_1 t + p_1) M_1 + sin(2 pi f_2 t + p_2) M_2``, entries of ``M_j`` of
    variance ``1 / width^2`` (a Frobenius norm of order 1), ``f`` in [0.5, 2]."""
    M = torch.randn(3, width, width, generator=g, dtype=torch.float64) / width
    f = 0.5 + 1.5 * torch.rand(2, generator=g, dtype=torch.float64)
    p = 2 * math.pi * torch.rand(2, generator=g, dtype=torch.float64)

    def at(t: torch.Tensor) -> torch.Tensor:
        c = torch.stack([torch.ones_like(t), torch.cos(2 * math.pi * f[0] * t + p[0]),
                         torch.sin(2 * math.pi * f[1] * t + p[1])], -1)
        return torch.einsum("lj,jab->lab", c, M)
    return at


def _fbm_function(g: torch.Generator, width: int, hurst: float):
    """A fixed path of fractional Brownian motion of index ``hurst`` per entry on ``[0, 1]``
    (variance ``t^(2 hurst) / width^2``), read at the grid point below ``t``."""
    from ..paths.fractional import fgn

    steps = fgn(_FINE, hurst, size=(width, width), generator=g).movedim(-1, 0) * _FINE ** -hurst / width
    path = torch.cat([torch.zeros(1, width, width, dtype=torch.float64), torch.cumsum(steps, 0)])
    return lambda t: path[(t * _FINE).long().clamp(0, _FINE)]


def _grid(L: int) -> torch.Tensor:
    return (torch.arange(L, dtype=torch.float64) + 0.5) / L


def _smooth(g, depths, width) -> tuple[dict, list]:
    beta = float([0.0, 0.25, 0.5, 0.75, 1.0][int(torch.randint(5, (1,), generator=g))])
    nu = float([1.0, 0.75, 0.5, 0.25][int(torch.randint(4, (1,), generator=g))])
    A = _smooth_function(g, width) if nu == 1 else _fbm_function(g, width, nu)
    return {"beta": beta, "nu": nu}, [A(_grid(L)) * L ** -beta for L in depths]


def _rough(g, depths, width) -> tuple[dict, list]:
    beta = float([0.5, 0.75, 1.0][int(torch.randint(3, (1,), generator=g))])
    sigma = 0.5 + 1.5 * float(torch.rand(1, generator=g, dtype=torch.float64))
    A = _smooth_function(g, width)
    out = [A(_grid(L)) * L ** -beta + sigma / width * L ** -0.5 * torch.randn(L, width, width, generator=g,
                                                                           dtype=torch.float64)
           for L in depths]
    return {"beta": beta, "sigma": round(sigma, 3)}, out


def _sparse(g, depths, width) -> tuple[dict, list]:
    slots = min(depths)  # distinct slots k / min(depths): distinct layers at every depth
    m = min(1 + int(torch.randint(4, (1,), generator=g)), slots)
    at = (torch.randperm(slots, generator=g)[:m].to(torch.float64) + 0.5) / slots
    big = torch.randn(m, width, width, generator=g, dtype=torch.float64)
    size = 0.5 + 1.5 * torch.rand(m, 1, 1, generator=g, dtype=torch.float64)
    big *= size / big.flatten(1).norm(dim=1)[:, None, None]
    share = 0.01 + 0.09 * float(torch.rand(1, generator=g, dtype=torch.float64))
    iid, shrink = bool(torch.rand(1, generator=g) < 0.5), 0.5 * float(torch.rand(1, generator=g) < 0.5)
    A = _smooth_function(g, width)
    out = []
    for L in depths:
        rest = torch.randn(L, width, width, generator=g, dtype=torch.float64) if iid else A(_grid(L))
        rest *= share * big.norm() * L ** -shrink / rest.norm()
        rest[(at * L).long().clamp(0, L - 1)] += big
        out.append(rest)
    return {"layers": m, "rest": round(share, 3), "iid": iid, "shrink": shrink}, out


def _none(g, depths, width) -> tuple[dict, list]:
    case = ["shrinking noise", "loud noise", "growing count"][int(torch.randint(3, (1,), generator=g))]
    A = _smooth_function(g, width)
    out = []
    for L in depths:
        noise = torch.randn(L, width, width, generator=g, dtype=torch.float64) / width
        if case == "shrinking noise":  # a noise that averages out: no noise path in the limit
            out.append((A(_grid(L)) + noise) / L)
        elif case == "loud noise":  # a noise of the trend's size at beta 0.3: its quadratic variation grows
            out.append((A(_grid(L)) + noise) * L ** -0.3)
        else:  # large layers at every floor(sqrt(L))-th layer: L^1/2 of them
            A_ = 0.01 * noise * L ** -0.5
            A_[::max(1, math.isqrt(L))] += A(_grid(L))[::max(1, math.isqrt(L))]
            out.append(A_)
    return {"case": case}, out


_MAKE = {"smooth": _smooth, "rough": _rough, "sparse": _sparse, "none": _none}


def known_family(kind: str, depths: Sequence[int], *, seed: int, width: int = 10,
                 scatter: float = 0.0) -> tuple[dict, list]:
    """``(parameters, tensors)``: one family of ``kind`` (:data:`KINDS`) at ``depths``, a tensor
    ``(L, width, width)`` per depth, drawn from ``seed`` (module docstring); ``scatter > 0`` scales
    each depth's tensor by ``exp(scatter Z)``, ``Z`` standard normal (a stress test: trained networks
    scatter from depth to depth). ``depths``: strictly increasing integers >= 3; ``seed`` an
    integer >= 0; ``width`` >= 1; ``scatter`` a real >= 0."""
    kind, depths, seed, width, scatter = _check(kind, depths, seed, width, scatter)
    g = _gen(seed)
    params, tensors = _MAKE[kind](g, depths, width)
    if scatter:
        tensors = [A * math.exp(scatter * float(torch.randn(1, generator=g, dtype=torch.float64))) for A in tensors]
    return params, tensors


def _check(kind, depths, seed, width, scatter) -> tuple:
    kind = V_.choice("kind", kind, KINDS)
    depths = V_.depths("depths", depths, dyadic=False)
    if depths[0] < 3:
        raise ParameterError("depths", f"depths must be at least 3 layers, got {depths}")
    return (kind, depths, V_.integer("seed", seed, low=0), V_.integer("width", width),
            V_.real("scatter", scatter, low=0.0))


def family_seed(kind: str, i: int, seed: int = 0) -> int:
    """The seed of family ``i`` of ``kind``: ``seed + 100003 j + i``, ``j`` the kind's index in :data:`KINDS`."""
    return seed + 100003 * KINDS.index(kind) + i


def calibrate(count: int, depths: Sequence[int], *, width: int = 10, seed: int = 0, kinds=KINDS,
              scatter: float = 0.0) -> dict:
    """``{kind: {verdict: how many of count families got it}}`` for families ``0 .. count - 1`` of
    each kind (:func:`family_seed`, :func:`known_family`); ``count`` an integer >= 1, ``kinds``
    a subset of :data:`KINDS`, the rest as for :func:`known_family`."""
    count = V_.integer("count", count)
    kinds = [V_.choice("kinds", k, KINDS) for k in V_.sequence("kinds", kinds, what="a list of kinds")]
    _check(KINDS[0], depths, seed, width, scatter)
    from .measures import weight_diagnostics
    from .scaling import scaling_exponents
    from .verdict import VERDICTS

    out = {}
    for kind in kinds:
        counts = dict.fromkeys(VERDICTS, 0)
        for i in range(count):
            _, tensors = known_family(kind, depths, seed=family_seed(kind, i, seed), width=width, scatter=scatter)
            verdict = scaling_exponents([weight_diagnostics(A) for A in tensors]).hypothesis
            counts[verdict] = counts.get(verdict, 0) + 1
        out[kind] = counts
    return out


def calibration_table(counts: dict) -> str:
    """The counts of :func:`calibrate` as a markdown table of rates: a wrong hypothesis (one of
    smooth, rough, sparse other than the family's; for ``'none'`` any of them) with its 95% upper
    confidence bound (Clopper-Pearson), the right one (the power), neither, insufficient evidence."""
    from scipy import stats

    lines = ["| family | families | wrong hypothesis | (95% upper bound) | right hypothesis | neither | "
             "insufficient evidence |", "|---|---|---|---|---|---|---|"]
    for kind, c in counts.items():
        n = sum(c.values())
        wrong = sum(v for k, v in c.items() if k in _NAMED and k != kind)
        upper = 1.0 if wrong == n else float(stats.beta.ppf(0.95, wrong + 1, n - wrong))
        right = f"{c.get(kind, 0) / n:.1%}" if kind in _NAMED else ""
        lines.append(f"| {kind} | {n} | {wrong / n:.1%} | {upper:.1%} | {right} | {c.get('neither', 0) / n:.1%} | "
                     f"{c.get('insufficient evidence', 0) / n:.1%} |")
    return "\n".join(lines)


_NAMED = ("smooth", "rough", "sparse")
