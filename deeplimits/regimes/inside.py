"""The regimes of the inside model ``h_{k+1} = h_k + L^-alpha sigma(A_k h_k + b_k)`` (Cohen, Cont,
Rossier & Xu, ICML 2021; docs/mathematics.md, "The inside model"): ``inside-sde`` and ``inside-ode``."""

from __future__ import annotations

from .base import Regime, StrongOrder, register_regime

__all__ = ["InsideSDE", "InsideODE"]

_ZERO = 1e-8  # a Taylor coefficient of sigma at 0 below this (in absolute value) counts as 0
_DEFAULTS = dict(width=4, depths=[8, 16, 32, 64, 128, 256, 512])
_SCALES = {"sa": "entry standard deviation of A (default 0.25)",
           "sb": "entry standard deviation of b; 0: no bias (default 1)"}


def _scales(regime, options):
    """``sa``, ``sb`` validated with their defaults."""
    from .. import _validate as V_
    from ..limits import DEFAULT_SA, DEFAULT_SB

    where = f" for regime {regime!r}"
    sa = options.get("sa")
    sb = options.get("sb")
    sa = DEFAULT_SA if sa is None else V_.real("sa", sa, low=0.0, low_open=True, context=where)
    sb = DEFAULT_SB if sb is None else V_.real("sb", sb, low=0.0, context=where)
    return sa, sb


