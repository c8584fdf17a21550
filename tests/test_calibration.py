"""The strong-order verdict is a calibrated test (issue 37; docs/schemes.md, "How often the
verdict is wrong"): on correct inputs it says ``disagrees`` at most about its level, 1%, and
against a leading exponent off by 0.05 it refuses ``agrees`` in the sde regime at the main job's
size. Every shipped scheme-problem pair of known order and every shipped regime, 200 seeded
tables each (taken from one pool of real per-draw errors; docs/schemes.md explains the pool);
three SDEs that are not shipped problems, 20 real seeded runs each.

Sizes: the schemes at depths 8..128 with 128 draws (nested references 16 times finer), the
regimes at width 4 and depths 8..128, pools 16 times a table (the tables of a smaller pool share
its mean's error: at 4 times, Milstein on the sde regime's noise read 8 of 200 tables
``disagrees``; its 200 fully disjoint tables, 1). At most 2% of 200 tables (4) may
say ``disagrees``: with a true rate of 1%, P(Binomial(200, 0.01) > 4) = 5%; the tables are
seeded, so the counts are fixed numbers, measured below the bound by a margin (the measured
counts are in the assertions' messages). The old rule (a coherent reference term, the single
slope tested) fails these: Euler-Maruyama on the OU problem against itself, and the block of
issue 37, were told ``disagrees`` in about 1 run in 5, and the sde regime ``pre-asymptotic``."""

import math

import pytest
import torch

import deeplimits as dl
from deeplimits._names import CALIBRATION_CASES
from deeplimits.studies.scheme_order import calibration as C
from deeplimits.studies.scheme_order import cases as K

pytestmark = pytest.mark.slow

SMALL = dict(depths=(8, 16, 32, 64, 128), draws=128)
#: the shipped scheme-problem pairs whose order is known (a Stratonovich scheme on an Itô problem
#: converges to another equation: those pairs must say no, below)
PAIRS = [("euler-maruyama", "linear-sde", None), ("milstein", "linear-sde", None),
         ("heun", "linear-stratonovich", None), ("euler-maruyama", "ou", None), ("milstein", "ou", None),
         ("heun", "ou", None), ("euler-maruyama", "sin-cos", None), ("milstein", "sin-cos", None),
         ("heun", "sin-cos", None), ("euler-maruyama", "sde-regime", None), ("milstein", "sde-regime", None),
         ("heun", "sde-regime", None), ("torchsde-euler", "linear-sde", None),
         ("torchsde-milstein", "linear-sde", None), ("modified-euler", "linear-young", 0.6),
         ("modified-euler", "linear-young", 0.75), ("modified-euler", "linear-young", 0.9)]


def size_of(case, tables=200, pool_factor=16):
    row = C.calibrate_case(case, tables, pool_factor, (), seed=0)
    return row.counts["0.0"], row


def test_the_suite_is_the_one_the_command_lists():
    assert K.CASES == CALIBRATION_CASES and tuple(K._cases()) == CALIBRATION_CASES


@pytest.mark.parametrize("scheme, problem, hurst", PAIRS)
def test_size_of_every_shipped_scheme_problem_pair(scheme, problem, hurst):
    counts, row = size_of(C.scheme_case(scheme, problem, hurst=hurst, **SMALL))
    assert counts["disagrees"] <= 4, (row.case, counts)


@pytest.mark.parametrize("regime, options", [("sde", {}), ("ode", {}), ("fbm", {"hurst": 0.6}),
                                             ("fbm", {"hurst": 0.75}), ("fbm", {"hurst": 0.9}),
                                             ("fbm", {"hurst": 0.75, "corrected": True}), ("inside-sde", {}),
                                             ("inside-ode", {"beta": 0.5})])
def test_size_of_every_shipped_regime(regime, options):
    draws = 16 if regime == "ode" else 64
    ref = {} if regime in ("ode", "inside-ode") else {"reference": 2048}
    case = C.regime_case(regime, width=4, depths=[8, 16, 32, 64, 128], draws=draws, **ref, **options)
    counts, row = size_of(case)
    assert counts["disagrees"] <= 4, (row.case, counts)


@pytest.mark.parametrize("hurst, width", [(0.45, 1), (0.4, 1), (0.35, 1), (0.45, 4), (0.4, 4)])
def test_size_of_the_rough_regime(hurst, width):
    # width 1 against the exact solution at depths 8..2048 (the regime's defaults, 64-draw tables); width 4
    # against the corrected scheme on the least grid the regime accepts (32 and 128 times the deepest depth).
    # A correct table is never told disagrees, nor pre-asymptotic, more than the level allows. At 64 draws
    # it is mostly too thin to be shown within the margin 0.1 (measured agrees: 6, 2, 1, 0, 0 of 200); a
    # run of 4096 draws agrees (tests/test_rough.py, test_the_second_term_is_needed_to_read_every_depth)
    depths = [8, 16, 32, 64, 128, 256, 512, 1024, 2048] if width == 1 else [8, 16, 32, 64, 128]
    case = C.regime_case("rough", hurst=hurst, width=width, depths=depths, draws=64)
    counts, row = size_of(case)
    assert counts["disagrees"] <= 4 and counts["pre-asymptotic"] <= 4, (row.case, counts)
    assert counts["agrees"] + counts["insufficient evidence"] >= 192, (row.case, counts)


