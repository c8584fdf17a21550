"""benchmarks/gpu_check.py (issues 40, 57), the prepared GPU check, kept from rotting on a CPU-only
machine: ``--device cpu --small`` runs every command of the package (the CPU standing for the
device, both in one process each) and passes; every full-size command line of the GPU run is a
valid plan; each comparison can say no; a step that cannot run is a FAIL row and a non-zero exit;
the section of RESULTS.md is replaced, not appended, on a rerun. The CUDA tests the check runs
first (its ``tests`` step) are left out here: the test suite runs them itself."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"


def _module():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    gc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gc)
    return gc


GC = _module()
STEPS = ("tests", *GC.STEPS)


def run(tmp_path, *argv):
    before = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    p = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--out", str(tmp_path), *argv],
                       cwd=tmp_path, capture_output=True, text=True)
    assert (ROOT / "benchmarks" / "RESULTS.md").read_text() == before
    return p


def rows(out: str) -> dict:
    return {line.split("|")[1].strip(): line.split("|")[2].strip() for line in out.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in STEPS}


def test_every_command_of_the_package_is_a_step():
    from deeplimits.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    covered = {GC.sizes(True)[n][0][0] for n in GC.STEPS} | {"runs"}
    assert covered == set(sub.choices)
    regimes = {argv[argv.index("--regime") + 1] for argv, _ in GC.sizes(True).values() if "--regime" in argv}
    assert {"inside-sde", "inside-ode", "rough"} <= regimes  # and the default study's sde, ode, fbm
    assert any("--budget" in argv for argv, _ in GC.sizes(True).values())  # a run sized to decide


@pytest.mark.parametrize("small", [True, False], ids=["small", "full"])
def test_every_command_line_of_the_check_is_a_valid_plan(small, tmp_path, capsys):
    """What the GPU run will run, checked here by each command's dry run (its plan and sizes)."""
    from deeplimits.cli import main

    for name, (full, subset) in GC.sizes(small).items():
        if GC.STEPS[name][0] in ("weights", "runs"):
            continue
        for argv in (full, subset) if subset else (full,):
            line = GC.command(name, argv, "cpu", 0, tmp_path, "x")
            assert main(line + ["--dry-run"]) == 0, (name, line, capsys.readouterr())


@pytest.mark.slow
def test_small_check_on_the_cpu_passes_and_prints_its_table(tmp_path):
    p = run(tmp_path, "--small", "--no-write", "--skip", "tests")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "| step | status | full size on cpu |" in p.stdout and "every step passed" in p.stdout
    assert rows(p.stdout) == dict.fromkeys(GC.STEPS, "PASS")


@pytest.mark.slow
def test_a_step_that_cannot_run_is_a_fail_row_and_the_exit_is_not_zero(tmp_path):
    p = run(tmp_path, "--small", "--no-write", "--budget", "0")
    assert p.returncode == 1
    assert rows(p.stdout) == dict.fromkeys(STEPS, "FAIL") and "not run: the --budget was spent" in p.stdout


def _result(errors, stderrs, regime="sde"):
    return {"regime": regime, "activation": "tanh", "error": errors, "stderr": stderrs, "rate": 0.5, "draws": 64}


def test_each_comparison_can_say_no():
    ok = GC.compare_convergence([_result([1.0, 0.5], [0.01, 0.01])], [_result([1.02, 0.49], [0.01, 0.01])])
    assert ok[0] and not GC.compare_convergence([_result([1.0, 0.5], [0.01, 0.01])],
                                                [_result([1.1, 0.5], [0.01, 0.01])])[0]
    grid = [[0.5, -0.2], [1.0, -1.5]]
    shifted = [[v + 1.0 for v in row] for row in grid]
    near = [[v + 0.05 for v in row] for row in grid]
    far = [[v - 0.05 for v in row] for row in grid]
    assert GC.compare_phase({"log10_rh": near}, {"log10_rh": grid}, {"log10_rh": far})[0]
    assert not GC.compare_phase({"log10_rh": shifted}, {"log10_rh": grid}, {"log10_rh": far})[0]
    rec = [{"train_loss": 1.0, "test_accuracy": 0.5}]
    assert GC.compare_trained({"records": rec}, {"records": rec})[0]
    assert not GC.compare_trained({"records": [{"train_loss": 1.2, "test_accuracy": 0.5}]}, {"records": rec})[0]
    setting = {"curves": [[2.0, 1.0, 3.0]], "optimum": [1.0]}
    assert GC.compare_transfer({"settings": [setting]}, {"settings": [setting]})[0]
    assert not GC.compare_transfer({"settings": [{**setting, "optimum": [2.5]}]}, {"settings": [setting]})[0]
    law = {"phis": [{"error": [0.1], "se": [0.01]}], "verdict": "agrees"}
    assert not GC.compare_law({**law, "phis": [{"error": [0.2], "se": [0.01]}]}, law)[0]
    assert GC.compare_runs({"a": 1, "seconds": 2}, {"a": 1, "seconds": 3})[0]
    assert not GC.compare_runs({"a": 1}, {"a": 2})[0]
    assert not GC.compare_weights({"tensors": [{"norm": 1.0}]}, {"tensors": [{"norm": 1.5}]})[0]
    cases = [{"case": "linear", "weight_distance": {"mean": [0.1, 0.2]}, "state_distance": {"mean": [0.3, 0.4]}}]
    moved = [{**cases[0], "state_distance": {"mean": [0.3, 0.41]}}]
    assert GC.compare_limit({"cases": cases}, {"cases": cases})[0] and not GC.compare_limit({"cases": moved},
                                                                                           {"cases": cases})[0]
    cells = [{"L": 4, "M": 4, "D": 4, "hidden": [0.2, 0.25], "output": [0.3, 0.28]}]
    off = [{**cells[0], "output": [0.3, 0.281]}]
    assert GC.compare_shapes({"cells": cells}, {"cells": cells})[0]
    assert not GC.compare_shapes({"cells": off}, {"cells": cells})[0]
    assert not GC.compare_shapes({"cells": [{**cells[0], "D": 8}]}, {"cells": cells})[0]


def test_the_results_section_is_replaced_on_a_rerun(tmp_path):
    f = tmp_path / "RESULTS.md"
    f.write_text("# Results\n\n## Before\n\ntext\n")
    GC.write_results(f"{GC.HEADING}\n\nfirst\n", f)
    assert f.read_text() == f"# Results\n\n## Before\n\ntext\n\n{GC.HEADING}\n\nfirst\n"
    f.write_text(f.read_text() + "\n## After\n\nkept\n")
    GC.write_results(f"{GC.HEADING}\n\nsecond\n", f)
    assert f.read_text() == f"# Results\n\n## Before\n\ntext\n\n{GC.HEADING}\n\nsecond\n\n## After\n\nkept\n"
