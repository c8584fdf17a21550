"""A calibration is read again from its tables' statistics (draws, mean errors, covariance, rate
with its interval) by a changed rule without drawing (deeplimits.studies.scheme_order.table_stats):
a table read from its statistics gets the verdict (and its note) of its per-draw errors at every
reading, a row read again from its stored statistics is the row that was drawn, and a stored file
is data, read only after its declared shapes are checked."""

import dataclasses
import json
import pathlib
import zipfile

import numpy as np
import pytest

from deeplimits.errors import DamagedFileError
from deeplimits.orders import StrongOrder, Term
from deeplimits.studies.scheme_order import calibration as C
from deeplimits.studies._expansion_core import VERDICTS
from deeplimits.studies.scheme_order.cases import Case
from deeplimits.studies.scheme_order.sized import table_result
from deeplimits.studies.scheme_order.table_stats import RowStats, stats_path, table_stats
from scripts import load_script

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEPTHS = (8, 16, 32, 64, 128)


def synthetic(rate: float = 0.5, noise: float = 0.6, next_term: float = 0.0, bump: float = 0.0):
    """A case whose per-draw errors are ``L^-rate (1 + next_term L^-1/2 + bump [L = 32]) exp(noise Z -
    noise^2 / 2)`` with ``Z`` shared by the depths of a draw in part (errors of one draw are correlated
    across depths, as a path's are): without a bump the declared expansion ``L^-rate + L^-(rate + 1/2)``
    is the truth; a bump no such expansion fits."""
    L = np.asarray(DEPTHS, dtype=float)

    def sample(n, seed):
        rng = np.random.default_rng(seed)
        z = 0.8 * rng.standard_normal((n, 1)) + 0.6 * rng.standard_normal((n, len(L)))
        return L ** -rate * (1 + next_term * L ** -0.5 + bump * (L == 32)) * np.exp(noise * z - noise ** 2 / 2)

    order = StrongOrder.of((Term(rate), Term(rate + 0.5)), "synthetic", "synthetic")
    return Case("synthetic", DEPTHS, 64, order, None, sample, seconds=lambda n: 1e-4 * n, ident="synthetic")


def test_a_table_read_from_its_statistics_gets_the_verdict_of_its_errors_at_every_reading():
    """Shifted, at another margin, at a share of the levels: the same verdict and note as
    :func:`table_result` on the errors times ``(L / L_0)^-shift`` (the bootstrap interval moved by the
    shift, not computed again); the tables cover agrees, insufficient evidence and disagrees."""
    cases = [synthetic(), synthetic(next_term=3.0), synthetic(noise=0.2), synthetic(rate=0.8), synthetic(bump=0.3)]
    L, seen = np.asarray(DEPTHS, dtype=float), set()
    for j, case in enumerate(cases):
        tables = [case.sample(256, 10 * j + i) for i in range(4)]
        st = table_stats(case, tables)
        for i, errors in enumerate(tables):
            for shift, margin, share in [(0.0, 0.1, 1.0), (0.0, 0.05, 1.0), (-0.1, 0.1, 1.0), (0.05, 0.05, 0.25),
                                         (0.3, 0.1, 0.5)]:
                a = table_result(case, errors * (L / L[0]) ** -shift, margin=margin, share=share)
                b = st.result(case, i, shift=shift, margin=margin, share=share)
                assert (b.verdict, b.verdict_note) == (a.verdict, a.verdict_note)
                np.testing.assert_allclose(b.rate_ci, a.rate_ci, rtol=0, atol=1e-9)
                seen.add(a.verdict)
    assert {"agrees", "disagrees"} <= seen


@pytest.mark.slow  # about 9 s of CPU; the quick tier keeps the verdict-per-reading test above
def test_a_row_read_again_from_its_stored_statistics_is_the_row_that_was_drawn(tmp_path):
    """Tables and runs sized to decide (every stage drawn when recorded): the counts, draws and
    budget fields of :func:`~deeplimits.studies.scheme_order.calibration.reread` from the file equal
    those of the run, and those of a run that stopped drawing at each run's decision."""
    case, shifts = synthetic(next_term=1.0), (0.1,)
    record = {}
    row = C.calibrate_case(case, 30, 30, shifts, seed=3, record=record)
    C.sized_tables(row, case, 8, shifts, 3, 0.5, record=record)
    plain = C.calibrate_case(case, 30, 30, shifts, seed=3)
    C.sized_tables(plain, case, 8, shifts, 3, 0.5)
    assert len(record["stages"]) >= 3 and record["run_seconds"].shape == (8, len(record["stages"]))
    path = stats_path(tmp_path, "a/b c")
    C.row_stats(case, record, seed=3, pool=row.pool, budget=0.5).save(path)
    again = C.reread(case, RowStats.load(path), shifts)
    for r in (again, plain):
        for field in ("counts", "budget_counts", "budget_draws", "budget_drawn", "pool", "tables", "budget"):
            assert getattr(r, field) == getattr(row, field), field
    assert sum(row.counts["0.0"].values()) == 30 and sum(row.budget_counts["0.0"].values()) == 8
    assert row.budget_counts["0.0"]["agrees"] > 0 and again.seconds > 0
    with pytest.raises(ValueError, match="stages"):  # a time model that plans other stages: draw them again
        C.reread(dataclasses.replace(case, seconds=lambda n: 1e-2 * n), RowStats.load(path), shifts)


