"""Every example under examples/ runs at a small size and writes the figures it declares
(FIGURES); the gallery shows each of them from docs/figures, where the full-size run writes them."""

import pathlib
import re
import runpy

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if "FIGURES" in p.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_small_and_writes_its_figures(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = runpy.run_path(str(path), run_name="example")
    written = ns["main"](str(tmp_path / "out"), small=True)
    assert [pathlib.Path(p).name for p in written] == ns["FIGURES"]
    for p in written:
        assert pathlib.Path(p).stat().st_size > 5_000, p  # a drawn figure, not an empty file


def test_gallery_shows_every_example_figure():
    """Each figure an example declares is committed in docs/figures and shown in the gallery."""
    gallery = (ROOT / "docs" / "gallery.md").read_text()
    shown = set(re.findall(r"figures/([\w.-]+\.png)", gallery))
    declared = {f for p in EXAMPLES for f in runpy.run_path(str(p), run_name="example")["FIGURES"]}
    assert len(declared) >= 8 and declared <= shown, sorted(declared - shown)
    for f in declared:
        assert (ROOT / "docs" / "figures" / f).exists(), f


@pytest.mark.slow
def test_quickstart_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(ROOT / "examples" / "quickstart.py"), run_name="__main__")
    assert "fitted rate" in capsys.readouterr().out
