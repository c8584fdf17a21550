"""The `deeplimits stability` and `deeplimits phase` commands: JSON schema, figures, presets,
resumption, usage errors."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from deeplimits.cli import main
from deeplimits.studies import PHASE_PRESETS, STABILITY_PRESETS

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_stability_json_schema_and_figures(tmp_path, capsys):
    out, js = tmp_path / "run", tmp_path / "s.json"
    args = ["stability", "--depths", "10,40", "--betas", "0.25,0.5,1", "--draws", "6", "--width", "8", "--n-in", "8",
            "--histograms", "--out", str(out), "--json", str(js), "--quiet"]
    assert main(args + ["--figures"]) == 0
    text = capsys.readouterr().out
    assert "median r_h" in text and "normality test" not in text  # fewer than 20 draws: no fit
    d = json.loads(js.read_text())
    assert d["arch"] == "res-3" and d["driver"] == {"driver": "uniform"} and d["draws"] == 6
    assert len(d["records"]) == 6
    for rec in d["records"]:
        for key in ("beta", "depth", "driver", "r_h", "r_p", "exploded", "theory_lower", "theory_upper", "regime"):
            assert key in rec
        for s in ("r_h", "r_p"):
            assert set(rec[s]) == {"mean", "median", "q25", "q75", "mean_sq"}
    assert [(s["beta"], s["depth"]) for s in d["samples"]] == [(0.25, 40), (0.5, 40), (1.0, 40)]
    for name in ("stability.png", "histograms.png"):
        assert (out / name).read_bytes()[:8] == PNG
    # the same command resumes from the store: same numbers, nothing recomputed; without
    # --figures it draws none and says how to
    (out / "theory.png").unlink()
    assert main(args) == 0
    assert json.loads(js.read_text())["records"] == d["records"]
    assert not (out / "theory.png").exists() and f"deeplimits runs plot {out}" in capsys.readouterr().out
    # the stored run is redrawn and shown without simulating
    assert main(["runs", "show", str(out)]) == 0
    assert "median r_h" in capsys.readouterr().out
    (out / "stability.png").unlink()
    assert main(["runs", "plot", str(out)]) == 0 and (out / "stability.png").exists() and (out / "theory.png").exists()


def test_phase_json_schema_and_figure(tmp_path, capsys):
    out, js = tmp_path / "ph", tmp_path / "p.json"
    assert main(["phase", "--hursts", "0.3,0.8", "--betas", "0:1.2:7", "--width", "6", "--depth", "60", "--draws", "2",
                 "--inputs", "3", "--out", str(out), "--json", str(js), "--quiet", "--figures"]) == 0
    assert "beta* (scaling)" in capsys.readouterr().out
    d = json.loads(js.read_text())
    assert d["hurst"] == [0.3, 0.8] and len(d["beta"]) == 7
    for key in ("log10_rh", "log10_rp", "exploded"):
        assert len(d[key]) == 2 and all(len(row) == 7 for row in d[key])
    assert len(d["beta_star"]) == 2 and d["predicted"] == [0.5, 0.8]
    assert (out / "phase.png").read_bytes()[:8] == PNG


def test_preset_overrides(tmp_path, capsys):
    out = tmp_path / "crit"
    assert main(["stability", "--preset", "criticality", "--draws", "25", "--depths", "30", "--width", "4",
                 "--no-histograms", "--out", str(out), "--quiet"]) == 0
    assert "normality test p" not in capsys.readouterr().out  # the report shows the fits with histograms
    d = json.loads((out / "result.json").read_text())
    assert d["records"][0]["lognormal_h"]["n"] == 25  # the JSON has them anyway
    assert (d["width"], d["draws"], d["samples"]) == (4, 25, []) and not (out / "histograms.png").exists()
    assert [(r["beta"], r["depth"]) for r in d["records"]] == [(0.5, 30)]


def test_presets_are_the_published_protocols():
    iid = STABILITY_PRESETS["iid"]
    assert (iid["arch"], iid["driver"], iid["width"], iid["n_in"], iid["draws"]) == ("res-3", "uniform", 40, 64, 50)
    assert iid["depths"] == [10, 120, 230, 340, 450, 560, 670, 780, 890, 1000] and iid["betas"] == [0.25, 0.5, 1.0]
    assert STABILITY_PRESETS["smooth"]["betas"] == [0.5, 1.0, 2.0]
    crit = STABILITY_PRESETS["criticality"]
    assert (crit["width"], crit["depths"], crit["betas"], crit["draws"]) == (100, [1000], [0.5], 10_000)
    assert STABILITY_PRESETS["criticality-inside"]["arch"] == "inside"
    full = PHASE_PRESETS["full"]
    assert len(full["hursts"]) == 51 and full["hursts"][0] == 0.05 and full["hursts"][-1] == 0.97
    assert len(full["betas"]) == 70 and full["betas"][0] == 0 and full["betas"][-1] == 1.3
    assert (full["width"], full["depth"], full["draws"], full["inputs"]) == (40, 1000, 5, 10)


@pytest.mark.parametrize("args, message", [
    (["stability", "--driver", "fractional"], "hurst must be given"),
    (["stability", "--driver", "fractional", "--hurst", "1.5"], "hurst must lie in (0.0, 1.0)"),
    (["stability", "--hurst", "0.7"], "hurst applies only to the fractional driver"),
    (["stability", "--depths", "10,10"], "depths must be distinct"),
    (["stability", "--betas=-1,0.5"], "betas must lie in [0.0, inf]"),
    (["stability", "--width", "0"], "width must be"),
    (["stability", "--betas", "0.5,0.5"], "betas must be distinct"),
    (["phase", "--hursts", "0.6,0.6000001"], "hursts must be distinct"),
    (["stability", "--activation", "cube"], "activation must be one of"),
    (["stability", "--workers", "0"], "--workers must be an integer in [1, 1024]"),
    (["phase", "--hursts", "0,0.5"], "hursts must lie in (0.0, 1.0)"),
    (["phase", "--depth", "0"], "depth must be"),
    (["phase", "--betas", "0.5,0.5"], "betas must be distinct"),
    (["phase", "--preset", "huge"], "invalid choice"),
])
@pytest.mark.slow
def test_usage_errors_are_one_line(args, message, capsys, tmp_path):
    assert main(args + ["--out", str(tmp_path / "never")] if args[-2:] != ["--preset", "huge"] else args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "never").exists()  # rejected before any work


@pytest.mark.slow
def test_study_commands_import_only_what_they_use(tmp_path):
    """Without --figures, stability and phase import neither matplotlib nor SciPy (a fresh
    process: the test session has both)."""
    code = ("import sys; from deeplimits.cli import main; "
            f"assert main(['stability', '--depths', '10,20', '--draws', '25', '--width', '4', '--n-in', '4', "
            f"'--histograms', '--quiet', '--out', {str(tmp_path / 's')!r}]) == 0; "
            f"assert main(['phase', '--hursts', '0.3', '--betas', '0.5,1', '--width', '4', '--depth', '20', "
            f"'--draws', '1', '--inputs', '2', '--quiet', '--out', {str(tmp_path / 'p')!r}]) == 0; "
            "print(sorted(m for m in ('matplotlib', 'scipy', 'pandas') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(__file__).parents[1])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"
