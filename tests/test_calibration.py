"""The strong-order verdict is a calibrated test (issue 37; docs/schemes.md, "How often the
verdict is wrong"): on correct inputs it says ``disagrees`` at most about its level, 1%, and
against a leading exponent off by 0.05 it refuses ``agrees`` in the sde regime at the main job's
size. The old rule (a coherent reference term, the single slope tested) failed these: Euler-Maruyama
on the OU problem against itself, and the block of issue 37, were told ``disagrees`` in about 1 run
in 5, and the sde regime ``pre-asymptotic``.

What moved (issue 56: this module was 37 of the 38 minutes of a full suite under load, about 450 s
of CPU): the size of every shipped scheme-problem pair and regime over 200 tables each, the rough
regime's size and the sde regime's power at the main job's size are computed by
benchmarks/calibration_sizes.py (its docstring gives the sizes and why) into
benchmarks/calibration_sizes.json. Here, in their place:

* the committed rows, each within the level (at most 2% of 200 tables ``disagrees``: with a true
  rate of 1%, P(Binomial(200, 0.01) > 4) = 5%; the rough regime also at most 2% ``pre-asymptotic``;
  the power at least 0.85 either way), every case of the list at its size with its declared
  expansion, and read by the rule the code has now (its fingerprint,
  :func:`~deeplimits.studies.scheme_order.sized.rule_fingerprint`: a changed rule fails until the
  rows are regenerated); the rows of docs/schemes.md's table (benchmarks/calibration.json) too;
* a check that fails on a miscalibrated rule, on stored pools of real per-draw errors
  (tests/data/calibration_pools.npz, written by ``python benchmarks/calibration_sizes.py --pools``,
  checked by its SHA-256): 40 tables of each of four families of cases read by the rule, and 50
  tables of the main job's sde panel for the power; the same check run with the level 10 times
  larger, or the equivalence interval shrunk, fails (the test of the test below).

The three SDEs that are not shipped problems (20 real seeded runs each), the pairs that must say
no, and the table's machinery stay as they were."""

import hashlib
import json
import math
import pathlib

import numpy as np
import pytest
import torch

import deeplimits as dl
from deeplimits._names import CALIBRATION_CASES
from deeplimits.studies.scheme_order import calibration as C
from deeplimits.studies.scheme_order import cases as K
from deeplimits.studies.scheme_order.result import CalibrationRow
from deeplimits.studies.scheme_order.sized import rule_fingerprint
from scripts import load_script

ROOT = pathlib.Path(__file__).resolve().parent.parent
POOLS_SHA256 = "f89b14d19ce4866958b7bc3a321648135e3852a5f2e972d7e40356085965e15a"


B = load_script("benchmarks/calibration_sizes.py")
SIZES = json.loads((ROOT / "benchmarks" / "calibration_sizes.json").read_text())


def size_failures(row: dict) -> list[str]:
    """What a committed row breaks of the size rule (empty: none)."""
    r, out = CalibrationRow(**{k: v for k, v in row.items() if k != "pool_exponent"}), []
    allowed = 0.02  # of the tables: with a true rate at the level 1%, exceeded with probability 5% at 200 tables
    if r.size > allowed:
        out.append(f"{r.case}: disagrees {r.counts['0.0']['disagrees']} of {r.tables}")
    # H = 0.35 declares three terms, two of them 0.1 apart (L^-3/5 and L^-0.7): on tables of 64 draws their
    # coefficients are not told apart and take large opposite values; weighed against the sum of their
    # absolute parts the leading term was read as not dominating in 7 of 200 (`pre-asymptotic`), against
    # their net part in none (issue 52)
    if r.case.startswith("rough") and r.rate("0.0", "pre-asymptotic") > allowed:
        out.append(f"{r.case}: pre-asymptotic {r.counts['0.0']['pre-asymptotic']} of {r.tables}")
    if r.case == B.POWER:
        if r.rate("0.0", "agrees") < 0.9 or abs(row["pool_exponent"] - 0.5) >= 0.05:
            out.append(f"{r.case}: agrees {r.rate('0.0', 'agrees')}, the pool's exponent {row['pool_exponent']}")
        out += [f"{r.case}: power {r.power(s)[1]} off by {s}" for s in (-0.05, 0.05) if r.power(s)[1] < 0.85]
    return out


def test_the_suite_is_the_one_the_command_lists():
    assert K.CASES == CALIBRATION_CASES and tuple(K._cases()) == CALIBRATION_CASES


