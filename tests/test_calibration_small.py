"""The calibration's machinery at a tiny size, in the quick tier (the calibration itself, at its
real sizes, is benchmarks/calibration_sizes.py, its rows and a check on stored pools
tests/test_calibration.py): tables from a pool, runs sized to decide within a
budget, the table and the figure read from the counts."""

import pytest

from deeplimits.studies.scheme_order import calibration as C


@pytest.fixture(scope="module")
def tiny():
    case = C.scheme_case("euler-maruyama", "ou", depths=(4, 8, 16, 32), draws=16)
    lines = []
    cal = C.calibrate([case], tables=4, pool_factor=4, shifts=(0.1,), seed=0, budget=2.0, budget_tables=2,
                      progress=lines.append)
    return cal, lines


def test_every_reading_counts_every_table_and_every_sized_run(tiny):
    cal, lines = tiny
    (row,) = cal.rows
    assert set(row.counts) == {"0.0", "-0.1", "0.1"}  # read at margin 0.1, the default: no "0.0@0.1"
    assert all(sum(c.values()) == 4 for c in row.counts.values())
    assert row.budget == 2.0 and all(sum(c.values()) == 2 for c in row.budget_counts.values())
    assert any("disagrees" in line and "of 4 tables" in line for line in lines)
    assert 0.0 <= row.size <= 1.0 and row.power(0.1)[1] == 1.0 - row.rate("0.1", "agrees")


def test_the_table_and_the_figure_read_the_counts(tiny, tmp_path):
    cal, _ = tiny
    text = cal.table()
    header, _, line = text.splitlines()
    assert "sized run: mean draws (correct)" in header and line.startswith("| euler-maruyama/ou | a L^-1 + ")
    (row,) = cal.rows
    n = row.counts["0.0"]["disagrees"]
    assert f"| {100 * n / 4:.1f}% [" in line  # the size cell reads its count
    cal.plot(str(tmp_path / "calibration.png"))
    assert (tmp_path / "calibration.png").stat().st_size > 1000
    back = C.Calibration.from_dict(cal.to_dict())
    assert back.table() == text


def test_a_network_regimes_pool_reports_its_draws():
    """A regime's pool takes minutes at its real size: its sample reports the draws done after each
    chunk, and the calibration says how far the pool is (at most every 30 s of CPU, and at its end)."""
    from deeplimits.studies.convergence.study import Compute

    case = C.regime_case("sde", width=2, depths=[4, 8], draws=8, compute=Compute(seed=0, chunk=8))
    done = []
    errors = case.sample(24, 0, progress=done.append)
    assert case.progressive and done == [8, 16, 24] and errors.shape == (24, 2)
    lines = []
    C.calibrate([case], tables=2, pool_factor=3, shifts=(0.1,), seed=0, progress=lines.append)
    assert any("pool: 24 of 24 draws" in line for line in lines)


