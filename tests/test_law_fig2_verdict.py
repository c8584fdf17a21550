"""The verdict of Marion et al.'s Fig. 2 (deeplimits.studies.law.fig2_verdict): exact binomial tests
of the draws below the limit's three quartiles. On draws of the limit's own law the counts below
its quartiles are multinomial (each quarter 1/4), so their law is sampled here directly, without
simulating a network: its size (told ``differs``) at most the level, its power (``agrees`` at the
paper's 10^4 draws), and ``differs`` on a law whose first quartile sits at the 0.3 quantile."""

import numpy as np
import pytest

from deeplimits.studies.expansion_fit import LEVEL
from deeplimits.studies.law.fig2_verdict import depth_reading, fig2_verdict


def _counts(rng, n, probs=(0.25, 0.25, 0.25, 0.25)):
    """Draws below each of three quantiles when the four quarters have probabilities ``probs``."""
    return np.cumsum(rng.multinomial(n, probs))[:3]


def _wilson_upper(k, n, z=1.96):
    p = k / n
    return (p + z * z / (2 * n) + z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


@pytest.mark.slow
@pytest.mark.parametrize("n", [400, 10_000])
def test_on_the_limits_law_differs_at_most_at_the_level(n):
    """Size: 1000 tables of the limit's own law; told ``differs`` in at most the level (upper 95%
    Wilson bound at most 2% at the level 1%; Bonferroni over the three exact tests keeps it below)."""
    rng = np.random.default_rng(0)
    differs = sum(depth_reading(_counts(rng, n), n)["reading"] == "differs" for _ in range(1000))
    assert _wilson_upper(differs, 1000) <= 2 * LEVEL, differs


@pytest.mark.slow
def test_at_the_papers_size_the_limits_law_agrees_and_a_shifted_law_differs():
    """Power: at 10^4 draws the limit's law is told ``agrees`` in nearly every table (each fraction's
    90% interval is about +-0.007 inside the margin 0.05), and a law with 30% of its mass below the
    limit's first quartile (a quartile off by 0.05 in probability) is told ``differs`` in every table."""
    rng = np.random.default_rng(1)
    agree = [depth_reading(_counts(rng, 10_000), 10_000) for _ in range(50)]
    assert sum(r["reading"] == "agrees" for r in agree) >= 49 and min(r["power"] for r in agree) > 0.99
    shifted = [depth_reading(_counts(rng, 10_000, (0.30, 0.20, 0.25, 0.25)), 10_000) for _ in range(50)]
    assert all(r["reading"] == "differs" for r in shifted)


def test_few_draws_are_insufficient_and_say_how_many_would_decide():
    r = depth_reading([25, 50, 75], 100)  # exactly the limit's quarters: 90% intervals +-0.08, wider than the margin
    assert r["reading"] == "insufficient evidence" and r["power"] < 0.9 and r["draws_to_decide"] > 100
    verdict, note = fig2_verdict([100], [r])
    assert verdict == "insufficient evidence" and f"{r['draws_to_decide']} draws" in note


def test_the_deepest_depth_decides_and_a_shrinking_difference_is_pre_asymptotic():
    near = depth_reading([2500, 5000, 7500], 10_000)
    far = depth_reading([3500, 6000, 8000], 10_000)
    nearer = depth_reading([3000, 5500, 7800], 10_000)
    assert near["reading"] == "agrees" and far["reading"] == nearer["reading"] == "differs"
    assert fig2_verdict([10, 1000], [far, near])[0] == "agrees"
    assert fig2_verdict([10, 1000], [far, nearer])[0] == "pre-asymptotic"
    assert fig2_verdict([10, 1000], [nearer, far])[0] == "disagrees"