def test_a_stored_file_is_data_checked_before_it_is_read(tmp_path):
    """A file that is not a row, a member of the wrong shape or holding objects (a pickle is never
    loaded), a declared count or size beyond the limit: one line naming the file (a damaged file),
    nothing executed."""
    case = synthetic()
    record = {"tables": table_stats(case, [case.sample(64, 0)])}
    good = tmp_path / "good.npz"
    C.row_stats(case, record, seed=0, pool=64).save(good)
    assert len(RowStats.load(good).tables) == 1
    (tmp_path / "text.npz").write_text("not a zip")
    bad = {"text.npz": None}
    members = dict(np.load(good, allow_pickle=False))
    for name, change in [("object.npz", {"tables_error": np.array([[object()] * 5], dtype=object)}),
                         ("shape.npz", {"tables_cov": np.zeros((1, 4, 4))}),
                         ("many.npz", {"tables_draws": np.zeros(1_000_001, dtype=np.int64)}),
                         ("meta.npz", {"meta": np.array(json.dumps({"depths": "x"}))})]:
        with zipfile.ZipFile(tmp_path / name, "w") as z:
            for key, value in {**members, **change}.items():
                with z.open(key + ".npy", "w") as f:
                    np.lib.format.write_array(f, np.asanyarray(value), allow_pickle=True)
        bad[name] = change
    # a member that declares more than MAX_BYTES_STORED is refused from its header, before anything is read
    with zipfile.ZipFile(tmp_path / "huge.npz", "w") as z:
        meta = {**json.loads(str(members["meta"])), "depths": list(range(1, 65))}
        for key, value in {"meta": np.array(json.dumps(meta)), "tables_draws": np.zeros(10 ** 6, dtype=np.int64)}.items():
            with z.open(key + ".npy", "w") as f:
                np.lib.format.write_array(f, value)
        for key, shape in (("tables_error", (10 ** 6, 64)), ("tables_cov", (10 ** 6, 64, 64)), ("tables_rate", (10 ** 6, 3))):
            with z.open(key + ".npy", "w") as f:  # a header and no data: 32 GB declared
                np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": shape})
    bad["huge.npz"] = "more than"
    with zipfile.ZipFile(tmp_path / "list.npz", "w") as z:
        for key, value in {**members, "meta": np.array("[1, 2]")}.items():
            with z.open(key + ".npy", "w") as f:
                np.lib.format.write_array(f, np.asanyarray(value))
    bad["list.npz"] = "not a JSON object"
    for name in bad:
        with pytest.raises(DamagedFileError, match=r"^stats file .* is not a calibration row's statistics") as e:
            RowStats.load(tmp_path / name)
        assert "\n" not in str(e.value)
        if isinstance(bad[name], str):
            assert bad[name] in str(e.value)


def test_statistics_drawn_as_another_case_are_refused(tmp_path):
    """Read for a case of other depths, draws or reference, a row's statistics are refused in one line
    (a file is not misread as another case's)."""
    case = synthetic()
    record = {"tables": table_stats(case, [case.sample(64, 0)])}
    path = tmp_path / "row.npz"
    C.row_stats(case, record, seed=0, pool=64).save(path)
    stats = RowStats.load(path)
    assert sum(C.reread(case, stats, ()).counts["0.0"].values()) == 1
    for other in (dataclasses.replace(case, depths=(8, 16, 32, 64, 256)), dataclasses.replace(case, draws=128),
                  dataclasses.replace(case, reference=1024), dataclasses.replace(case, name="other")):
        with pytest.raises(ValueError, match="were drawn as another case") as e:
            C.reread(other, stats, ())
        assert "\n" not in str(e.value)


@pytest.mark.slow  # about 14 s of CPU; the quick tier keeps the verdict-per-reading test above
def test_the_committed_statistics_read_again_give_the_committed_rows():
    """Every row of benchmarks/calibration_sizes.json whose statistics are committed
    (benchmarks/calibration_stats/sizes/) is what reading them again by today's rule gives."""
    from scripts import load_script

    B = load_script("benchmarks/calibration_sizes.py")
    rows = json.loads((ROOT / "benchmarks" / "calibration_sizes.json").read_text())["rows"]
    stored = [r for r in rows if stats_path(B.STATS, r["case"]).exists()]
    assert stored, "no committed statistics"
    for r in stored[:4]:  # a few: each about 2 s of CPU
        again = B.reread_case(r)
        assert again["counts"] == r["counts"] and again["pool"] == r["pool"], r["case"]


