"""The regimes of the inside model ``h_{k+1} = h_k + L^-alpha sigma(A_k h_k + b_k)`` (Cohen, Cont,
Rossier & Xu, ICML 2021; docs/mathematics.md, "The inside model"): ``inside-sde`` and ``inside-ode``."""

from __future__ import annotations

import dataclasses

from .._names import INSIDE_ACTIVATION
from ..errors import ParameterError
from ..options import LENGTH_SCALE, SA, SB, Option
from ..orders import Term
from .base import Regime, StrongOrder, register_regime, takes

__all__ = ["InsideSDE", "InsideODE"]

_ZERO = 1e-8  # a Taylor coefficient of sigma at 0 below this (in absolute value) counts as 0


class _Inside(Regime):
    architectures = ("inside",)
    # its specs predate the declarations: length_scale is recorded under 'options' when given
    spec_options = ("alpha", "beta", "sa", "sb", "ito_correction")
    defaults = dict(Regime.defaults, width=4)


@register_regime
class InsideSDE(_Inside):
    """The inside model with Brownian weights at ``alpha = 0`` -> an Itô SDE with the Itô
    correction ``(1/2) sigma''(0) (s_A^2 |H|^2 + s_b^2) dt``; ``beta >= 1`` adds a smooth drift
    part ``L^-beta A(k/L)`` to the weights (in the limit iff ``beta = 1``)."""

    name = "inside-sde"
    network = "inside, h + sigma(A_k h + b_k)"
    limit = "Itô SDE with the Itô correction (Euler–Maruyama on the finest grid)"
    weights = "Brownian increments (+ L^-beta x smooth drift part)"
    scaling = "alpha = 0"
    rate_text = "1/2; min(1/2, beta - 1) for beta > 1; 0 without the Itô correction"
    options = (Option("beta", float, help="exponent of an optional smooth drift part L^-beta A(k/L)", low=1.0,
                      note="the exponent of the smooth drift part"),
               SA, SB,
               Option("ito_correction", bool, default=True,
                      help="keep the Itô correction in the limit",
                      off="drop the Itô correction from the limit, an ablation"),
               dataclasses.replace(LENGTH_SCALE, help="RBF length scale of the smooth drift part, with beta"))
    defaults = dict(_Inside.defaults, reference=8192)

    def hint(self, option):
        return " (inside-sde has alpha = 0)" if option == "alpha" else ""

    def check(self, options):
        if "length_scale" in options and options.get("beta") is None:
            others = " and ".join(repr(n) for n in takes("length_scale") if n != self.name)
            raise ParameterError("length_scale", f"length_scale applies only to smooth weights (regimes {others}, and "
                                                 "'inside-sde' with beta), not to 'inside-sde' without beta")
        return options

    def strong_order(self, c2, beta=None, ito_correction=True, **_):
        """The order given ``c2 = sigma''(0)``, ``beta`` and ``ito_correction``."""
        if not ito_correction and abs(c2) > _ZERO:
            return StrongOrder(0.0, "ablation", "ablation: without the Itô correction (1/2) sigma''(0) (s_A^2 |H|^2 + "
                               "s_b^2) dt the equation is not the limit of the network: the error stops decreasing",
                               next_terms=(Term(0.5, 0.0, "fluctuation"),))
        if beta is not None and beta > 1:
            return StrongOrder.of((Term(beta - 1), Term(0.5, 0.0, "fluctuation"), Term(1.0)), "beta > 1",
                                  "Euler–Maruyama-type order 1/2; the drift part L^-beta A(k/L) adds L^(1-beta) over "
                                  "depth and vanishes from the limit (beta > 1)")
        note = ("order 1/2: the network differs from Euler–Maruyama of its limit by the centred fluctuation of "
                "(1/2) sigma''(0) u^2, of size L^-1 per layer")
        if not ito_correction:
            note += " (sigma''(0) = 0: there is no Itô correction to drop)"
        return StrongOrder(0.5, "sigma C^3 with sigma(0) = 0, sigma'(0) = 1", note, kind="fluctuation",
                           next_terms=(Term(1.0),))

    def build(self, width, activation, arch, beta, sa, sb, ito_correction, length_scale):
        from .. import _validate as V_
        from ..limits import InsideSDELimit
        from ..networks import ResNet
        from ..pairs import InsidePair
        from ..paths import IIDDriver, SmoothDriver

        net = ResNet("inside", INSIDE_ACTIVATION if activation is None else activation, beta=0.0)
        derivs = V_.inside_activation(net.activation, regime=self.name)
        drivers = {"W": IIDDriver("gaussian"), "b": IIDDriver("gaussian")}
        if beta is not None:
            smooth = SmoothDriver(length_scale)
            drivers.update(W_drift=smooth, b_drift=smooth)
        if sb == 0:
            drivers = {k: v for k, v in drivers.items() if not k.startswith("b")}
        limit = InsideSDELimit(net.activation, sa, sb, drift=beta == 1.0, ito_correction=ito_correction)
        order = self.strong_order(derivs[0], beta, ito_correction)
        return InsidePair(self.name, width, net, limit, drivers, order, alpha=0.0, beta=beta, sa=sa, sb=sb,
                          ito_correction=ito_correction, derivatives=derivs)


