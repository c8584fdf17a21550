"""Every code block of README.md and docs/ runs or is checked (issues 28 and 39), so a broken
example fails CI.

* ``python`` blocks are plain code (no ``>>>`` prompts: the copy button copies what runs). A
  page's python blocks run in order in one namespace (a page is one session), in a temporary
  directory (figures are written there).
* A python block followed by a ``text`` block (nothing but blank lines between) shows its
  output: what the block prints is compared with it (:func:`same_output`):

  - white space: any run of spaces and line breaks equals any other (leading and trailing
    ignored), as doctest's ``NORMALIZE_WHITESPACE``;
  - ``...`` stands for any text (paths, long reports), as doctest's ``ELLIPSIS``;
  - numbers: a number shown with a decimal point (or an exponent) agrees with a printed one
    that rounds to it, within half a unit of its last shown digit (``0.15`` shown: ``0.1538``
    and ``0.1462`` printed agree, ``0.156`` does not), so a page may show fewer digits than
    are printed; a whole number shown must be printed exactly;
  - an exception: a block may end in one. Its output is then what it printed followed by the
    last line Python's traceback shows, ``module.Class: message``
    (``deeplimits.errors.ParameterError: hurst must lie in (0.0, 1.0), got 1.0``). An exception
    the shown output does not hold fails the test, with its traceback.

  A python block with no ``text`` block after it runs, its output unchecked.
* Shell blocks (``bash`` or no language): every ``deeplimits`` command in them is parsed by the real
  parser and *planned*: the command runs every check it runs before any work (flags, the plan
  and its resource estimate, the outputs) and stops where it would open its run store. A
  ``runs`` command is only parsed (it needs a stored run).
* A block preceded by ``<!-- not run: REASON -->`` (a cluster, your own data files, minutes of
  work) is only compiled (python) or parsed (shell): the reason is required.
"""

import contextlib
import io
import math
import os
import pathlib
import re
import shlex
import traceback

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->\s*$")
SHELLS = ("", "bash", "sh", "console")


def blocks(page: pathlib.Path):
    """``(language, source, reason not run or None, line)`` of every fenced block of ``page``."""
    text = page.read_text()
    out = []
    for m in _BLOCK.finditer(text):
        before = [line for line in text[:m.start()].splitlines() if line.strip()]
        marker = _NOT_RUN.search(before[-1]) if before else None
        out.append((m.group(1), m.group(2), marker.group(1) if marker else None, text[:m.start()].count("\n") + 1))
    return out


def _name(page):
    return str(page.relative_to(ROOT))


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_PRINTED_NUMBER = r"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)"


def same_output(shown: str, printed: str) -> bool:
    """Whether ``printed`` is the output ``shown`` under the rules of this module's docstring."""
    pattern, numbers = [], []
    for part in re.split(r"(\s+|\.\.\.)", shown.strip()):
        if not part:
            continue
        if part.isspace():
            pattern.append(r"\s+")
        elif part == "...":
            pattern.append(r"[\s\S]*?")
        else:
            at = 0
            for m in _NUMBER.finditer(part):
                pattern.append(re.escape(part[at:m.start()]))
                pattern.append(_PRINTED_NUMBER)
                numbers.append(m.group())
                at = m.end()
            pattern.append(re.escape(part[at:]))
    m = re.fullmatch("".join(pattern), printed.strip())
    return m is not None and all(_agrees(want, got) for want, got in zip(numbers, m.groups()))


def _agrees(shown: str, printed: str) -> bool:
    """A printed number against a shown one: equal for a whole number, else it rounds to the
    shown one (within half a unit of the last digit shown)."""
    if not re.search(r"[.eE]", shown):
        return float(printed) == int(shown)
    mantissa, _, exponent = shown.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    unit = 10.0 ** (int(exponent or 0) - decimals)
    return math.isclose(float(printed), float(shown), rel_tol=0, abs_tol=unit / 2 * (1 + 1e-9))


def test_same_output_follows_its_rules():
    assert same_output("(0.51, 0.5)", "(0.5132, 0.5)") and same_output("(0.51, 0.5)", "(0.505, 0.46)")
    assert not same_output("(0.51, 0.5)", "(0.52, 0.5)") and not same_output("(0.51, 0.5)", "(0.51, 0.6)")
    assert same_output("[16, 32]\n  a   b", "[16, 32] a\nb") and not same_output("[16, 32]", "[16, 33]")
    assert not same_output("16", "16.4") and same_output("1e-3", "0.0012") and not same_output("1e-3", "0.0016")
    assert same_output("res-1 float64 torch.Size([2, 3])", "res-1 float64 torch.Size([2, 3])")
    assert same_output("missing: ... (nothing", "missing: a, b\nc (nothing") and not same_output("a", "a b")


def python_steps(page: pathlib.Path):
    """``(source, shown output or None, reason not run or None, line)`` of the python blocks of
    ``page``, in order; the shown output is the ``text`` block right after a block."""
    found = blocks(page)
    steps = []
    for i, (lang, src, reason, line) in enumerate(found):
        if lang != "python":
            continue
        after = found[i + 1] if i + 1 < len(found) else None
        shown = None
        if after is not None and after[0] == "text":
            text = page.read_text()
            between = "\n".join(text.splitlines()[line - 1:after[3] - 1])
            if between.count("```") == 2 and not between.split("```", 2)[2].strip():
                shown = after[1]
        steps.append((src, shown, reason, line))
    return steps


