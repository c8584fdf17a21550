"""The documentation's examples run and print what the pages say (they are doctests)."""

import doctest
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def examples(page: pathlib.Path) -> str:
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)
    return "\n\n".join(b for b in blocks if ">>>" in b)


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md") if examples(p)))
def test_examples_of_page(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    src = examples(DOCS / page)
    test = doctest.DocTestParser().get_doctest(src, {}, page, str(DOCS / page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{runner.failures} example(s) of docs/{page} failed (see the output above)"
