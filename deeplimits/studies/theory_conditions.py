"""The conditions of the high-probability bounds, with their numbers (Marion, Fermanian, Biau &
Vert, JMLR 2025, Proposition 4 under Assumptions A1-A2; docs/theory.md).

* (A1) the entries of ``sqrt(d) V_k`` are centred, i.i.d., of unit variance and
  ``s^2``-sub-Gaussian (``E exp(lambda X) <= exp(lambda^2 s^2 / 2)``), ``s >= 1``:
  :func:`subgaussian_constant` (``s = 1`` for the Gaussian, Rademacher and uniform laws);
* (A2) ``||h||^2 / 2 <= E ||g(h, W)||^2 <= ||h||^2`` (an equality on the left for res-3,
  ``g = ReLU(W h)``, with a symmetric law) and ``E ||g(h, W)||^8 <= C ||h||^8`` for every h:
  :func:`moment_constant`;
* lower bound (i): ``d >= 64``, ``alpha^2 <= 2 / ((sqrt(C) + 16 s^4) d)`` and
  ``2 L exp(-d / (64 alpha^2 s^2)) <= delta / 11``; upper bound (ii):
  ``alpha^2 <= 1 / (C (d + 128 s^4))`` (:func:`high_probability_conditions`).

The copies of the paper available to us are damaged where the square root of C stands in (i):
the condition is computed with ``sqrt(C)`` and with ``C`` and is met only when both hold.

The eighth moment, exactly: with ``||h|| = 1`` the rows of ``W`` give i.i.d.
``Y_i = ReLU(u_i)^2``, ``u = w . h``, so ``||g||^8 = (sum_i Y_i)^4`` and its mean is a
polynomial in the moments ``E Y^k = E u^(2k) / 2`` (``u`` is symmetric), which follow from the
cumulants ``kappa_2m(u) = kappa_2m(X) sum_j h_j^(2m) / d^m`` of the law ``X`` of ``sqrt(d) W``
(:func:`relu_moment_ratio`). For Gaussian ``W`` it is ``E[N (N+2) (N+4) (N+6)] / d^4`` with
``N ~ Binomial(d, 1/2)`` for every h (:func:`relu_moment_ratio_gaussian`).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from .. import _validate as V_
from ..errors import ParameterError

__all__ = ["STRUCTURAL", "subgaussian_constant", "law_mgf", "relu_moment_ratio", "relu_moment_ratio_gaussian",
           "relu_moment_ratio_monte_carlo", "moment_constant", "high_probability_constants",
           "high_probability_conditions"]

STRUCTURAL = ("block", "A1")
"""The names of the structural conditions (the block, (A1)) in :func:`high_probability_conditions`."""
STORED_STRUCTURAL = ("res-3", "A1")
"""The names the structural conditions had in records stored before :data:`STRUCTURAL`."""

#: random directions (besides the axes and the diagonal) at which the supremum over h is estimated
DIRECTIONS = 256


def _law(law):
    """The driver of ``law`` (a registered name or a :class:`~deeplimits.paths.Driver`) if it is an
    i.i.d. law declaring its sub-Gaussian constant and cumulants, else a one-line error naming ``law``."""
    from ..paths import Driver, make_driver

    drv = law if isinstance(law, Driver) else make_driver(V_.choice("law", law, _declaring()))
    if not (drv.independent and drv.subgaussian is not None and drv.cumulants is not None):
        raise ParameterError("law", f"law must be an i.i.d. law declaring its sub-Gaussian constant and cumulants "
                                    f"({', '.join(_declaring())}), got {drv.name!r}")
    return drv


def _declaring() -> tuple[str, ...]:
    """The registered driver names whose law declares (A1)'s constant."""
    from ..paths import make_driver, registered_drivers

    out = []
    for name in registered_drivers():
        try:
            drv = make_driver(name)
        except ParameterError:  # a driver with a required parameter: not an i.i.d. law
            continue
        if drv.independent and drv.subgaussian is not None and drv.cumulants is not None:
            out.append(name)
    return tuple(out)


def _has_constants(driver) -> bool:
    return bool(driver.independent and driver.subgaussian is not None and driver.cumulants is not None)


def subgaussian_constant(law) -> float:
    """``s`` of (A1) for the entries of ``sqrt(d) V`` with law ``law`` (a name or a driver:
    :attr:`~deeplimits.paths.Driver.subgaussian`)."""
    return float(_law(law).subgaussian)


def law_mgf(law: str, lam) -> np.ndarray:
    """``E exp(lambda X)`` of the unit-variance law: ``exp(lambda^2 / 2)`` (Gaussian),
    ``cosh(lambda)`` (Rademacher), ``sinh(sqrt(3) lambda) / (sqrt(3) lambda)`` (uniform)."""
    return _law(law).mgf(np.asarray(lam, dtype=np.float64))


