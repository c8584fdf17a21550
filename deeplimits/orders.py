"""Strong orders of convergence: what a pair declares of its error against depth
(docs/mathematics.md, "The implemented regimes"). Torch-free, below the pairs and the regimes."""

from __future__ import annotations

import dataclasses
import math

__all__ = ["StrongOrder"]


@dataclasses.dataclass(frozen=True)
class StrongOrder:
    """The theoretical strong error ``E max_k ||H_{k/L} - h_k|| ~ L^-rate (log L)^log_power``.

    Attributes:
        rate: the exponent of ``L``.
        condition: when the order holds (e.g. ``"H in (1/2, 1)"``).
        note: where it comes from and what to expect at practical depths (printed in reports).
        log_power: the power of the logarithmic factor (``0.5`` for ``sqrt(log L)``), 0 without one.
    """

    rate: float
    """The exponent of ``L``."""
    condition: str
    """When the order holds (e.g. ``"H in (1/2, 1)"``)."""
    note: str
    """Where it comes from and what to expect at practical depths (printed in reports)."""
    log_power: float = 0.0
    """The power of the logarithmic factor (``0.5`` for ``sqrt(log L)``), 0 without one."""

    def slope(self, depths) -> float:
        """The least-squares slope of ``-log(L^-rate (log L)^log_power)`` against ``log L`` over
        ``depths``: what a fit over these depths should find (``rate`` without a log factor)."""
        if not self.log_power or len(depths) < 2:
            return self.rate
        x = [math.log(L) for L in depths]
        y = [math.log(math.log(L)) for L in depths]
        mx, my = sum(x) / len(x), sum(y) / len(y)
        b = sum((a - mx) * (c - my) for a, c in zip(x, y)) / sum((a - mx) ** 2 for a in x)
        return self.rate - self.log_power * b
