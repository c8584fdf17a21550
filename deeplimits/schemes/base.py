"""A one-step map and its declared strong order (docs/schemes.md)."""

from __future__ import annotations

import math
from typing import Callable

from .._names import NOISES
from ..orders import StrongOrder
from ..errors import ParameterError

__all__ = ["Scheme", "NOISES", "noise_kind"]



def noise_kind(noise) -> str:
    """``noise`` checked against :data:`NOISES` (a ValueError naming the allowed values)."""
    if noise not in NOISES:
        raise ParameterError("noise", f"noise must be one of {', '.join(map(repr, NOISES))}, got {noise!r}")
    return noise


class Scheme:
    """A one-step map ``(h, increment, t, dt) -> h`` on states ``(batch, d)`` and driver increments
    ``(batch, m)``, with its declared strong order.

    Attributes: ``name``; ``order`` (:class:`~deeplimits.orders.StrongOrder`, its error expansion
    included); ``hurst``: the Hurst index of the driver it is written for (``None``: Brownian).
    Subclasses implement :meth:`step`.
    """

    name: str = "scheme"
    """The scheme's name (in reports)."""
    hurst: float | None = None
    """The Hurst index of the driver it is written for (``None``: Brownian)."""
    order: StrongOrder
    """Its declared strong order, the error expansion included."""

    def step(self, h, increment, t: float, dt: float):
        """One step from ``h`` (``(batch, m)``) at time ``t`` over ``dt`` with the driver's
        ``increment`` (``(batch, noise dimension)``): the next state."""
        raise NotImplementedError

    def __call__(self, h, increment, t: float, dt: float):
        return self.step(h, increment, t, dt)

    @classmethod
    def of(cls, step: Callable, order: StrongOrder, *, name: str | None = None, hurst: float | None = None) -> "Scheme":
        """Any callable ``step(h, increment, t, dt) -> h`` as a scheme declaring ``order``."""
        if not callable(step):
            raise ParameterError("step", f"step must be a callable (h, increment, t, dt) -> h, got {step!r}")
        if not isinstance(order, StrongOrder):
            raise ParameterError("order", f"order must be a deeplimits.StrongOrder, got {order!r}")
        s = cls()
        s.step, s.order, s.hurst = step, order, hurst
        s.name = name or getattr(step, "__name__", "scheme")
        return s

    @classmethod
    def from_block(cls, block, width: int) -> "Scheme":
        """The network of a block linear in its weights (a :class:`~deeplimits.blocks.Block` or its
        registered name; the linearity verified) as the Euler–Maruyama scheme of its Itô SDE ``dH =
        g(H, dX)``: states ``(batch, width)``, one Brownian channel per weight entry (each weight's
        entries scaled by ``1/sqrt(fan-in)``, a vector's by 1), declared strong order 1/2 with the
        next term ``L^-1`` (the ``sde`` regime's)."""
        from .. import _validate as V_
        from ..blocks import make_block
        from ..orders import Term

        block, width = make_block(block), V_.integer("width", width)
        why = block.linearity(width)
        if set(block.weights) - set(block.linear) or why is not None:
            raise ParameterError("block", f"block {block.name!r} has no Euler–Maruyama scheme of an Itô SDE: "
                                          f"{why or 'it must be declared linear in every weight'}")
        block.check(width)
        shapes = [(name, block.shape(name, width)) for name in block.weights]
        sizes = [math.prod(sh) for _, sh in shapes]
        scales = [sh[-1] ** -0.5 if len(sh) >= 2 else 1.0 for _, sh in shapes]

        def step(h, increment, t, dt):
            parts = increment.split(sizes, dim=-1)
            w = {name: x.reshape(len(h), *sh) * c for (name, sh), x, c in zip(shapes, parts, scales)}
            return h + block.residual(h.unsqueeze(1), **w).squeeze(1)

        order = StrongOrder(0.5, "g Lipschitz with a Lipschitz derivative", f"block {block.name!r} as the "
                            "Euler–Maruyama scheme of an Itô SDE with general noise: strong order 1/2",
                            kind="fluctuation", next_terms=(Term(1.0),))
        s = cls.of(step, order, name=f"{block.name} (Euler–Maruyama)")
        s.noise = sum(sizes)
        return s

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, order {self.order.expansion_text})"
