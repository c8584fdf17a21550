"""The regimes of the residual network ``h_{k+1} = h_k + L^-beta V_{k+1} g(h_k, W_{k+1})``
(docs/mathematics.md, "The implemented regimes"): ``sde``, ``ode`` and ``fbm``."""

from __future__ import annotations

import dataclasses
import math

from ..options import LENGTH_SCALE, YOUNG_HURST, Option
from ..orders import Term
from ..errors import ParameterError
from .base import Regime, StrongOrder, register_regime
from .drivers import path_reason, smooth_reason

__all__ = ["SDE", "ODE", "FBM", "modified_euler_terms", "modified_euler_remainder", "young_constant_terms"]

_EULER_FBM_NOTE = ("asymptotic rate (Mishura 2008; Hu, Liu & Nualart 2016): in a width-d network the L^(1-2H) term "
                   "carries a 1/d factor, so at practical depths the observed slope is often steeper")


def young_constant_terms(hurst: float) -> tuple:
    """The next terms ``((c, e), ...)`` of ``L^(2H-1) E|H_1 - h_L| / limit`` for the Euler network
    of ``dH = H dB^H`` (docs/mathematics.md, "Error constants"): with ``h_L = H_1 e^Y``,
    ``Y = -Q/2 + C/3 - ...``, ``E e^B (1 - e^Y)`` under the measure tilted by ``e^B`` (increments
    shifted by ``m_k = Cov(B_1, dB_k) ~ phi(k/L) / L``): ``(1 - e^(-x/2)) / (x/2)`` with
    ``x = L^(1-2H)`` (its series to ``x^3``), ``K_H L^(2H-2)`` from ``sum m_k^2 ~ K_H / L``,
    ``K_H = H^2 int (t^(2H-1) + (1-t)^(2H-1))^2 dt = H^2 (2 / (4H-1) + 2 B(2H, 2H))``, and ``-2/L``
    from the mean ``3 L^-2H sum m_k`` of the cubes."""
    b = math.gamma(2 * hurst) ** 2 / math.gamma(4 * hurst)
    k = hurst * hurst * (2 / (4 * hurst - 1) + 2 * b)
    r = 2 * hurst - 1
    return ((-0.25, r), (1 / 24, 2 * r), (-1 / 192, 3 * r), (k, 2 - 2 * hurst), (-2.0, 1.0))


def modified_euler_terms(hurst: float) -> tuple:
    """The error expansion of the modified Euler scheme of a Young equation (Hu, Liu & Nualart,
    Ann. Appl. Probab. 2016; docs/mathematics.md, "Error expansions"). For ``H < 3/4``: a central
    limit ``L^(1/2-2H)`` (a fluctuation), the discretisation ``L^-1``, then the slower of the
    step's mean drift ``L^-2H`` and the fluctuation's relative correction ``L^(3-4H)`` (its
    variance's finite part; the mean absolute value of a fluctuation plus a smaller part, to
    second order). At ``H = 3/4`` the fluctuation's variance grows like ``L^-2 (log L + c)``: the
    error is ``L^-1`` times a series in powers of ``(log L)^-1/2`` (``sqrt(log L)``, ``1``,
    ``(log L)^-1/2``, ...), beside the drift ``L^-3/2``. Above, ``L^-1`` (a limit in L^2: coherent), the fluctuation of the
    squared fGn, whose variance ``sum_|n|<L (L - |n|) gamma(n)^2`` has relative corrections in powers
    of ``L^(3-4H)``: ``L^(2-4H)``, ``L^(5-8H)`` (without them the scheme at H = 0.9 is told
    ``disagrees`` nearly half of the time over depths 8..128). Measured (runs sized to decide,
    benchmarks/calibration_pairs.py): with two terms only, at H = 0.6 and 0.75 the exponent read
    0.02 to 0.03 too steep and errors decaying 0.05 slower were told ``agrees`` in 28 and 38 runs of 50."""
    if abs(hurst - 0.75) < 1e-9:
        return (Term(1.0, 0.5, "fluctuation"), Term(1.0), Term(1.0, -0.5), Term(1.5))
    if hurst < 0.75:
        return (Term(2 * hurst - 0.5, 0.0, "fluctuation"), Term(1.0), Term(_young_next(hurst)[0]))
    return (Term(1.0, 0.0, "coherent"), Term(4 * hurst - 2), Term(8 * hurst - 5))


def modified_euler_remainder(hurst: float) -> Term:
    """The modified Euler scheme's first term left out (:func:`modified_euler_terms`): below
    ``H = 3/4`` the next of ``L^-2H``, ``L^(2H-5/2)``, ``L^(4H-4)``; at ``3/4`` ``L^-1 / log L``; above,
    ``L^-2H`` (the mean drift ``(L^-2H / 2) B_1`` of its step)."""
    if abs(hurst - 0.75) < 1e-9:
        return Term(1.0, -1.0)
    if hurst < 0.75:
        return Term(_young_next(hurst)[1])
    return Term(2 * hurst)


