"""The phase boundary of r_p across depths (Marion et al., JMLR 2025, Fig. 7(b);
docs/published.md, "The gradients' phase boundary"): the summary on ratios of known law, and a
small run of the study."""

import json
import math

import numpy as np
import pytest

from deeplimits.errors import ParameterError
from deeplimits.studies.propagation.boundary import (
    BoundaryResult,
    gradient_boundary,
    plan_gradient_boundary,
)


def _power_law_result(rho, c, depths, betas, draws=6, noise=0.0, seed=0):
    """A result whose mean log10 r_p is log10(c L^(rho - beta)) exactly (plus, per draw, a centred
    noise of size ``noise`` that cancels in the mean over draws)."""
    plan = plan_gradient_boundary([0.7], betas, depths, width=4, n_in=4, draws=draws, inputs=1)
    b, L = np.asarray(betas), np.asarray(depths, dtype=float)
    mean = np.log10(c) + (rho - b[None, :]) * np.log10(L)[:, None]  # (depths, betas)
    eps = np.random.default_rng(seed).standard_normal((draws, 1, 1)) * noise
    eps -= eps.mean(0)
    rp = (mean[None] + eps).tolist()
    return BoundaryResult(plan, [rp], [rp], 0.0)


def test_crossings_band_flat_point_and_extrapolation_of_a_power_law():
    """For r_p = c L^(rho - beta): the crossing of 0 is rho + log10(c) / log10(L), the band
    |log10 r_p| < 1 is rho + (log10(c) -+ 1) / log10(L), r_p is flat in depth at beta = rho, and
    the crossing extrapolated in 1/log10(L) is rho: exact up to the linear interpolation between
    grid points, which is exact here (log10 r_p is linear in beta)."""
    rho, c, depths = 0.55, 1.5, [1000, 3000, 10000]
    betas = [round(0.2 + 0.01 * i, 10) for i in range(91)]
    rec = _power_law_result(rho, c, depths, betas, noise=0.05).summary()[0]
    for L, x, band in zip(depths, rec["crossing_p"], rec["band_p"]):
        assert x == pytest.approx(rho + math.log10(c) / math.log10(L), abs=1e-9)
        assert band == pytest.approx([rho + (math.log10(c) - 1) / math.log10(L),
                                      rho + (math.log10(c) + 1) / math.log10(L)], abs=1e-9)
    assert rec["flat_p"] == pytest.approx([rho, rho], abs=1e-9)
    assert rec["limit_p"] == pytest.approx(rho, abs=1e-9)
    # the intervals resample the draws: with a noise common to every depth and beta of a draw they
    # contain the point estimate
    for x, ci in zip(rec["crossing_p"], rec["crossing_p_ci"]):
        assert ci[0] <= x <= ci[1]


def test_a_ratio_that_never_crosses_has_no_crossing():
    rec = _power_law_result(2.0, 1.0, [100, 300], [0.2, 0.5, 1.0]).summary()[0]
    assert rec["crossing_p"] == [None, None] and rec["limit_p"] is None
    assert rec["crossing_p_ci"] == [[None, None], [None, None]]


def test_small_run_depths_share_their_weights_and_the_result_round_trips(tmp_path):
    res = gradient_boundary([0.5, 0.9], [0.2, 0.5, 0.8, 1.1], [20, 40], width=4, n_in=4, draws=3, inputs=2)
    assert np.asarray(res.log10_rp).shape == (2, 3, 2, 4)
    again = BoundaryResult.from_dict(json.loads(json.dumps(res.to_dict(), allow_nan=False)))
    assert again.summary() == res.summary() and "r_p crosses 0" in res.report()
    assert res.figures(str(tmp_path)) == [str(tmp_path / "boundary.png")]


@pytest.mark.parametrize("kwargs, match", [
    (dict(depths=[1000]), "depths must hold at least 2 depths"),
    (dict(draws=1), "draws must be at least 2"),
    (dict(depths=[5, 100]), "depths"),
    (dict(hursts=[1.2]), "hursts"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        plan_gradient_boundary(**{**dict(width=4, n_in=4), **kwargs})
