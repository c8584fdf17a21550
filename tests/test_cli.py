"""The `deeplimits convergence` command: output, JSON, figure, usage errors."""

import json
import subprocess
import sys

import pytest

from deeplimits.cli import main, parse_list


def test_parse_list_conventions():
    assert parse_list("4,8,16", int) == [4, 8, 16]
    betas = parse_list("0:1.3:27")
    assert len(betas) == 27 and betas[0] == 0 and betas[-1] == pytest.approx(1.3)
    assert betas[1] == pytest.approx(0.05)
    # the values typed, not start + i * step's last bits (0.3 + 0.1 = 0.39999999999999997)
    assert [repr(b) for b in parse_list("0.3:1:8")] == ["0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"]
    assert len(set(parse_list("1:1.0000000000001:3"))) == 3  # a grid finer than 12 digits is kept as it is


def test_single_regime_run(tmp_path, capsys):
    out, js = tmp_path / "out", tmp_path / "r.json"
    rc = main(["convergence", "--regime", "fbm", "--hurst", "0.8", "--width", "2", "--depths", "4,8,16",
               "--draws", "8", "--reference", "128", "--seed", "5", "--out", str(out), "--json", str(js), "--quiet"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "rate" in text and "theory 0.600" in text and "->" in text and "asymptotic" in text
    d = json.loads(js.read_text())
    assert d["regime"] == "fbm" and d["hurst"] == 0.8 and d["width"] == 2 and d["draws"] == 8
    assert d["depths"] == [4, 8, 16] and len(d["error"]) == len(d["stderr"]) == len(d["terminal_error"]) == 3
    assert d["theory_rate"] == pytest.approx(0.6) and len(d["rate_ci"]) == 2
    assert json.loads((out / "result.json").read_text()) == d
    png = (out / "convergence.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    # same seed, same numbers
    rc = main(["convergence", "--regime", "fbm", "--hurst", "0.8", "--width", "2", "--depths", "4,8,16",
               "--draws", "8", "--reference", "128", "--seed", "5", "--out", str(out), "--json", str(js), "--quiet"])
    assert json.loads(js.read_text())["error"] == d["error"]


def test_default_study_is_a_list_of_three(tmp_path, capsys):
    js = tmp_path / "all.json"
    rc = main(["convergence", "--depths", "4,8", "--draws", "3", "--width", "2", "--out", str(tmp_path),
               "--json", str(js), "--quiet"])
    assert rc == 0
    d = json.loads(js.read_text())
    assert [r["regime"] for r in d] == ["sde", "ode", "fbm"]
    assert d[0]["hurst"] is None and d[2]["hurst"] == 0.75
    assert d[1]["theory_rate"] == 1 and d[0]["theory_rate"] == 0.5


@pytest.mark.parametrize("argv,needle", [
    (["convergence", "--regime", "fbm", "--hurst", "0.5"], "hurst must lie in (0.5, 1)"),
    (["convergence", "--depths", "3,4"], "depths must be a power of two"),
    (["convergence", "--depths", "4:x:3"], "start:stop:count"),
    (["convergence", "--regime", "sde", "--hurst", "0.7"], "--hurst applies only to --regime fbm"),
    (["convergence", "--regime", "sde", "--width", "0"], "width must be an integer >= 1"),
    (["convergence", "--regime", "sde", "--depths", "4,8", "--reference", "8"], "reference must be at least 2 * max(depths) = 16"),
    (["convergence", "--regime", "sdf"], "invalid choice"),
    (["convergence", "--bogus"], "unrecognized arguments"),
    # an argument the command does not take is said under the command, not as 'deeplimits:'
    (["convergence", "--preset", "nope"], "deeplimits convergence: unrecognized arguments: --preset nope"),
    (["phase", "extra"], "deeplimits phase: unrecognized arguments: extra"),
    (["convergence", "--regime", "sde", "--beta", "0.3"], "--beta applies only to --regime inside-sde or inside-ode"),
    (["convergence", "--regime", "inside-sde", "--alpha", "0.2"], "--alpha applies only to --regime inside-ode"),
    (["convergence", "--regime", "ode", "--sb", "0.2"], "--sb applies only to --regime inside-sde or inside-ode"),
    (["convergence", "--sa", "0.3"], "--sa needs --regime"),
    (["convergence", "--no-ito-correction"], "--no-ito-correction needs --regime inside-sde"),
    (["convergence", "--regime", "inside-ode", "--no-ito-correction"],
     "--no-ito-correction applies only to --regime inside-sde"),
    (["convergence", "--regime", "inside-ode", "--beta", "1.2"], "beta must lie in (0, 1) for regime 'inside-ode', got 1.2"),
    (["convergence", "--regime", "inside-sde", "--activation", "sigmoid"], "sigma(0) = 0 and sigma'(0) = 1"),
    (["convergence", "--regime", "inside-ode", "--reference", "64"], "reference applies only to the regimes with"),
])
def test_usage_errors_exit_2_with_one_line(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_inside_regimes_run_with_their_options(tmp_path, capsys):
    js = tmp_path / "i.json"
    argv = ["convergence", "--regime", "inside-sde", "--width", "2", "--depths", "4,8,16", "--draws", "6",
            "--reference", "64", "--beta", "1", "--sa", "0.5", "--no-ito-correction", "--out", str(tmp_path / "a"),
            "--json", str(js), "--quiet"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "inside-sde beta=1 no-Itô (softplus0, d=2, sA=0.5, sb=1)" in text
    assert "note: ablation" in text
    d = json.loads(js.read_text())
    assert (d["regime"], d["beta"], d["sa"], d["sb"], d["ito_correction"], d["theory_rate"]) == \
        ("inside-sde", 1.0, 0.5, 1.0, False, 0.0)
    assert main(["convergence", "--regime", "inside-ode", "--width", "2", "--depths", "4,8", "--draws", "3",
                 "--activation", "tanh", "--out", str(tmp_path / "b"), "--json", str(js), "--quiet"]) == 0
    d = json.loads(js.read_text())
    assert (d["alpha"], d["beta"], d["activation"], d["theory_rate"]) == (0.5, 0.5, "tanh", 1.0)  # default beta 1/2
    assert "inside-ode beta=0.5 (tanh, d=2" in capsys.readouterr().out


@pytest.mark.slow
def test_console_entry_point_exit_status():
    r = subprocess.run([sys.executable, "-m", "deeplimits.cli", "convergence", "--regime", "fbm", "--hurst", "1.2"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "hurst" in r.stderr
    r = subprocess.run([sys.executable, "-m", "deeplimits.cli", "convergence", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--depths" in r.stdout and "--json" in r.stdout


@pytest.mark.slow
def test_runs_commands_list_show_export_and_redraw(tmp_path, capsys):
    run = tmp_path / "runs" / "a"
    argv = ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8", "--draws", "6", "--chunk", "2",
            "--reference", "32", "--out", str(run), "--quiet"]
    assert main(argv) == 0
    first = json.loads((run / "result.json").read_text())
    capsys.readouterr()
    assert main(["runs", "list", str(tmp_path / "runs")]) == 0
    assert "3 tasks done, 0 failed" in capsys.readouterr().out
    assert main(["runs", "show", str(run)]) == 0
    assert "rate" in capsys.readouterr().out
    assert main(["runs", "export", str(run), "--records-csv", str(tmp_path / "r.csv"), "--json",
                 str(tmp_path / "r.json")]) == 0
    import csv

    with open(tmp_path / "r.csv", newline="") as f:
        table = list(csv.DictReader(f))
    # the records: one row per draw and depth (6 draws x 2 depths), the errors of result.json's table
    assert len(table) == 12 and {r["task_status"] for r in table} == {"done"} and {r["param_regime"] for r in table} == {"sde"}
    assert sorted(int(r["depth"]) for r in table) == [4] * 6 + [8] * 6
    for i, depth in enumerate(first["depths"]):
        mean = sum(float(r["max_err"]) for r in table if int(r["depth"]) == depth) / 6
        assert abs(mean - first["error"][i]) < 1e-12 * max(1.0, mean)
    assert len(json.loads((tmp_path / "r.json").read_text())) == 3
    # redraw from the store without recomputing: same numbers, fresh figure
    (run / "convergence.png").unlink()
    (run / "result.json").unlink()
    assert main(["runs", "plot", str(run)]) == 0
    assert (run / "convergence.png").exists()
    redrawn = json.loads((run / "result.json").read_text())
    assert redrawn["error"] == first["error"] and redrawn["rate"] == first["rate"]
    assert main(["runs", "show", str(tmp_path / "nothing")]) == 2
    assert "no run store" in capsys.readouterr().err


def test_bare_command_lists_the_commands(capsys):
    """``deeplimits`` alone prints the help with every command (issue 28), exit 2 like any usage."""
    assert main([]) == 2
    err = capsys.readouterr().err
    for command in ("convergence", "stability", "phase", "train", "weights", "scaling", "runs"):
        assert f"\n    {command} " in err


def test_no_help_text_shows_a_doubled_percent():
    """argparse formats help strings with %, not descriptions: a literal '95%%' once showed."""
    import argparse

    from deeplimits.cli import build_parser

    def texts(parser):
        yield parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    yield from texts(child)

    assert not [t for t in texts(build_parser()) if "%%" in t]