def test_every_committed_statistics_file_is_its_rows():
    """Each statistics file under benchmarks/calibration_stats/ belongs to a row of its JSON and holds
    that row's tables and runs sized to decide (the depths, draws a table, tables, pool and runs);
    read from its header and members, not by the rule (cheap)."""
    stats = ROOT / "benchmarks" / "calibration_stats"
    seen = 0
    for name, sub in (("calibration", "calibration"), ("calibration_seed1", "calibration_seed1"),
                      ("calibration_pairs", "pairs"), ("calibration_sizes", "sizes")):  # the scripts' defaults
        rows = {r["case"]: r for r in json.loads((ROOT / "benchmarks" / f"{name}.json").read_text())["rows"]}
        where = stats / sub
        paths = {stats_path(where, case): case for case in rows}
        for path in sorted(where.glob("*.npz")) if where.exists() else []:
            assert path in paths, f"{path}: no row of benchmarks/{name}.json"
            row, st = rows[paths[path]], RowStats.load(path)
            assert st.meta["case"] == row["case"] and st.meta["depths"] == row["depths"], path
            assert st.meta["draws"] == row["draws"] and len(st.tables) == row["tables"] and st.meta["pool"] == row["pool"]
            if row.get("budget"):
                assert st.meta["budget"] == row["budget"] and st.runs is not None
                assert len(st.runs) // len(st.stages) == sum(row["budget_counts"]["0.0"].values()), path
            seen += 1
    assert seen >= 31


def test_the_verdict_benchmark_reads_committed_tables():
    bench = load_script("benchmarks/bench_verdict.py")
    out = bench.child(1)
    assert out["seconds"] >= 0 and len(out["readings"]) == 3 * len(bench.SHIFTS)
    assert all(r is None or r[0] in VERDICTS for r in out["readings"].values())


def test_a_reread_keeps_the_rows_todays_rule_read_and_draws_the_others(tmp_path, monkeypatch):
    """``calibration_table.py --reread`` stopped half way goes on: a row stamped with today's rule is
    kept as it is; a row of an older rule without statistics is drawn again as it was made."""
    from deeplimits.studies.scheme_order.sized import rule_fingerprint

    script = load_script("benchmarks/calibration_table.py")
    rows = json.loads((ROOT / "benchmarks" / "calibration.json").read_text())["rows"][:2]
    rows[0] = {**rows[0], "rule": rule_fingerprint()}
    rows[1] = {**rows[1], "rule": "an older rule"}
    path = tmp_path / "table.json"
    path.write_text(json.dumps({"rows": rows}))
    drawn = []

    def calibrate(names, **kw):
        drawn.append((names, kw["tables"], kw["stats"]))
        raise StopIteration

    monkeypatch.setattr(C, "calibrate", calibrate)
    read = script.reread_rows(path, tmp_path / "no statistics")
    assert next(read) == rows[0] and not drawn
    with pytest.raises((StopIteration, RuntimeError)):
        next(read)
    assert drawn == [([rows[1]["case"]], rows[1]["tables"], tmp_path / "no statistics")]


