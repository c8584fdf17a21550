"""The gradient analogue of (A2) for res-3 (Marion et al., JMLR 2025, Proposition 6 under (A4);
docs/theory.md, "The gradient analogue of (A2)"): the exact Gaussian moments of ``J^T z`` against
Monte Carlo, as (A2)'s are checked (tests/test_theory_conditions.py). Every Monte Carlo check is
seeded and allows 4 standard errors of its estimate (a two-sided miss has probability 6e-5)."""

import math

import numpy as np
import pytest

from deeplimits.errors import ParameterError
from deeplimits.studies import gradient_conditions as G
from deeplimits.studies.theory_conditions import relu_moment_ratio_gaussian

D = 12


def _within(mc, exact, k=4.0):
    mean, se, _ = mc
    assert abs(mean - exact) <= k * se, (mean, se, exact)


@pytest.mark.parametrize("z", ["ones", "axis", "orthogonal", "random"])
def test_second_moment_at_a_fixed_vector_is_the_closed_form(z):
    """E ||W^T D z||^2 / ||z||^2 = 1/2 + ((sum z)^2 - ||z||^2) / (2 pi d ||z||^2), whatever h."""
    rng = np.random.default_rng(1)
    vec = {"ones": np.ones(D), "axis": np.eye(D)[3], "orthogonal": np.r_[np.ones(D // 2), -np.ones(D // 2)],
           "random": rng.standard_normal(D)}[z]
    exact = G.jacobian_second_moment_gaussian(vec)
    h = rng.standard_normal(D)
    _within(G.jacobian_moment_monte_carlo("gaussian", h, vec, draws=40_000, seed=2), exact)
    if z == "ones":
        assert exact == pytest.approx(0.5 + (D - 1) / (2 * math.pi * D))
    if z == "orthogonal":  # below the lower bound ||z||^2 / 2 of (A4) at a fixed z, by 1 / (2 pi d)
        assert exact == pytest.approx(0.5 - 1 / (2 * math.pi * D)) and exact < 0.5


def test_eighth_moment_at_an_axis():
    """||W^T D e_k||^2 = 1{W_k h > 0} chi^2_d / d: E ... ^4 = (1/2) d (d+2) (d+4) (d+6) / d^4."""
    exact = G.jacobian_eighth_moment_axis_gaussian(D)
    assert exact == pytest.approx(0.5 * D * (D + 2) * (D + 4) * (D + 6) / D ** 4)
    h = np.random.default_rng(3).standard_normal(D)
    _within(G.jacobian_moment_monte_carlo("gaussian", h, np.eye(D)[0], power=4, draws=40_000, seed=4), exact)
    assert G.jacobian_eighth_moment_axis_gaussian(100) == pytest.approx(0.5 * 100 * 102 * 104 * 106 / 1e8)


@pytest.mark.parametrize("power", [1, 4])
def test_the_backward_vector_has_the_forward_increments_law(power):
    """R = ||W^T D V^T p||^2 / ||p||^2 has the law of (chi^2_d / d)(chi^2_N / d): mean 1/2, and
    E R^4 = d (d+2) (d+4) (d+6) / d^4 times (A2)'s Gaussian constant."""
    m = G.backward_moments_gaussian(D)
    assert m["mean"] == 0.5
    assert m["fourth"] == pytest.approx(D * (D + 2) * (D + 4) * (D + 6) / D ** 4 * relu_moment_ratio_gaussian(D))
    h = np.random.default_rng(5).standard_normal(D)
    _within(G.jacobian_moment_monte_carlo("gaussian", h, power=power, draws=40_000, seed=6),
            m["mean"] if power == 1 else m["fourth"])


@pytest.mark.parametrize("law", ["uniform", "rademacher"])
def test_other_laws_keep_the_mean_one_half_at_the_backward_vector(law):
    """For any unit-variance i.i.d. law, E ||W^T D q||^2 = sum_j E[1{W_j h > 0} ||W_j||^2] q_j^2 +
    cross terms of mean zero (q = V^T e_1 independent of W with centred entries): E 1{W_j h > 0}
    ||W_j||^2 = 1/2 by the symmetry W -> -W when W h = 0 has probability 0 (h generic), so the mean
    is E ||q||^2 / 2 = 1/2."""
    h = np.random.default_rng(7).standard_normal(D)
    _within(G.jacobian_moment_monte_carlo(law, h, draws=40_000, seed=8), 0.5)


def test_a_wrong_closed_form_is_seen():
    """The check has the power to see a wrong constant: the exact value at z = (1, ..., 1) is 0.632 at
    d = 12, and the Monte Carlo estimate rejects 1/2 (the lower bound) by many standard errors."""
    mean, se, _ = G.jacobian_moment_monte_carlo("gaussian", np.ones(D), np.ones(D), draws=40_000, seed=9)
    assert abs(mean - 0.5) > 10 * se


@pytest.mark.parametrize("call, match", [
    (lambda: G.jacobian_second_moment_gaussian(np.zeros(3)), "z must be a finite non-zero vector"),
    (lambda: G.jacobian_moment_monte_carlo("gaussian", np.ones(3), np.ones(4)), "z must have the length of h"),
    (lambda: G.jacobian_moment_monte_carlo("gaussian", np.ones(3), power=5), "power"),
    (lambda: G.jacobian_moment_monte_carlo("smooth", np.ones(3)), "law"),
    (lambda: G.jacobian_moment_monte_carlo("gaussian", np.ones(3), draws=1), "draws"),
])
def test_bad_input(call, match):
    with pytest.raises(ParameterError, match=match):
        call()
