"""Weight laws as functions of depth ("drivers"), docs/mathematics.md, "Drivers".

A :class:`Driver` is a law of one random path on [0, 1] per weight entry. Its
:meth:`Driver.sample` draws a batch of independent paths (a :class:`DriverSample`), from which
the weights of a network of ANY depth are read. Networks of different depths read off one
sample are coupled: that coupling is what makes a strong (pathwise) error measurable.

Weights are returned with shape ``(depth, draws, *shape)`` and normalised so that
``weights / scale`` has unit-variance entries whatever the depth; ``scale`` defaults to
``1 / sqrt(shape[-1])`` (fan-in) for matrices and 1 for vectors (docs/mathematics.md).

Drivers declare their ``regularity``: 1/2 for i.i.d. (Brownian) weights, H for fractional
ones and 1 for smooth ones. For path drivers the depth-``L`` weights are
``L**regularity * (X_{k/L} - X_{(k-1)/L})`` for the scaled path ``X``.
"""

from __future__ import annotations

import abc
import math
from typing import Callable, Iterator

import torch

from .. import _resources as R
from .. import _validate as V
from ..errors import ParameterError

_BLOCK_ELEMENTS = 1 << 22  # elements of one lazily generated block of Brownian increments


def pair_sums(x: torch.Tensor, r: int) -> torch.Tensor:
    """Sums of ``r`` (a power of two) consecutive slices along dim 0, by pairwise halving
    (strided adds are several times faster than a reduction over a short axis)."""
    while r > 1:
        x = x[0::2] + x[1::2]
        r //= 2
    return x


KINDS = {
    "brownian": "a BrownianSample (IIDDriver('gaussian').sample(...))",
    "fractional": "a FractionalSample (FractionalDriver(hurst).sample(...))",
    "smooth": "a SmoothSample (SmoothDriver(length_scale).sample(...))",
    "iid": "an IIDSample (IIDDriver('uniform' or 'rademacher').sample(...))",
}
"""What each kind of sample is, and how to draw one (the one-line errors of the limits)."""


