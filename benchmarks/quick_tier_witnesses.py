"""The quick tier's witnesses: for every module of deeplimits with a function, the quick tests
(``pytest -m "not slow"``) that run a line of one of its function bodies, and a small set of them
that together touch every module, chosen by their time. tests/test_tiers.py runs that set alone
under coverage, in place of the whole quick tier (which it ran again inside the full suite: 195 s
of a 35-minute suite under load), and fails when a module is new or no witness touches it any more.

    python benchmarks/quick_tier_witnesses.py        # the quick tier under coverage (a few minutes)

writes tests/data/quick_tier_witnesses.json: ``witnesses`` (module -> the chosen test that touches
it), ``tests`` (the chosen tests, pytest selectors of test functions: every parameter runs) and
``seconds`` (each chosen test's time in this run). The choice is greedy set cover: the test that
touches the most modules not yet touched per second of its time, until every module is touched.
"""

from __future__ import annotations

import argparse
import ast
import json
import pathlib
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "deeplimits"
OUT = ROOT / "tests" / "data" / "quick_tier_witnesses.json"


def body_lines(path: pathlib.Path) -> set[int]:
    """The lines inside the bodies of the functions of ``path`` (what runs only when called)."""
    lines = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines |= {n.lineno for stmt in node.body for n in ast.walk(stmt) if hasattr(n, "lineno")}
    return lines


def modules() -> dict[str, set[int]]:
    """Each module of the package with a function (its path relative to the repository): its body lines."""
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        lines = body_lines(p)
        if lines:
            out[str(p.relative_to(ROOT))] = lines
    return out


def selector(dotted: str) -> str | None:
    """A test function's dotted name (coverage's ``test_function`` context, ``test_x.test_y`` or
    ``test_x.Class.test_y``; junit's class name and test name) as a pytest selector
    (``tests/test_x.py::test_y``; ``None`` for a context outside a test module)."""
    parts = dotted.split(".")
    i = next((k for k, part in enumerate(parts) if part.startswith("test_")), None)  # the test module
    if i is None:  # a context outside a test module (a fixture's set-up shared by several): no selector
        return None
    return "tests/" + parts[i] + ".py::" + "::".join(parts[i + 1:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        rc = tmp / "rc"
        rc.write_text(f"[run]\nsource = {PKG}\ndynamic_context = test_function\ndata_file = {tmp / 'cov'}\n")
        run = subprocess.run([sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "pytest", "-q", "-m",
                              "not slow", "-p", "no:cacheprovider", f"--junitxml={tmp / 'j.xml'}", str(ROOT / "tests"),
                              f"--ignore={ROOT / 'tests' / 'test_tiers.py'}"],  # its check reads what this writes
                             cwd=tmp)
        if run.returncode != 0:
            print("the quick tier failed under coverage: fix it first", file=sys.stderr)
            return 1
        subprocess.run([sys.executable, "-m", "coverage", "json", f"--rcfile={rc}", "--show-contexts", "-q", "-o",
                        str(tmp / "cov.json")], cwd=tmp, check=True)
        files = json.loads((tmp / "cov.json").read_text())["files"]
        seconds: dict[str, float] = {}
        for case in ET.parse(tmp / "j.xml").getroot().iter("testcase"):
            key = selector(case.get("classname") + "." + case.get("name").split("[")[0])
            seconds[key] = seconds.get(key, 0.0) + float(case.get("time") or 0.0)
    touched: dict[str, set[str]] = {}  # module -> the selectors of the tests that run a line of its bodies
    for module, lines in modules().items():
        data = files.get(str(ROOT / module)) or files.get(module) or {}
        tests = set()
        for line, contexts in (data.get("contexts") or {}).items():
            if int(line) in lines:
                tests |= {selector(c) for c in contexts if c} - {None}
        touched[module] = tests
    bare = sorted(m for m, t in touched.items() if not t)
    if bare:
        print(f"modules whose functions the quick tier never runs: {bare}", file=sys.stderr)
        return 1
    left, chosen = set(touched), []
    while left:
        def worth(test):
            return sum(test in touched[m] for m in left) / (seconds.get(test, 1.0) + 0.05)
        best = max({t for m in left for t in touched[m]}, key=lambda t: (worth(t), t))
        chosen.append(best)
        left -= {m for m in left if best in touched[m]}
    witnesses = {m: next(t for t in chosen if t in touched[m]) for m in sorted(touched)}
    out = {"about": __doc__.split("\n\n")[0].replace("\n", " "), "command": "python benchmarks/quick_tier_witnesses.py",
           "tests": sorted(chosen), "seconds": {t: round(seconds.get(t, 0.0), 2) for t in sorted(chosen)},
           "witnesses": witnesses}
    pathlib.Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(chosen)} tests touch all {len(touched)} modules, {sum(seconds.get(t, 0.0) for t in chosen):.0f} s "
          f"in this run; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
