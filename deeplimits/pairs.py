"""Pairs: a discrete residual network with its continuous-time limit, SPEC §3.

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
"""

from __future__ import annotations

import dataclasses

import torch

from . import _validate as V_
from .drivers import DriverSample, FractionalDriver, IIDDriver, SmoothDriver
from .limits import ODELimit, SDELimit, YoungLimit
from .networks import ModifiedEulerResNet, ResNet

__all__ = ["pair", "Pair", "PairSample", "PairSolution", "REGIMES"]

REGIMES = ("sde", "ode", "fbm")
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
        return getattr(self.weights["V"], "resolution", None)


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
            resolution = DEFAULT_RESOLUTION if self.regime != "ode" else None
        elif self.regime != "ode":
            resolution = V_.power_of_two("resolution", resolution)
        d = self.width
        weights = {name: drv.sample((d, d), draws=draws, resolution=resolution, generator=generator, dtype=dtype)
                   for name, drv in self.drivers.items()}
        h0 = torch.randn(draws, inputs, d, generator=generator, dtype=dtype)
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
        shared = self._limit(sample, h0, top) if all(top % L == 0 for L in depths) else None
        out = []
        for L in depths:
            net = self.network.forward(h0, **{k: s.weights(L) for k, s in sample.weights.items()}, depth=L).states
            lim = shared[:: top // L] if shared is not None else self._limit(sample, h0, L)
            if net.dim() == 3:  # h0 given as (draws, width)
                net = net.unsqueeze(-2)
            times = torch.arange(L + 1, dtype=torch.float64) / L
            out.append(PairSolution(self.regime, L, times, net, lim, self.theory_rate))
        return out

    def _limit(self, sample, h0, depth):
        w = sample.weights
        if self.regime == "ode":
            return self.limit.solve(h0, w["V"], depth, W=w.get("W"))
        return self.limit.solve(h0, w["V"], depth)

    def __repr__(self) -> str:
        h = "" if self.hurst is None else f", hurst={self.hurst}"
        return (f"Pair(regime={self.regime!r}, width={self.width}, arch={self.network.arch!r}, "
                f"activation={self.network.activation.name!r}, beta={self.beta}{h}, "
                f"theory_rate={self.theory_rate:g})")


def pair(regime: str, *, width: int, activation=None, arch: str | None = None, hurst: float | None = None,
         corrected: bool = False, length_scale: float | None = None) -> Pair:
    """Build the (network, limit) pair of a regime of SPEC §3.

    Args:
        regime: ``'sde'``, ``'ode'`` or ``'fbm'``.
        width: hidden width ``d >= 1``.
        activation: name or callable (default ``tanh``; ReLU for ``res-3``).
        arch: residual map; ``'res-1'`` for sde and fbm, any of res-1/2/3 for ode.
        hurst: Hurst index in (1/2, 1), required by (and only by) the fbm regime.
        corrected: fbm only: use the modified Euler network (rate ``min(1, 2H - 1/2)``).
        length_scale: RBF length scale of the smooth weights (ode regime only; default 0.1).

    Returns:
        A :class:`Pair` whose ``theory_rate`` is the exponent of the strong error.
    """
    regime = V_.choice("regime", regime, REGIMES)
    width = V_.integer("width", width)
    if not isinstance(corrected, bool):
        raise ValueError(f"corrected must be True or False, got {corrected!r}")
    if hurst is not None and regime != "fbm":
        raise ValueError(f"hurst applies only to regime 'fbm', not {regime!r}")
    if corrected and regime != "fbm":
        raise ValueError(f"corrected applies only to regime 'fbm', not {regime!r}")
    if length_scale is not None and regime != "ode":
        raise ValueError(f"length_scale applies only to regime 'ode', not {regime!r}")
    if regime in ("sde", "fbm") and arch not in (None, "res-1"):
        raise ValueError(f"arch must be 'res-1' for regime {regime!r}, got {arch!r}")

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
