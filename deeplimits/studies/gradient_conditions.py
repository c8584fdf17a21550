"""The gradient analogue of (A2) for res-3 (Marion, Fermanian, Biau & Vert, JMLR 2025, Proposition 6
under (A4); docs/theory.md, "The gradient analogue of (A2)"), checked as (A2) is
(:mod:`deeplimits.studies.theory_conditions`): exact values where the law allows, and Monte Carlo
estimates with their standard errors beside them.

The backward pass of ``h_{k+1} = h_k + alpha V g(h_k, W)`` is ``p_k = p_{k+1} + alpha J^T V^T p_{k+1}``
with ``J = d g / d h``; for res-3, ``g = ReLU(W h)`` and ``J^T z = W^T D z``, ``D = diag(1{W h > 0})``.
(A2) bounds the moments of ``g(h, W)`` against ``||h||``; its gradient analogue bounds those of
``J(h, W)^T z`` against ``||z||``:

    ||z||^2 / 2 <= E ||J^T z||^2 <= ||z||^2,        E ||J^T z||^8 <= C ||z||^8   for every h, z.

Two readings, both computed:

* **a fixed ``z``** (the statement above). With Gaussian ``W`` (entries ``N(0, 1/d)``), rows
  ``W_j`` independent, ``E[1{W_j h > 0} ||W_j||^2] = 1/2`` and ``E[1{W_j h > 0} W_j] = h / (||h||
  sqrt(2 pi d))``, so exactly

      E ||J^T z||^2 / ||z||^2 = 1/2 + ((sum_j z_j)^2 - ||z||^2) / (2 pi d ||z||^2)

  (:func:`jacobian_second_moment_gaussian`), whatever ``h``: between ``1/2 - 1/(2 pi d)`` (``z``
  orthogonal to ``(1, ..., 1)``, below the lower bound) and ``1/2 + (d - 1)/(2 pi d)`` (``z`` along
  it). At ``z = e_k`` the ``k``-th ReLU gates the whole vector: ``||J^T e_k||^2 = 1{W_k h > 0}
  ||W_k||^2`` and ``E ||J^T e_k||^8 = (1/2) d (d+2) (d+4) (d+6) / d^4``
  (:func:`jacobian_eighth_moment_axis_gaussian`), about 0.56 at ``d = 100``, where the forward
  constant ``C`` of (A2) is 0.083.
* **the vector the backward pass meets**, ``z = V^T p`` with ``V`` drawn with ``W``. For Gaussian
  ``V`` and ``W``, ``||J^T V^T p||^2 / ||p||^2`` has the law of ``(chi^2_d / d) (chi^2_N / d)``,
  ``N ~ Binomial(d, 1/2)`` independent (``sum_{j: W_j h > 0} W_j W_j^T`` is a Wishart matrix with
  ``N`` degrees of freedom, rotation invariant), the law of the forward increment ``||V g(h, W)||^2 /
  ||h||^2``: mean 1/2 exactly, and ``E[...^4] = d (d+2) (d+4) (d+6) / d^4 x`` the (A2) constant of
  :func:`~deeplimits.studies.theory_conditions.relu_moment_ratio_gaussian`
  (:func:`backward_moments_gaussian`).

:func:`jacobian_moment_monte_carlo` estimates either reading for any i.i.d. law the package declares
(Gaussian, uniform, Rademacher).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as V_
from ..errors import ParameterError
from .theory_conditions import _law, relu_moment_ratio_gaussian

__all__ = ["jacobian_second_moment_gaussian", "jacobian_eighth_moment_axis_gaussian", "backward_moments_gaussian",
           "jacobian_moment_monte_carlo"]


def _vector(name: str, x) -> np.ndarray:
    """``x`` as a finite non-zero float64 vector, or a one-line error naming ``name``."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or not x.size or not np.isfinite(x).all() or not np.abs(x).sum():
        raise ParameterError(name, f"{name} must be a finite non-zero vector, got shape {x.shape}")
    return x


