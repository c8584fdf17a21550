"""The trained-limit verdict is a calibrated test (issue 37): on synthetic distance tables whose
truth is known, at the CPU preset's size (depths 8..256 against 2048, 5 seeds) and with the
seed-to-seed spread measured on real runs of it (benchmarks/calibrate_trained_verdict.py), it says
the wrong thing at most as often as its level, it says 'no common limit' of a plateau, it needs
evidence, and more seeds do not turn a right 'falls' into a worse verdict."""

import math

import numpy as np
import pytest

from deeplimits.diagnostics.trained_pair import LEVEL, MIN_RATE, deep_window, rate_test
from deeplimits.studies.trained_limit.presets import DEFAULTS, PRESETS

DEPTHS, R, SEEDS = PRESETS["cpu"]["depths"], PRESETS["cpu"]["reference"], DEFAULTS["seeds"]
L = np.array(DEPTHS, dtype=float)
SPREAD = (0.19, 0.06, 0.09)  # sd of log d: a seed's size, a seed's slope, a depth's wobble (benchmark's SPREAD)
TABLES = 200
# a test at level 0.01 over 200 tables: at most 6 wrong verdicts (0.01 + three binomial standard errors)
ALLOWED = math.floor(TABLES * (LEVEL + 3 * math.sqrt(LEVEL * (1 - LEVEL) / TABLES)))
PLATEAU = 0.0364  # c (1/L - 1/R + p): the deepest 4 depths fall exactly as L^-1/4 (deep_window of the preset)


def tables(f, n=TABLES, seeds=SEEDS, seed=0, spread=SPREAD):
    """``n`` seeded tables ``(seeds, depths)`` of per-seed distances ``f(L) exp(a_s + u_s x_L + e_sL)``."""
    rng = np.random.default_rng(seed)
    sa, su, se = spread
    x = np.log(L) - np.log(L).mean()
    noise = rng.normal(0, sa, (n, seeds, 1)) + rng.normal(0, su, (n, seeds, 1)) * x + rng.normal(0, se, (n, seeds, len(L)))
    return f * np.exp(noise)


def verdicts(f, **kw):
    return [rate_test(DEPTHS, t)["verdict"] for t in tables(f, **kw)]


FALLS = {"r = 1": 1 / L - 1 / R, "r = 1/2": L ** -0.5 - R ** -0.5, "L^-1/4, an exact limit": L ** -0.25}
DOES_NOT_FALL = {"constant": np.ones_like(L), "L^-0.24, an exact limit": L ** -0.24,
                 "plateau at the deep end": 1 / L - 1 / R + PLATEAU}


def test_the_plateau_of_the_rows_is_the_boundary():
    deep = np.isin(L, deep_window(DEPTHS))
    x = np.log(L[deep]) - np.log(L[deep]).mean()
    rate = -(np.log(DOES_NOT_FALL["plateau at the deep end"][deep]) * x).sum() / (x ** 2).sum()
    assert deep.sum() == 4 and rate == pytest.approx(MIN_RATE, abs=2e-3)


@pytest.mark.parametrize("name", FALLS)
def test_a_distance_that_falls_is_told_no_common_limit_at_most_at_the_level(name):
    """Measured (200 tables): 0 of 200 for each, L^-1/4 (the boundary) included; the rule before
    issue 37 (a 95% bootstrap interval of the rate over all depths below 1/4) said it of L^-1/4 in
    11 of 200."""
    assert verdicts(FALLS[name]).count("no common limit") <= ALLOWED


@pytest.mark.parametrize("name", DOES_NOT_FALL)
def test_a_distance_that_does_not_fall_is_told_falls_at_most_at_the_level(name):
    """Measured (200 tables): 0 for a constant, 0 for L^-0.24, 2 for the plateau. The rule before
    issue 37 (a 95% bootstrap interval of the rate over all depths above 1/4) said 'falls' of the
    plateau every time (rate 0.40 over 8..256, 0.25 over 32..256) and of L^-0.24 in 10 of 200."""
    assert verdicts(DOES_NOT_FALL[name]).count("falls") <= ALLOWED


def test_power_at_the_presets_size():
    """Measured: r = 1 and 1/2 fall in 200 of 200; a constant reads no common limit in 194."""
    assert verdicts(FALLS["r = 1"]).count("falls") == TABLES
    assert verdicts(FALLS["r = 1/2"]).count("falls") >= 0.95 * TABLES
    assert verdicts(DOES_NOT_FALL["constant"]).count("no common limit") >= 0.9 * TABLES


