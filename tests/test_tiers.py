"""The quick tier (issue 41): ``pytest -m "not slow"`` is the inner loop of someone editing the
package, so it must run the code of every module, not merely import it. Measured here under
coverage: every module of deeplimits with a function has a line of a function body executed by
the quick tier (its time is measured in benchmarks/RESULTS.md, not here: no clock in a test)."""

import ast
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "deeplimits"


def _body_lines(path: pathlib.Path) -> set[int]:
    """The lines inside the bodies of the functions of ``path`` (what runs only when called)."""
    lines = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines |= {n.lineno for stmt in node.body for n in ast.walk(stmt) if hasattr(n, "lineno")}
    return lines


@pytest.mark.slow
def test_the_quick_tier_runs_code_of_every_module(tmp_path):
    pytest.importorskip("coverage")
    data, report = tmp_path / "quick.cov", tmp_path / "quick.json"
    run = subprocess.run([sys.executable, "-m", "coverage", "run", f"--data-file={data}", f"--source={PKG}", "-m",
                          "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider", str(ROOT / "tests")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=3600)  # a hang guard only
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o", str(report), "-q"],
                   cwd=tmp_path, check=True, capture_output=True)
    files = {pathlib.Path(k).resolve(): set(v["executed_lines"]) for k, v in json.loads(report.read_text())["files"].items()}
    untouched = [str(p.relative_to(ROOT)) for p in sorted(PKG.rglob("*.py"))
                 if _body_lines(p) and not (files.get(p.resolve(), set()) & _body_lines(p))]
    assert not untouched, f"modules whose functions the quick tier never runs: {untouched}"
