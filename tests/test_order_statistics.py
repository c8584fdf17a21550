"""The cheaper statistics of strong_order (issue 40): the chi-square survival function without
SciPy, the bootstrap of the mean as counts times errors, quantiles without numpy.ma, a bootstrap
only as large as its interval's endpoints need, and the exact solution read only where a depth
reads it. Each is checked against the computation it replaces (to rounding, never bitwise) or,
for the resamples, against the Monte Carlo error it promises."""

import math

import numpy as np
import pytest
import torch

import deeplimits as dl
from deeplimits._stats import chi2_sf
from deeplimits.schemes.problems import linear_sde
from deeplimits.studies.scheme_order import study as scheme_order
from deeplimits.studies.fits import ENDPOINT_TOL, MIN_BOOT, _quantiles, bootstrap_fit, resamples_for

X = np.log([8, 16, 32, 64, 128, 256, 512.0])


def test_chi2_sf_is_scipys():
    from scipy.special import chdtrc

    for dof in (0.3, 1, 1.7, 2, 3, 4.5, 7, 10, 25, 60):
        for x in np.concatenate([[0.0, 1e-8, 1e-3], np.linspace(0.01, 5 * dof + 60, 200)]):
            ref = float(chdtrc(dof, x))
            assert chi2_sf(x, dof) == pytest.approx(ref, rel=1e-12, abs=1e-300), (dof, x)
    assert chi2_sf(-1.0, 2) == 1.0 and chi2_sf(math.inf, 2) == 0.0 and math.isnan(chi2_sf(math.nan, 2))


def test_quantiles_are_numpys():
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 1999, 2000):
        x = rng.normal(size=n)
        if n > 2:
            x[rng.integers(0, n, 2)] = np.nan
        for qs in ((0.025, 0.975), (0.0, 1.0), (0.5, 0.3)):
            np.testing.assert_allclose(_quantiles(x, qs), np.nanquantile(x, qs), rtol=1e-14, atol=0)
    assert all(math.isnan(v) for v in _quantiles(np.full(3, np.nan), (0.1, 0.9)))


def test_the_bootstrap_of_the_mean_is_the_resampled_mean():
    """The counts-times-errors path and the gather path see the same resamples: the same slope and
    interval up to the order of the additions."""
    rng = np.random.default_rng(1)
    e = np.abs(rng.normal(size=(300, len(X)))) * np.exp(-0.5 * X)
    fast = bootstrap_fit(X, e, np.mean, n_boot=600, seed=4)
    slow = bootstrap_fit(X, e, lambda v, axis: np.mean(v, axis=axis), n_boot=600, seed=4)
    np.testing.assert_allclose(np.hstack([fast[:2], fast[2]]), np.hstack([slow[:2], slow[2]]), rtol=1e-12)


def test_the_resamples_pin_the_endpoints_to_their_tolerance():
    """Many draws need fewer than 2000 resamples; with them the endpoints' spread over bootstrap
    seeds is the tolerance (between a third of it and twice it: 24 seeds leave no room for chance
    there). Few draws keep the most resamples."""
    rng = np.random.default_rng(0)
    e = np.abs(rng.normal(size=(4096, 1)) + 0.3 * rng.normal(size=(4096, len(X)))) * np.exp(-0.5 * X)
    b = resamples_for(X, e, 2000)
    assert MIN_BOOT <= b < 2000
    ends = np.array([bootstrap_fit(X, e, np.mean, n_boot=b, seed=s)[2] for s in range(24)])
    assert (ends.std(0, ddof=1) < 2 * ENDPOINT_TOL).all() and (ends.std(0, ddof=1) > ENDPOINT_TOL / 3).all(), ends
    assert resamples_for(X, e[:64], 2000) == 2000 and resamples_for(X, e[:1], 2000) == 2000


def test_the_exact_solution_is_read_only_on_the_finest_depths_grid(monkeypatch):
    """The reference of an exact solution is computed at the finest depth's grid points only
    (reference / max depth fewer calls), and the errors are those of computing it at every fine step."""
    gbm = linear_sde(0.1, 0.5)
    calls = []

    def exact(x0, w, t):
        calls.append(t)
        return gbm.exact(x0, w, t)

    em = dl.EulerMaruyama(gbm.drift, gbm.diffusion, noise="diagonal")
    kw = dict(depths=[8, 16, 32], draws=64, reference=256, exact=exact)
    lazy = dl.strong_order(em, [1.0], **kw)
    assert len(calls) == 32
    monkeypatch.setattr(scheme_order._SchemePair, "layer_step", lambda self, depth: self._stepper(self.scheme, depth))
    eager = dl.strong_order(em, [1.0], **kw)
    assert len(calls) == 32 + 256  # without the finest depth known: every fine step
    np.testing.assert_allclose(lazy.error, eager.error, rtol=1e-12)
    np.testing.assert_allclose(lazy.terminal_error, eager.terminal_error, rtol=1e-12)


def test_a_nan_state_is_an_infinite_error():
    """A draw whose state turns NaN has an infinite maximum error (the running maximum keeps the
    NaN, read as inf at the end), and is not finite for the statistics."""
    nan_late = dl.Scheme.of(lambda h, w, t, dt: h + w if t < 0.5 else h * math.nan, dl.StrongOrder(0.5, "", ""))
    plan = scheme_order.OrderPlan(nan_late.order, None, torch.ones(1, dtype=torch.float64), 1, [8, 16], 4, 64, 4, 0,
                                  torch.float64, None)
    mx, tm = scheme_order.scheme_errors(nan_late, plan)
    assert np.isposinf(mx).all() and np.isposinf(tm).all()
