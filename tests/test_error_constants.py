"""Error constants (issue 29; docs/mathematics.md, "Error constants"): in the scalar linear cases
(width 1, identity) the normalised terminal error at the deepest depth is the derived limit,
corrected by the declared next term and by the nested reference, within 3 standard errors.

Sizes: the per-draw error |H_1| |B'| is heavy-tailed (a log-normal times a Gaussian): its
coefficient of variation is about 2 for the SDE and 1.5 for fBm, so 4096 and 2048 draws give
standard errors of about 3% and 3.5%, and 3 of them a window of 9-11% around the constant; a
constant off by its reference correction (30% at m = 2) or by a factor sqrt(2) falls outside."""

import math

import pytest

import deeplimits as dl
from deeplimits.orders import Term, expected_constant

KURTZ_PROTTER = math.sqrt(2) / math.pi  # E|h_0| E|B'_1| / sqrt(2), h_0 ~ N(0, 1)


def within_3_se(r):
    c = r.normalised_terminal()
    assert c is not None and abs(c["value"] - c["theory"]) <= 3 * c["stderr"], r.report()
    return c


@pytest.mark.parametrize("reference", [2048, 512])
def test_euler_maruyama_constant_with_a_nested_reference(reference):
    # reference 512 is only m = 2 times finer than depth 256: the constant is seen times sqrt(1 - 1/m)
    r = dl.strong_convergence("sde", width=1, activation="identity", depths=[32, 64, 128, 256], draws=4096,
                              reference=reference, chunk=4096, seed=4)
    c = within_3_se(r)
    assert r.terminal_constant == pytest.approx(KURTZ_PROTTER)
    assert c["theory"] == pytest.approx(KURTZ_PROTTER * math.sqrt(1 - 256 / reference))
    assert "error constant: L^1/2 E|H_1-h_L| at depth 256" in r.report()


def test_young_euler_constant_at_h_06_corrected_by_the_next_term():
    # L^(2H-1) (H_1 - h_L) -> H_1 / 2 (Neuenkirch & Nourdin 2007); the next term L^(2-4H) is -1/4 of it
    r = dl.strong_convergence("fbm", width=1, activation="identity", hurst=0.6, depths=[64, 128, 256, 512],
                              draws=2048, reference=4096, chunk=512, seed=7)
    c = within_3_se(r)
    limit = 0.5 * math.sqrt(2 / math.pi) * math.exp(0.5)
    assert r.terminal_constant == pytest.approx(limit)
    assert c["theory"] == pytest.approx(limit * (1 - 512 ** -0.2 / 4))  # the unshared term: no reference factor


def test_constants_only_where_the_limit_law_is_known():
    assert dl.pair("sde", width=2, activation="identity").order.constant is None
    assert dl.pair("sde", width=1).order.constant is None  # tanh
    assert dl.pair("fbm", width=1, activation="identity", hurst=0.6, corrected=True).order.constant is None
    r = dl.strong_convergence("sde", width=2, depths=[8, 16, 32], draws=16, reference=256, seed=1)
    assert r.normalised_terminal() is None and "error constant" not in r.report()


def test_expected_constant_factors():
    fl, co, own = Term(0.5, 0, "fluctuation"), Term(1.0), Term(0.2, 0, "unshared")
    assert expected_constant(2.0, fl, 64, 256) == pytest.approx(2.0 * math.sqrt(1 - 64 / 256))
    assert expected_constant(2.0, co, 64, 256) == pytest.approx(2.0 * (1 - 64 / 256))
    assert expected_constant(2.0, own, 64, 256, (-0.25, 0.2)) == pytest.approx(2.0 * (1 - 0.25 * 64 ** -0.2))
    assert expected_constant(2.0, fl, 64) == 2.0
