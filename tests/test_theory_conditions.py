"""The conditions of the high-probability bounds (Marion et al., JMLR 2025, Proposition 4,
Assumptions A1-A2; docs/theory.md): the constants s and C on exact small cases, and each
condition named where it fails."""

import itertools
import math

import numpy as np
import pytest

import deeplimits as dl
from deeplimits.studies import theory as T
from deeplimits.studies import theory_conditions as TC

LAWS = ("gaussian", "uniform", "rademacher")


@pytest.mark.parametrize("law", LAWS)
def test_subgaussian_constant_is_one_and_no_smaller(law):
    """E exp(lambda X) <= exp(lambda^2 / 2) on a grid of lambda (exact mgfs); s = 0.95 fails at
    small lambda, where the mgf is 1 + lambda^2 / 2 + O(lambda^4) (unit variance)."""
    assert TC.subgaussian_constant(law) == 1.0
    lam = np.concatenate([-np.geomspace(1e-3, 20, 200), np.geomspace(1e-3, 20, 200)])
    assert (TC.law_mgf(law, lam) <= np.exp(lam ** 2 / 2) * (1 + 1e-13)).all()  # equality for the Gaussian
    assert (np.log(TC.law_mgf(law, [0.3])) > 0.95 ** 2 * 0.3 ** 2 / 2).all()


def test_binomial_formula_is_the_exact_gaussian_moment():
    """d = 1: E ReLU(x)^8 = E x^8 / 2 = 105 / 2; the binomial formula agrees with the cumulant
    formula at every direction (Gaussian cumulants vanish) and is about 0.083 at d = 100."""
    assert TC.relu_moment_ratio_gaussian(1) == pytest.approx(52.5, rel=1e-14)
    rng = np.random.default_rng(0)
    for d in (2, 3, 7, 64):
        h = rng.standard_normal((5, d))
        np.testing.assert_allclose(TC.relu_moment_ratio("gaussian", h), TC.relu_moment_ratio_gaussian(d), rtol=1e-12)
    assert TC.relu_moment_ratio_gaussian(100) == pytest.approx(0.0828536, rel=1e-6)
    assert TC.moment_constant("gaussian", 100)["C"] == TC.relu_moment_ratio_gaussian(100)


def test_exact_small_cases_of_the_other_laws():
    """d = 1: E X^8 / 2 (uniform: 3^4 / 9 / 2 = 4.5, Rademacher: 1/2); Rademacher along an axis:
    ||ReLU(W e_1)||^2 = N / d with N ~ Binomial(d, 1/2), so the ratio is E N^4 / d^4."""
    assert TC.relu_moment_ratio("uniform", [[1.0]])[0] == pytest.approx(4.5, rel=1e-13)
    assert TC.relu_moment_ratio("rademacher", [[-2.0]])[0] == pytest.approx(0.5, rel=1e-13)
    for d in (2, 5, 30):
        n = np.arange(d + 1)
        exact = sum(math.comb(d, k) * k ** 4 for k in n) / 2 ** d / d ** 4
        assert TC.relu_moment_ratio("rademacher", np.eye(d)[[0]])[0] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("law", LAWS)
def test_exact_moment_against_monte_carlo(law):
    """The exact ratio at an axis, the diagonal and a random direction (d = 5) lies within 4
    standard errors of a Monte Carlo mean over 40 000 matrices (a 4-sigma two-sided band fails
    by chance with probability 6e-5 per comparison)."""
    d = 5
    dirs = np.stack([np.eye(d)[0], np.ones(d), np.random.default_rng(1).standard_normal(d)])
    exact = TC.relu_moment_ratio(law, dirs)
    for k, h in enumerate(dirs):
        mean, se, ucb = TC.relu_moment_ratio_monte_carlo(law, h, draws=40_000, seed=k)
        assert abs(mean - exact[k]) <= 4 * se, (law, k, mean, se, exact[k])
        assert ucb == pytest.approx(mean + 3 * se)
    gauss = TC.relu_moment_ratio_monte_carlo("gaussian", np.ones(d), draws=40_000, seed=9)
    assert abs(gauss[0] - TC.relu_moment_ratio_gaussian(d)) <= 4 * gauss[1]