@pytest.mark.slow  # about 5 s of CPU; the quick tier keeps the script's part-and-join test below
def test_a_rows_runs_drawn_in_parts_and_joined_are_the_runs_drawn_whole(tmp_path):
    """Runs sized to decide drawn by several processes (``draw_runs``, each run seeded by its index) and
    joined to the row's tables (``join_runs``) give the statistics and the budget fields of the same runs
    drawn in one process; a part that leaves a gap, overlaps or was drawn with another seed is refused
    before anything is written, and the joined parts are removed."""
    from deeplimits.errors import ParameterError
    from deeplimits.studies.scheme_order.table_stats import join_runs, part_path

    case, shifts = synthetic(next_term=1.0), (0.1,)
    whole = {}
    row = C.calibrate_case(case, 6, 6, shifts, seed=3, record=whole)
    C.sized_tables(row, case, 5, shifts, 3, 0.5, record=whole)
    C.row_stats(case, {"tables": whole["tables"], "pool_seconds": 1.0}, seed=3, pool=row.pool).save(
        stats_path(tmp_path, case.name))
    with pytest.raises(ParameterError, match="no parts"):
        join_runs(tmp_path, case.name)
    C.draw_runs(case, range(0, 2), tmp_path, budget=0.5, seed=3, shifts=shifts)
    C.draw_runs(case, range(3, 5), tmp_path, budget=0.5, seed=3, shifts=shifts)
    with pytest.raises(ParameterError, match="runs 3..4 where the row of 'synthetic' needs runs from 2 on"):
        join_runs(tmp_path, case.name)  # a gap: run 2 missing
    C.draw_runs(case, range(2, 3), tmp_path, budget=0.5, seed=4, shifts=shifts)
    with pytest.raises(ParameterError, match="seed 4, not 3"):
        join_runs(tmp_path, case.name)
    part_path(tmp_path, case.name, range(2, 3)).unlink()
    C.draw_runs(case, range(2, 3), tmp_path, budget=0.5, seed=3, shifts=shifts)
    joined = join_runs(tmp_path, case.name)
    assert not list(tmp_path.glob("*.runs-*")) and joined.stages == whole["stages"]
    for f in ("draws", "error", "cov", "rate"):
        np.testing.assert_allclose(getattr(joined.runs, f), getattr(whole["runs"], f), rtol=1e-12, atol=0)
    again = C.reread(case, RowStats.load(stats_path(tmp_path, case.name)), shifts)
    for field in ("counts", "budget_counts", "budget_draws", "budget_drawn", "tables", "budget"):
        assert getattr(again, field) == getattr(row, field), field
    C.draw_runs(case, range(4, 6), tmp_path, budget=0.5, seed=3, shifts=shifts)
    with pytest.raises(ParameterError, match="runs 4..5 where the row of 'synthetic' needs runs from 5 on"):
        join_runs(tmp_path, case.name)  # an overlap with the runs the row holds
    with pytest.raises(ParameterError, match="runs must be a range a:b"):
        C.draw_runs(case, range(3, 3), tmp_path, budget=0.5)


def test_the_table_script_draws_a_part_and_joins_the_parts_into_its_row(tmp_path, monkeypatch, capsys):
    """``calibration_table.py --runs A:B`` draws a part of one case's runs and writes nothing else;
    ``--join`` joins the parts and reads the row again into the JSON (its budget columns filled);
    ``--runs`` without one case and a budget is refused in one line."""
    script = load_script("benchmarks/calibration_table.py")
    case, stats = synthetic(next_term=1.0), tmp_path / "stats"
    monkeypatch.setattr(C, "choose", lambda cases: [("synthetic", case)])
    record = {}
    row = C.calibrate_case(case, 4, 4, C.SHIFTS, seed=0, record=record)
    C.row_stats(case, record, seed=0, pool=row.pool).save(stats_path(stats, "synthetic"))
    path = tmp_path / "table.json"
    path.write_text(json.dumps(C.Calibration([row], 0.01, list(C.SHIFTS)).to_dict()))
    for runs in ("0:2", "2:3"):
        assert script.main(["--cases", "synthetic", "--budget", "0.5", "--runs", runs, "--json", str(path),
                            "--stats", str(stats)]) == 0
    assert json.loads(path.read_text())["rows"][0].get("budget") is None  # a part writes no row
    assert sorted(p.name for p in stats.iterdir()) == ["synthetic.npz", "synthetic.runs-0-2.npz",
                                                       "synthetic.runs-2-3.npz"]
    (stats / "synthetic.runs-2-3.npz").rename(stats / "synthetic.runs-2-4.npz")  # a name that is not its runs
    with pytest.raises(SystemExit) as exit_:
        script.main(["--cases", "synthetic", "--join", "--json", str(path), "--stats", str(stats)])
    assert exit_.value.code == 2 and "does not say which runs it holds as its name does" in capsys.readouterr().err
    assert len(list(stats.iterdir())) == 3  # nothing joined, nothing removed
    (stats / "synthetic.runs-2-4.npz").rename(stats / "synthetic.runs-2-3.npz")
    assert script.main(["--cases", "synthetic", "--join", "--json", str(path), "--stats", str(stats)]) == 0
    table = json.loads(path.read_text())
    joined = table["rows"][0]
    assert joined["budget"] == 0.5 and sum(joined["budget_counts"]["0.0"].values()) == 3
    assert joined["counts"] == row.to_dict()["counts"]
    assert [c.split("--runs ")[1] for c in table["commands"][:-1]] == ["0:2", "2:3"]  # how the row was made
    for bad in (["--cases", "synthetic", "--runs", "0:2"], ["--runs", "0:2", "--budget", "1"],
                ["--cases", "synthetic", "--budget", "1", "--runs", "two"],
                ["--cases", "synthetic", "--budget", "1", "--runs", "3:3"],
                ["--cases", "synthetic", "--budget", "1", "--runs", "0:2", "--write"]):
        with pytest.raises(SystemExit) as exit_:
            script.main(bad + ["--json", str(path)])
        assert exit_.value.code == 2
        assert "--runs" in capsys.readouterr().err.splitlines()[-1]
