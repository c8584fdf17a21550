"""Pairs: a discrete residual network with its continuous-time limit (docs/mathematics.md).

The pair is the only place where a network and its limit meet. Both read the SAME driver
sample, so their trajectories on the grid ``k / L`` can be compared path by path, and the
pair carries the strong order its regime declares. Pairs are built by :func:`deeplimits.pair`
from the regime registry (:mod:`deeplimits.regimes`, which lists the regimes and their rates).
"""

from __future__ import annotations

import dataclasses

import torch

from . import _resources as R_
from . import _validate as V_
from ._random import randn
from .errors import ParameterError
from .orders import StrongOrder
from .paths import DriverSample

__all__ = ["Pair", "InsidePair", "PairSample", "PairSolution"]

DEFAULT_RESOLUTION = 4096


@dataclasses.dataclass
class PairSample:
    """One draw of everything random in a pair: driver samples by weight name and inputs
    ``h0`` of shape ``(draws, inputs, width)``."""

    weights: dict[str, DriverSample]
    """The driver samples by weight name."""
    h0: torch.Tensor
    """The inputs, ``(draws, inputs, width)``."""

    @property
    def draws(self) -> int:
        """The number of independent draws."""
        return self.h0.shape[0]

    @property
    def resolution(self) -> int | None:
        """The finest grid of the rough (path) drivers, ``None`` when every driver is smooth."""
        return next((s.resolution for s in self.weights.values() if s.rough), None)

    @property
    def device(self) -> torch.device:
        """Where the sample lives (that of its inputs ``h0`` and of every driver sample)."""
        return self.h0.device

    def to(self, device) -> "PairSample":
        """The same draws on ``device`` (:meth:`DriverSample.to <deeplimits.paths.DriverSample.to>`:
        a path drawn from a seed keeps its numbers)."""
        return PairSample({name: s.to(device) for name, s in self.weights.items()}, self.h0.to(device))


@dataclasses.dataclass
class PairSolution:
    """Both trajectories on the grid ``times = k / depth``, each ``(depth + 1, draws, inputs, width)``."""

    regime: str
    """The regime's registry name."""
    depth: int
    """The network's depth ``L``."""
    times: torch.Tensor
    """The grid ``k / depth``, ``k = 0..depth``."""
    network: torch.Tensor
    """The network's hidden states ``h_k``."""
    limit: torch.Tensor
    """The limit ``H_{k/L}`` on the same grid."""
    theory_rate: float
    """The exponent of ``L`` in the declared strong order."""

    def strong_error(self) -> torch.Tensor:
        """``max_k ||H_{k/L} - h_k||`` per (draw, input): shape ``(draws, inputs)``."""
        return (self.limit - self.network).norm(dim=-1).amax(dim=0)

    def terminal_error(self) -> torch.Tensor:
        """``||H_1 - h_L||`` per (draw, input)."""
        return (self.limit[-1] - self.network[-1]).norm(dim=-1)


def _times_dtype(h0: torch.Tensor) -> torch.dtype:
    """float64 for the times ``k / L``, except on a device without it (MPS: the states' dtype)."""
    return h0.dtype if h0.device.type == "mps" else torch.float64