def run_blocks(page: pathlib.Path, name: str) -> None:
    """Run the python blocks of ``page`` in order in one namespace; fail at the first block that
    raises unexpectedly or prints other than it shows."""
    import matplotlib

    matplotlib.use("Agg")
    namespace = {"__name__": "__main__"}
    for src, shown, reason, line in python_steps(page):
        code = compile(src, f"{name}:{line}", "exec")  # every block at least compiles
        if reason is not None:
            continue
        out, error = io.StringIO(), None
        try:
            with contextlib.redirect_stdout(out):
                exec(code, namespace)
        except Exception as e:  # noqa: BLE001 -- compared with the output shown, else reported
            error = e
        printed = out.getvalue()
        if error is not None:
            kind = type(error)
            where = "" if kind.__module__ == "builtins" else kind.__module__ + "."
            printed += f"{where}{kind.__qualname__}: {error}"
            if shown is None or not same_output(shown, printed):
                pytest.fail(f"{name}:{line}: the example raised\n" + "".join(traceback.format_exception(error)))
        if shown is not None and not same_output(shown, printed):
            pytest.fail(f"{name}:{line}: the example printed\n{printed}\nbut the page shows\n{shown}")


def _import_every_module():
    """Import every module of the package once, so every built-in registration (a task, a plan, a
    block...) is made before a test saves the registries: restoring them after an example then
    never drops a built-in entry that the example's run happened to import first."""
    import importlib
    import pkgutil

    import deeplimits

    for info in pkgutil.walk_packages(deeplimits.__path__, "deeplimits."):
        if info.name.endswith("__main__"):  # the command line itself
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional dependency this machine lacks
            pass


@pytest.fixture
def registries_restored():
    """A data set, a driver, a block, a test function, a transfer network or data set, a task or a
    study an example registers (docs/data.md, docs/mathematics.md, the "Bring your own" sections,
    docs/adding-a-study.md) is not left for the tests after it."""
    from deeplimits.blocks import base as blocks
    from deeplimits.data import base
    from deeplimits.paths import registry
    from deeplimits.runs import tasks
    from deeplimits.studies import plan
    from deeplimits.studies.law import phis
    from deeplimits.studies.transfer import user

    _import_every_module()
    tables = (base.DATASETS, registry._DRIVERS, blocks._BLOCKS, phis._REGISTRY, user._NETWORKS,
              user._DATA, tasks._TASKS, plan._PLANS)
    registered = [dict(t) for t in tables]
    yield
    for table, saved in zip(tables, registered):
        table.clear()
        table.update(saved)


PYTHON_PAGES = [p for p in PAGES if python_steps(p)]