def _young_next(hurst: float) -> list:
    """Below ``H = 3/4``, the exponents after ``L^-1`` in increasing order: the drift ``2H`` and the
    fluctuation's corrections ``5/2 - 2H``, ``4 - 4H`` (``2H - 1/2`` plus two and three times
    ``3/2 - 2H``), equal ones merged."""
    return sorted({round(e, 12) for e in (2 * hurst, 2.5 - 2 * hurst, 4 - 4 * hurst)})


@register_regime
class SDE(Regime):
    """res-1 with Brownian (i.i.d. Gaussian) weights at ``beta = 1/2`` -> an Itô SDE."""

    name = "sde"
    network = "res-1, h + L^-1/2 V sigma(h)"
    limit = "Itô SDE dH = dX sigma(H) (torchsde)"
    weights = "Brownian increments (i.i.d. Gaussian)"
    scaling = "beta = 1/2"
    rate_text = "1/2"
    order = StrongOrder(0.5, "sigma Lipschitz with a Lipschitz derivative",
                        "Euler–Maruyama of an Itô SDE with general noise: strong order 1/2", kind="fluctuation",
                        next_terms=(Term(1.0),))
    defaults = dict(Regime.defaults, reference=8192)

    def accepts(self, block):
        """A block linear in every weight: driven by Brownian increments, the network is the
        Euler–Maruyama scheme of the Itô SDE ``dH = g(H, dX)`` (strong order 1/2)."""
        rest = [n for n in block.weights if n not in block.linear]
        if rest:
            return (f"the residual must be linear in every weight (Brownian increments drive them), and it is not "
                    f"declared linear in {', '.join(rest)}")
        return block.linearity()  # the declaration verified on random draws

    def accepts_driver(self, driver):
        """A Brownian path of one's own: coupled, on a fine grid, regularity 1/2, Gaussian, its
        samples ``'brownian'`` (:func:`~deeplimits.regimes.drivers.path_reason`)."""
        return path_reason(driver, kind="brownian", regularity=lambda r: r == 0.5, needs="regularity 1/2 (a "
                           "Brownian path; fractional paths: regime 'fbm', smooth ones: regime 'ode')",
                           limit="Itô SDE", gaussian=True)

    def build(self, width, activation, arch):
        from ..blocks import Res1
        from ..limits import SDELimit
        from ..networks import ResNet
        from ..pairs import Pair
        from ..paths import IIDDriver

        net = ResNet(arch, activation, beta=0.5)
        order = self.order
        if width == 1 and isinstance(net.block, Res1) and net.activation.name == "identity":  # dH = H dW: Kurtz-Protter
            order = dataclasses.replace(order, constant=math.sqrt(2) / math.pi, constant_source=(
                "Kurtz & Protter 1991: L^1/2 (h_L - H_1) -> H_1 B'_1 / sqrt(2), E|.| = E|h_0| sqrt(2/pi) / sqrt(2)"))
        drivers = {name: IIDDriver("gaussian") for name in net.block.weights}
        return Pair(self.name, width, net, SDELimit(arch=net.block), drivers, order)


@register_regime
class ODE(Regime):
    """res-1/2/3 with smooth (RBF Gaussian process) weights at ``beta = 1`` -> a neural ODE."""

    name = "ode"
    network = "res-1/2/3, h + L^-1 V g(h, W)"
    limit = "neural ODE dH = V(t) g(H, W(t)) dt (torchdiffeq)"
    weights = "smooth Gaussian process V(t) (and W(t))"
    scaling = "beta = 1"
    rate_text = "1"
    architectures = ("res-1", "res-2", "res-3")
    options = (LENGTH_SCALE,)
    spec_options = ()  # its specs predate the declarations: length_scale is recorded under 'options' when given
    order = StrongOrder(1.0, "smooth weights, Lipschitz g", "right-point Euler scheme of a neural ODE: order 1",
                        next_terms=(Term(2.0), Term(3.0)), remainder=Term(4.0))
    defaults = dict(Regime.defaults, draws=64)

    def accepts(self, block):
        """Any block: with smooth weights ``w(t)`` the network is the right-point Euler scheme of
        ``dH/dt = g(H, w(t))`` (order 1 for a ``g`` smooth in ``h`` and ``w``)."""
        return None

    def accepts_driver(self, driver):
        """A smooth law of one's own: coupled, regularity 1, its samples ``'smooth'`` (read at any
        time; :func:`~deeplimits.regimes.drivers.smooth_reason`)."""
        return smooth_reason(driver, kind="smooth", limit="neural ODE")

    def driver_options(self, driver, options):
        """``length_scale`` sets the regime's own smooth law: refused beside a driver of one's own."""
        if options.get("length_scale") is not None:
            raise ParameterError("length_scale", f"length_scale sets regime 'ode''s own smooth weights; with driver "
                                                 f"{driver.name!r} the law is the driver's (omit length_scale)")
        return options

    def build(self, width, activation, arch, length_scale):
        from ..limits import ODELimit
        from ..networks import ResNet
        from ..pairs import Pair
        from ..paths import SmoothDriver

        drv = SmoothDriver(length_scale)
        net = ResNet(arch, activation, beta=1.0)
        drivers = {name: drv for name in net.block.required}
        return Pair(self.name, width, net, ODELimit(net.block), drivers, self.order)