@register_regime
class InsideODE(_Inside):
    """The inside model with smooth weights ``L^-beta A(k/L)`` at ``alpha + beta = 1`` -> a linear
    ODE; the rate is set by the first non-zero Taylor coefficient of sigma at 0."""

    name = "inside-ode"
    network = "inside, h + L^-alpha sigma(L^-beta A(k/L) h + L^-beta b(k/L))"
    limit = "linear ODE dH = (A(t) H + b(t)) dt (torchdiffeq)"
    weights = "smooth Gaussian process A(t), b(t) times L^-beta (+ Brownian increments, noise > 0)"
    scaling = "alpha + beta = 1, 0 < beta < 1"
    rate_text = ("min(1, (m - 1) beta), m the first order >= 2 with sigma^(m)(0) != 0 (1 if none up to 5); "
                 "with a Brownian part (noise > 0): min(alpha, that)")
    options = (Option("alpha", float, help="outer exponent, alpha = 1 - beta", low=0, high=1, low_open=True,
                      high_open=True),
               Option("beta", float, help="inner exponent", low=0, high=1, low_open=True, high_open=True),
               SA, SB, LENGTH_SCALE,
               Option("noise", float, default=0.0, low=0.0,
                      help="entry scale, in units of sa and sb, of a Brownian part added to A and b (Cohen et al.'s "
                           "Hypothesis 2; 0: none)"))
    defaults = dict(_Inside.defaults, draws=64)

    def check(self, options):
        alpha, beta = options.get("alpha"), options.get("beta")
        if alpha is None and beta is None:
            raise ParameterError("beta", "beta must be given for regime 'inside-ode' "
                                         f"({self.option('beta').range_text()}; "
                                         "or alpha = 1 - beta)")
        if alpha is not None:
            if beta is not None and abs(alpha + beta - 1) > 1e-9:
                raise ParameterError("alpha", "alpha + beta must equal 1 for regime 'inside-ode', got alpha = "
                                              f"{alpha:g}, beta = {beta:g}")
            beta = 1.0 - alpha if beta is None else beta
        return {**options, "alpha": None, "beta": beta}

    def strong_order(self, derivatives, beta, noise=0.0, **_):
        """The order given the Taylor coefficients ``sigma''(0), sigma'''(0), ...`` and ``beta``:
        the first neglected term ``sigma^(m)(0) u^m / m!`` costs ``L^-(m-1) beta`` globally. With a
        Brownian part (``noise > 0``) the order is at most ``alpha = 1 - beta`` (:func:`_noise_order`)."""
        if noise:
            return _noise_order(self.strong_order(derivatives, beta), 1.0 - beta)
        m = next((k for k, c in enumerate(derivatives, start=2) if abs(c) > _ZERO), None)
        if m is None:
            return StrongOrder(1.0, "sigma^(m)(0) = 0 for m = 2..5", "sigma has no curvature at 0 (its derivatives "
                               "of orders 2 to 5 vanish there): the network is the right-point Euler scheme of its "
                               "limit, order 1", next_terms=(Term(2.0), Term(3.0)))
        power = "" if m == 2 else f"{m - 1} "
        # the Taylor series in powers of L^-beta from the first neglected term on (its next two terms; the
        # squares of the first are among them), the Euler scheme's L^-1; then the series' next term
        # (without the next two, the network at beta = 1/2 is told disagrees 10% of the time at 64 draws)
        series = [Term((m - 1 + k) * beta) for k in range(3)]
        return StrongOrder.of((*series, Term(1.0)),
                              f"sigma^({m})(0) != 0", (
            f"Taylor expansion of sigma at 0, sigma^({m})(0) = {derivatives[m - 2]:.6g}: the first neglected term "
            f"L^-alpha sigma^({m})(0) (L^-beta u)^{m} / {m}! per layer costs L^-{power}beta over depth, capped by "
            "the Euler rate 1 (at small depths the two are mixed)"), _next_of(m, beta))

    def build(self, width, activation, arch, alpha, beta, sa, sb, length_scale, noise):
        from .. import _validate as V_
        from ..limits import InsideODELimit
        from ..networks import ResNet
        from ..pairs import InsidePair
        from ..paths import IIDDriver, SmoothDriver

        net = ResNet("inside", INSIDE_ACTIVATION if activation is None else activation, beta=1.0 - beta)
        derivs = V_.inside_activation(net.activation, regime=self.name)
        smooth = SmoothDriver(length_scale)
        drivers = {"W": smooth} if sb == 0 else {"W": smooth, "b": smooth}
        if noise:  # Hypothesis 2: A_k = L^-beta A(k/L) + (X_{(k+1)/L} - X_{k/L}), X = noise s_A B
            drivers.update({f"{k}_noise": IIDDriver("gaussian") for k in list(drivers)})
        pair = InsidePair(self.name, width, net, InsideODELimit(), drivers, self.strong_order(derivs, beta, noise),
                          alpha=1.0 - beta, beta=beta, sa=sa, sb=sb, ito_correction=True, derivatives=derivs)
        pair.noise = noise
        return pair