def test_a_plateau_says_no_common_limit():
    """c (1/L - 1/R + 1/20), about a third of the measured spread: the distance falls from L = 8
    to 32 and levels off; over all six depths it still falls at rate 0.33 [0.29, 0.37] (the rule
    before issue 37: 'falls', its interval [0.31, 0.34]), over the deepest four at 0.19 [0.16,
    0.21], and the verdict says no common limit."""
    t = tables(1 / L - 1 / R + 1 / 20, n=1, seed=0, spread=(0.05, 0.02, 0.03))[0]
    out = rate_test(DEPTHS, t)
    assert out["rate"] > MIN_RATE and out["ci"][0] > MIN_RATE  # over all depths it falls...
    assert out["deep_ci"][1] < MIN_RATE and out["verdict"] == "no common limit"  # ...but not at the deep end


@pytest.mark.parametrize("depths,seeds,missing", [
    ([8, 16], 5, "2 depths (needs at least 4)"),
    ([8, 16, 32], 5, "3 depths (needs at least 4)"),
    ([64, 80, 128, 160, 192], 5, "depths spanning a factor 3 (needs at least 4)"),
    ([8, 16, 32, 64], 2, "2 finite seeds (needs at least 3)"),
])
def test_too_little_evidence_is_its_own_verdict(depths, seeds, missing):
    """Distances that fall as 1/L, read from too few depths, too short a span or too few seeds:
    'insufficient evidence', naming what is missing (the rule before issue 37 said 'falls')."""
    d = np.array(depths, dtype=float)
    t = np.exp(np.random.default_rng(0).normal(0, 0.02, (seeds, len(d)))) / d
    out = rate_test(depths, t)
    assert out["verdict"] == "insufficient evidence" and missing in out["missing"]
    assert rate_test(depths, np.zeros((seeds, len(d))), zero=True)["verdict"] == "zero"  # equal numbers need no test


def test_an_interval_across_the_rate_names_it():
    t = tables(L ** -0.25, n=1, seed=0)[0]
    out = rate_test(DEPTHS, t)
    assert out["verdict"] == "insufficient evidence" and "does not decide against 0.25: more seeds" in out["missing"]


def test_more_seeds_never_make_a_right_falls_worse():
    """The same tables with as many seeds again (the first five kept): every 'falls' of r = 1 and
    r = 1/2 stays 'falls' (200 tables each, measured spread), and a seeded example with 5, 10, 20 seeds."""
    for f in (FALLS["r = 1"], FALLS["r = 1/2"]):
        for t in tables(f, seeds=2 * SEEDS, seed=1):
            if rate_test(DEPTHS, t[:SEEDS])["verdict"] == "falls":
                assert rate_test(DEPTHS, t)["verdict"] == "falls"
    t = tables(FALLS["r = 1/2"], n=1, seeds=4 * SEEDS, seed=7)[0]
    assert [rate_test(DEPTHS, t[:n])["verdict"] for n in (SEEDS, 2 * SEEDS, 4 * SEEDS)] == ["falls"] * 3
    flat = tables(DOES_NOT_FALL["constant"], n=1, seeds=4 * SEEDS, seed=7)[0]
    assert [rate_test(DEPTHS, flat[:n])["verdict"] for n in (SEEDS, 2 * SEEDS, 4 * SEEDS)] == ["no common limit"] * 3


def test_a_result_stored_before_the_test_reads_as_it_was():
    """A result written before issue 37 (no deep rate, no 'missing', 'inconclusive') still reports;
    a run store holds the records, so `runs show` of an old store re-reads them with the test."""
    from deeplimits.studies import plan_trained_limit
    from deeplimits.studies.trained_limit.result import QUANTITIES, TrainedLimitResult

    res = plan_trained_limit(cases=["linear"], depths=[2, 4], reference=8, seeds=2, epochs=1, width=2,
                             samples=10).run()
    old = res.to_dict()
    for c in old["cases"]:
        c.pop("missing"), c.pop("missing_before")
        for key in ("verdict", "verdict_before"):
            c[key] = c[key].replace("insufficient evidence", "inconclusive")
        for q in QUANTITIES:
            for key in ("deep_rate", "deep_ci", "deep_depths", "missing"):
                c[q].pop(key)
            c[q]["verdict"] = [v.replace("insufficient evidence", "inconclusive") for v in c[q]["verdict"]]
    text = TrainedLimitResult.from_dict(old).report()
    assert "trained: inconclusive" in text and "insufficient" not in text
    assert "trained: insufficient evidence (states: 2 depths (needs at least 4)" in res.report()