class Pair:
    """A network, its limit, the drivers of its weights and its theoretical strong rate.

    Build it with :func:`deeplimits.pair`. Attributes: ``regime`` (the registry name),
    ``width``, ``network`` (:class:`~deeplimits.networks.ResNet`), ``limit`` (a
    :class:`~deeplimits.limits.Limit`), ``drivers`` (weight name ->
    :class:`~deeplimits.paths.Driver`), ``order`` (the declared
    :class:`~deeplimits.regimes.StrongOrder`) and ``options`` (the regime's resolved options).
    """

    def __init__(self, regime: str, width: int, network, limit, drivers: dict, order: StrongOrder,
                 options: dict | None = None):
        self.regime, self.width, self.network, self.limit = regime, width, network, limit
        self.drivers, self.order, self.options = drivers, order, dict(options or {})

    @property
    def theory_rate(self) -> float:
        """The exponent of ``L`` in the declared strong order."""
        return self.order.rate

    @property
    def rate_note(self) -> str:
        """Where the declared order comes from and what to expect at practical depths."""
        return self.order.note

    @property
    def hurst(self) -> float | None:
        """The Hurst index of the regime's options (``None`` without one)."""
        return self.options.get("hurst")

    @property
    def beta(self) -> float:
        """The network's scaling exponent (``alpha_L = L^-beta``)."""
        return self.network.beta

    @property
    def rough(self) -> bool:
        """Whether some weights are read off a rough (Brownian or fractional) path sample."""
        return any(drv.needs_resolution for drv in self.drivers.values())

    def _weight_layout(self, name: str) -> tuple[tuple[int, ...], float | None]:
        """Shape of one layer's weight ``name`` (declared by :func:`~deeplimits.networks.weight_shape`)
        and its entry scale (``None``: the driver's default)."""
        return self.network.block.shape(name, self.width), None

    def sample(self, draws: int, *, inputs: int = 1, resolution: int | None = None,
               generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64,
               device=None) -> PairSample:
        """Draw ``draws`` independent (weights, inputs) samples; inputs ``h0 ~ N(0, I_width)``.

        ``resolution`` (a power of two, default 4096) is the finest grid of rough drivers:
        every depth dividing it is coupled, and the limit is solved on it. ``device`` (default
        the CPU) is where every number is drawn and kept (:mod:`deeplimits._random`); the
        solutions of :meth:`solve` live where ``h0`` does.
        """
        draws = V_.integer("draws", draws)
        inputs = V_.integer("inputs", inputs)
        V_.dtype(dtype)
        V_.generator(generator)
        device = V_.device("device", device, dtype)
        if resolution is None:
            resolution = DEFAULT_RESOLUTION if self.rough else None
        elif self.rough:
            resolution = V_.power_of_two("resolution", resolution)
        item = torch.empty((), dtype=dtype).element_size()
        R_.require_memory(item * draws * inputs * self.width, f"for the inputs h0 ({draws} draws x {inputs} inputs x "
                          f"width {self.width})", ("draws", "inputs", "width"), device=device)
        weights = {}
        for name, drv in self.drivers.items():
            shape, scale = self._weight_layout(name)
            res = resolution if drv.needs_resolution or not self.rough else None  # smooth: refuses one
            weights[name] = drv.sample(shape, draws=draws, resolution=res, generator=generator, dtype=dtype,
                                       scale=scale, device=device)
        h0 = randn((draws, inputs, self.width), generator, dtype, device)
        return PairSample(weights, h0)

    def solve(self, sample: PairSample, depth: int, *, h0: torch.Tensor | None = None) -> PairSolution:
        """The network of depth ``depth`` and the limit on ``k / depth``, from one sample."""
        return self.solve_depths(sample, [V_.integer("depth", depth)], h0=h0)[0]

    def solve_depths(self, sample: PairSample, depths, *, h0: torch.Tensor | None = None) -> list[PairSolution]:
        """:meth:`solve` for several depths of one sample. The limit does not depend on the
        depth: when every depth divides the largest, it is solved once on the finest grid."""
        if not isinstance(sample, PairSample):
            raise ParameterError("sample", "sample must be a PairSample from Pair.sample(...)")
        if isinstance(depths, int) or not hasattr(depths, "__iter__"):
            raise ParameterError("depths", f"depths must be a list of depths >= 1, got {depths!r}")
        depths = [V_.integer("depths", L) for L in depths]
        if not depths:
            raise ParameterError("depths", "depths must be a non-empty list of depths >= 1")
        if sample.resolution is not None:
            for L in depths:
                V_.divides("depth", L, sample.resolution)
        h0 = sample.h0 if h0 is None else h0
        if isinstance(h0, torch.Tensor) and h0.device != sample.device:
            raise ParameterError("h0", f"h0 must be on the sample's device ({sample.device}), got {h0.device}")
        top = max(depths)
        shared = self.solve_limit(sample, h0, top) if all(top % L == 0 for L in depths) else None
        out = []
        for L in depths:
            net = self._network_states(sample, h0, L)
            lim = shared[:: top // L] if shared is not None else self.solve_limit(sample, h0, L)
            if net.dim() == 3:  # h0 given as (draws, width)
                net = net.unsqueeze(-2)
            times = (torch.arange(L + 1, dtype=torch.float64) / L).to(h0.device, _times_dtype(h0))
            out.append(PairSolution(self.regime, L, times, net, lim, self.theory_rate))
        return out

    def _network_states(self, sample, h0, depth):
        return self.network.forward(h0, **{k: s.weights(depth) for k, s in sample.weights.items()}, depth=depth).states

    def solve_limit(self, sample: PairSample, h0: torch.Tensor, depth: int) -> torch.Tensor:
        """The limit on the grid ``k / depth`` from the sample's weights (the reference
        solve: torchsde / modified Euler on the finest grid, or the adaptive ODE solve)."""
        return self.limit.solve_sample(h0, sample.weights, depth)

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
        return self.limit.reference_step(sample.weights, steps)

    def __repr__(self) -> str:
        h = "" if self.hurst is None else f", hurst={self.hurst}"
        return (f"Pair(regime={self.regime!r}, width={self.width}, arch={self.network.arch!r}, "
                f"activation={self.network.activation.name!r}, beta={self.beta}{h}, "
                f"theory_rate={self.theory_rate:g})")


class InsidePair(Pair):
    """The inside model ``h_{k+1} = h_k + L^-alpha sigma(A_k h_k + b_k)`` with its limit.

    ``A_k`` and ``b_k`` are assembled from the driver parts of layer ``k`` (weight names ``W``
    and ``b`` for the main parts, ``W_drift`` and ``b_drift`` for the smooth drift part of the
    inside-SDE, ``W_noise`` and ``b_noise`` for the Brownian part of the inside-ODE's weights): a
    Brownian part enters as its raw increment (entries ``N(0, s^2 / L)``, ``s`` times ``noise`` for a
    ``*_noise`` part), a smooth part ``A(t)`` as ``L^-beta A(t)`` at the layer's right end ``t = k / L``.

    Extra attributes: ``alpha`` (outer exponent), ``beta`` (exponent of the smooth part; ``None``
    for an inside-SDE without drift), ``sa``, ``sb`` (entry scales), ``ito_correction``,
    ``derivatives`` (``sigma''(0)``, ``sigma'''(0)``, ... by automatic differentiation), ``noise``
    (the entry scale of the Brownian part, in units of ``sa`` and ``sb``; 0: none).
    """

    noise: float = 0.0
    """The entry scale of the Brownian part of the inside-ODE's weights (set by its regime's build)."""

    def __init__(self, regime, width, network, limit, drivers, order, *, alpha, beta, sa, sb,
                 ito_correction, derivatives):
        super().__init__(regime, width, network, limit, drivers, order,
                         {"alpha": None, "beta": beta, "sa": sa, "sb": sb, "ito_correction": ito_correction})
        self.alpha, self._beta, self.sa, self.sb = alpha, beta, sa, sb
        self.ito_correction, self.derivatives = ito_correction, derivatives

    @property
    def beta(self) -> float | None:
        return self._beta

    def _weight_layout(self, name):
        scale = self.sa if name.startswith("W") else self.sb
        return self.network.block.weight_shape(name, self.width), scale * (self.noise if name.endswith("_noise") else 1)

    def _layer(self, depth, parts):
        """``{'W': A_k, 'b': b_k}`` from the driver parts (one layer, or stacked layers)."""
        scale = None if self._beta is None else float(depth) ** -self._beta
        out = {}
        for name, x in parts.items():
            if not self.drivers[name].needs_resolution:  # a smooth part: L^-beta A(t)
                x = scale * x
            key = name.removesuffix("_drift").removesuffix("_noise")
            out[key] = x if key not in out else out[key] + x
        return out

    def _network_states(self, sample, h0, depth):
        parts = {k: s.parts(depth) for k, s in sample.weights.items()}
        return self.network.forward(h0, **self._layer(depth, parts), depth=depth).states

    def layer_step(self, depth):
        alpha = float(depth) ** -self.alpha
        step, layer = self.network.step, self._layer
        return lambda h, parts: step(h, alpha, depth, **layer(depth, parts))

    def __repr__(self) -> str:
        b = "" if self._beta is None else f", beta={self._beta:g}"
        ito = "" if self.ito_correction else ", ito_correction=False"
        noise = f", noise={self.noise:g}" if self.noise else ""
        return (f"InsidePair(regime={self.regime!r}, width={self.width}, activation={self.network.activation.name!r}, "
                f"alpha={self.alpha:g}{b}, sa={self.sa:g}, sb={self.sb:g}{ito}{noise}, theory_rate={self.theory_rate:g})")