@pytest.mark.parametrize("law", ("uniform", "rademacher"))
def test_moment_constant_bounds_every_direction(law):
    """C (the bound over the box of power sums) is at least the exact ratio at 2000 random,
    sparse and axis directions, and above the estimate by less than 3% at d = 100."""
    for d in (3, 10, 100):
        c = TC.moment_constant(law, d)
        rng = np.random.default_rng(d)
        h = rng.standard_normal((2000, d)) * (rng.random((2000, d)) < rng.random((2000, 1)))
        h[np.abs(h).sum(1) == 0, 0] = 1.0
        assert TC.relu_moment_ratio(law, h).max() <= c["C"] * (1 + 1e-12)
        assert c["estimate"] <= c["C"]
    c = TC.moment_constant(law, 100)
    assert c["C"] < 1.03 * c["estimate"] and c["C"] < TC.relu_moment_ratio_gaussian(100) * 1.03


def _names(conds, bound=None, holds=False):
    return [c["name"] for c in conds if c["holds"] == holds and (bound is None or c["bound"] == bound)]


@pytest.mark.parametrize("law", LAWS)
def test_all_conditions_hold_at_the_published_criticality_protocol(law):
    conds = TC.high_probability_conditions("res-3", dl.make_driver(law), 100, 0.5, 1000, 0.25)
    assert _names(conds) == [] and len(conds) == 9
    assert T.high_probability_unmet("res-3", dl.make_driver(law), 100, 0.5, 1000) == {"lower": [], "upper": []}


def test_the_alpha_condition_of_the_lower_bound_holds_from_about_L_800():
    """d = 100, uniform weights, beta = 1/2 (alpha^2 = 1/L): 2 / ((sqrt(C) + 16) d) = 0.0012278
    holds from L = 815 on; the C form (0.0012435) from L = 805: at L = 810 only the sqrt(C)
    form fails, and the lower bound is then unmet (both forms must hold)."""
    drv = dl.make_driver("uniform")
    lim = 2 / ((math.sqrt(TC.moment_constant("uniform", 100)["C"]) + 16) * 100)
    first = math.ceil(1 / lim)
    assert first == 815
    assert _names(TC.high_probability_conditions("res-3", drv, 100, 0.5, first)) == []
    assert _names(TC.high_probability_conditions("res-3", drv, 100, 0.5, first - 1)) == ["alpha^2, sqrt(C)"]
    conds = TC.high_probability_conditions("res-3", drv, 100, 0.5, 810)
    assert _names(conds) == ["alpha^2, sqrt(C)"] and "alpha^2, C" in _names(conds, holds=True)
    unmet = T.high_probability_unmet("res-3", drv, 100, 0.5, 810)
    assert unmet["upper"] == [] and unmet["lower"] == [
        "alpha^2 = 0.001235 <= 2 / ((sqrt(C) + 16 s^4) d) = 0.001228 (C = 0.08352, s = 1)"]


def test_each_condition_fails_and_is_named():
    iid = dl.make_driver("uniform")
    conds = TC.high_probability_conditions("res-1", iid, 100, 0.5, 1000)
    assert _names(conds) == ["block", "block"] and len(conds) == 4  # no constants for another network
    conds = TC.high_probability_conditions("res-3", dl.make_driver("smooth"), 100, 0.5, 1000)
    assert _names(conds) == ["A1", "A1"]
    assert _names(TC.high_probability_conditions("res-3", iid, 40, 0.5, 100000)) == ["d >= 64"]
    # beta = 0, L = 10 (alpha = 1): every condition on alpha fails, the tail 2 L exp(-d / 64) = 4.2
    conds = TC.high_probability_conditions("res-3", iid, 100, 0.0, 10)
    assert _names(conds, "lower") == ["alpha^2, sqrt(C)", "alpha^2, C", "tail"]
    assert _names(conds, "upper") == ["alpha^2"]
    tail = next(c for c in conds if c["name"] == "tail")
    assert tail["value"] == pytest.approx(20 * math.exp(-100 / 64)) and tail["limit"] == pytest.approx(0.25 / 11)
    # the upper bound's condition: at beta = 1/4, L = 300, alpha^2 = 300^(-1/2) = 0.0577 > 1 / (C (d + 128)) = 0.0525
    conds = TC.high_probability_conditions("res-3", iid, 100, 0.25, 300)
    assert _names(conds, "upper") == ["alpha^2"] and "tail" not in _names(conds)


@pytest.mark.parametrize("call", [lambda: TC.moment_constant("cauchy", 10), lambda: TC.moment_constant("uniform", 0),
                                  lambda: TC.relu_moment_ratio("uniform", np.zeros((2, 3))),
                                  lambda: TC.relu_moment_ratio_monte_carlo("uniform", [1.0, 0.0], draws=1),
                                  lambda: TC.high_probability_conditions("res-3", dl.make_driver("uniform"), 100,
                                                                         0.5, 10, delta=0)])
def test_bad_arguments_are_refused(call):
    with pytest.raises(ValueError, match="law|width|h must|draws|delta"):
        call()