@pytest.mark.slow
def test_the_table_script_resumes_and_redoes_a_case(tmp_path, capsys):
    """benchmarks/calibration_table.py: ``--resume`` keeps a finished case, ``--redo`` replaces its
    row (say, with runs sized to decide), ``--redo`` alone is refused in one line."""
    import importlib.util
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "calibration_table.py"
    spec = importlib.util.spec_from_file_location("calibration_table", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "cal.json"
    base = ["--cases", "euler-maruyama/ou", "--json", str(out)]
    assert script.main([*base, "--tables", "2"]) == 0
    assert [r["tables"] for r in json.loads(out.read_text())["rows"]] == [2]
    assert script.main([*base, "--tables", "3", "--resume"]) == 0  # kept: nothing runs
    assert [r["tables"] for r in json.loads(out.read_text())["rows"]] == [2]
    assert script.main([*base, "--tables", "3", "--resume", "--redo"]) == 0
    data = json.loads(out.read_text())
    assert [r["tables"] for r in data["rows"]] == [3] and len(data["commands"]) == 2
    assert "| euler-maruyama/ou | 3 |" in capsys.readouterr().out  # its time against today's estimate
    with pytest.raises(SystemExit):
        script.main([*base, "--redo"])
    assert "--redo: needs --resume and --cases" in capsys.readouterr().err


def test_stored_draws_are_read_back_and_a_changed_rule_reads_the_same_draws(tmp_path):
    """``calibrate(..., pools=DIR)`` (``calibration_table.py --pools``): a case's draws are drawn
    once and stored with their CPU seconds; a second calibration reads them back (the same counts,
    no new draw, the stored seconds counted as if drawn); a stored file that does not declare
    exactly the request's shape, or is damaged, is drawn again, never trusted; a case without an
    ident is never stored; the key follows the engine's code, not the rule's."""
    import dataclasses
    import json
    import pathlib
    import shutil

    import numpy as np

    from deeplimits.studies.scheme_order.pools import PoolStore, code_fingerprint

    base = C.scheme_case("euler-maruyama", "ou", depths=(4, 8, 16, 32), draws=16)
    calls = []

    def sample(n, seed):
        calls.append((n, seed))
        return base.sample(n, seed)

    case = dataclasses.replace(base, sample=sample)
    kw = dict(tables=2, pool_factor=2, shifts=(0.1,), seed=0, budget=0.5, budget_tables=1, pools=tmp_path)
    first = C.calibrate([case], **kw)
    drawn = list(calls)
    assert drawn and len(list(tmp_path.glob("*.npy"))) == len(set(drawn))
    for side in tmp_path.glob("*.json"):  # the stored seconds are what a read-back row counts
        side.write_text(json.dumps({"seconds": 1000.0}))
    again = C.calibrate([case], **kw)
    assert calls == drawn  # nothing drawn the second time
    assert again.rows[0].counts == first.rows[0].counts and again.rows[0].budget_counts == first.rows[0].budget_counts
    assert again.rows[0].seconds >= 1000.0 * len(drawn)
    store = PoolStore(tmp_path)
    path = tmp_path / store.key(case, 48, 0)
    for bad in (np.zeros((100, 3)), np.zeros((10, 4)), np.zeros((48, 4), dtype=np.float32)):
        np.save(path, bad)  # a file that does not hold what its name promises
        assert store.sample(case, 48, 0).shape == (48, 4) and calls[-1] == (48, 0)
        calls.pop()
    path.write_bytes(path.read_bytes()[:200])  # damaged
    path.with_suffix(".json").write_text("NaN")
    assert store.sample(case, 48, 0).shape == (48, 4) and calls.pop() == (48, 0) and store.misses == 4
    path.with_suffix(".json").write_text('{"seconds": Infinity}')
    assert store.sample(case, 48, 0).shape == (48, 4) and store.hits == 1 and store.reused_seconds == 0.0
    keys = {store.key(case, 48, 0), store.key(case, 48, 1), store.key(dataclasses.replace(case, depths=(4, 8)), 48, 0),
            store.key(dataclasses.replace(case, ident=case.ident + " width=2"), 48, 0)}
    assert len(keys) == 4 and store.key(dataclasses.replace(case, ident=None), 48, 0) is None
    # the engine's code is in the key, the verdict's rule is not
    pkg = tmp_path / "copy" / "deeplimits"
    shutil.copytree(pathlib.Path(C.__file__).parents[2], pkg, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_fingerprint(pkg)
    (pkg / "studies" / "_fit_core.py").write_text((pkg / "studies" / "_fit_core.py").read_text() + "\nX = 1\n")
    assert code_fingerprint(pkg) == before
    (pkg / "studies" / "scheme_order" / "cases.py").write_text(
        (pkg / "studies" / "scheme_order" / "cases.py").read_text() + "\nX = 1\n")
    assert code_fingerprint(pkg) != before