@pytest.mark.slow
@pytest.mark.parametrize("page", PYTHON_PAGES, ids=_name)
@pytest.mark.usefixtures("registries_restored")
def test_examples_of_page(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    run_blocks(page, _name(page))
    src = "\n".join(s for s, _, reason, _ in python_steps(page) if reason is None)
    written = {"README.md": "sde.png", "docs/getting-started.md": "ode.png"}.get(_name(page))
    if written and written in src:  # the figure the example says it writes
        assert (tmp_path / written).exists()


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_examples_have_no_prompts(page):
    """A python block is code to paste: no ``>>>`` prompts, its output in a ``text`` block after it."""
    prompted = [line for lang, src, _, line in blocks(page) if lang == "python" and re.search(r"^>>>", src, re.M)]
    assert not prompted, f"{_name(page)}: python blocks with >>> prompts at lines {prompted}"


def commands(src: str) -> list[list[str]]:
    """The ``deeplimits`` command lines of a shell block, as argument lists (continuation lines
    joined, comments dropped, split at ``&&``, ``||``, ``;`` and ``|``)."""
    out = []
    for line in src.replace("\\\n", " ").splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:  # an unbalanced quote is a broken example too
            raise AssertionError(f"cannot split {line!r}: {e}") from None
        part: list[str] = []
        for w in words + ["&&"]:
            if w in ("&&", "||", ";", "|", "&"):
                for i, word in enumerate(part):
                    if word.endswith("deeplimits") and "/" not in word.replace(".venv/bin/", ""):
                        out.append(part[i + 1:])
                        break
                    if word == "-m" and i + 1 < len(part) and part[i + 1] == "deeplimits":
                        out.append(part[i + 2:])
                        break
                part = []
            else:
                part.append(w)
    return out


SHELL = [(_name(p), line, argv, reason) for p in PAGES for lang, src, reason, line in blocks(p)
         if lang in SHELLS for argv in commands(src)]


class _Planned(BaseException):
    """Raised where a planned command would open its run store: everything before it passed."""


def test_the_shell_blocks_hold_deeplimits_commands():
    assert len(SHELL) >= 30, len(SHELL)


@pytest.mark.slow
@pytest.mark.parametrize("page, line, argv, reason", SHELL, ids=[f"{s[0]}:{s[1]}:{' '.join(s[2])[:40]}" for s in SHELL])
def test_shell_command_plans(page, line, argv, reason, tmp_path, monkeypatch, capsys):
    from deeplimits.cli import build_parser, main
    from deeplimits.cli import errors, execution

    argv = [a.replace("~", str(tmp_path)) for a in argv]
    try:
        build_parser().parse_args(argv)
    except errors.UsageError as e:
        pytest.fail(f"{page}:{line}: deeplimits {' '.join(argv)}: {e}")
    if reason is not None or argv[0] in ("runs", "weights") or "--help" in argv or "-h" in argv:
        return  # parsed; 'runs' and 'weights' read files the page's reader has

    if argv[0] == "order" or "--dry-run" in argv:  # no run store to stop at: small, or nothing run
        monkeypatch.chdir(tmp_path)
        assert main(argv) == 0, capsys.readouterr().err
        assert "--dry-run" not in argv or not os.listdir(tmp_path)
        return

    def stop(*a, **kw):
        raise _Planned

    monkeypatch.setattr(execution.Run, "__init__", stop)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(_Planned):
        status = main(argv)
        pytest.fail(f"{page}:{line}: deeplimits {' '.join(argv)} exited {status} before its run: "
                    f"{capsys.readouterr().err.strip()}")


#: the longest line of a fenced code block. The site's code box at 1280 px is 938 px wide, about
#: 110 columns of monospace (measured by docs/screenshots.py; 688 px, 80 columns, while the table
#: of contents had its own sidebar), and the theme wraps what passes it
#: (docs/stylesheets/extra.css); still, what a reader copies (python, shell) is at most 80
#: columns, and so is every block of the first pages a reader meets; elsewhere an output block
#: may reach 88 (a report's table reads better whole), and README.md's blocks 88 (GitHub shows
#: about 100). A longer line is wrapped (``\`` in a shell; an output is compared with normalised
#: white space)
CODE_COLUMNS, OUTPUT_COLUMNS, README_COLUMNS = 80, 88, 88
#: the first pages a reader meets: every block within CODE_COLUMNS
SCREENSHOT_PAGES = ("index.md", "getting-started.md", "published.md", "theory.md", "cli.md")


def _ci_command() -> str:
    """The last line of .ci/run: the README's test command, word for word."""
    return (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]


def test_ci_runs_the_readmes_test_command():
    assert _ci_command() in (ROOT / "README.md").read_text().splitlines()


def _width(page, language) -> int:
    if page.name == "README.md":
        return README_COLUMNS
    if language == "text" and page.name not in SCREENSHOT_PAGES:
        return OUTPUT_COLUMNS
    return CODE_COLUMNS


def test_code_lines_fit_the_page():
    long = [f"{_name(page)}:{line + i + 1}: {len(text)} columns (at most {_width(page, language)})"
            for page in PAGES for language, src, _, line in blocks(page)
            for i, text in enumerate(src.splitlines()) if len(text) > _width(page, language)
            and not text.startswith("python3 -m venv .venv && ")]  # the two set-up commands: one line, to copy whole
    assert not long, long


def test_the_theme_wraps_wide_tables_and_code_blocks():
    """Nothing on a page hides past a scroll bar at 1280 px by design: the site loads
    docs/stylesheets/extra.css, which wraps a code line longer than its box and a table's cells to
    the column's width, breaking a word only where it alone is wider than its column
    (``break-word``; ``anywhere`` let tables narrow columns below their words). docs/screenshots.py
    measures the result in a browser (benchmarks/RESULTS.md, "The site at 1280 px")."""
    import re

    assert "stylesheets/extra.css" in re.findall(r"^extra_css:\n((?:  - .*\n)+)", (ROOT / "mkdocs.yml").read_text(),
                                                 re.M)[0]
    css = re.sub(r"/\*.*?\*/", "", (ROOT / "docs" / "stylesheets" / "extra.css").read_text(), flags=re.S)
    rules = {sel.strip(): body for sels, body in re.findall(r"([^{}]+)\{([^}]*)\}", css) for sel in sels.split(",")}
    assert "pre-wrap" in rules[".md-typeset pre > code"]
    assert "overflow-wrap: break-word" in rules[".md-typeset table:not([class]) td"]
    assert "anywhere" not in rules[".md-typeset table:not([class]) td"]
    assert "width: 100%" in rules[".md-typeset table:not([class])"]


def test_every_script_a_page_names_exists():
    """A page that cites ``python benchmarks/X.py`` or ``examples/X.py`` names a file of the
    repository (a renamed or removed script left three pages citing ``benchmarks/bench_rough.py``)."""
    pages = PAGES + [ROOT / "benchmarks" / "RESULTS.md", ROOT / "CHANGELOG.md"]
    missing = sorted({(page.name, path) for page in pages if page.exists()
                      for path in re.findall(r"\b((?:benchmarks|examples)/[\w/-]+\.py)\b", page.read_text())
                      if path != "examples/NAME.py" and not (ROOT / path).exists()})  # NAME: any example
    assert not missing, missing
