"""What every limit shares: one way to be solved from a pair's driver samples, and the grid
``k / depth`` on which it is returned."""

from __future__ import annotations

import abc
from typing import Callable, Mapping

import torch


def grid(depth: int, dtype, device=None) -> torch.Tensor:
    """The times ``k / depth``, ``k = 0..depth``, on ``device`` (the CPU by default)."""
    return torch.arange(depth + 1, dtype=dtype, device=device) / depth


class Limit(abc.ABC):
    """A continuous-time limit of residual networks.

    Every limit is solved the same way from the driver samples of a pair, by weight name
    (:meth:`solve_sample`), and declares how its reference is computed: a fixed-step scheme on
    the finest grid of rough (Brownian, fractional) samples (:meth:`reference_step`), or an
    adaptive solve (``reference_step`` returns ``None``).
    """

    @abc.abstractmethod
    def solve_sample(self, h0: torch.Tensor, weights: Mapping[str, object], depth: int) -> torch.Tensor:
        """The limit on ``k / depth`` as ``(depth + 1, draws, inputs, width)`` from the driver
        samples ``weights`` (weight name -> :class:`~deeplimits.paths.DriverSample`)."""

    def reference_step(self, weights: Mapping[str, object], steps: int) -> Callable | None:
        """One step of size ``1 / steps`` of the reference scheme as ``f(H, parts)``, where
        ``parts`` maps weight names to the step's increment (rough samples) or value at the
        step's right end (smooth samples); ``None`` when the limit is solved adaptively."""
        return None

    exact: Callable | None = None
    """The closed-form solution where one is known (its reference is read at the grid points, not
    solved by a scheme: not nested, and the finest grid need only hold the deepest depth), else ``None``."""

    refinement: int = 2
    """The least ratio of a nested reference's grid to the deepest depth (a power of two): finer than
    every depth, and where the reference's own error matters, fine enough to keep it small."""
    refinement_reason: str = ""
    """Why :attr:`refinement` is above 2, in words (for the error refusing a coarser reference)."""

    reference_method: str = "adaptive dopri5 solve (torchdiffeq) read at k/L"
    """How the reference solution is computed, in words (``{steps}``: the finest grid's steps)."""

    def reference_text(self, steps: int) -> str:
        """How the reference of a convergence study is computed, for its report."""
        return self.reference_method.format(steps=steps)
