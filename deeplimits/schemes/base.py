"""A one-step map and its declared strong order (docs/schemes.md)."""

from __future__ import annotations

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

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, order {self.order.expansion_text})"
