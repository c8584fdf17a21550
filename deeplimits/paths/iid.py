"""An i.i.d. law of one's own from one hook (docs/law.md, "Bring your own"): a subclass of
:class:`IIDLaw` declares its ``name`` and :meth:`~deeplimits.paths.Driver.from_normal` (its
unit-variance entries as a function of standard normals: a quantile transform ``q(Phi(g))``), and
``@register_driver`` enters it. Its samples (:class:`NormalMapSample`) draw fresh standard normals
for each depth, seeded by ``(seed, depth)`` like the uniform and Rademacher laws, and map them
through the hook, scaled to the entry standard deviation; every study that takes an i.i.d. driver
(stability, training, the law study, whose coupled sample reads the same hook off the limit's
Brownian path) takes it.
"""

from __future__ import annotations

from typing import Iterator

import torch

from .. import _random
from .base import Driver, DriverSample
from .brownian import fresh_chunks

__all__ = ["IIDLaw", "NormalMapSample"]


class NormalMapSample(DriverSample):
    """i.i.d. weights ``scale * q(g)``, ``g`` standard normals drawn per depth from ``(seed, depth)``
    and ``q`` the law's :meth:`~deeplimits.paths.Driver.from_normal` (no path: fresh draws at each depth)."""

    regularity = 0.5
    kind = "iid"

    def __init__(self, shape, draws, dtype, scale, law: Driver, seed: int, device=None):
        super().__init__(shape, draws, dtype, scale, device)
        self.law, self.seed = law, seed

    def iter_weights(self, depth: int) -> Iterator[torch.Tensor]:
        for shape, seed in fresh_chunks(self, depth):
            g = _random.normal(shape, seed, self.dtype, self.home)
            yield self._deliver(self.law.from_normal(g) * self.scale)


class IIDLaw(Driver):
    """A centred i.i.d. law of unit variance (scaled to the entry standard deviation, ``1/sqrt(d)``
    for a matrix) given by :meth:`~deeplimits.paths.Driver.from_normal`: subclass it with a ``name``
    and that hook, then ``@register_driver`` (no resolution; depths are independent draws)."""

    regularity = 0.5
    coupled = False
    independent = growth_law = True

    def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
        return NormalMapSample(shape, draws, dtype, scale, self, _random.seed_from(generator), device)