class DriverSample(abc.ABC):
    """A batch of ``draws`` independent weight paths, one per entry of a tensor of ``shape``.

    The one interface every consumer reads (pairs, limits, the convergence engine and the
    propagation studies), with no switch on the sample's type:

    * ``kind``: ``'brownian'``, ``'fractional'``, ``'iid'`` or ``'smooth'`` (:data:`KINDS`);
      :meth:`expect` checks it with one clear error;
    * ``rough``: increments on the grid ``k / resolution`` (Brownian, fractional) or not;
    * ``resolution``: the finest grid of a rough sample, ``None`` otherwise;
    * ``hurst``: the Hurst index of a rough path (1/2 for Brownian), ``None`` otherwise;
    * ``device``: where its numbers live (:class:`torch.device`);
    * :meth:`weights` / :meth:`iter_weights` (normalised layer weights, every kind),
      :meth:`increments` / :meth:`iter_increments` (rough), :meth:`at` (smooth: any time) and
      :meth:`parts` (a layer's driver part: the increment of a rough path, the value at ``k / L``
      of a smooth one).
    """

    regularity: float
    """The path's Hölder exponent: 1/2 (Brownian, i.i.d.), ``H`` (fractional), 1 (smooth)."""
    kind: str = ""
    """``'brownian'``, ``'fractional'``, ``'iid'`` or ``'smooth'`` (:data:`KINDS`)."""
    rough: bool = False
    """Increments on the grid ``k / resolution`` (Brownian, fractional), or not."""
    resolution: int | None = None
    """The finest grid of a rough sample, ``None`` otherwise."""
    hurst: float | None = None
    """The Hurst index of a rough path (1/2 for Brownian), ``None`` otherwise."""

    def __init__(self, shape: tuple[int, ...], draws: int, dtype: torch.dtype, scale: float, device=None):
        self.shape, self.draws, self.dtype, self.scale = shape, draws, dtype, scale
        self.device = torch.device("cpu" if device is None else device)
        """Where its numbers are delivered (:class:`torch.device`)."""
        self.home = self.device
        """Where the sample's random numbers are drawn (its numbers depend on it); :meth:`to` changes only
        where they are delivered."""

    def to(self, device) -> "DriverSample":
        """The same sample, the same numbers, with its weights delivered on ``device`` (a
        sample drawn lazily from a seed keeps drawing where it was drawn, then moves each chunk;
        the tensors of the others are moved)."""
        import copy

        device = V.device("device", device, self.dtype)
        out = copy.copy(self)
        out.device = device
        for name, value in vars(self).items():
            if isinstance(value, torch.Tensor):
                setattr(out, name, value.to(device))
        return out

    def _deliver(self, x: torch.Tensor) -> torch.Tensor:
        """A chunk drawn on :attr:`home`, where the sample delivers its weights."""
        return x if self.home == self.device else x.to(self.device)

    @abc.abstractmethod
    def iter_weights(self, depth: int) -> Iterator[torch.Tensor]:
        """The depth-``depth`` weights as chunks ``(c, draws, *shape)`` of consecutive layers."""

    def weights(self, depth: int) -> torch.Tensor:
        """The weights ``(depth, draws, *shape)`` of the network of depth ``depth`` (refused
        before any allocation when they cannot fit, :meth:`layers_bytes`)."""
        self._require_layers(depth, "weights")
        return torch.cat(list(self.iter_weights(depth)), dim=0)

    def layers_bytes(self, depth: int, copies: int = 2) -> int:
        """Peak bytes of reading ``depth`` layers at once (:meth:`weights`, :meth:`increments`):
        the streamed chunks and their concatenation, ``copies`` tensors of ``(depth, draws,
        *shape)`` (three for :meth:`PathSample.path`, which adds the running sum)."""
        return copies * depth * self.draws * math.prod(self.shape) * self.dtype.itemsize

    def _require_layers(self, depth: int, what: str, copies: int = 2) -> int:
        """``depth`` checked (a divisor of the resolution for a rough sample), at most
        :data:`~deeplimits._resources.MAX_STEPS` layers, and its layers fitting in memory."""
        depth = V.divides("depth", depth, self.resolution) if self.rough else V.integer("depth", depth)
        R.require_count(depth, R.MAX_STEPS, f"depth={depth} makes too many layers to read at once", ("depth",))
        R.require_memory(self.layers_bytes(depth, copies), f"for the {what} of depth={depth} ({_draws(self.draws)} "
                         f"of shape {self.shape})", ("depth", "draws", "shape"), device=self.device)
        return depth

    def iter_increments(self, depth: int, *, transform: Callable | None = None, reuse: bool = False,
                        most: int | None = None) -> Iterator:
        """Increments of a rough path (see :class:`PathSample`); other samples have none."""
        raise ValueError(f"a {self.kind} sample has no path increments; only rough (Brownian, fractional) "
                         f"samples do")

    def increments(self, depth: int) -> torch.Tensor:
        """``X_{k/L} - X_{(k-1)/L}`` (scaled), shape ``(depth, draws, *shape)`` (rough samples)."""
        if self.rough:
            self._require_layers(depth, "increments")
        return torch.cat(list(self.iter_increments(depth)), dim=0)

    def at(self, t) -> torch.Tensor:
        """The weights at any time ``t`` (smooth samples); other samples have values only on a grid."""
        raise ValueError(f"a {self.kind} sample cannot be read at any time t; only smooth samples can")

    def parts(self, depth: int) -> torch.Tensor:
        """The driver parts of the ``depth`` layers: raw increments ``X_{k/L} - X_{(k-1)/L}`` of a
        rough path, the (normalised) weights of the others (a smooth one's values at ``k / L``)."""
        return self.increments(depth) if self.rough else self.weights(depth)

    @staticmethod
    def expect(name: str, value, kind: str) -> "DriverSample":
        """``value`` if it is a driver sample of ``kind``, else a one-line error naming ``name`` and what is needed."""
        if getattr(value, "kind", None) != kind:
            raise ParameterError(name, f"{name} must be {KINDS[kind]}")
        return value

    def _chunk_layers(self, per_layer: int) -> int:
        return max(1, _BLOCK_ELEMENTS // max(1, per_layer * self.draws * math.prod(self.shape)))


class PathSample(DriverSample):
    """A sample of a rough path ``X`` (Brownian or fractional) on the grid ``k / resolution``.

    Any depth dividing ``resolution`` is available, and its increments are exact sums of the
    finest ones, so all those depths are coupled.
    """

    rough = True
    ahead = 0
    """Chunks :meth:`iter_increments` makes ahead of the one in use (1: the Brownian sample draws the
    next while the current one is read): with ``reuse``, ``ahead + 1`` chunks are alive at once."""

    def __init__(self, shape, draws, dtype, scale, resolution: int, device=None):
        super().__init__(shape, draws, dtype, scale, device)
        self.resolution = resolution

    @property
    def hurst(self) -> float:
        return self.regularity

    @abc.abstractmethod
    def iter_increments(self, depth: int, *, transform: Callable | None = None, reuse: bool = False,
                        most: int | None = None) -> Iterator:
        """Increments ``X_{k/L} - X_{(k-1)/L}`` (scaled) in chunks ``(c, draws, *shape)`` of
        ``c`` (a power of two) consecutive layers, aligned to every coarser dyadic grid.

        ``transform``, when given, is applied to each chunk before it is yielded (for the
        Brownian sample, on the background thread that draws the chunks). With ``reuse``, the
        chunks are written into buffers kept from chunk to chunk (the same numbers, no memory to
        fault in again): a chunk is valid only until :attr:`ahead` ``+ 1`` more are asked for, so
        only for a consumer done with each chunk when it asks for the next (the convergence sweep).
        ``most``: at most this many layers per chunk (a power of two), where the sample chooses its
        chunks (fractional; a Brownian sample's chunks are its blocks of draws, so it ignores it).
        """

    def iter_weights(self, depth: int) -> Iterator[torch.Tensor]:
        norm = float(depth) ** self.regularity
        for inc in self.iter_increments(depth):
            yield inc * norm

    def path(self, depth: int) -> torch.Tensor:
        """``X_{k/L}`` for ``k = 0..L`` (``X_0 = 0``), shape ``(depth + 1, draws, *shape)``."""
        self._require_layers(depth, "path", copies=3)
        inc = self.increments(depth)
        return torch.cat([torch.zeros_like(inc[:1]), inc.cumsum(0)], dim=0)


class Driver(abc.ABC):
    """A weight law as a function of depth. Declares its ``regularity``, ``coupled`` and ``nested``,
    its name and parameters (``name`` / ``names``, ``options``: see
    :func:`~deeplimits.paths.register_driver`) and the memory the studies need of it
    (:meth:`sample_bytes`, :meth:`held_bytes`, :meth:`sweep_bytes`, :attr:`stores_path`), so that
    no study switches on its name."""

    name: str
    """The law's name (``'gaussian'``, ``'uniform'``, ``'rademacher'``, ``'fractional'``, ``'smooth'``)."""
    names: tuple[str, ...] = ()
    """The names it is registered under (empty: ``(name,)``; the i.i.d. family has three)."""
    options: tuple = ()
    """Its parameters, as declared :class:`~deeplimits.options.Option` s (the keywords of
    :func:`~deeplimits.paths.make_driver`, the keys of :meth:`spec` besides ``'driver'``)."""
    regularity: float
    """The Hölder exponent of its paths: 1/2 (i.i.d.), ``H`` (fractional), 1 (smooth)."""
    coupled: bool = True  # do depths read off one sample share one path?
    """Do depths read off one sample share one path?"""
    nested: bool = True
    """Are the depth-L weights, in law, the first L layers of a deeper network's weights? (i.i.d. and
    stationary fGn: yes; the smooth law reads V(k / L): no)."""

    def sample(self, shape, *, draws: int = 1, resolution: int | None = None,
               generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64,
               scale: float | None = None, device=None) -> DriverSample:
        """Draw ``draws`` independent weight paths for a weight tensor of ``shape``.

        Args:
            shape: shape of one layer's weight, e.g. ``(d, d)`` for V or ``(d,)`` for a bias.
            draws: number of independent paths (batch dimension of the weights).
            resolution: finest depth (a power of two) for path drivers; every depth dividing
                it is available and coupled. Refused by the smooth and non-Gaussian i.i.d. laws.
            generator: a seeded :class:`torch.Generator`; same seed, same numbers.
            dtype: float32 or float64.
            scale: entry standard deviation of the weights, default ``shape[-1] ** -0.5`` for
                matrices (docs/mathematics.md, "Drivers"), 1 for vectors.
            device: where the sample's numbers are drawn and kept (default the CPU); on a
                non-CPU device they come from a generator on that device seeded from
                ``generator`` (:mod:`deeplimits._random`).

        Raises:
            ResourceError: before anything is drawn, for a ``resolution`` above
                :data:`~deeplimits._resources.MAX_STEPS` (``2^26`` fine steps) or a sample
                whose memory (:meth:`sample_bytes`) exceeds the device's; reading the layers at
                once (:meth:`DriverSample.weights`, ``increments``, ``path``) is checked the same
                way (:meth:`DriverSample.layers_bytes`, at most ``2^26`` layers).
        """
        shape = V.size(shape, name="shape")
        draws = V.integer("draws", draws)
        dtype = V.dtype(dtype)
        V.generator(generator)
        device = V.device("device", device, dtype)
        if scale is None:
            scale = shape[-1] ** -0.5 if len(shape) >= 2 else 1.0
        scale = V.real("scale", scale, low=0.0, low_open=True)
        if self.needs_resolution:
            if resolution is None:
                raise ParameterError("resolution", f"resolution must be given (a power of two) for the {self.name} "
                                                   "driver")
            resolution = V.power_of_two("resolution", resolution)
            R.require_count(resolution, R.MAX_STEPS, f"resolution={resolution} makes too many fine steps per path",
                            ("resolution",))
        elif resolution is not None:
            raise ParameterError("resolution", "resolution applies only to path drivers (Gaussian i.i.d., "
                                               f"fractional), not to the {self.name} driver")
        at = "" if resolution is None else f" at resolution={resolution}"
        R.require_memory(self.sample_bytes(shape, draws, resolution, dtype, device),
                         f"for a {self.name} sample of {_draws(draws)} of shape {shape}{at}",
                         ("draws", "shape") + (("resolution",) if self.needs_resolution else ()), device=device)
        from ._checks import checked_sample

        return checked_sample(self, self._sample(shape, draws, resolution, generator, dtype, scale, device), shape,
                              draws, dtype)

    def check(self) -> "Driver":
        """The driver, once a small sample of it is verified (cached per driver): the weights it
        delivers at two depths have the shape ``(depth, draws, *shape)`` asked for, its dtype, and
        finite values; a one-line :class:`~deeplimits.errors.ParameterError` naming the driver
        otherwise. The studies call it before any work on a driver (a registered one of your own
        included)."""
        from ._checks import verified

        return verified(self)

    def sample_kind(self) -> str:
        """The :attr:`~DriverSample.kind` of its samples, read off the one :meth:`check` verified
        (what a regime's limit reads, :meth:`deeplimits.regimes.Regime.accepts_driver`)."""
        from ._checks import sample_kind
        return sample_kind(self)

    needs_resolution = False
    """Does :meth:`sample` take a ``resolution`` (the path laws: Gaussian i.i.d., fractional)?"""

    def sample_bytes(self, shape, draws: int = 1, resolution: int | None = None,
                     dtype: torch.dtype = torch.float64, device=None) -> int:
        """Peak bytes of :meth:`sample` and of streaming its weights (:meth:`DriverSample.iter_weights`),
        counted without drawing anything; :meth:`sample` refuses a request above the memory of
        its device. Here (streamed laws: i.i.d., Brownian): the blocks in flight, one drawn,
        one drawn ahead and their pairwise sums, of at least one layer each."""
        return 3 * dtype.itemsize * max(_BLOCK_ELEMENTS, draws * math.prod(shape))

    stores_path = False
    """Does a sample hold its whole path on the finest grid (fractional: its fGn), so that its
    memory grows with the resolution? (Streamed laws draw blocks from seeds: no.)"""
    held_copies = 1
    """Copies of the held weights that the stability studies' historical default chunk rule counts
    per draw (:func:`~deeplimits.studies.propagation.memory.default_draw_bytes`; four for fractional weights)."""
    independent = False
    """Are its layers independent with i.i.d. entries (the i.i.d. family, for which the bounds of
    :func:`~deeplimits.studies.theory.theory_bounds` hold)?"""
    growth_law = False
    """Is the growth law ``gamma = 1 - beta / regularity`` below the phase boundary stated for it
    (:func:`~deeplimits.studies.theory.growth_exponent`: i.i.d. and smooth weights)?"""

    gaussian = False
    """Are its weights Gaussian (then :meth:`from_normal` is the identity, and the law study's
    control variates, which follow a law's departure from the Gaussian one, vanish)?"""
    subgaussian: float | None = None
    """The sub-Gaussian constant ``s`` of its unit-variance entries (Marion et al.'s (A1):
    ``E exp(lambda X) <= exp(lambda^2 s^2 / 2)``), for i.i.d. laws that declare it; ``None`` otherwise."""
    cumulants: tuple | None = None
    """``(kappa_4, kappa_6, kappa_8)`` of its symmetric unit-variance entries (the exact eighth
    moment of (A2), :mod:`~deeplimits.studies.theory_conditions`); ``None`` where not declared."""

    def from_normal(self, g: torch.Tensor) -> torch.Tensor:
        """Entries of unit variance of this i.i.d. law as a function of standard normals ``g`` (the
        quantile transform ``q(Phi(g))``, elementwise): the coupled sample of the law study
        (docs/law.md), whose networks read their weights off the Brownian path of the limit. A law
        without one is refused there in one line (:attr:`has_from_normal`)."""
        raise NotImplementedError(f"driver {self.name!r} declares no from_normal")

    @property
    def has_from_normal(self) -> bool:
        """Does the law declare :meth:`from_normal`?"""
        return type(self).from_normal is not Driver.from_normal

    def mgf(self, lam):
        """``E exp(lambda X)`` of its unit-variance entries (numpy, elementwise), where declared."""
        raise NotImplementedError(f"driver {self.name!r} declares no moment generating function")

    def entries(self, rng, shape):
        """Unit-variance entries of this i.i.d. law drawn by the numpy generator ``rng`` (a Monte
        Carlo check of the theory's constants), where declared."""
        raise NotImplementedError(f"driver {self.name!r} declares no numpy sampler")

    def held_bytes(self, entries, layers: int, item: int) -> int:
        """Peak bytes of holding every one of ``layers`` layers of weight tensors of ``entries``
        numbers each (all draws), drawn one tensor after another (the propagation studies,
        :func:`~deeplimits.studies.propagation.memory.propagation_bytes`). Here (streamed laws): the layers
        and the blocks in flight."""
        return sum(entries) * layers * item + 2 * _BLOCK_ELEMENTS * item

    def sweep_bytes(self, entries: int, reference: int, depths: int, item: int, device=None) -> int:
        """Peak bytes of the driver in a strong-error sweep over ``reference`` fine steps of a
        weight of ``entries`` numbers (all draws) read at ``depths`` depths
        (:func:`~deeplimits.studies.convergence.memory.convergence_bytes`). Here (streamed laws): blocks of
        ``_BLOCK_ELEMENTS`` numbers (at least one layer), the block in use, the one drawn ahead and
        their trees of pairwise sums, plus one accumulated increment per depth."""
        return item * (6 * min(reference * entries, max(_BLOCK_ELEMENTS, entries)) + depths * entries)

    @classmethod
    def create(cls, name: str, **params) -> "Driver":
        """The driver registered as ``name`` with its (declared) ``params``
        (:func:`~deeplimits.paths.make_driver`); a family of laws reads ``name``."""
        return cls(**params)

    @abc.abstractmethod
    def _sample(self, shape, draws, resolution, generator, dtype, scale, device) -> DriverSample: ...

    def spec(self) -> dict:
        """The driver as plain JSON (``{'driver': name, param: value, ...}``, one key per declared
        option), the inverse of :func:`~deeplimits.paths.driver_from_spec`."""
        return {"driver": self.name, **{o.name: getattr(self, o.name) for o in self.options}}

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.spec() == self.spec()

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.spec().items())))

    def __repr__(self) -> str:
        if self.options:
            return f"{type(self).__name__}({', '.join(f'{o.name}={getattr(self, o.name)}' for o in self.options)})"
        return f"{type(self).__name__}({self.name!r})"


def _draws(n: int) -> str:
    return f"{n} draw{'s' * (n != 1)}"


def _pow2_floor(x: int) -> int:
    return 1 << (max(1, x).bit_length() - 1)
