"""Optional dependencies: each missing extra gives a one-line message naming it, before any work,
and the base install imports none of them (nor torchdiffeq's SciPy wrapper) until needed."""

import subprocess
import sys

import pytest

import deeplimits as dl
from deeplimits._extras import EXTRAS, MissingExtra, need
from deeplimits.cli import main


def _block(monkeypatch, *modules):
    """Make ``import module`` fail as it does when the package is not installed."""
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_need_names_the_extra(monkeypatch, module):
    _block(monkeypatch, module)
    with pytest.raises(MissingExtra, match=rf"pip install 'deeplimits\[{EXTRAS[module][0]}\]'") as e:
        need(module)
    assert "\n" not in str(e.value)


def test_cluster_extra_missing_before_any_work(monkeypatch, tmp_path, capsys):
    _block(monkeypatch, "distributed")
    argv = ["convergence", "--regime", "sde", "--depths", "4,8", "--draws", "2", "--width", "2", "--workers", "2",
            "--out", str(tmp_path / "run"), "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "deeplimits[cluster]" in err, err
    assert not (tmp_path / "run").exists()  # refused before the run store was opened


def test_tables_extra_missing(monkeypatch):
    res = dl.strong_convergence("ode", depths=[4, 8], draws=2, width=2)
    table = res.table
    _block(monkeypatch, "pandas")
    with pytest.raises(MissingExtra, match=r"deeplimits\[tables\]"):
        res.table
    report = res.report()  # the report needs no pandas (the base install prints it)
    for row in table.itertuples():
        assert f"{row.depth:7d}  {row.error:14.5g}" in report


@pytest.mark.slow
def test_base_imports_no_extra_and_no_scipy_integrators():
    """A pair of every regime is built without Dask, pandas, torchdiffeq or SciPy loaded."""
    code = ("import sys, deeplimits as dl\n"
            "dl.pair('sde', width=3); dl.pair('ode', width=3); dl.pair('fbm', width=3, hurst=0.7)\n"
            "print(sorted(m for m in ('distributed', 'pandas', 'torchdiffeq', 'scipy.integrate', 'mkdocs')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