def jacobian_second_moment_gaussian(z) -> float:
    """``E ||W^T D z||^2 / ||z||^2`` exactly for Gaussian ``W`` (entries ``N(0, 1/d)``, ``d = len(z)``),
    the same for every ``h``: ``1/2 + ((sum z)^2 - ||z||^2) / (2 pi d ||z||^2)``."""
    z = _vector("z", z)
    d, n2 = z.size, float(z @ z)
    return 0.5 + (float(z.sum()) ** 2 - n2) / (2 * math.pi * d * n2)


def _chi2_fourth(d: int) -> float:
    """``E (chi^2_d)^4 / d^4 = d (d+2) (d+4) (d+6) / d^4``."""
    return d * (d + 2) * (d + 4) * (d + 6) / d ** 4


def jacobian_eighth_moment_axis_gaussian(width: int) -> float:
    """``E ||W^T D e_k||^8`` exactly for Gaussian ``W`` at width ``d`` (any ``h``, any axis ``e_k``):
    ``||W^T D e_k||^2 = 1{W_k h > 0} chi^2_d / d``, so ``(1/2) d (d+2) (d+4) (d+6) / d^4``."""
    return 0.5 * _chi2_fourth(V_.integer("width", width))


def backward_moments_gaussian(width: int) -> dict:
    """The moments of ``R = ||W^T D V^T p||^2 / ||p||^2`` for Gaussian ``V`` and ``W`` at width ``d``
    (the law of ``(chi^2_d / d) (chi^2_N / d)``, ``N ~ Binomial(d, 1/2)``): ``{'mean': 1/2, 'fourth':
    E R^4}``, the latter ``d (d+2) (d+4) (d+6) / d^4`` times ``E[N (N+2) (N+4) (N+6)] / d^4``."""
    d = V_.integer("width", width)
    return {"mean": 0.5, "fourth": _chi2_fourth(d) * relu_moment_ratio_gaussian(d)}


def jacobian_moment_monte_carlo(law, h, z=None, *, power: int = 1, draws: int = 20_000, seed: int = 0,
                                z_score: float = 3.0) -> tuple[float, float, float]:
    """A Monte Carlo estimate of ``E R^power`` over ``draws`` matrices ``W`` of law ``law`` (entries
    ``X / sqrt(d)``), ``R = ||W^T D z||^2 / ||z||^2`` at a fixed ``z`` (a vector of ``h``'s length), or,
    with ``z=None``, ``R = ||W^T D V^T p||^2 / ||p||^2`` with ``V`` of the same law drawn with ``W`` (and
    ``p = e_1``: the law of ``V^T p`` does not depend on ``p``'s direction for a rotation-invariant law,
    and for the others ``e_1`` is one direction). ``D = diag(1{W h > 0})`` (ReLU's derivative is 0 at 0,
    as PyTorch has it). Returns ``(mean, standard error, mean + z_score * standard error)``."""
    h = _vector("h", h)
    d = h.size
    zz = None if z is None else _vector("z", z)
    if zz is not None and zz.size != d:
        raise ParameterError("z", f"z must have the length of h ({d}), got {zz.size}")
    law = _law(law)
    power = V_.integer("power", power, high=4)
    draws = V_.integer("draws", draws, low=2)
    rng = np.random.default_rng(V_.integer("seed", seed, low=0))
    chunk = max(1, (1 << 22) // (2 * d * d))
    vals = []
    for start in range(0, draws, chunk):
        n = min(chunk, draws - start)
        W = law.entries(rng, (n, d, d)) / math.sqrt(d)
        gate = (W @ h > 0).astype(np.float64)  # (n, d): the rows of W the ReLU lets through
        if zz is None:
            q = law.entries(rng, (n, d)) / math.sqrt(d)  # V^T e_1: the first row of V, (n, d)
            scale = 1.0
        else:
            q = np.broadcast_to(zz, (n, d))
            scale = float(zz @ zz)
        g = np.einsum("nj,nji->ni", gate * q, W)  # W^T D q
        vals.append(((g * g).sum(-1) / scale) ** power)
    v = np.concatenate(vals)
    mean, se = float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))
    return mean, se, mean + z_score * se
