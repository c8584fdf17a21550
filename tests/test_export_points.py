"""``deeplimits runs export DIR --csv PATH``: one tidy row per measured point of every study, the
same columns whatever the study (study, setting, depth, quantity, value, stderr, ci_low,
ci_high), a table pandas reads as it is; ``--records-csv`` keeps the stored records' rows.
The measured points of each study's result are checked in tests/test_figures.py; here, four real
runs of the command line, their export read back with pandas."""

import io
import math

import pytest

from deeplimits.cli import main
from deeplimits.studies._shared.points import COLUMNS, point, record_means, seed_mean, setting

RUNS = {
    "convergence": ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8,16", "--draws", "8",
                    "--reference", "64"],
    "law": ["law", "--depths", "4,8,16", "--fine", "64", "--draws", "1024", "--samples", "200"],
    "transfer": ["transfer", "--preset", "quick", "--depths", "2,4,8", "--seeds", "2", "--betas", "1",
                 "--optimizer", "sgd", "--lrs", "-2,1"],
    "scaling": ["scaling", "--depths", "4,8", "--width", "4", "--seeds", "2", "--samples", "32", "--max-epochs", "1"],
}
#: what each study's table must hold: quantities measured at every depth of the run
QUANTITIES = {"convergence": {"max_error", "terminal_error"}, "law": {"weak_error", "w1", "ks"},
              "transfer": {"optimal_log2_lr", "final_loss", "loss_gap"}, "scaling": {"delta", "W_max_norm"}}


@pytest.mark.slow
@pytest.mark.parametrize("study", list(RUNS))
def test_runs_export_csv_is_a_table_pandas_reads(study, tmp_path, monkeypatch, capsys):
    pd = pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    assert main(RUNS[study] + ["--out", "run", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["runs", "export", "run", "--csv", "-"]) == 0
    out, err = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out))
    assert tuple(table.columns) == COLUMNS and len(table) > 0 and "measured points" in err
    assert set(table["study"]) == {study} and QUANTITIES[study] <= set(table["quantity"])
    depths = [int(x) for x in RUNS[study][RUNS[study].index("--depths") + 1].split(",")]
    for q in QUANTITIES[study]:
        rows = table[table["quantity"] == q]
        assert set(rows["depth"].dropna().astype(int)) <= set(depths) and rows["value"].notna().any(), q
    if study in ("convergence", "law"):  # a standard error beside every error
        assert table[table["quantity"].isin(["max_error", "weak_error"])]["stderr"].notna().all()
    assert main(["runs", "export", "run", "--records-csv", "records.csv"]) == 0
    assert pd.read_csv(tmp_path / "records.csv").columns[0] == "task_key"


def test_the_rows_helpers():
    row = point("law", setting(law="uniform", phi="x", hurst=None, beta=0.5), 8, "weak_error", 1e-3, 2e-4)
    assert tuple(row) == COLUMNS and row["setting"] == "law=uniform, phi=x, beta=0.5"
    assert row["depth"] == 8 and row["ci_low"] is None
    assert point("s", "", None, "q", math.nan, None, (0.1, math.inf))["value"] is None  # not finite: an empty cell
    mean, se = seed_mean([1.0, 3.0, None, math.nan])
    assert mean == 2.0 and se == pytest.approx(1.0)
    assert seed_mean([2.0]) == (2.0, None) and seed_mean([]) == (None, None)
    records = [{"lr": 0.1, "depth": 4, "W": {"max_norm": 1.0}}, {"lr": 0.1, "depth": 4, "W": {"max_norm": 3.0}},
               {"lr": 0.1, "depth": 8, "W": {"max_norm": 5.0}}]
    rows = record_means("scaling", records, ("lr",), ["W.max_norm", "missing"])
    assert [(r["depth"], r["quantity"], r["value"], r["stderr"]) for r in rows] == [
        (4, "W_max_norm", 2.0, pytest.approx(1.0)), (8, "W_max_norm", 5.0, None)]