def test_sde_regime_power_at_the_main_jobs_size():
    # the main job's sde panel (width 16, depths 8..512, 256 draws, reference 8192): against a leading
    # exponent off by 0.05 either way, read at the margin 0.05, "agrees" rarely (measured 10 and 2 of 100;
    # bound 15, leaving room for a table or two that another BLAS reads otherwise); correct tables agree at
    # the default margin 0.1 (98 of 100). The tables are drawn from a pool of 4 times their draws, whose own
    # leading exponent is their truth: the pool is recentred on the declared 1/2 first (not recentred, it
    # reads 0.506, and the tables off by -0.05 agreed 18 times in 100 while those off by +0.05 never did:
    # the pool's error, not the test's)
    import dataclasses

    from deeplimits.studies.scheme_order.sized import table_result

    case = C.regime_case("sde")
    pool = case.sample(4 * case.draws, 0)
    best = table_result(case, pool).fit.best_exponent
    assert abs(best - case.order.rate) < 0.05, best
    depths = torch.tensor(case.depths, dtype=torch.float64).numpy()
    centred = pool * (depths / depths[0]) ** (best - case.order.rate)
    row = C.calibrate_case(dataclasses.replace(case, sample=lambda n, seed: centred), 100, 4, (0.05,), seed=0)
    assert row.rate(0.0, "disagrees") <= 0.02 and row.rate(0.0, "agrees") >= 0.9, row.counts
    for shift in (-0.05, 0.05):
        assert row.power(shift)[1] >= 0.85, (shift, best, row.counts)


def test_pairs_that_must_say_no():
    # Euler-Maruyama against the exact Stratonovich solution, Heun against the exact Itô one: the
    # scheme converges to another equation, its error does not vanish: never agrees, mostly disagrees
    # (with four terms on five depths a constant error is sometimes read as fitting only with the
    # next term: pre-asymptotic, 5 of 50 for Euler-Maruyama)
    for scheme, problem in (("euler-maruyama", "linear-stratonovich"), ("heun", "linear-sde")):
        counts, row = size_of(C.scheme_case(scheme, problem, **SMALL), tables=50)
        assert counts["agrees"] == 0 and counts["disagrees"] >= 40, (row.case, counts)


def _block(h, w, t, dt):  # issue 37's order-1/2 residual block h + V h / sqrt(1 + |h|^2)
    return h + w * h / torch.sqrt(1 + h ** 2)


def _milstein_sqrt():  # dX = -X/2 dt + 0.4 sqrt(1 + X^2) dW, Milstein (g g' = 0.16 X), order 1
    return dl.Milstein(lambda t, x: -0.5 * x, lambda t, x: (0.4 * torch.sqrt(1 + x ** 2))[..., None],
                       noise="diagonal", derivative=lambda t, x: (0.16 * x)[None, ..., None])


def _heun_2d():  # dX_i = -X_i dt + 0.3 (1 + sin X_i / 2) o dW_i, diagonal noise in d = 2, order 1
    return dl.Heun(lambda t, x: -x, lambda t, x: torch.diag_embed(0.3 * (1 + 0.5 * torch.sin(x))),
                   noise="diagonal")


@pytest.mark.parametrize("name, make, x0", [
    ("block", lambda: dl.Scheme.of(_block, dl.StrongOrder(0.5, "", "")), [1.0]),
    ("milstein-sqrt", _milstein_sqrt, [0.5]),
    ("heun-2d", _heun_2d, [0.5, -1.0])])
def test_twenty_real_runs_of_sdes_that_are_not_shipped(name, make, x0):
    # the user's size of issue 37: depths 8..128, 512 draws, the default nested reference (16x)
    scheme = make()
    verdicts = [dl.strong_order(scheme, x0, noise=len(x0), depths=(8, 16, 32, 64, 128), draws=512, seed=s).verdict
                for s in range(20)]
    assert "disagrees" not in verdicts, (name, verdicts)


def test_calibration_row_and_table():
    case = C.scheme_case("euler-maruyama", "linear-sde", depths=(8, 16, 32, 64), draws=64)
    cal = C.calibrate([case], tables=10, pool_factor=2, shifts=(0.1,))
    row = C.CalibrationRow(**cal.to_dict()["rows"][0])
    assert row.tables == 10 and sum(row.counts["0.0"].values()) == 10 and set(row.counts) == {"0.0", "-0.1", "0.1"}
    lo, hi = row.size_ci
    assert 0 <= lo <= row.size <= hi <= 1
    assert "| euler-maruyama/linear-sde |" in cal.table() and "off by 0.1 (margin 0.1)" in cal.table()
    rate, lo, hi = row.interval("0.1", "agrees", negate=True)
    assert 0 <= lo <= rate <= hi <= 1 and rate == row.power(0.1)[1]
    with pytest.raises(ValueError, match="cases must be names of"):
        C.calibrate(["nope"])
    with pytest.raises(ValueError, match="tables"):
        C.calibrate([case], tables=0)


def test_wilson_interval():
    from deeplimits._stats import wilson

    lo, hi = wilson(2, 200)
    assert lo == pytest.approx(0.00275, abs=2e-4) and hi == pytest.approx(0.0357, abs=3e-4)
    assert wilson(0, 10)[0] == 0.0 and math.isclose(wilson(10, 10)[1], 1.0)
