"""Every code block of README.md and docs/ runs or is checked (issue 28), so a broken example fails CI.

* ``python`` blocks with ``>>>`` prompts are doctests: run, their output compared.
* Other ``python`` blocks are executed (in a temporary directory, figures written there).
* Shell blocks (``bash`` or no language): every ``deeplimits`` command in them is parsed by the real
  parser and *planned*: the command runs every check it runs before any work (flags, the plan
  and its resource estimate, the outputs) and stops where it would open its run store. A
  ``runs`` command is only parsed (it needs a stored run).
* A block preceded by ``<!-- not run: REASON -->`` (a cluster, your own data files, minutes of
  work) is only compiled (python) or parsed (shell): the reason is required.
"""

import doctest
import os
import pathlib
import re
import shlex

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


def examples(page: pathlib.Path) -> str:
    return "\n\n".join(src for lang, src, _, _ in blocks(page) if lang == "python" and ">>>" in src)


@pytest.fixture
def datasets_restored():
    """A data set an example registers (docs/data.md registers one) is not left for the tests after it."""
    from deeplimits.data import base

    registered = dict(base.DATASETS)
    yield
    base.DATASETS.clear()
    base.DATASETS.update(registered)


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md") if examples(p)))
@pytest.mark.usefixtures("datasets_restored")
def test_examples_of_page(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    src = examples(DOCS / page)
    test = doctest.DocTestParser().get_doctest(src, {}, page, str(DOCS / page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{runner.failures} example(s) of docs/{page} failed (see the output above)"


SCRIPTS = [(_name(p), line, src, reason) for p in PAGES for lang, src, reason, line in blocks(p)
           if lang == "python" and ">>>" not in src]


@pytest.mark.parametrize("page, line, src, reason", SCRIPTS, ids=[f"{s[0]}:{s[1]}" for s in SCRIPTS])
@pytest.mark.usefixtures("datasets_restored")
def test_python_block_runs(page, line, src, reason, tmp_path, monkeypatch):
    code = compile(src, f"{page}:{line}", "exec")  # every block at least compiles
    if reason is not None:
        pytest.skip(f"not run: {reason}")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    exec(code, {"__name__": "__main__"})
    written = {"README.md": "sde.png", "docs/getting-started.md": "ode.png"}.get(page)
    if written and written in src:  # the figure the example says it writes
        assert (tmp_path / written).exists()


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


#: the longest line of a fenced code block in README.md and docs/: 88 columns. The site's code box
#: shows about 80 unscrolled at 1280 px, GitHub's README about 100, a terminal 80 or more; 88 (the
#: width Python code is commonly formatted at) keeps a doctest's call on one line where it reads
#: best, and a line over it is wrapped (``\`` in a shell, ``...`` in a doctest; a report's output
#: is compared with normalised white space, so it may be wrapped too)
CODE_COLUMNS = 88


def test_code_lines_fit_the_page():
    long = [f"{_name(page)}:{line + i + 1}: {len(text)} columns"
            for page in PAGES for _, src, _, line in blocks(page)
            for i, text in enumerate(src.splitlines()) if len(text) > CODE_COLUMNS]
    assert not long, long
