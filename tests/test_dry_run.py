"""``--dry-run`` on every command (issue 38): every check runs, the plan, its tasks and its memory
and time estimates are printed, the exit status is 0, and nothing is run or written."""

import json
import os

import numpy as np
import pytest

from deeplimits.cli import build_parser, main

SMALL = {
    "convergence": ["--regime", "sde", "--depths", "4,8", "--draws", "32", "--width", "4"],
    "convergence-study": [],
    "order": ["--scheme", "euler-maruyama", "--problem", "linear-sde", "--depths", "4,8", "--draws", "32"],
    "order-calibrate": ["--calibrate", "--cases", "euler-maruyama/linear-sde"],
    "stability": [],
    "phase": [],
    "train": [],
    "train-conv": ["--arch", "conv"],
    "scaling": [],
    "scaling-conv": ["--arch", "conv"],
    "scaling-ablation": ["--ablation"],
    "trained-limit": [],
    "transfer": [],
    "law": [],
    "law-fig2": ["--fig2"],
    "shapes": [],
    "shapes-published": ["--preset", "published"],
    "shapes-tanh": ["--case", "tanh", "--preset", "quick"],  # --case a built-in case (MODULE:NAME on trained-limit)
}


def _argv(name):
    return [name.split("-")[0] if name != "trained-limit" else name] + SMALL[name]


@pytest.mark.parametrize("name", list(SMALL))
@pytest.mark.slow
def test_every_command_shows_its_plan_and_estimates_and_writes_nothing(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(_argv(name) + ["--dry-run"]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "--dry-run: nothing is run, no file is written" in text
    assert "time: about" in text
    if name != "order-calibrate":
        assert "plan: " in text and "estimate: ~" in text and " task" in text
    assert "Traceback" not in text and "internal error" not in text
    assert os.listdir(tmp_path) == []  # nothing created: no run directory, no store, no figure


def test_the_parser_gives_every_command_the_flag():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():
        assert any("--dry-run" in a.option_strings for a in command._actions), name


def test_a_plans_float_axis_is_printed_as_typed(tmp_path, monkeypatch, capsys):
    """``--betas 0.3:1:8`` shows 0.3,0.4,...,1.0, not ``0.39999999999999997`` (the range holds the
    values typed, and a float printed keeps 12 significant digits)."""
    from deeplimits.cli.dry_run import _plain

    monkeypatch.chdir(tmp_path)
    assert main(["phase", "--betas", "0.3:1:8", "--hursts", "0.6", "--width", "2", "--n-in", "2", "--depth", "4",
                 "--draws", "1", "--inputs", "1", "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "betas 0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0," in text and "999999" not in text, text
    assert _plain({"betas": [0.1 + 0.2, 1.0, 1e-7], "width": 4}) == "betas 0.3,1.0,1e-07, width 4"


def test_a_refused_plan_is_refused_by_the_dry_run_too(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["convergence", "--regime", "sde", "--draws", "1000000000000", "--dry-run"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_json_dash_gives_the_plan_as_json_and_a_stored_run_is_counted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = _argv("convergence") + ["--out", "r", "--quiet"]
    assert main(argv + ["--dry-run", "--json", "-"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["dry_run"] is True and got["tasks"] == 1 and got["peak_bytes"] > 0 and got["seconds"] > 0
    assert got["plans"][0]["depths"] == [4, 8] and not os.path.exists("r")
    assert main(argv) == 0
    capsys.readouterr()
    assert main(argv + ["--dry-run"]) == 0
    assert "run store r: 1 of 1 tasks finished (a run resumes there)" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("action", ["list", "show", "export", "plot"])
def test_runs_and_weights_say_what_they_would_read_and_write(action, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(_argv("convergence") + ["--out", "r", "--quiet"]) == 0
    before = sorted(os.listdir("r"))
    capsys.readouterr()
    extra = {"list": [], "show": ["r"], "export": ["r", "--csv", "x.csv"], "plot": ["r"]}[action]
    assert main(["runs", action, *extra, "--dry-run"]) == 0
    assert "--dry-run" in capsys.readouterr().err
    assert sorted(os.listdir("r")) == before and not os.path.exists("x.csv")
    # a convergence run holds no weights: the dry run refuses it as the run would
    assert main(["weights", "r", "--dry-run"]) == 2
    assert "r has no stored weights" in capsys.readouterr().err
    np.save("w.npy", np.ones((4, 3, 3)))
    assert main(["weights", "w.npy", "--dry-run"]) == 0
    assert "nothing is measured or written" in capsys.readouterr().out and not os.path.exists("runs")
