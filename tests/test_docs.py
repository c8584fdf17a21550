"""The documentation's examples run and print what the pages say (they are doctests)."""

import doctest
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_examples_of_page(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    text = (DOCS / page).read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    src = "\n\n".join(b for b in blocks if ">>>" in b)
    if not src:
        pytest.skip(f"{page} has no examples")
    test = doctest.DocTestParser().get_doctest(src, {}, page, str(DOCS / page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{runner.failures} example(s) of docs/{page} failed (see the output above)"