@register_regime
class FBM(Regime):
    """res-1 with fractional Brownian weights (``H`` in (1/2, 1)) at ``beta = H`` -> a Young
    equation; ``corrected=True`` builds the modified Euler network instead."""

    name = "fbm"
    network = "res-1, h + L^-H V sigma(h) (corrected: + the mean second-order term)"
    limit = "Young equation dH = dX sigma(H) driven by fBm"
    weights = "fractional Brownian increments, Hurst index H"
    scaling = "beta = H"
    rate_text = "2H - 1; corrected: min(1, 2H - 1/2), `L^-1 sqrt(log L)` at H = 3/4"
    options = (dataclasses.replace(YOUNG_HURST, required=True),
               Option("corrected", bool, default=False,
                      help="use the modified Euler network of Hu, Liu & Nualart (2016)",
                      off="use the Euler network"))
    defaults = dict(Regime.defaults, width=8, reference=8192)

    def accepts_driver(self, driver):
        """A fractional path of one's own: coupled, on a fine grid, regularity ``H`` in (1/2, 1),
        its samples ``'fractional'`` (:func:`~deeplimits.regimes.drivers.path_reason`)."""
        return path_reason(driver, kind="fractional", regularity=lambda r: 0.5 < r < 1.0,
                           needs="a Hurst index H in (1/2, 1) (Brownian paths: regime 'sde')", limit="Young equation")

    def driver_options(self, driver, options):
        """``hurst`` is the driver's regularity (given as well, it must be the same)."""
        h = options.get("hurst")
        if h is not None and abs(float(h) - float(driver.regularity)) > 1e-12:
            raise ParameterError("hurst", f"hurst {h:g} is not the Hurst index of driver {driver.name!r} (its regularity "
                                          f"{driver.regularity:g}): the Young limit's is the driver's (omit hurst)")
        return {**options, "hurst": float(driver.regularity)}

    def strong_order(self, hurst, corrected=False, **_):
        if not corrected:  # the Euler-only terms: L^(1-2H) and its square L^(2-4H), at every H, and the
            # modified Euler ones up to L^-1 (above H = 3/4 its next, L^(2-4H), is the Euler term's square)
            own = (Term(2 * hurst - 1, 0.0, "unshared"), Term(4 * hurst - 2, 0.0, "unshared"))
            return StrongOrder.of((*own, *modified_euler_terms(hurst)[:2]), "H in (1/2, 1)", _EULER_FBM_NOTE)
        note = ("modified Euler scheme (Hu, Liu & Nualart, Ann. Appl. Probab. 2016): order 2H - 1/2 for "
                "H < 3/4, 1 for H > 3/4")
        if abs(hurst - 0.75) < 1e-9:
            return StrongOrder.of(modified_euler_terms(hurst), "H = 3/4", note + "; at H = 3/4 exactly L^-1 "
                                  "sqrt(log L): the slope over practical depths is below 1 (the profile test "
                                  "reads the exponent of that law)", modified_euler_remainder(hurst))
        return StrongOrder.of(modified_euler_terms(hurst), "H in (1/2, 1), H != 3/4", note,
                              modified_euler_remainder(hurst))

    def build(self, width, activation, arch, hurst, corrected):
        from ..limits import YoungLimit
        from ..networks import ModifiedEulerResNet, ResNet
        from ..pairs import Pair
        from ..paths import FractionalDriver

        net = ModifiedEulerResNet(activation, hurst) if corrected else ResNet("res-1", activation, beta=hurst)
        order = self.strong_order(hurst, corrected)
        if width == 1 and net.activation.name == "identity" and not corrected:  # dH = H dB^H
            order = dataclasses.replace(order, constant=0.5 * math.sqrt(2 / math.pi) * math.exp(0.5),
                                        constant_next=young_constant_terms(hurst), constant_source=(
                "Neuenkirch & Nourdin 2007: L^(2H-1) (H_1 - h_L) -> H_1 / 2, E|.| = E|h_0| e^(1/2) / 2; next terms "
                "(docs/mathematics.md, 'Error constants'): (1 - e^(-x/2)) / (x/2) with x = L^(1-2H), the tilt "
                "K_H L^(2H-2) of E e^B Q and -2/L of the cubes"))
        return Pair(self.name, width, net, YoungLimit(net.activation, hurst), {"V": FractionalDriver(hurst)},
                    order, options={"hurst": hurst, "corrected": corrected})
