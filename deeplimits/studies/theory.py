"""The theory of signal propagation at initialisation, each result beside the quantity it
predicts (docs/theory.md; Marion, Fermanian, Biau & Vert, JMLR 2025, §3–4).

With ``a = alpha_L = L^-beta``, i.i.d. weights of variance ``1/d`` and res-1/2/3 under the
conditions of :func:`bounds_apply`:

* :func:`theory_bounds`: ``(1 + a^2/2)^L - 1 <= E r^2 <= (1 + a^2)^L - 1`` (Lemma 15 and
  Proposition 8), and their limits at ``beta = 1/2``, :data:`CRITICAL_LIMITS`;
* :func:`quantile_bound`: at ``L a^2 <= 1``, ``P(r^2 > 2 L a^2 / delta) <= delta`` (Markov on
  ``E r^2 <= e^(L a^2) - 1 <= 2 L a^2``);
* :func:`high_probability_bounds`: for res-3, each with probability at least ``1 - delta``,
  ``||h_L||^2 / ||h_0||^2 >= exp(3 L a^2 / 8 - sqrt(11 L a^2 / (d delta)))`` and
  ``<= exp(L a^2 + sqrt(5 L a^2 / (d delta)))``, under the conditions of
  :mod:`~deeplimits.studies.theory_conditions` (:func:`high_probability_unmet` lists those that fail);
* :func:`regularity`, :func:`predicted_slope`, :func:`growth_exponent`: ``r_h ~ L^(rho - beta)``
  in the identity regime (``rho`` = 1/2 for i.i.d., ``max(H, 1/2)`` for fractional, 1 for
  smooth weights) and ``max_k ||h_k - h_0|| / ||h_0|| ~ exp(lambda L^(1 - beta / rho))`` below it;
* :func:`classify` and :func:`critical_beta`: the regimes, and where ``log10 r_h`` crosses 0.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import _validate as V_
from ..errors import ParameterError

__all__ = ["theory_bounds", "bounds_apply", "CRITICAL_LIMITS", "quantile_bound", "QUANTILE_LEVELS",
           "high_probability_bounds", "high_probability_unmet", "regularity", "predicted_slope", "growth_exponent",
           "classify", "critical_beta", "critical_betas"]

CRITICAL_LIMITS = (math.expm1(0.5), math.expm1(1.0))
"""``(e^(1/2) - 1, e - 1)``: the limits of :func:`theory_bounds` at ``beta = 1/2`` as ``L -> infinity``."""

QUANTILE_LEVELS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 0.99)
"""The levels ``1 - delta`` at which the records carry the quantiles of ``r^2`` and their bound."""


def _scale(beta: float, depth: int) -> float:
    """``L a^2 = L^(1 - 2 beta)``, after checking both arguments."""
    beta, depth = V_.real("beta", beta, low=0.0), V_.integer("depth", depth)
    return float(depth) ** (1.0 - 2.0 * beta)


def theory_bounds(beta: float, depth: int) -> tuple[float, float]:
    """``((1 + a^2/2)^L - 1, (1 + a^2)^L - 1)`` with ``a = L^-beta``: bounds on ``E r_h^2`` and
    ``E r_p^2`` (Lemma 15 and Proposition 8 of Marion et al.); ``inf`` beyond the largest double."""
    beta, depth = V_.real("beta", beta, low=0.0), V_.integer("depth", depth)
    a2 = float(depth) ** (-2 * beta)

    def bound(c):
        x = depth * math.log1p(c * a2)
        return math.expm1(x) if x < 709.0 else math.inf

    return bound(0.5), bound(1.0)


def bounds_apply(arch, activation, driver) -> bool:
    """Whether :func:`theory_bounds` hold: i.i.d. weights, a block declaring
    :attr:`~deeplimits.blocks.Block.moment_bounds` (res-1/2/3; ``arch`` a name or a block), and an
    activation with ``x^2/2 <= sigma(x)^2 <= x^2`` (identity, leaky ReLU of slope in [1/sqrt(2),
    1]), or ReLU behind a symmetric inner weight (:attr:`~deeplimits.blocks.Block.inner_weight`:
    res-2, res-3), for which ``E ReLU(Wh)_i^2 = E (Wh)_i^2 / 2``."""
    from ..activations import activation as _activation
    from ..blocks import Block, block_class

    block = type(arch) if isinstance(arch, Block) else block_class(arch)
    if not block.moment_bounds or not driver.independent:
        return False
    name = _activation(activation).name
    if name == "identity" or (name == "relu" and block.inner_weight):
        return True
    if name.startswith("leaky_relu:"):
        return float(name.split(":")[1]) >= 1 / math.sqrt(2) - 1e-6
    return False


def quantile_bound(beta: float, depth: int, delta: float) -> float | None:
    """``2 L a^2 / delta``, which ``r_h^2`` and ``r_p^2`` exceed with probability at most ``delta``
    when ``L a^2 <= 1`` (``beta >= 1/2``); ``None`` when ``L a^2 > 1``. It follows from the upper
    bound of :func:`theory_bounds` by Markov's inequality, so it holds where that bound does."""
    la2 = _scale(beta, depth)
    delta = V_.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    return 2.0 * la2 / delta if la2 <= 1.0 + 1e-12 else None