def _noise_order(smooth: StrongOrder, alpha: float) -> StrongOrder:
    """The order of the inside-ODE network whose weights carry a Brownian part (Cohen et al., ICML
    2021, Thm 4.4 under Hypothesis 2, ``alpha > 0``; docs/mathematics.md, "inside-ODE"): per layer the
    part adds ``L^-alpha dX h``, a martingale increment of size ``L^(-alpha-1/2)``, and, when
    ``sigma''(0) != 0``, ``L^-alpha sigma''(0) (dX h)^2 / 2``, of mean ``L^(-alpha-1)``: both sum to
    ``L^-alpha`` over the depth, so the limit is the same linear ODE and the order is ``min(alpha, r)``,
    ``r`` the order without the part (``smooth``). Declared: ``L^-alpha``, the correction
    ``L^(-alpha-1/2)`` of its maximum over the grid (as for the martingale of an Itô SDE), and the first
    two terms of the expansion without the part."""
    exps = {round(e, 12) for e in (alpha, alpha + 0.5, alpha + 1.0, smooth.rate)}
    return StrongOrder.of(tuple(Term(e) for e in exps), "a Brownian part in the weights, alpha > 0",
                          f"the Brownian part adds L^-alpha over depth (a martingale, and with sigma''(0) != 0 an "
                          f"Itô-type drift), alpha = {alpha:g}; without it: {smooth.note}")


def _next_of(m: int, beta: float) -> Term | None:
    """The inside-ODE series' next term, ``L^-(m+2) beta`` (``None`` where it is a declared term: the
    default remainder then follows the last one)."""
    e = (m + 2) * beta
    return None if any(abs(e - x) < 1e-12 for x in ((m - 1) * beta, m * beta, (m + 1) * beta, 1.0)) else Term(e)
