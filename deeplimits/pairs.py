"""Pairs: a discrete residual network with its continuous-time limit (docs/mathematics.md).

The pair is the only place where a network and its limit meet. Both read the SAME driver
sample, so their trajectories on the grid ``k / L`` can be compared path by path, and the
pair declares the theoretical strong rate of ``E max_k ||H_{k/L} - h_k||``.

=======  =====================================  ========  ===========================  ==============
regime   network                                beta      limit                        strong rate
=======  =====================================  ========  ===========================  ==============
sde      res-1, Brownian (Gaussian i.i.d.)      1/2       Itô SDE (torchsde)           1/2
ode      res-1/2/3, smooth V (and W)            1         neural ODE (torchdiffeq)     1
fbm      res-1, fractional (H > 1/2)            H         Young equation               2H - 1
=======  =====================================  ========  ===========================  ==============

and the inside model ``h_{k+1} = h_k + L^-alpha sigma(A_k h_k + b_k)`` (:class:`InsidePair`):

==========  ===========================================  ===============================  =======================
regime      weights                                      limit                            strong rate
==========  ===========================================  ===============================  =======================
inside-sde  Brownian increments (+ L^-beta smooth part)  Itô SDE with an Itô drift (EM)   1/2
inside-ode  L^-beta x smooth, alpha + beta = 1           linear ODE (torchdiffeq)         min(1, (m-1) beta) [1]_
==========  ===========================================  ===============================  =======================

.. [1] ``m`` is the order of the first non-zero derivative ``sigma^(m)(0)``, ``m >= 2``:
   ``beta`` if ``sigma''(0) != 0``, ``min(1, 2 beta)`` for tanh.
"""

from __future__ import annotations

import dataclasses

import torch

from . import _resources as R_
from . import _validate as V_
from .paths import DriverSample, FractionalDriver, IIDDriver, PathSample, SmoothDriver
from .limits import (DEFAULT_SA, DEFAULT_SB, InsideODELimit, InsideSDELimit, ODELimit, SDELimit,
                     YoungLimit)
from .networks import ModifiedEulerResNet, ResNet

__all__ = ["pair", "Pair", "InsidePair", "PairSample", "PairSolution", "REGIMES", "INSIDE_REGIMES"]

INSIDE_REGIMES = ("inside-sde", "inside-ode")
REGIMES = ("sde", "ode", "fbm") + INSIDE_REGIMES
DEFAULT_RESOLUTION = 4096


@dataclasses.dataclass
class PairSample:
    """One draw of everything random in a pair: driver samples by weight name and inputs
    ``h0`` of shape ``(draws, inputs, width)``."""

    weights: dict[str, DriverSample]
    h0: torch.Tensor

    @property
    def draws(self) -> int:
        return self.h0.shape[0]

    @property
    def resolution(self) -> int | None:
        """The finest grid of the rough (path) drivers, ``None`` when every driver is smooth."""
        return next((s.resolution for s in self.weights.values() if isinstance(s, PathSample)), None)


@dataclasses.dataclass
class PairSolution:
    """Both trajectories on the grid ``times = k / depth``, each ``(depth + 1, draws, inputs, width)``."""

    regime: str
    depth: int
    times: torch.Tensor
    network: torch.Tensor
    limit: torch.Tensor
    theory_rate: float

    def strong_error(self) -> torch.Tensor:
        """``max_k ||H_{k/L} - h_k||`` per (draw, input): shape ``(draws, inputs)``."""
        return (self.limit - self.network).norm(dim=-1).amax(dim=0)

    def terminal_error(self) -> torch.Tensor:
        """``||H_1 - h_L||`` per (draw, input)."""
        return (self.limit[-1] - self.network[-1]).norm(dim=-1)


