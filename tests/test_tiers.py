"""The quick tier (issue 41): ``pytest -m "not slow"`` is the inner loop of someone editing the
package, so it must run the code of every module, not merely import it: every module of deeplimits
with a function has a line of a function body executed by the quick tier.

The whole quick tier under coverage took 195 s of a 35-minute suite (issue 56), so the check runs
its witnesses instead: ``python benchmarks/quick_tier_witnesses.py`` runs the quick tier under
coverage once and records, in tests/data/quick_tier_witnesses.json, a small set of quick tests
that together touch every module. Here those tests alone run under coverage (with ``-m "not
slow"``: a witness marked slow since is left out and its modules fail), and every module of the
package must be listed and touched; a new module, or one its witness no longer touches, fails
with the command that chooses the witnesses again (no clock in a test)."""

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "deeplimits"
WITNESSES = ROOT / "tests" / "data" / "quick_tier_witnesses.json"
AGAIN = "run `python benchmarks/quick_tier_witnesses.py` (the quick tier under coverage, a few minutes) and commit the JSON"


def _script():
    from scripts import load_script

    return load_script("benchmarks/quick_tier_witnesses.py")


def test_every_module_has_a_witness():
    listed = json.loads(WITNESSES.read_text())
    modules = set(_script().modules())
    assert set(listed["witnesses"]) == modules, (f"modules without a witness {sorted(modules - set(listed['witnesses']))}"
                                                 f", witnesses of no module {sorted(set(listed['witnesses']) - modules)}: "
                                                 f"{AGAIN}")
    assert set(listed["witnesses"].values()) <= set(listed["tests"])
    assert all(t.startswith("tests/test_") and (ROOT / t.split("::")[0]).exists() for t in listed["tests"])


@pytest.mark.slow
def test_the_quick_tier_runs_code_of_every_module(tmp_path):
    pytest.importorskip("coverage")
    listed = json.loads(WITNESSES.read_text())
    data, report = tmp_path / "quick.cov", tmp_path / "quick.json"
    run = subprocess.run([sys.executable, "-m", "coverage", "run", f"--data-file={data}", f"--source={PKG}", "-m",
                          "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider",
                          *[str(ROOT / t) for t in listed["tests"]]],
                         cwd=tmp_path, capture_output=True, text=True, timeout=3600)  # a hang guard only
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o", str(report), "-q"],
                   cwd=tmp_path, check=True, capture_output=True)
    files = {pathlib.Path(k).resolve(): set(v["executed_lines"]) for k, v in json.loads(report.read_text())["files"].items()}
    untouched = [m for m, lines in _script().modules().items() if not (files.get((ROOT / m).resolve(), set()) & lines)]
    assert not untouched, f"modules whose functions the quick tier's witnesses no longer run: {untouched}; {AGAIN}"
