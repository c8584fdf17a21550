"""The tidy export (issue 28): one row per observation, values equal to the stored results."""

import csv
import io
import json

from deeplimits.runs import register_task, tidy_rows, write_csv


@register_task("tidy-test-task", axes=("draw", "depth"))
def _task(params, seed):
    return {"err": [[0.5, 0.25], [1.5, 1.25], [2.5, 2.25]], "rate": 0.5}


def _record(result, **params):
    return {"key": "k0", "fn": "tidy-test-task", "status": "done", "seed": 7, "seconds": 0.1, "attempts": 1,
            "error": None, "params": {"depths": [4, 8], "draws": 3, **params}, "result": result}


def test_declared_axes_give_one_row_per_entry_with_coordinates():
    rows = tidy_rows([_record(_task({}, 0), regime="sde")])
    assert len(rows) == 6  # 3 draws x 2 depths
    got = {(r["draw"], r["depth"]): r["err"] for r in rows}
    assert got == {(0, 4): 0.5, (0, 8): 0.25, (1, 4): 1.5, (1, 8): 1.25, (2, 4): 2.5, (2, 8): 2.25}
    r = rows[0]
    assert r["rate"] == 0.5 and r["param_regime"] == "sde" and r["param_draws"] == 3 and r["task_seed"] == 7
    assert "param_depths" not in r  # the list became the depth column


def test_row_tables_failed_tasks_and_unknown_tasks():
    table = {"records": [{"hurst": 0.3, "loss": 1.0}, {"hurst": 0.7, "loss": 2.0}], "weights": "w.pt"}
    rec = dict(_record(table), fn="not-registered-anywhere")
    rows = tidy_rows([rec])
    assert [(r["hurst"], r["loss"], r["table"], r["weights"]) for r in rows] == [(0.3, 1.0, "records", "w.pt"),
                                                                                (0.7, 2.0, "records", "w.pt")]
    failed = dict(_record(None), status="failed", error="boom")
    [row] = tidy_rows([failed])
    assert row["task_status"] == "failed" and row["task_error"] == "boom"
    nested = tidy_rows([dict(_record({"hist": {"a": [1, 2]}}), fn="not-registered-anywhere")])
    assert json.loads(nested[0]["hist"]) == {"a": [1, 2]}  # what fits no rule stays one JSON cell


def test_csv_round_trip_with_the_standard_library(tmp_path, capsys):
    rows = tidy_rows([_record(_task({}, 0))]) + tidy_rows([dict(_record(None), status="failed", error="x, y")])
    write_csv(rows, tmp_path / "t.csv")
    with open(tmp_path / "t.csv", newline="") as f:
        back = list(csv.DictReader(f))
    assert len(back) == 7 and back[-1]["task_error"] == "x, y" and back[-1]["err"] == ""
    assert [float(r["err"]) for r in back[:6]] == [0.5, 0.25, 1.5, 1.25, 2.5, 2.25]
    write_csv(rows, "-")
    assert list(csv.DictReader(io.StringIO(capsys.readouterr().out)))[2]["err"] == "1.5"
