"""What every limit shares: the grid ``k / depth`` on which it is returned."""

from __future__ import annotations

import torch


def grid(depth: int, dtype) -> torch.Tensor:
    return torch.arange(depth + 1, dtype=torch.float64).div_(depth).to(dtype)
