"""benchmarks/gpu_check.py (issue 40), the prepared GPU check, kept from rotting on a CPU-only
machine: ``--device cpu --small`` runs every step (the CUDA tests skip, the studies run on the CPU
twice) and passes; a step that cannot run is a FAIL row and a non-zero exit; the section of
RESULTS.md is replaced, not appended, on a rerun."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"
STEPS = ("tests", "convergence", "conv", "scaling", "stability")


def run(tmp_path, *argv):
    before = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    p = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--out", str(tmp_path), *argv],
                       cwd=tmp_path, capture_output=True, text=True)
    assert (ROOT / "benchmarks" / "RESULTS.md").read_text() == before
    return p


def rows(out: str) -> dict:
    return {line.split("|")[1].strip(): line.split("|")[2].strip() for line in out.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in STEPS}


@pytest.mark.slow
def test_small_check_on_the_cpu_passes_and_prints_its_table(tmp_path):
    p = run(tmp_path, "--small", "--no-write")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "| step | status | full size on cpu |" in p.stdout and "every step passed" in p.stdout
    assert rows(p.stdout) == dict.fromkeys(STEPS, "PASS")


@pytest.mark.slow
def test_a_step_that_cannot_run_is_a_fail_row_and_the_exit_is_not_zero(tmp_path):
    p = run(tmp_path, "--small", "--no-write", "--budget", "0")
    assert p.returncode == 1
    assert rows(p.stdout) == dict.fromkeys(STEPS, "FAIL") and "not run: the --budget was spent" in p.stdout


def test_the_results_section_is_replaced_on_a_rerun(tmp_path):
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    gc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gc)
    f = tmp_path / "RESULTS.md"
    f.write_text("# Results\n\n## Before\n\ntext\n")
    gc.write_results(f"{gc.HEADING}\n\nfirst\n", f)
    assert f.read_text() == f"# Results\n\n## Before\n\ntext\n\n{gc.HEADING}\n\nfirst\n"
    f.write_text(f.read_text() + "\n## After\n\nkept\n")
    gc.write_results(f"{gc.HEADING}\n\nsecond\n", f)
    assert f.read_text() == f"# Results\n\n## Before\n\ntext\n\n{gc.HEADING}\n\nsecond\n\n## After\n\nkept\n"
