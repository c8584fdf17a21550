"""A user's objects on the command line (docs/cli.md, "Your own objects"): ``--block``,
``--driver``, ``--law``, ``--phi``, ``--scheme``, ``--problem`` given ``MODULE:NAME`` import the
user's file (from the working directory), run it through the command, record what was imported
(module, name, SHA-256 of the source) beside the run's spec, refuse a resumed run whose file changed,
and refuse a wrong module, name or object in one line naming the flag. The last test runs the
commands in a fresh clone of the repository, as a new user would."""

import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys

import pytest

from deeplimits.blocks import registered_blocks, unregister_block
from deeplimits.cli import main
from deeplimits.paths import registered_drivers, unregister_driver

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A working directory holding the user's file ``mymodels.py`` (tests/user_models.py), and
    the registries as they were after the test."""
    shutil.copy(HERE / "user_models.py", tmp_path / "mymodels.py")
    monkeypatch.chdir(tmp_path)
    blocks, drivers = set(registered_blocks()), set(registered_drivers())
    yield tmp_path
    from deeplimits.studies.law.phis import PHIS, _REGISTRY, unregister_test_function

    for name in [n for n in _REGISTRY if n not in PHIS]:
        unregister_test_function(name)
    sys.modules.pop("mymodels", None)
    for name in set(registered_blocks()) - blocks:
        unregister_block(name)
    for name in set(registered_drivers()) - drivers:
        unregister_driver(name)


def _spec(directory, key="spec"):
    with sqlite3.connect(directory / "run.sqlite") as db:
        return json.loads(db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])


def test_block_and_driver_through_stability_recorded_and_resumed(home, capsys):
    argv = ["stability", "--block", "mymodels:Gated", "--driver", "mymodels:Laplace", "--width", "4", "--n-in", "2",
            "--depths", "4,8", "--betas", "0.5", "--draws", "4", "--out", "st", "--quiet"]
    assert main(argv) == 0
    spec = _spec(home / "st")
    assert spec["arch"] == "gated-tanh" and spec["driver"] == "laplace"
    code = _spec(home / "st", "user_code")  # the store's record of the code, by the names the spec holds
    assert code["gated-tanh"]["module"] == "mymodels" and code["gated-tanh"]["name"] == "Gated"
    assert len(code["laplace"]["sha256"]) == 64 and "user_code" not in spec
    assert main(argv) == 0  # the same file: resumed, nothing recomputed
    with open(home / "mymodels.py", "a") as f:
        f.write("\n# edited\n")
    sys.modules.pop("mymodels", None)
    capsys.readouterr()
    assert main(argv) == 2  # the file changed: refused, not mixed
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "mymodels:Gated" in err and "changed" in err
    assert err.startswith("deeplimits stability: "), err  # under the command, as every usage error


@pytest.mark.parametrize("argv,needle", [
    (["convergence", "--regime", "sde", "--block", "nosuchmodule_x:A"], "--block nosuchmodule_x:A: cannot import"),
    (["convergence", "--regime", "sde", "--block", "mymodels:Nope"], "has no 'Nope'"),
    (["convergence", "--regime", "sde", "--block", "mymodels:cube_mean"],
     "not a deeplimits Block subclass (it is the function cube_mean)"),
    (["convergence", "--regime", "sde", "--block", "mymodels:Laplace"],
     "not a deeplimits Block subclass (it is the Driver subclass Laplace)"),
    (["convergence", "--regime", "sde", "--block", "gated"], "--block must be module:Name"),
    # a block the study refuses is said under the flag typed, --block (not --arch)
    (["convergence", "--regime", "sde", "--block", "mymodels:Mixer"],
     "deeplimits convergence: --block 'mixer' does not fit regime 'sde'"),
    (["convergence", "--regime", "sde", "--block", "mymodels:Mixer"], "not declared linear in W"),
    (["convergence", "--block", "mymodels:Gated"], "deeplimits convergence: --block needs --regime"),
    (["stability", "--driver", "mymodels:Gated"], "not a deeplimits Driver subclass (it is the Block subclass Gated)"),
    (["law", "--law", "mymodels:Gated"], "--law mymodels:Gated: not a deeplimits Driver subclass (it is the Block "
                                         "subclass Gated)"),
    (["law", "--law", "mymodels:GBM"], "not a deeplimits Driver subclass (it is a Problem)"),
    (["convergence", "--regime", "sde", "--driver", "mymodels:Laplace"], "coupled=False"),
    (["convergence", "--regime", "fbm", "--driver", "mymodels:LevyBridge"], "regularity 0.5"),
    (["convergence", "--driver", "mymodels:Waves"], "--driver needs --regime"),
    (["transfer", "--model", "mymodels:GBM"], "--model mymodels:GBM: not a module factory"),
    (["transfer", "--model", "residual"], "--model must be module:Name"),
    (["transfer", "--data", "mymodels:cube_mean"], "--data mymodels:cube_mean: calling it failed"),
    (["transfer", "--data", "mymodels:GBM"], "--data mymodels:GBM: data must be tensors"),
    (["transfer", "--model", "mymodels:ResidualMLP", "--block", "mymodels:Gated"], "not to a model's factory"),
    (["transfer", "--preset", "conv-quick", "--model", "mymodels:ResidualMLP"], "--model applies only to the MLP"),
    (["trained-limit", "--case", "mymodels:Gated"], "--case mymodels:Gated: not a family"),
    (["trained-limit", "--case", "mymodels:Gated"], "it is the Block subclass Gated"),
    (["scaling", "--block", "mymodels:Gated"],
     "deeplimits scaling: --block 'gated-tanh' declares no trained scale (trained_scale = False)"),
    (["law", "--law", "mymodels:Laplace", "--phi", "mymodels:GBM"], "not a function of the output"),
    (["order", "--scheme", "mymodels:GBM", "--problem", "linear-sde"], "--scheme mymodels:GBM: not a scheme"),
    (["order", "--scheme", "euler-maruyama", "--problem", "mymodels:HAND_EULER"], "not a deeplimits Problem"),
])
def test_wrong_user_objects_are_one_line_usage_errors(home, argv, needle, capsys):
    assert main(argv + ["--quiet"] * (argv[0] != "order")) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and needle in err and "Traceback" not in err, err
    assert not (home / "runs").exists()


def test_convergence_with_ones_own_driver(home, capsys):
    """``--driver MODULE:NAME`` in the regime whose limit its law has: run, recorded by the name the
    spec holds; its declared parameter from the flag (the Hurst index of a fractional path)."""
    assert main(["convergence", "--regime", "ode", "--block", "mymodels:Gated", "--driver", "mymodels:Waves",
                 "--width", "3", "--draws", "16", "--depths", "8,16,32,64", "--out", "c", "--quiet"]) == 0
    assert "waves weights" in capsys.readouterr().out
    spec, code = _spec(home / "c"), _spec(home / "c", "user_code")
    assert spec["driver"] == {"driver": "waves"} and code["waves"]["name"] == "Waves"
    assert main(["convergence", "--regime", "fbm", "--driver", "mymodels:CholeskyFBM", "--hurst", "0.8", "--width",
                 "3", "--draws", "8", "--depths", "8,16,32", "--reference", "256", "--out", "f", "--quiet"]) == 0
    assert "fbm H=0.8" in capsys.readouterr().out
    assert _spec(home / "f")["driver"] == {"driver": "cholesky-fbm", "hurst": 0.8}


def _as_a_fresh_process(names=("gated-tanh", "waves", "laplace")):
    """Forget the user's module and what it registered, as a new process reading a stored run has never
    imported it (the registries are restored by the fixture ``home``)."""
    from deeplimits._user_code import IMPORTED

    sys.modules.pop("mymodels", None)
    for name in names:
        if name in registered_blocks():
            unregister_block(name)
        if name in registered_drivers():
            unregister_driver(name)
    for key in [k for k in IMPORTED if k.startswith("mymodels:") or k in names]:
        del IMPORTED[key]


def test_a_stored_run_of_ones_own_code_is_read_without_importing_it(home, capsys):
    """A convergence run keeps, with each task, what its summary reads of the pair: ``runs show``,
    ``plot`` and ``export`` read it in a process that never imported the user's block and law. A
    stability run whose summary reads the block's and law's declarations is refused in one line
    that says which ``--code`` to give, not called damaged; given them, it is read."""
    assert main(["convergence", "--regime", "ode", "--block", "mymodels:Gated", "--driver", "mymodels:Waves",
                 "--width", "3", "--draws", "16", "--depths", "8,16,32,64", "--out", "c", "--quiet"]) == 0
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith("->")]
    assert main(["stability", "--block", "mymodels:Gated", "--driver", "mymodels:Laplace", "--width", "4", "--n-in",
                 "2", "--depths", "4,8", "--betas", "0.5", "--draws", "4", "--out", "st", "--quiet"]) == 0
    _as_a_fresh_process()
    capsys.readouterr()
    assert main(["runs", "show", "c"]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith("->")] == shown
    assert main(["runs", "plot", "c"]) == 0 and (home / "c" / "convergence.png").is_file()
    assert main(["runs", "export", "c", "--csv", "c.csv"]) == 0 and "gated-tanh" in (home / "c.csv").read_text()
    assert "mymodels" not in sys.modules
    # damage that is not about the user's code is said as damage, not as a --code to give
    from test_files_are_data import edit_task

    shutil.copytree(home / "c", home / "cx")
    edit_task(home / "cx", "chunk-", lambda r: {**r, "pair": {k: v for k, v in r["pair"].items() if k != "order"}})
    capsys.readouterr()
    assert main(["runs", "show", "cx"]) == 1
    err = capsys.readouterr().err
    assert "is damaged" in err and "--code" not in err, err
    capsys.readouterr()
    assert main(["runs", "show", "st"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "damaged" not in err and "--code mymodels:Gated --code mymodels:Laplace" in err, err
    assert "mymodels" not in sys.modules
    assert main(["runs", "show", "st", "--code", "mymodels:Gated", "--code", "mymodels:Laplace"]) == 0
    assert "beta 0.5" in capsys.readouterr().out
    assert main(["runs", "show", "st", "--code", "os:system"]) == 2
    assert "--code os:system: module 'os' acts on the system" in capsys.readouterr().err
    # a trained network's weights figure builds its block
    assert main(["train", "--block", "mymodels:Gated", "--betas", "1", "--lrs", "1e-2", "--depth", "8", "--width", "6",
                 "--epochs", "1", "--quiet", "--no-figures", "--out", "tr"]) == 0
    _as_a_fresh_process()
    capsys.readouterr()
    assert main(["runs", "plot", "tr"]) == 1
    assert "give it with --code mymodels:Gated" in capsys.readouterr().err
    assert main(["runs", "plot", "tr", "--code", "mymodels:Gated"]) == 0 and (home / "tr" / "weights.png").is_file()


def test_transfer_trained_limit_and_scaling_of_ones_own(home, capsys):
    """``transfer --model MODULE:MAKE --data MODULE:DATA`` (a factory and tensors, as
    ``plan_transfer(model=..., data=...)`` takes), ``trained-limit --case MODULE:FAMILY`` (a
    family of one's own block and driver) and ``scaling --block MODULE:NAME``: run, the spec naming
    them, the store recording the code."""
    assert main(["transfer", "--preset", "quick", "--model", "mymodels:ResidualMLP", "--data", "mymodels:digits_tensors",
                 "--betas", "1", "--optimizer", "sgd", "--depths", "2,4,8", "--lrs=-2,4", "--seeds", "2", "--out", "t",
                 "--epochs", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "model 'ResidualMLP'" in out and "the optimal rate's exponent by horizon (after epoch): 1: L^" in out, out
    spec, code = _spec(home / "t"), _spec(home / "t", "user_code")
    assert spec["model"] == "ResidualMLP" and spec["data"] == "digits_tensors" and len(spec["data_sha256"]) == 64
    assert {c["name"] for c in code.values()} == {"ResidualMLP", "digits_tensors"}
    assert main(["trained-limit", "--preset", "quick", "--case", "mymodels:GATED_WAVES", "--seeds", "3", "--epochs",
                 "5", "--out", "l", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "gated-waves: the gated block from smooth waves" in out and "trained: common limit" in out, out
    spec, code = _spec(home / "l"), _spec(home / "l", "user_code")
    assert spec["cases"] == ["gated-waves"] and spec["families"]["gated-waves"]["arch"] == "gated-tanh"
    assert set(code) == {"gated-waves", "gated-tanh", "waves"}
    assert main(["scaling", "--block", "mymodels:ScaledInside", "--depths", "4,8", "--max-epochs", "1", "--samples",
                 "64", "--out", "s", "--quiet"]) == 0
    assert "block 'scaled-inside'" in capsys.readouterr().out and _spec(home / "s")["arch"] == "scaled-inside"


@pytest.mark.slow
def test_scheme_and_problem_of_ones_own(home, capsys):
    assert main(["order", "--scheme", "mymodels:HAND_EULER", "--problem", "mymodels:GBM", "--depths", "8,16,32,64",
                 "--draws", "256", "--budget", "--out", "o"]) == 0  # sized to decide within the margin
    assert "-> agrees" in capsys.readouterr().out
    assert main(["order", "--scheme", "milstein", "--problem", "mymodels:GBM", "--depths", "8,16,32,64",
                 "--draws", "256", "--out", "m"]) == 0
    assert "strong order 1" in capsys.readouterr().out


def test_law_with_ones_own_law_block_and_test_function(home, capsys):
    assert main(["law", "--preset", "quick", "--law", "mymodels:StudentT", "--block", "mymodels:Gated", "--phi",
                 "mymodels:cube_mean", "--phi", "coord2", "--draws", "2048", "--depths", "4,8,16", "--fine", "64",
                 "--out", "law", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "gated-tanh tanh" in text and "student-t5" in text and "mean_i h_i^3" in text
    spec = _spec(home / "law")
    code = _spec(home / "law", "user_code")
    assert spec["phis"] == ["cube_mean", "coord2"] and {c["name"] for c in code.values()} == {"StudentT", "Gated",
                                                                                               "cube_mean"}


@pytest.mark.slow
def test_every_command_takes_ones_own_objects_from_a_fresh_clone(tmp_path):
    """``git clone`` of this repository, the user's file beside it, each command run as a new user
    runs it (``python -m deeplimits``, the clone on the path): exit 0 and the user's names in the output."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(HERE / "user_models.py", work / "mymodels.py")
    env = {**os.environ, "PYTHONPATH": str(clone)}
    runs = {
        "convergence": ["--regime", "ode", "--block", "mymodels:Gated", "--driver", "mymodels:Waves", "--width", "3",
                        "--draws", "8", "--depths", "8,16,32"],
        "stability": ["--block", "mymodels:Gated", "--driver", "mymodels:Laplace", "--width", "4", "--n-in", "2",
                      "--depths", "4,8", "--betas", "0.5", "--draws", "4"],
        "phase": ["--block", "mymodels:Gated", "--hursts", "0.7", "--betas", "0.5,1", "--width", "4", "--n-in", "2",
                  "--depth", "16", "--draws", "2", "--inputs", "2"],
        "train": ["--block", "mymodels:Gated", "--driver", "mymodels:Laplace", "--depth", "4", "--width", "8",
                  "--epochs", "1"],
        "law": ["--preset", "quick", "--law", "mymodels:StudentT", "--phi", "mymodels:cube_mean", "--draws", "1024",
                "--depths", "4,8,16", "--fine", "64"],
        "transfer": ["--preset", "quick", "--block", "mymodels:Gated", "--betas", "1", "--optimizer", "sgd",
                     "--depths", "2,4,8", "--seeds", "2"],
        "order": ["--scheme", "mymodels:HAND_EULER", "--problem", "mymodels:GBM", "--depths", "8,16,32",
                  "--draws", "64"],
        "transfer-model": ["--preset", "quick", "--model", "mymodels:ResidualMLP", "--data", "mymodels:digits_tensors",
                           "--betas", "1", "--optimizer", "sgd", "--depths", "2,4,8", "--seeds", "2"],
        "trained-limit": ["--preset", "quick", "--case", "mymodels:GATED_WAVES", "--seeds", "2", "--epochs", "3"],
        "scaling": ["--block", "mymodels:ScaledInside", "--depths", "4,8", "--max-epochs", "1", "--samples", "64"],
    }
    for cmd, argv in runs.items():
        quiet = ["--quiet"] if cmd != "order" else []
        command = cmd.removesuffix("-model")  # (transfer twice: its block, then a model of one's own)
        r = subprocess.run([sys.executable, "-m", "deeplimits", command, *argv, *quiet], cwd=work, env=env,
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{cmd}: {r.stderr}"
        assert "wrote" in r.stdout, f"{cmd}: {r.stdout[-300:]}"
