"""The ``rough`` regime: res-1 with fractional weights of Hurst index 1/3 < H < 1/2 at ``beta = H``,
corrected per layer by the mean second-order term, -> the rough equation ``dH = dX sigma(H)``
(Liu & Tindel, Ann. Appl. Probab. 2019; docs/mathematics.md, "Rough weights")."""

from __future__ import annotations

import dataclasses

from ..options import ROUGH_HURST, Option
from ..orders import Term
from .base import Regime, StrongOrder, register_regime

__all__ = ["Rough", "rough_terms", "rough_remainder"]

_NOTE = ("first-order scheme of a rough equation (Liu & Tindel, Ann. Appl. Probab. 2019): strong order 2H - 1/2, the "
         "central limit of the centred second-order terms of the steps")
_ABLATION = ("ablation: the plain Euler network has no limit for H < 1/2: the mean second-order term (1/(2d)) "
             "L^(1-2H) sigma' sigma piles up over the depth and its error grows")


def rough_terms(hurst: float) -> tuple:
    """The error expansion of the corrected network against the rough limit (docs/mathematics.md,
    "Rough weights"), with ``r = 2H - 1/2``: the central limit ``L^-r`` of the centred second-order
    terms of the steps, and ``L^-(r+1/2)``, its relative correction ``L^-1/2``: the maximum error is
    read on the ``L + 1`` grid points, and the maximum over a grid of a process converging to a
    Brownian one falls short of its supremum by a relative ``L^-1/2``. Without that term the
    corrected network reads ``pre-asymptotic`` in most tables (docs/mathematics.md). Below
    ``H = 3/8`` the drift's term ``L^-(r+4H-1)`` (:func:`rough_remainder`) lies between the two and
    is declared too: left out, runs of 16,384 draws at ``H = 0.35`` whose errors fall 0.05 slower
    read ``agrees`` in 7 of 20 (docs/schemes.md, "How often the verdict is wrong"). Every term is a
    ``partial`` fluctuation: a nested reference's own error is only partly correlated with the
    network's (:data:`~deeplimits.orders.KINDS`)."""
    r = 2 * hurst - 0.5
    exponents = (r, r + 4 * hurst - 1, r + 0.5) if hurst < 0.375 - 1e-9 else (r, r + 0.5)
    return tuple(Term(e, 0.0, "partial") for e in exponents)


def rough_remainder(hurst: float) -> Term:
    """The first term left out. Above ``H = 3/8``: ``L^-(r+4H-1)``, the square ``(delta / sigma)^2``
    of the mean drift ``delta ~ L^(1-4H)`` of the steps' logarithm against the fluctuation
    ``sigma ~ L^(1/2-2H)``. From ``H = 3/8`` down, where that term is declared (at ``3/8`` it is
    ``L^-(r+1/2)``): ``L^-(r+2H)``, the centred third-order terms of the steps, ``L^-H`` relatively,
    seen to second order (odd in the path where the leading error is even)."""
    r = 2 * hurst - 0.5
    return Term(r + 4 * hurst - 1 if hurst > 0.375 + 1e-9 else r + 2 * hurst, 0.0, "partial")


@register_regime
class Rough(Regime):
    """res-1 with fractional Brownian weights (``1/3 < H < 1/2``) at ``beta = H`` and the Liu-Tindel
    correction ``(1/(2d)) L^-2H sigma'(h) sigma(h)`` per layer -> a rough differential equation;
    ``correction=False`` builds the plain Euler network (an ablation: it has no limit)."""

    name = "rough"
    network = "res-1, h + L^-H V sigma(h) + (1/(2d)) L^-2H sigma'(h) sigma(h) (the Liu-Tindel correction)"
    limit = "rough differential equation dH = dX sigma(H) driven by fBm (exact for d = 1, identity or tanh)"
    weights = "fractional Brownian increments, Hurst index 1/3 < H < 1/2"
    scaling = "beta = H"
    rate_text = "2H - 1/2; without the correction: no limit (the error grows)"
    options = (dataclasses.replace(ROUGH_HURST, required=True),
               Option("correction", bool, default=True, help="add the Liu-Tindel correction to every layer",
                      off="drop the correction: the plain Euler network, an ablation that has no limit"))
    defaults = dict(Regime.defaults, width=1, depths=[8, 16, 32, 64, 128, 256, 512, 1024, 2048], reference=4096)

    def strong_order(self, hurst, correction=True, **_):
        """The declared order of the corrected network; the ablation declares the same (the limit's),
        so that its growing error reads ``disagrees``, but below ``H = 3/8`` with the drift's term as
        the next one: declared, with the two next ones, five terms of free signs fit its growing error
        over depths 8..2048 (``pre-asymptotic``)."""
        terms, remainder = rough_terms(hurst), rough_remainder(hurst)
        if not correction and len(terms) == 3:
            terms, remainder = (terms[0], terms[2]), terms[1]
        return StrongOrder.of(terms, "1/3 < H < 1/2", _NOTE if correction else _ABLATION, remainder)

    def build(self, width, activation, arch, hurst, correction):
        from ..limits import RoughLimit
        from ..networks import ModifiedEulerResNet, ResNet
        from ..pairs import Pair
        from ..paths import FractionalDriver

        net = ModifiedEulerResNet(activation, hurst) if correction else ResNet("res-1", activation, beta=hurst)
        limit = RoughLimit(net.activation, hurst, width)
        return Pair(self.name, width, net, limit, {"V": FractionalDriver(hurst)}, self.strong_order(hurst, correction),
                    options={"hurst": hurst, "correction": correction})