class _Inside(Regime):
    architectures = ("inside",)
    spec_options = ("alpha", "beta", "sa", "sb", "ito_correction")


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
    options = {"beta": "exponent >= 1 of an optional smooth drift part L^-beta A(k/L)", **_SCALES,
               "ito_correction": "False drops the Itô correction from the limit (an ablation)",
               "length_scale": "RBF length scale of the smooth drift part (with beta; default 0.1)"}
    option_defaults = {"ito_correction": True}
    defaults = dict(_DEFAULTS, paths=256, reference=8192)

    def hint(self, option):
        return " (inside-sde has alpha = 0)" if option == "alpha" else ""

    def check(self, options):
        from .. import _validate as V_

        V_.flag("ito_correction", options["ito_correction"])
        beta = options.get("beta")
        if options.get("length_scale") is not None and beta is None:
            raise ValueError("length_scale applies only to smooth weights (regimes 'ode', 'inside-ode', and "
                             "'inside-sde' with beta), not to 'inside-sde' without beta")
        if beta is not None:
            beta = V_.real("beta", beta, low=1.0, context=" for regime 'inside-sde' (the exponent of the smooth "
                                                          "drift part)")
        sa, sb = _scales(self.name, options)
        return {**options, "beta": beta, "sa": sa, "sb": sb}

    def strong_order(self, c2, beta=None, ito_correction=True, **_):
        """The order given ``c2 = sigma''(0)``, ``beta`` and ``ito_correction``."""
        if not ito_correction and abs(c2) > _ZERO:
            return StrongOrder(0.0, "ablation", "ablation: without the Itô correction (1/2) sigma''(0) (s_A^2 |H|^2 + "
                               "s_b^2) dt the equation is not the limit of the network: the error stops decreasing")
        if beta is not None and beta > 1:
            return StrongOrder(min(0.5, beta - 1), "beta > 1", "Euler–Maruyama-type order 1/2; the drift part "
                               "L^-beta A(k/L) adds L^(1-beta) over depth and vanishes from the limit (beta > 1)")
        note = ("order 1/2: the network differs from Euler–Maruyama of its limit by the centred fluctuation of "
                "(1/2) sigma''(0) u^2, of size L^-1 per layer")
        if not ito_correction:
            note += " (sigma''(0) = 0: there is no Itô correction to drop)"
        return StrongOrder(0.5, "sigma C^3 with sigma(0) = 0, sigma'(0) = 1", note)

    def build(self, width, activation, arch, beta=None, sa=None, sb=None, ito_correction=True, length_scale=None):
        from .. import _validate as V_
        from ..limits import InsideSDELimit
        from ..networks import ResNet
        from ..pairs import InsidePair
        from ..paths import IIDDriver, SmoothDriver

        net = ResNet("inside", "softplus0" if activation is None else activation, beta=0.0)
        derivs = V_.inside_activation(net.activation, regime=self.name)
        drivers = {"W": IIDDriver("gaussian"), "b": IIDDriver("gaussian")}
        if beta is not None:
            smooth = SmoothDriver(0.1 if length_scale is None else length_scale)
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
    weights = "smooth Gaussian process A(t), b(t) times L^-beta"
    scaling = "alpha + beta = 1, 0 < beta < 1"
    rate_text = "min(1, (m - 1) beta), m the first order >= 2 with sigma^(m)(0) != 0 (1 if none up to 5)"
    options = {"alpha": "outer exponent in (0, 1), alpha = 1 - beta", "beta": "inner exponent in (0, 1)", **_SCALES,
               "length_scale": "RBF length scale of the smooth weights (default 0.1)"}
    defaults = dict(_DEFAULTS, paths=64, reference=None)

    def check(self, options):
        from .. import _validate as V_

        where = " for regime 'inside-ode'"
        alpha, beta = options.get("alpha"), options.get("beta")
        if alpha is None and beta is None:
            raise ValueError("beta must be given for regime 'inside-ode' (in (0, 1); or alpha = 1 - beta)")
        if beta is not None:
            beta = V_.real("beta", beta, low=0, high=1, low_open=True, high_open=True, context=where)
        if alpha is not None:
            alpha = V_.real("alpha", alpha, low=0, high=1, low_open=True, high_open=True, context=where)
            if beta is not None and abs(alpha + beta - 1) > 1e-9:
                raise ValueError(f"alpha + beta must equal 1 for regime 'inside-ode', got alpha = {alpha:g}, "
                                 f"beta = {beta:g}")
            beta = 1.0 - alpha if beta is None else beta
        sa, sb = _scales(self.name, options)
        return {**options, "alpha": None, "beta": beta, "sa": sa, "sb": sb}

    def strong_order(self, derivatives, beta, **_):
        """The order given the Taylor coefficients ``sigma''(0), sigma'''(0), ...`` and ``beta``:
        the first neglected term ``sigma^(m)(0) u^m / m!`` costs ``L^-(m-1) beta`` globally."""
        m = next((k for k, c in enumerate(derivatives, start=2) if abs(c) > _ZERO), None)
        if m is None:
            return StrongOrder(1.0, "sigma^(m)(0) = 0 for m = 2..5", "sigma has no curvature at 0 (its derivatives "
                               "of orders 2 to 5 vanish there): the network is the right-point Euler scheme of its "
                               "limit, order 1")
        power = "" if m == 2 else f"{m - 1} "
        return StrongOrder(min(1.0, (m - 1) * beta), f"sigma^({m})(0) != 0", (
            f"Taylor expansion of sigma at 0, sigma^({m})(0) = {derivatives[m - 2]:.6g}: the first neglected term "
            f"L^-alpha sigma^({m})(0) (L^-beta u)^{m} / {m}! per layer costs L^-{power}beta over depth, capped by "
            "the Euler rate 1 (at small depths the two are mixed)"))

    def build(self, width, activation, arch, alpha=None, beta=None, sa=None, sb=None, length_scale=None):
        from .. import _validate as V_
        from ..limits import InsideODELimit
        from ..networks import ResNet
        from ..pairs import InsidePair
        from ..paths import SmoothDriver

        net = ResNet("inside", "softplus0" if activation is None else activation, beta=1.0 - beta)
        derivs = V_.inside_activation(net.activation, regime=self.name)
        smooth = SmoothDriver(0.1 if length_scale is None else length_scale)
        drivers = {"W": smooth} if sb == 0 else {"W": smooth, "b": smooth}
        return InsidePair(self.name, width, net, InsideODELimit(), drivers, self.strong_order(derivs, beta),
                          alpha=1.0 - beta, beta=beta, sa=sa, sb=sb, ito_correction=True, derivatives=derivs)