def high_probability_bounds(beta: float, depth: int, width: int, delta: float = 0.25) -> tuple[float, float]:
    """``(lower, upper)`` with ``P(||h_L||^2 / ||h_0||^2 >= lower) >= 1 - delta`` and
    ``P(||h_L||^2 / ||h_0||^2 <= upper) >= 1 - delta`` for res-3 with i.i.d. weights (Marion et al.):

        lower = exp(3 L a^2 / 8 - sqrt(11 L a^2 / (d delta))),
        upper = exp(L a^2 + sqrt(5 L a^2 / (d delta))).

    At ``beta = 1/2``, ``L = 1000``, ``d = 100``, ``delta = 1/4`` their square roots are 0.8657
    and 2.0619. ``upper`` is ``inf`` beyond the largest double. Whether the conditions hold is
    :func:`high_probability_unmet`."""
    la2 = _scale(beta, depth)
    width = V_.integer("width", width)
    delta = V_.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    lo = 3.0 * la2 / 8.0 - math.sqrt(11.0 * la2 / (width * delta))
    hi = la2 + math.sqrt(5.0 * la2 / (width * delta))
    return math.exp(min(lo, 709.0)), (math.exp(hi) if hi < 709.0 else math.inf)


def high_probability_unmet(arch: str, driver, width: int, beta: float, depth: int,
                           delta: float = 0.25) -> dict[str, list[str]]:
    """The conditions of :func:`high_probability_bounds` that do not hold at ``alpha = depth^-beta``,
    per bound, each with its numbers (``{'lower': [...], 'upper': [...]}``, empty lists when all
    hold): the ``text`` of the failing :func:`~deeplimits.studies.theory_conditions.high_probability_conditions`."""
    from .theory_conditions import high_probability_conditions

    out: dict[str, list[str]] = {"lower": [], "upper": []}
    for c in high_probability_conditions(arch, driver, width, beta, depth, delta):
        if not c["holds"]:
            out[c["bound"]].append(c["text"])
    return out


def regularity(driver) -> float:
    """``rho``, the exponent in ``r_h ~ L^(rho - beta)`` in the identity regime: 1/2 for i.i.d.
    weights (the sum of ``L`` independent terms), ``max(H, 1/2)`` for fractional weights (the
    observed phase boundary, Marion et al. §4), 1 for smooth weights (a Riemann sum)."""
    return max(driver.regularity, 0.5)  # the driver's Hölder exponent, at least 1/2


def predicted_slope(driver, beta: float) -> float | None:
    """The log-log slope of ``r_h`` against ``L`` in the identity regime, ``rho - beta`` for
    ``beta > rho`` (:func:`regularity`); ``None`` at or below the boundary."""
    rho = regularity(driver)
    return rho - beta if beta > rho else None


def growth_exponent(driver, beta: float) -> float | None:
    """``gamma`` in ``max_k ||h_k - h_0|| / ||h_0|| ~ exp(lambda L^gamma)`` below the boundary:
    ``1 - beta`` for smooth weights (the ODE ``dH = L^(1-beta) V(t) g(H) dt``), ``1 - 2 beta``
    for i.i.d. weights (``E r^2`` grows like ``exp(c L a^2)``); ``None`` at or above the boundary
    and for fractional weights (no growth law is stated: :attr:`~deeplimits.paths.Driver.growth_law`)."""
    rho = driver.regularity  # 1 (smooth), 1/2 (i.i.d.): gamma = 1 - beta / rho
    return 1.0 - beta / rho if driver.growth_law and beta < rho else None


def classify(median: float) -> str:
    """``'identity'`` if the median ratio is below 0.1, ``'explosion'`` above 10, else ``'non-trivial'``."""
    return "identity" if median < 0.1 else "explosion" if median > 10 else "non-trivial"


def critical_beta(betas: Sequence[float], log10_r: Sequence[float]) -> float | None:
    """The first beta where a mean ``log10`` ratio crosses 0 from above (linear interpolation
    between grid points), or ``None`` when the grid has no crossing."""
    b = np.asarray(betas, dtype=np.float64)
    y = np.asarray(log10_r, dtype=np.float64)
    if b.ndim != 1 or b.shape != y.shape or not (np.diff(b) > 0).all():
        raise ParameterError("betas", f"betas must be increasing and log10_rh of the same length, got {len(b)} and "
                                      f"{len(y)} values")
    x = critical_betas(b, y)
    return None if np.isnan(x) else float(x)


def critical_betas(betas: np.ndarray, log10_r: np.ndarray) -> np.ndarray:
    """:func:`critical_beta` of every row of ``log10_r`` (``(..., len(betas))``, increasing ``betas``
    checked by the caller): an array of the leading shape, NaN where a row has no crossing."""
    b, y = np.asarray(betas, dtype=np.float64), np.asarray(log10_r, dtype=np.float64)
    down = (y[..., :-1] > 0) & (y[..., 1:] <= 0)
    i = np.argmax(down, axis=-1)[..., None]  # the first crossing (0 where there is none: masked below)
    y0, y1 = np.take_along_axis(y, i, -1)[..., 0], np.take_along_axis(y, i + 1, -1)[..., 0]
    i = i[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        x = b[i] + (b[i + 1] - b[i]) * y0 / (y0 - y1)
    return np.where(down.any(-1), x, np.nan)