class Pair:
    """A network, its limit, the drivers of its weights and its theoretical strong rate.

    Build it with :func:`pair`. Attributes: ``regime``, ``width``, ``network``
    (:class:`~deeplimits.networks.ResNet`), ``limit``, ``drivers`` (weight name ->
    :class:`~deeplimits.drivers.Driver`), ``theory_rate``, ``rate_note``, ``hurst``.
    """

    def __init__(self, regime, width, network, limit, drivers, theory_rate, rate_note, hurst=None):
        self.regime, self.width, self.network, self.limit = regime, width, network, limit
        self.drivers, self.theory_rate, self.rate_note, self.hurst = drivers, theory_rate, rate_note, hurst

    @property
    def beta(self) -> float:
        return self.network.beta

    @property
    def rough(self) -> bool:
        """Whether some weights are read off a rough (Brownian or fractional) path sample."""
        return any(drv.needs_resolution for drv in self.drivers.values())

    def _weight_layout(self, name: str) -> tuple[tuple[int, ...], float | None]:
        """Shape of one layer's weight ``name`` and its entry scale (``None``: the driver's default)."""
        return (self.width, self.width), None

    def sample(self, draws: int, *, inputs: int = 1, resolution: int | None = None,
               generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64) -> PairSample:
        """Draw ``draws`` independent (weights, inputs) samples; inputs ``h0 ~ N(0, I_width)``.

        ``resolution`` (a power of two, default 4096) is the finest grid of rough drivers:
        every depth dividing it is coupled, and the limit is solved on it.
        """
        draws = V_.integer("draws", draws)
        inputs = V_.integer("inputs", inputs)
        V_.dtype(dtype)
        V_.generator(generator)
        if resolution is None:
            resolution = DEFAULT_RESOLUTION if self.rough else None
        elif self.rough:
            resolution = V_.power_of_two("resolution", resolution)
        item = torch.empty((), dtype=dtype).element_size()
        R_.require_memory(item * draws * inputs * self.width, f"for the inputs h0 ({draws} draws x {inputs} inputs x "
                          f"width {self.width})", ("draws", "inputs", "width"))
        weights = {}
        for name, drv in self.drivers.items():
            shape, scale = self._weight_layout(name)
            res = resolution if drv.needs_resolution or not self.rough else None  # smooth: refuses one
            weights[name] = drv.sample(shape, draws=draws, resolution=res, generator=generator, dtype=dtype,
                                       scale=scale)
        h0 = torch.randn(draws, inputs, self.width, generator=generator, dtype=dtype)
        return PairSample(weights, h0)

    def solve(self, sample: PairSample, depth: int, *, h0: torch.Tensor | None = None) -> PairSolution:
        """The network of depth ``depth`` and the limit on ``k / depth``, from one sample."""
        return self.solve_depths(sample, [V_.integer("depth", depth)], h0=h0)[0]

    def solve_depths(self, sample: PairSample, depths, *, h0: torch.Tensor | None = None) -> list[PairSolution]:
        """:meth:`solve` for several depths of one sample. The limit does not depend on the
        depth: when every depth divides the largest, it is solved once on the finest grid."""
        if not isinstance(sample, PairSample):
            raise ValueError("sample must be a PairSample from Pair.sample(...)")
        if isinstance(depths, int) or not hasattr(depths, "__iter__"):
            raise ValueError(f"depths must be a list of depths >= 1, got {depths!r}")
        depths = [V_.integer("depths", L) for L in depths]
        if not depths:
            raise ValueError("depths must be a non-empty list of depths >= 1")
        if sample.resolution is not None:
            for L in depths:
                V_.divides("depth", L, sample.resolution)
        h0 = sample.h0 if h0 is None else h0
        top = max(depths)
        shared = self.solve_limit(sample, h0, top) if all(top % L == 0 for L in depths) else None
        out = []
        for L in depths:
            net = self._network_states(sample, h0, L)
            lim = shared[:: top // L] if shared is not None else self.solve_limit(sample, h0, L)
            if net.dim() == 3:  # h0 given as (draws, width)
                net = net.unsqueeze(-2)
            times = torch.arange(L + 1, dtype=torch.float64) / L
            out.append(PairSolution(self.regime, L, times, net, lim, self.theory_rate))
        return out

    def _network_states(self, sample, h0, depth):
        return self.network.forward(h0, **{k: s.weights(depth) for k, s in sample.weights.items()}, depth=depth).states

    def solve_limit(self, sample: PairSample, h0: torch.Tensor, depth: int) -> torch.Tensor:
        """The limit on the grid ``k / depth`` from the sample's weights (the reference
        solve: torchsde / modified Euler on the finest grid, or the adaptive ODE solve)."""
        w = sample.weights
        if self.regime == "ode":
            return self.limit.solve(h0, w["V"], depth, W=w.get("W"))
        return self.limit.solve(h0, w["V"], depth)

    # -- hooks of the one-pass convergence engine -----------------------------------------
    def layer_step(self, depth: int):
        """One layer of the network of depth ``depth`` as ``f(h, parts)``, where ``parts`` maps
        weight names to the layer's driver parts: the raw increment ``X_{k/L} - X_{(k-1)/L}``
        of a path driver, the value at the layer's time ``k/L`` of a smooth one."""
        drv = next(iter(self.drivers.values()))
        alpha = float(depth) ** ((drv.regularity if drv.needs_resolution else 0.0) - self.network.beta)
        step = self.network.step
        return lambda h, parts: step(h, alpha, depth, **parts)

    def reference_step(self, sample: PairSample, steps: int):
        """One step of size ``1 / steps`` of the limit's scheme as ``f(H, parts)`` (parts of the
        fine grid, as for :meth:`layer_step`), or ``None`` when the limit is solved adaptively
        (:meth:`solve_limit`)."""
        if not self.rough:
            return None
        scheme = self.limit.scheme(sample.weights["V"].scale) if self.regime == "fbm" else self.limit.scheme()
        return lambda H, parts: scheme.step(H, 1.0, steps, **parts)

    def __repr__(self) -> str:
        h = "" if self.hurst is None else f", hurst={self.hurst}"
        return (f"Pair(regime={self.regime!r}, width={self.width}, arch={self.network.arch!r}, "
                f"activation={self.network.activation.name!r}, beta={self.beta}{h}, "
                f"theory_rate={self.theory_rate:g})")


class InsidePair(Pair):
    """The inside model ``h_{k+1} = h_k + L^-alpha sigma(A_k h_k + b_k)`` with its limit.

    ``A_k`` and ``b_k`` are assembled from the driver parts of layer ``k`` (weight names ``W``
    and ``b`` for the main parts, ``W_drift`` and ``b_drift`` for the smooth drift part of the
    inside-SDE): a Brownian part enters as its raw increment (entries ``N(0, s^2 / L)``), a
    smooth part ``A(t)`` as ``L^-beta A(t)`` at the layer's right end ``t = k / L``.

    Extra attributes: ``alpha`` (outer exponent), ``beta`` (exponent of the smooth part; ``None``
    for an inside-SDE without drift), ``sa``, ``sb`` (entry scales), ``ito_correction``,
    ``derivatives`` (``sigma''(0)``, ``sigma'''(0)``, ... by automatic differentiation).
    """

    def __init__(self, regime, width, network, limit, drivers, theory_rate, rate_note, *, alpha, beta, sa, sb,
                 ito_correction, derivatives):
        super().__init__(regime, width, network, limit, drivers, theory_rate, rate_note)
        self.alpha, self._beta, self.sa, self.sb = alpha, beta, sa, sb
        self.ito_correction, self.derivatives = ito_correction, derivatives

    @property
    def beta(self) -> float | None:
        return self._beta

    def _weight_layout(self, name):
        d = self.width
        return ((d, d), self.sa) if name.startswith("W") else ((d,), self.sb)

    def _layer(self, depth, parts):
        """``{'W': A_k, 'b': b_k}`` from the driver parts (one layer, or stacked layers)."""
        scale = None if self._beta is None else float(depth) ** -self._beta
        out = {}
        for name, x in parts.items():
            if not self.drivers[name].needs_resolution:  # a smooth part: L^-beta A(t)
                x = scale * x
            key = name.removesuffix("_drift")
            out[key] = x if key not in out else out[key] + x
        return out

    def _network_states(self, sample, h0, depth):
        parts = {k: s.increments(depth) if isinstance(s, PathSample) else s.weights(depth)
                 for k, s in sample.weights.items()}
        return self.network.forward(h0, **self._layer(depth, parts), depth=depth).states

    def _limit_parts(self, parts):
        """The parts the limit uses: the drift part only when it survives in the limit (beta = 1)."""
        return parts if self.limit_has_drift else {k: v for k, v in parts.items() if not k.endswith("_drift")}

    @property
    def limit_has_drift(self) -> bool:
        return self.regime == "inside-sde" and self._beta == 1.0

    def solve_limit(self, sample, h0, depth):
        w = sample.weights
        if self.regime == "inside-ode":
            return self.limit.solve(h0, w["W"], depth, b=w.get("b"))
        return self.limit.solve(h0, depth, **self._limit_parts(w))

    def layer_step(self, depth):
        alpha = float(depth) ** -self.alpha
        step, layer = self.network.step, self._layer
        return lambda h, parts: step(h, alpha, depth, **layer(depth, parts))

    def reference_step(self, sample, steps):
        if not self.rough:
            return None
        scheme = self.limit.scheme()
        keep = self._limit_parts
        return lambda H, parts: scheme.step(H, 1.0, steps, **keep(parts))

    def __repr__(self) -> str:
        b = "" if self._beta is None else f", beta={self._beta:g}"
        ito = "" if self.ito_correction else ", ito_correction=False"
        return (f"InsidePair(regime={self.regime!r}, width={self.width}, activation={self.network.activation.name!r}, "
                f"alpha={self.alpha:g}{b}, sa={self.sa:g}, sb={self.sb:g}{ito}, theory_rate={self.theory_rate:g})")


def pair(regime: str, *, width: int, activation=None, arch: str | None = None, hurst: float | None = None,
         corrected: bool = False, length_scale: float | None = None, alpha: float | None = None,
         beta: float | None = None, sa: float | None = None, sb: float | None = None,
         ito_correction: bool = True) -> Pair:
    """Build the (network, limit) pair of a regime (docs/mathematics.md, "The implemented regimes").

    Args:
        regime: ``'sde'``, ``'ode'``, ``'fbm'``, ``'inside-sde'`` or ``'inside-ode'``.
        width: hidden width ``d >= 1``.
        activation: name or callable (default ``tanh``; ReLU for ``res-3``; ``softplus0`` for the
            inside regimes, which need a C^3 activation with ``sigma(0) = 0``, ``sigma'(0) = 1``).
        arch: residual map; ``'res-1'`` for sde and fbm, any of res-1/2/3 for ode, ``'inside'``
            (the default) for the inside regimes.
        hurst: Hurst index in (1/2, 1), required by (and only by) the fbm regime.
        corrected: fbm only: use the modified Euler network (rate ``min(1, 2H - 1/2)``).
        length_scale: RBF length scale of the smooth weights (default 0.1): regimes ode,
            inside-ode, and inside-sde with a drift part (``beta`` given).
        alpha, beta: inside-ode: ``alpha + beta = 1`` with ``beta`` in (0, 1) (give either);
            inside-sde: ``beta >= 1``, the exponent of an optional smooth drift part
            ``L^-beta A(k/L)`` of the weights (``alpha`` is 0 there and may not be given).
        sa, sb: inside regimes: entry standard deviations of ``A`` and ``b`` (Brownian: per unit
            time, i.e. ``N(0, s^2 / L)`` increments; smooth: of ``A(t)``, ``b(t)``); ``sa > 0``,
            ``sb >= 0`` (0: no bias); defaults 0.25 and 1.
        ito_correction: inside-sde only: ``False`` drops the Itô correction from the limit (an
            ablation: the network does not converge to that equation).

    Returns:
        A :class:`Pair` (:class:`InsidePair` for the inside regimes) whose ``theory_rate`` is the
        exponent of the strong error.
    """
    regime = V_.choice("regime", regime, REGIMES)
    width = V_.integer("width", width)
    if not isinstance(corrected, bool):
        raise ValueError(f"corrected must be True or False, got {corrected!r}")
    if not isinstance(ito_correction, bool):
        raise ValueError(f"ito_correction must be True or False, got {ito_correction!r}")
    if hurst is not None and regime != "fbm":
        raise ValueError(f"hurst applies only to regime 'fbm', not {regime!r}")
    if corrected and regime != "fbm":
        raise ValueError(f"corrected applies only to regime 'fbm', not {regime!r}")
    smooth = ("ode", "inside-ode") + (("inside-sde",) if beta is not None else ())
    if length_scale is not None and regime not in smooth:
        raise ValueError(f"length_scale applies only to smooth weights (regimes 'ode', 'inside-ode', and "
                         f"'inside-sde' with beta), not to {regime!r}" + (" without beta" if regime == "inside-sde" else ""))
    for name, value, where in (("alpha", alpha, ("inside-ode",)), ("beta", beta, INSIDE_REGIMES),
                               ("sa", sa, INSIDE_REGIMES), ("sb", sb, INSIDE_REGIMES)):
        if value is not None and regime not in where:
            extra = " (inside-sde has alpha = 0)" if name == "alpha" and regime == "inside-sde" else ""
            raise ValueError(f"{name} applies only to regime{'s' if len(where) > 1 else ''} "
                             f"{' and '.join(map(repr, where))}, not {regime!r}{extra}")
    if not ito_correction and regime != "inside-sde":
        raise ValueError(f"ito_correction applies only to regime 'inside-sde', not {regime!r}")
    if regime in ("sde", "fbm") and arch not in (None, "res-1"):
        raise ValueError(f"arch must be 'res-1' for regime {regime!r}, got {arch!r}")
    if regime in INSIDE_REGIMES:
        if arch not in (None, "inside"):
            raise ValueError(f"arch must be 'inside' for regime {regime!r}, got {arch!r}")
        return _inside_pair(regime, width, activation, length_scale, alpha, beta, sa, sb, ito_correction)

    if regime == "sde":
        net = ResNet("res-1", activation, beta=0.5)
        return Pair(regime, width, net, SDELimit(net.activation), {"V": IIDDriver("gaussian")}, 0.5,
                    "Euler–Maruyama of an Itô SDE with general noise: strong order 1/2")
    if regime == "ode":
        arch = V_.choice("arch", arch or "res-1", ("res-1", "res-2", "res-3"))
        drv = SmoothDriver(0.1 if length_scale is None else length_scale)
        drivers = {"V": drv} if arch == "res-1" else {"V": drv, "W": drv}
        net = ResNet(arch, activation, beta=1.0)
        return Pair(regime, width, net, ODELimit(arch, net.activation), drivers, 1.0,
                    "right-point Euler scheme of a neural ODE: order 1")
    if hurst is None:
        raise ValueError("hurst must be given for regime 'fbm' (a Hurst index in (0.5, 1))")
    hurst = V_.hurst(hurst, above_half=True)
    net = ModifiedEulerResNet(activation, hurst) if corrected else ResNet("res-1", activation, beta=hurst)
    rate = min(1.0, 2 * hurst - 0.5) if corrected else 2 * hurst - 1
    note = ("asymptotic rate (Mishura 2008; Hu, Liu & Nualart 2016): in a width-d network the "
            "L^(1-2H) term carries a 1/d factor, so at practical depths the observed slope is often steeper")
    return Pair(regime, width, net, YoungLimit(net.activation, hurst), {"V": FractionalDriver(hurst)}, rate,
                note, hurst)


_ZERO = 1e-8  # a Taylor coefficient of sigma at 0 below this (in absolute value) counts as 0


def _inside_pair(regime, width, activation, length_scale, alpha, beta, sa, sb, ito_correction) -> InsidePair:
    where = f" for regime {regime!r}"
    sa = DEFAULT_SA if sa is None else V_.real("sa", sa, low=0.0, low_open=True, context=where)
    sb = DEFAULT_SB if sb is None else V_.real("sb", sb, low=0.0, context=where)
    if regime == "inside-ode":
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
        alpha = 1.0 - beta
    else:
        alpha = 0.0
        if beta is not None:
            beta = V_.real("beta", beta, low=1.0, context=where + " (the exponent of the smooth drift part)")
    net = ResNet("inside", "softplus0" if activation is None else activation, beta=alpha)
    derivs = V_.inside_activation(net.activation, regime=regime)
    c2 = derivs[0]
    smooth = SmoothDriver(0.1 if length_scale is None else length_scale)
    if regime == "inside-ode":
        drivers = {"W": smooth, "b": smooth}
        # the first neglected Taylor term sigma^(m)(0) u^m / m! costs L^-(m-1) beta globally
        m = next((k for k, c in enumerate(derivs, start=2) if abs(c) > _ZERO), None)
        rate = 1.0 if m is None else min(1.0, (m - 1) * beta)
        if m is None:
            note = ("sigma has no curvature at 0 (its derivatives of orders 2 to 5 vanish there): the network is "
                    "the right-point Euler scheme of its limit, order 1")
        else:
            note = (f"Taylor expansion of sigma at 0, sigma^({m})(0) = {derivs[m - 2]:.6g}: the first neglected term "
                    f"L^-alpha sigma^({m})(0) (L^-beta u)^{m} / {m}! per layer costs L^-{'' if m == 2 else m - 1}"
                    f"{'' if m == 2 else ' '}beta over depth, capped by the Euler rate 1 (at small depths the "
                    "two are mixed)")
        limit = InsideODELimit()
    else:
        drivers = {"W": IIDDriver("gaussian"), "b": IIDDriver("gaussian")}
        if beta is not None:
            drivers.update(W_drift=smooth, b_drift=smooth)
        if not ito_correction and abs(c2) > _ZERO:
            rate = 0.0
            note = ("ablation: without the Itô correction (1/2) sigma''(0) (s_A^2 |H|^2 + s_b^2) dt the equation "
                    "is not the limit of the network: the error stops decreasing")
        elif beta is not None and beta > 1:
            rate = min(0.5, beta - 1)
            note = ("Euler–Maruyama-type order 1/2; the drift part L^-beta A(k/L) adds L^(1-beta) over depth "
                    "and vanishes from the limit (beta > 1)")
        else:
            rate = 0.5
            note = ("order 1/2: the network differs from Euler–Maruyama of its limit by the centred "
                    "fluctuation of (1/2) sigma''(0) u^2, of size L^-1 per layer")
            if not ito_correction:
                note += " (sigma''(0) = 0: there is no Itô correction to drop)"
        limit = InsideSDELimit(net.activation, sa, sb, drift=beta == 1.0, ito_correction=ito_correction)
    if sb == 0:
        drivers = {k: v for k, v in drivers.items() if not k.startswith("b")}
    return InsidePair(regime, width, net, limit, drivers, rate, note, alpha=alpha, beta=beta, sa=sa, sb=sb,
                      ito_correction=ito_correction, derivatives=derivs)