def test_the_committed_sizes_were_read_by_the_current_rule():
    assert SIZES["rule"] == rule_fingerprint(), (
        "the verdict's rule changed since benchmarks/calibration_sizes.json was measured: run "
        "`python benchmarks/calibration_sizes.py` (about 8 minutes of CPU) and commit the JSON")


def test_every_case_is_committed_at_its_size():
    rows = {r["case"]: r for r in SIZES["rows"]}
    assert list(rows) == [*B.suite(), B.POWER] and len(B.suite()) == 30
    for name, build in B.suite().items():
        case, row = build(), rows[name]
        assert (row["tables"], row["pool"], row["draws"], row["depths"], row["expansion"]) == (
            200, 16 * case.draws, case.draws, list(case.depths), case.order.expansion_text), name
    power = rows[B.POWER]
    assert power["tables"] == 100 and set(power["counts"]) == {"0.0", "0.0@0.05", "-0.05", "0.05"}


def test_every_committed_size_is_within_the_level():
    failures = [f for row in SIZES["rows"] for f in size_failures(row)]
    assert not failures, failures


def test_the_size_rule_sees_a_miscalibrated_row():
    rows = {r["case"]: r for r in SIZES["rows"]}
    pair = json.loads(json.dumps(rows["pair euler-maruyama/ou"]))
    pair["counts"]["0.0"].update({"disagrees": 5, "insufficient evidence": 195 - pair["counts"]["0.0"]["agrees"]})
    assert size_failures(pair) == ["pair euler-maruyama/ou: disagrees 5 of 200"]
    rough = json.loads(json.dumps(rows["rough H=0.4 width=1"]))
    rough["counts"]["0.0"] = {**dict.fromkeys(rough["counts"]["0.0"], 0), "pre-asymptotic": 5, "agrees": 195}
    assert size_failures(rough) == ["rough H=0.4 width=1: pre-asymptotic 5 of 200"]
    power = json.loads(json.dumps(rows[B.POWER]))
    power["counts"]["0.05"] = {**dict.fromkeys(power["counts"]["0.05"], 0), "agrees": 16, "disagrees": 84}
    assert size_failures(power) == [f"{B.POWER}: power 0.84 off by 0.05"]


def test_the_rows_of_the_docs_table_are_within_the_level():
    rows = json.loads((ROOT / "benchmarks" / "calibration.json").read_text())["rows"]
    assert rows and all(r["case"] in K.CASES and r["tables"] >= 200 for r in rows)
    failures = [f for row in rows for f in size_failures(row)]
    assert not failures, failures


def test_the_rows_read_again_on_more_tables_show_their_size_below_two_percent():
    """Issue 52: the size's upper 95% Wilson bound at most 2%. With 1 `disagrees` of 200 tables it is
    2.8%; those rows were read again on 400 more independent tables (200 for the fBm regime: another
    seed's pool, benchmarks/calibration_seed1.json): over all of them each row's bound is below 2%."""
    from deeplimits._stats import wilson

    first = {r["case"]: r for r in json.loads((ROOT / "benchmarks" / "calibration.json").read_text())["rows"]}
    more = json.loads((ROOT / "benchmarks" / "calibration_seed1.json").read_text())["rows"]
    assert {"milstein/linear-sde", "ode", "euler-maruyama/sin-cos"} <= {r["case"] for r in more}
    for r in more:
        a, b = first[r["case"]]["counts"]["0.0"], r["counts"]["0.0"]
        assert r["pool"] >= r["tables"] * r["draws"] and r["rule"] == first[r["case"]]["rule"] == rule_fingerprint()
        k, n = a["disagrees"] + b["disagrees"], sum(a.values()) + sum(b.values())
        assert n >= 400 and wilson(k, n)[1] <= 0.02, (r["case"], k, n)


def test_the_time_model_is_within_a_factor_of_two_of_every_docs_row():
    """Issue 52: `order --calibrate --dry-run` estimates each case within a factor of 2. Each row of
    docs/schemes.md's table (benchmarks/calibration.json) records the CPU seconds its tables and runs
    sized to decide took; the estimate is today's time model of that run (runs sized to decide at the
    draws a shipped case's runs drew on average, C.SIZED_DRAWS), as calibration_table.py prints it.
    Before, the runs sized to decide were estimated at their last stage: the ode regime took 0.14 of
    its estimate, the rough regime at H = 0.45 0.41."""
    T = load_script("benchmarks/calibration_table.py")
    rows = json.loads((ROOT / "benchmarks" / "calibration.json").read_text())["rows"]
    ratios = {r["case"]: r["seconds"] / T.estimate(r) for r in rows}
    assert all(0.5 <= q <= 2.0 for q in ratios.values()), ratios
    sized = [r for r in rows if r.get("budget")]
    assert sized and all(C.SIZED_DRAWS.get(r["case"]) == pytest.approx(r["budget_drawn"], rel=0.01) for r in sized), (
        "C.SIZED_DRAWS is not the mean draws of the committed runs sized to decide")


