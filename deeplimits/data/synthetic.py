"""The synthetic dynamical regression task of Cohen, Cont, Rossier & Xu (ICML 2021).

Inputs ``x`` are uniform on ``[-1, 1]^d``; the target is the normalised end point of a
residual recursion of ``K`` steps started at ``x``::

    z_0 = x,   z_k = z_{k-1} + K^{-1/2} tanh( sin(5 k pi / K) z_{k-1} + cos(5 k pi / K) 1 ),
    y = z_K / ||z_K||,

(``1`` the all-ones vector), with ``d = 10`` and ``K = 100`` by default. The published code
(instadeepai/scaling-resnets, ``generate_dataset.py``) takes the angle of step ``k`` one step
earlier, ``5 (k - 1) pi / K``: ``angle_start=0`` (``1``, the default, is the formula above).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .. import _validate as V_
from .._random import MAX_SEED
from .base import Arrays, register_dataset


def cohen_targets(x: torch.Tensor, depth: int = 100, angle_start: int = 1) -> torch.Tensor:
    """``z_K / ||z_K||`` of the recursion above for the inputs ``x`` of shape ``(n, d)``
    (a finite float32 or float64 tensor; vectorised over samples, in the dtype of ``x``) with
    ``depth`` >= 1 steps, step ``k`` at the angle ``5 (k - 1 + angle_start) pi / K``
    (``angle_start`` 1 or 0)."""
    z = V_.tensor("x", x, shape=(None, None))
    depth = V_.integer("depth", depth)
    angle_start = V_.integer("angle_start", angle_start, low=0, high=1)
    scale = depth ** -0.5
    for k in range(angle_start, depth + angle_start):
        angle = 5.0 * k * math.pi / depth
        z = z + scale * torch.tanh(math.sin(angle) * z + math.cos(angle))
    return z / torch.linalg.vector_norm(z, dim=-1, keepdim=True)


@register_dataset("synthetic", shared=True)
def synthetic(*, seed: int, n: int = 1024, dim: int = 10, depth: int = 100, angle_start: int = 1) -> Arrays:
    """Cohen et al. (2021): x uniform on [-1, 1]^dim, target z_K / ||z_K|| of a residual recursion
    (``angle_start`` 0: the published code's angles, module docstring)."""
    seed = V_.integer("seed", seed, low=0, high=MAX_SEED)
    n = V_.integer("n", n, low=2, high=10 ** 7)
    dim = V_.integer("dim", dim, high=10 ** 4)
    depth = V_.integer("depth", depth, high=10 ** 6)
    angle_start = V_.integer("angle_start", angle_start, low=0, high=1)
    x = np.random.default_rng([seed, 1]).uniform(-1.0, 1.0, size=(n, dim))
    y = cohen_targets(torch.from_numpy(x), depth, angle_start).numpy()  # float64
    return Arrays(x, y, task="regression")
