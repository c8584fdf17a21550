"""i.i.d. weights: Brownian increments (coupled across depths) and uniform / Rademacher laws."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator

import torch

from .. import _random
from .. import _validate as V
from .base import DriverSample, Driver, PathSample, _pow2_floor, pair_sums
from .registry import register_driver


class BrownianSample(PathSample):
    """Scaled Brownian motion ``scale * B`` generated lazily in fixed blocks of fine steps.

    The finest increments are produced block by block from counter-derived seeds, so they
    can be streamed any number of times without being stored: memory stays constant in the
    resolution.
    """

    regularity = 0.5
    kind = "brownian"
    ahead = 1

    def __init__(self, shape, draws, dtype, scale, resolution, seed: int, device=None):
        super().__init__(shape, draws, dtype, scale, resolution, device)
        self.seed = seed
        """The seed the blocks of fine increments are derived from."""
        self.block = min(resolution, _pow2_floor(self._chunk_layers(1)))
        """Fine steps drawn at once (a power of two, bounded by the memory of one chunk)."""

    def _new_block(self) -> torch.Tensor:
        return _random.empty((self.block, self.draws, *self.shape), self.dtype, self.home)

    def _block(self, j: int, out: torch.Tensor | None = None) -> torch.Tensor:
        """Block ``j`` of fine increments (into ``out``, a buffer of the block's shape, when given)."""
        shape = (self.block, self.draws, *self.shape)
        seed = _random.mix_seed(self.seed, j)
        x = (_random.normal(shape, seed, self.dtype, self.home) if out is None else
             _random.normal_rows(shape, seed, self.dtype, (0, self.block), self.home, out=out))
        return self._deliver(x.mul_(self.scale / math.sqrt(self.resolution)))

    def iter_increments(self, depth: int, *, transform: Callable | None = None, reuse: bool = False,
                        most: int | None = None) -> Iterator:
        depth = V.divides("depth", depth, self.resolution)
        r = self.resolution // depth  # fine steps per layer
        nblocks = self.resolution // self.block
        transform = transform or (lambda x: x)
        if r <= self.block:
            ring = [self._new_block() for _ in range(self.ahead + 1)] if reuse else None

            def chunk(j):
                return transform(pair_sums(self._block(j, None if ring is None else ring[j % len(ring)]), r))

            with ThreadPoolExecutor(1, thread_name_prefix="deeplimits-prefetch") as ex:
                nxt = ex.submit(chunk, 0)  # draw chunk j + 1 while chunk j is consumed
                for j in range(nblocks):
                    x = nxt.result()
                    if j + 1 < nblocks:
                        nxt = ex.submit(chunk, j + 1)
                    yield x
        else:
            per = r // self.block
            for k in range(depth):
                acc = self._block(k * per).sum(0)
                for j in range(k * per + 1, (k + 1) * per):
                    acc += self._block(j).sum(0)
                yield transform(acc.unsqueeze(0))


class IIDSample(DriverSample):
    """i.i.d. uniform or Rademacher weights: no path, fresh draws for each depth.

    These laws have no Brownian coupling across depths (only the Gaussian law does), so the
    weights at depth ``L`` are drawn from a stream seeded by ``(seed, L)``: reproducible, but
    independent between depths.
    """

    regularity = 0.5
    kind = "iid"

    def __init__(self, shape, draws, dtype, scale, law: str, seed: int, device=None):
        super().__init__(shape, draws, dtype, scale, device)
        self.law, self.seed = law, seed

    def iter_weights(self, depth: int) -> Iterator[torch.Tensor]:
        a = math.sqrt(3.0) * self.scale if self.law == "uniform" else 1.0
        for shape, seed in fresh_chunks(self, depth):
            u = _random.uniform(shape, seed, self.dtype, -a, a, self.home)
            signs = u if self.law == "uniform" else torch.where(u < 0, -1.0, 1.0).to(self.dtype) * self.scale
            yield self._deliver(signs)


def fresh_chunks(sample: DriverSample, depth: int) -> Iterator[tuple[tuple, int]]:
    """``(shape, seed)`` of each chunk of consecutive layers of an i.i.d. sample at ``depth``: fresh
    numbers per depth, seeded by ``(sample.seed, depth)`` and the chunk's index."""
    depth = V.integer("depth", depth)
    seed = _random.mix_seed(sample.seed, depth - 1)
    c = sample._chunk_layers(1)
    for j, k0 in enumerate(range(0, depth, c)):
        yield (min(c, depth - k0), sample.draws, *sample.shape), _random.mix_seed(seed, j)


@register_driver
class IIDDriver(Driver):
    """i.i.d. weights with variance ``scale^2``: ``'gaussian'`` (Brownian increments),
    ``'uniform'`` (the papers' default) or ``'rademacher'``.

    Only the Gaussian law is coupled across depths (``V_k = sqrt(L) * scale * dB``); for it a
    ``resolution`` is required.
    """

    regularity = 0.5
    growth_law = independent = True
    LAWS = ("gaussian", "uniform", "rademacher")
    """The laws it draws from."""
    names = ("uniform", "gaussian", "rademacher")  # the order of deeplimits.paths.DRIVERS

    FACTS = {"gaussian": (1.0, (0.0, 0.0, 0.0)), "uniform": (1.0, (-6.0 / 5.0, 48.0 / 7.0, -432.0 / 5.0)),
             "rademacher": (1.0, (-2.0, 16.0, -272.0))}
    """Per law at unit variance: the sub-Gaussian constant ``s`` (the smallest: each mgf is ``1 +
    lambda^2 / 2 + O(lambda^4)``) and the cumulants ``(kappa_4, kappa_6, kappa_8)``: Gaussian 0;
    Rademacher -2, 16, -272; uniform on [-sqrt 3, sqrt 3] -6/5, 48/7, -432/5."""

    def __init__(self, law: str = "gaussian"):
        self.name = V.choice("law", law, self.LAWS)
        self.coupled = self.needs_resolution = self.gaussian = law == "gaussian"
        self.subgaussian, self.cumulants = self.FACTS[self.name]

    def from_normal(self, g: torch.Tensor) -> torch.Tensor:
        """``g`` (Gaussian), ``sqrt(3) (2 Phi(g) - 1)`` (uniform on ``[-sqrt 3, sqrt 3]``) or
        ``sign(g)`` (Rademacher): unit-variance entries of the law, one per standard normal."""
        if self.name == "uniform":
            return torch.erf(g * (1 / math.sqrt(2.0))).mul_(math.sqrt(3.0))
        return torch.sign(g) if self.name == "rademacher" else g

    def mgf(self, lam):
        """``exp(lambda^2 / 2)`` (Gaussian), ``cosh(lambda)`` (Rademacher), ``sinh(sqrt(3) lambda) /
        (sqrt(3) lambda)`` (uniform)."""
        import numpy as np

        lam = np.asarray(lam, dtype=np.float64)
        if self.gaussian:
            return np.exp(lam ** 2 / 2)
        if self.name == "rademacher":
            return np.cosh(lam)
        x = math.sqrt(3.0) * lam
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(x == 0, 1.0, np.sinh(x) / np.where(x == 0, 1.0, x))

    def entries(self, rng, shape):
        import numpy as np

        if self.gaussian:
            return rng.standard_normal(shape)
        if self.name == "rademacher":
            return rng.choice(np.array([-1.0, 1.0]), size=shape)
        return rng.uniform(-math.sqrt(3.0), math.sqrt(3.0), size=shape)

    def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
        if self.name == "gaussian":
            return BrownianSample(shape, draws, dtype, scale, resolution, _random.seed_from(generator), device)
        return IIDSample(shape, draws, dtype, scale, self.name, _random.seed_from(generator), device)

    @classmethod
    def create(cls, name: str, **params) -> "IIDDriver":
        """The law ``name`` (no parameters)."""
        return cls(name, **params)