def test_every_other_shipped_pair_sized_to_decide_refuses_an_exponent_off_by_the_margin():
    """Issue 52: with the default budget an exponent off by 0.1 is refused `agrees` in at least 90%
    of runs for every shipped scheme-problem pair. The table's cases hold one scheme per problem;
    benchmarks/calibration_pairs.py runs the others sized to decide (benchmarks/calibration_pairs.json,
    read by today's rule). The modified Euler scheme at H = 0.6 and 3/4, declared with two terms,
    agreed off by -0.05 in 28 and 38 runs of 50 (tests/test_expansion_fit.py)."""
    P = load_script("benchmarks/calibration_pairs.py")
    data = json.loads((ROOT / "benchmarks" / "calibration_pairs.json").read_text())
    rows = [CalibrationRow.from_dict(r) for r in data["rows"]]
    assert sorted(r.case for r in rows) == sorted(P.pairs()), "a shipped pair has no row: run benchmarks/calibration_pairs.py"
    assert all(r.rule == rule_fingerprint() for r in rows), "read by an older rule: run benchmarks/calibration_pairs.py again"
    for r in rows:
        runs = sum(r.budget_counts["0.0"].values())
        assert runs >= 10 and r.budget_counts["0.0"]["disagrees"] <= max(1, runs // 20), r.case
        for m in (-0.1, 0.1):
            assert r.rate(m, "agrees", r.budget_counts) <= 0.1, (r.case, m, r.budget_counts[str(m)])



def test_the_tables_cases_sized_to_decide_have_the_power_the_issue_asks():
    """Issue 52's power must-show on docs/schemes.md's table (benchmarks/calibration.json, runs sized to
    decide at the default budget of 300 s): an exponent off by 0.1 is refused `agrees` in at least 90%
    of runs for each shipped scheme on its problem and the sde and ode regimes, off by 0.05 (at margin
    0.05) for the sde and ode regimes and the schemes of order 1; no correct run reads `disagrees`."""
    rows = {r.case: r for r in (CalibrationRow.from_dict(d) for d in
                                json.loads((ROOT / "benchmarks" / "calibration.json").read_text())["rows"])}
    named = [c for c in rows if not c.startswith(("fbm-", "rough-"))]
    assert {"sde", "ode", "milstein/linear-sde", "heun/linear-stratonovich", "euler-maruyama/ou"} <= set(named)
    for case in named:
        r = rows[case]
        assert r.budget == 300 and sum(r.budget_counts["0.0"].values()) >= 30, case
        assert r.budget_counts["0.0"]["disagrees"] == 0, case
        order_one = r.expansion.startswith("a L^-1 ")
        for m in (-0.1, 0.1) + ((-0.05, 0.05) if order_one or case in ("sde", "ode") else ()):
            assert r.rate(m, "agrees", r.budget_counts) <= 0.1, (case, m, r.budget_counts[str(m)])


# ---- the stored pools: a check that fails on a miscalibrated rule ----

def test_the_stored_pools_are_the_committed_ones():
    assert hashlib.sha256((ROOT / B.POOLS.relative_to(B.ROOT)).read_bytes()).hexdigest() == POOLS_SHA256, (
        "tests/data/calibration_pools.npz is not the file `python benchmarks/calibration_sizes.py --pools` wrote")


@pytest.fixture(scope="module")
def pools():
    with np.load(ROOT / "tests" / "data" / "calibration_pools.npz") as f:
        return {k: f[k].astype(float) for k in f.files}


def pool_counts(pools) -> dict:
    """``family -> verdict counts`` of the stored tables of each family (disjoint, read by the rule)."""
    import dataclasses

    out = {}
    for family, name, tables in B.FAMILIES:
        case = B.suite()[name]()
        errors = pools[name]
        case = dataclasses.replace(case, sample=lambda n, s, e=errors: e[:n], progressive=False)
        assert len(errors) == tables * case.draws
        out[family] = C.calibrate_case(case, tables, tables, (), seed=0).counts["0.0"]
    return out


def pool_failures(counts: dict) -> list[str]:
    """What the stored families' verdicts break: at most 2 of a family's 40 tables ``disagrees``
    (P(Binomial(40, 0.01) > 2) = 0.8%), nor ``pre-asymptotic`` on the rough regime; at most 5 of all
    160 (P(Binomial(160, 0.01) > 5) = 0.6%)."""
    out = [f"{f}: {c}" for f, c in counts.items()
           if c["disagrees"] > 2 or (f.startswith("rough") and c["pre-asymptotic"] > 2)]
    total = sum(c["disagrees"] for c in counts.values())
    return out + ([f"disagrees {total} of {sum(sum(c.values()) for c in counts.values())}"] if total > 5 else [])


def power_row(pools, shifts=(0.05,)):
    """The main job's sde panel: 50 tables from the stored pool of 4 times a table, recentred on the
    declared exponent (its own reads within 0.05 of it)."""
    case, best = B.recentred_sde(pool=pools[B.POWER])
    assert abs(best - 0.5) < 0.05, best
    return C.calibrate_case(case, 50, 4, shifts, seed=0)


def power_failures(row) -> list[str]:
    """Correct tables: at most 1 of 50 ``disagrees``, at least 45 ``agrees`` (margin 0.1); off by
    0.05 either way, read at the margin 0.05: at most 7 of 50 ``agrees`` (power at least 0.85)."""
    out = [f"correct: {row.counts['0.0']}"] if row.rate(0.0, "disagrees") > 0.02 or row.rate(0.0, "agrees") < 0.9 else []
    return out + [f"off by {s}: {row.counts[str(s)]}" for s in (-0.05, 0.05) if row.power(s)[1] < 0.85]


@pytest.mark.slow
def test_the_stored_families_are_within_the_level(pools):
    counts = pool_counts(pools)
    assert not pool_failures(counts), counts


@pytest.mark.slow
def test_the_sde_regimes_power_at_the_main_jobs_size(pools):
    row = power_row(pools)
    assert not power_failures(row), row.counts


@pytest.mark.slow
def test_the_pool_checks_fail_on_a_miscalibrated_rule(pools, monkeypatch):
    from deeplimits.studies.convergence import result

    monkeypatch.setattr(result, "LEVEL", 10 * result.LEVEL)  # the tests behind disagrees at 10%
    assert pool_failures(pool_counts(pools))
    monkeypatch.undo()
    from deeplimits.studies import _expansion_reading

    # every reading's equivalence interval at 50% (the readings share 90%: docs/schemes.md)
    monkeypatch.setattr(_expansion_reading, "levels", lambda level, count: (0.25, 0.25))
    assert power_failures(power_row(pools))


# ---- as before ----

@pytest.mark.slow
def test_pairs_that_must_say_no():
    # Euler-Maruyama against the exact Stratonovich solution, Heun against the exact Itô one: the
    # scheme converges to another equation, its error does not vanish: never agrees, mostly disagrees
    # (with four terms on five depths a constant error is sometimes read as fitting only with the
    # next term; Euler-Maruyama: 38 of 50 disagrees, 12 insufficient evidence, since the residual's
    # test reads the estimated covariance by the F law, issue 52; 40 by the chi-square law)
    for scheme, problem in (("euler-maruyama", "linear-stratonovich"), ("heun", "linear-sde")):
        row = C.calibrate_case(C.scheme_case(scheme, problem, **B.SMALL), 50, 16, (), seed=0)
        counts = row.counts["0.0"]
        assert counts["agrees"] == 0 and counts["disagrees"] >= 35, (row.case, counts)


def _block(h, w, t, dt):  # issue 37's order-1/2 residual block h + V h / sqrt(1 + |h|^2)
    return h + w * h / torch.sqrt(1 + h ** 2)


def _milstein_sqrt():  # dX = -X/2 dt + 0.4 sqrt(1 + X^2) dW, Milstein (g g' = 0.16 X), order 1
    return dl.Milstein(lambda t, x: -0.5 * x, lambda t, x: (0.4 * torch.sqrt(1 + x ** 2))[..., None],
                       noise="diagonal", derivative=lambda t, x: (0.16 * x)[None, ..., None])


def _heun_2d():  # dX_i = -X_i dt + 0.3 (1 + sin X_i / 2) o dW_i, diagonal noise in d = 2, order 1
    return dl.Heun(lambda t, x: -x, lambda t, x: torch.diag_embed(0.3 * (1 + 0.5 * torch.sin(x))),
                   noise="diagonal")


@pytest.mark.slow
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


@pytest.mark.slow
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
