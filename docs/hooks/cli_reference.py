"""MkDocs hook: pages generated from the code at build time, so they cannot drift from it.

(The docstrings' Sphinx roles become links in ``crossrefs.py``, a griffe extension.)

* ``cli.md``: the ``--help`` of ``deeplimits`` and of every command, from the parser
  (``deeplimits.cli.build_parser``), in place of the line ``<!-- cli-help -->``;
* ``reference/index.md``: every name ``import deeplimits`` exports, with the page of the module
  that defines it, in place of the line ``<!-- exports -->``.
"""

from __future__ import annotations

import contextlib
import os

#: the columns ``--help`` is rendered at: a code block of the page shows about 80 characters
#: unscrolled at 1280 px (a terminal of 80 columns shows the same lines; tests/test_help.py)
COLUMNS = 80


@contextlib.contextmanager
def _columns(n: int):
    """argparse wraps at the terminal width (``$COLUMNS``): ``n`` while formatting, then restored."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(n)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def _cli_help() -> str:
    from deeplimits.cli import build_parser

    parser = build_parser()
    with _columns(COLUMNS):
        parts = ["## `deeplimits`", "", "```text", parser.format_help().rstrip(), "```", ""]
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        for name, p in sub.choices.items():
            parts += [f"## `deeplimits {name}`", "", "```text", p.format_help().rstrip(), "```", ""]
    return "\n".join(parts)


def _exports() -> str:
    import deeplimits

    pages = {os.path.splitext(f)[0] for f in os.listdir(os.path.join(os.path.dirname(__file__), "..", "reference"))}
    rows = ["| name | defined in | page |", "|---|---|---|"]
    for name in sorted(deeplimits.__all__, key=str.lower):
        obj = getattr(deeplimits, name)
        module = getattr(obj, "__module__", None) or deeplimits._WHERE.get(name, "")
        if not module.startswith("deeplimits"):
            module = "deeplimits." + deeplimits._WHERE.get(name, "")
        page = _page_of(module, pages)
        rows.append(f"| `{name}` | `{module}` | " + (f"[{page}]({page}.md)" if page else "-") + " |")
    return "\n".join(rows)


def _page_of(module: str, pages: set) -> str | None:
    """The reference page of ``module``: the longest page name that is a prefix of it."""
    parts = module.removeprefix("deeplimits.").split(".")
    for n in range(len(parts), 0, -1):
        cand = ".".join(parts[:n])
        if cand in pages:
            return cand
    return None


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "<!-- cli-help -->" in markdown:
        markdown = markdown.replace("<!-- cli-help -->", _cli_help())
    if "<!-- exports -->" in markdown:
        markdown = markdown.replace("<!-- exports -->", _exports())
    return markdown