def _moment_ratio(law, d: int, p4, p6, p8) -> np.ndarray:
    """``E ||ReLU(W h)||^8`` at ``||h|| = 1`` from the power sums ``p_2m = sum_j h_j^(2m)`` (``law``: a driver)."""
    k4, k6, k8 = law.cumulants
    c2, c4, c6, c8 = 1.0 / d, k4 * np.asarray(p4) / d ** 2, k6 * np.asarray(p6) / d ** 3, k8 * np.asarray(p8) / d ** 4
    m4 = c4 + 3 * c2 ** 2  # moments of a symmetric u from its cumulants
    m6 = c6 + 15 * c4 * c2 + 15 * c2 ** 3
    m8 = c8 + 28 * c6 * c2 + 35 * c4 ** 2 + 210 * c4 * c2 ** 2 + 105 * c2 ** 4
    y1, y2, y3, y4 = c2 / 2, m4 / 2, m6 / 2, m8 / 2  # E Y^k = E u^(2k) / 2
    return (d * y4 + 4 * d * (d - 1) * y3 * y1 + 3 * d * (d - 1) * y2 ** 2 + 6 * d * (d - 1) * (d - 2) * y2 * y1 ** 2
            + d * (d - 1) * (d - 2) * (d - 3) * y1 ** 4)


def relu_moment_ratio(law: str, h) -> np.ndarray:
    """``E ||ReLU(W h)||^8 / ||h||^8`` exactly, for ``W`` with i.i.d. entries ``X / sqrt(d)``
    of law ``law``, at each row of ``h`` (``(..., d)``, non-zero rows)."""
    h = np.asarray(h, dtype=np.float64)
    if h.ndim < 1 or h.shape[-1] < 1 or not np.isfinite(h).all() or (np.abs(h).sum(-1) == 0).any():
        raise ParameterError("h", f"h must be an array of finite non-zero rows (..., d), got shape {h.shape}")
    u = h / np.linalg.norm(h, axis=-1, keepdims=True)
    q = u ** 2
    return _moment_ratio(_law(law), h.shape[-1], (q ** 2).sum(-1), (q ** 3).sum(-1), (q ** 4).sum(-1))


def relu_moment_ratio_gaussian(width: int) -> float:
    """``E[N (N+2) (N+4) (N+6)] / d^4`` with ``N ~ Binomial(d, 1/2)``: ``E ||ReLU(W h)||^8 / ||h||^8``
    for Gaussian ``W`` (``||g||^2 / ||h||^2 = chi^2_N / d``), the same for every h (about 0.083 at d = 100)."""
    d = V_.integer("width", width)
    n = np.arange(d + 1, dtype=np.float64)
    log_pmf = np.array([math.lgamma(d + 1) - math.lgamma(k + 1) - math.lgamma(d - k + 1) for k in range(d + 1)])
    pmf = np.exp(log_pmf - d * math.log(2.0))
    return float((pmf * n * (n + 2) * (n + 4) * (n + 6)).sum() / d ** 4)


def relu_moment_ratio_monte_carlo(law: str, h, draws: int = 20_000, seed: int = 0,
                                  z: float = 3.0) -> tuple[float, float, float]:
    """A Monte Carlo estimate of ``E ||ReLU(W h)||^8 / ||h||^8`` at one direction ``h`` (``(d,)``)
    over ``draws`` matrices ``W``: ``(mean, standard error, mean + z * standard error)``."""
    h = np.asarray(h, dtype=np.float64)
    if h.ndim != 1 or not np.isfinite(h).all() or not np.abs(h).sum():
        raise ParameterError("h", f"h must be a finite non-zero vector, got shape {h.shape}")
    law, draws = _law(law), V_.integer("draws", draws, low=2)
    d = h.size
    u = h / np.linalg.norm(h)
    rng = np.random.default_rng(V_.integer("seed", seed, low=0))
    chunk = max(1, (1 << 22) // (d * d))
    vals = []
    for start in range(0, draws, chunk):
        shape = (min(chunk, draws - start), d, d)
        x = law.entries(rng, shape)
        s = (np.maximum(x @ u / math.sqrt(d), 0.0) ** 2).sum(-1)
        vals.append(s ** 4)
    v = np.concatenate(vals)
    mean, se = float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))
    return mean, se, mean + z * se


@functools.lru_cache(maxsize=64)
def moment_constant(law: str, width: int) -> dict:
    """``C`` of (A2) for res-3 (``g = ReLU(W h)``) at width ``d``.

    Returns ``{'C', 'estimate', 'method'}``: for Gaussian ``W`` the exact
    :func:`relu_moment_ratio_gaussian` (``C = estimate``). For the uniform and Rademacher laws the
    ratio depends on the direction of h: ``estimate`` is its largest exact value
    (:func:`relu_moment_ratio`) over the coordinate axes, the diagonal and :data:`DIRECTIONS`
    random directions (an estimate of the supremum, from below), and ``C`` an upper bound on the
    supremum: the ratio is convex in ``p_4`` and linear in ``p_6``, ``p_8``, with
    ``d^(1-m) <= p_2m <= 1``, so its largest value over that box, at a vertex, bounds every h."""
    law, d = _law(law), V_.integer("width", width)
    if law.gaussian:
        c = relu_moment_ratio_gaussian(d)
        return {"C": c, "estimate": c, "method": "exact: E[N(N+2)(N+4)(N+6)] / d^4, N ~ Binomial(d, 1/2)"}
    rng = np.random.default_rng(0)
    h = np.concatenate([np.eye(1, d), np.ones((1, d)), rng.standard_normal((DIRECTIONS, d))])
    est = float(relu_moment_ratio(law, h).max())
    box = itertools.product((1.0 / d, 1.0), (d ** -2.0, 1.0), (d ** -3.0, 1.0))
    bound = max(float(_moment_ratio(law, d, *p)) for p in box)
    return {"C": max(bound, est), "estimate": est,
            "method": f"upper bound over all h (largest exact value over the axes, the diagonal and {DIRECTIONS} "
                      f"random directions: {est:.5g})"}


def _stated_for(arch) -> bool:
    """Whether the block of ``arch`` (a name or a :class:`~deeplimits.blocks.Block`) declares
    :attr:`~deeplimits.blocks.Block.high_probability` (res-3)."""
    from ..blocks import Block, block_class

    return bool((type(arch) if isinstance(arch, Block) else block_class(arch)).high_probability)


def high_probability_constants(arch, driver, width: int) -> dict | None:
    """``{'s', 'C', 'C_estimate', 'C_method'}`` of (A1)-(A2) for a block the bounds are stated for
    (res-3) with an i.i.d. law declaring its constants, else ``None`` (the constants are not defined)."""
    if not (_stated_for(arch) and _has_constants(driver)):
        return None
    c = moment_constant(driver, V_.integer("width", width))
    return {"s": float(driver.subgaussian), "C": c["C"], "C_estimate": c["estimate"], "C_method": c["method"]}


def _condition(bound: str, name: str, holds: bool, text: str, value=None, limit=None) -> dict:
    return {"bound": bound, "name": name, "holds": bool(holds), "value": value, "limit": limit, "text": text,
            "structural": name in STRUCTURAL}


def is_structural(condition: dict) -> bool:
    """Whether a condition of :func:`high_probability_conditions` is structural (the block, (A1)); a
    record stored before the key was written names them as :data:`STORED_STRUCTURAL` does."""
    return condition.get("structural", condition["name"] in STORED_STRUCTURAL)


def high_probability_conditions(arch: str, driver, width: int, beta: float, depth: int,
                                delta: float = 0.25) -> list[dict]:
    """Every condition of the high-probability bounds at ``alpha = depth^-beta``, with its numbers:
    a list of ``{'bound': 'lower'|'upper', 'name', 'holds', 'value', 'limit', 'text'}``
    (``value <= limit`` is the condition where both are given). The architecture (res-3) and
    (A1) (an i.i.d. law declaring its constants) are structural (:data:`STRUCTURAL`); with them, ``s``
    (:func:`subgaussian_constant`) and ``C`` (:func:`moment_constant`) give the conditions on
    ``d`` and ``alpha`` (both forms, ``sqrt(C)`` and ``C``, of the first condition of (i))."""
    beta, depth = V_.real("beta", beta, low=0.0), V_.integer("depth", depth)
    d = V_.integer("width", width)
    delta = V_.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    out = []
    name = getattr(arch, "name", arch)
    stated, iid = _stated_for(arch), _has_constants(driver)
    for b in ("lower", "upper"):
        out.append(_condition(b, STRUCTURAL[0], stated, f"the bounds are stated for this block (res-3, V ReLU(W h); "
                                                        f"got {name})"))
        out.append(_condition(b, STRUCTURAL[1], iid, f"(A1) i.i.d. sub-Gaussian weights declaring their constants "
                                                     f"({', '.join(_declaring())}), got {driver.name}"))
    if not (stated and iid):
        return out
    s, c = float(driver.subgaussian), moment_constant(driver, d)["C"]
    a2 = float(depth) ** (-2.0 * beta)
    out.append(_condition("lower", "d >= 64", d >= 64, f"d = {d} >= 64", d, 64))
    for form, cc in (("sqrt(C)", math.sqrt(c)), ("C", c)):
        lim = 2.0 / ((cc + 16 * s ** 4) * d)
        out.append(_condition("lower", f"alpha^2, {form}", a2 <= lim,
                              f"alpha^2 = {a2:.4g} <= 2 / (({form} + 16 s^4) d) = {lim:.4g} (C = {c:.4g}, s = {s:g})",
                              a2, lim))
    tail = 2.0 * depth * math.exp(-d / (64.0 * a2 * s ** 2))
    out.append(_condition("lower", "tail", tail <= delta / 11,
                          f"2 L exp(-d / (64 alpha^2 s^2)) = {tail:.4g} <= delta / 11 = {delta / 11:.4g}",
                          tail, delta / 11))
    lim = 1.0 / (c * (d + 128 * s ** 4))
    out.append(_condition("upper", "alpha^2", a2 <= lim,
                          f"alpha^2 = {a2:.4g} <= 1 / (C (d + 128 s^4)) = {lim:.4g} (C = {c:.4g}, s = {s:g})", a2, lim))
    return out
