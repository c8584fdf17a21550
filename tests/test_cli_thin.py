"""The thin command line (issue 11): torch-free start-up, ``python -m deeplimits``, ``--json -``
and ``--csv -`` on standard output, ``--device``, ``module:function`` activations, and choices
and defaults read from the library."""

import inspect
import json
import os
import subprocess
import sys

import pytest
import torch

from deeplimits.cli import build_parser, main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, TESTS])}
C = ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8", "--draws", "2", "--reference", "16"]


def _run(*argv, **kw):
    return subprocess.run([sys.executable, *argv], env=ENV, capture_output=True, text=True, timeout=1800, **kw)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["convergence", "--help"], ["stability", "--help"],
                                  ["phase", "--help"], ["runs", "--help"]])
@pytest.mark.slow
def test_help_and_version_do_not_import_torch(argv):
    code = ("import sys\nfrom deeplimits.cli import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in ('torch', 'numpy', 'scipy', 'pandas', 'matplotlib') if m in sys.modules)\n"
            "print('HEAVY', heavy, file=sys.stderr)\n" % argv)
    r = _run("-c", code)
    assert "HEAVY []" in r.stderr, r.stderr


def test_python_dash_m_deeplimits_and_importtime():
    r = _run("-X", "importtime", "-m", "deeplimits", "--help")
    assert r.returncode == 0 and "convergence" in r.stdout and "python -m deeplimits" in r.stdout
    assert "torch" not in r.stderr
    r = _run("-m", "deeplimits", "--version")
    assert r.returncode == 0 and r.stdout.startswith("deeplimits ")
    r = _run("-m", "deeplimits.cli", "--version")
    assert r.returncode == 0 and r.stdout.startswith("deeplimits ")


@pytest.mark.slow
def test_the_package_root_is_lazy():
    code = ("import sys, deeplimits as dl\nassert 'torch' not in sys.modules\n"
            "from deeplimits.regimes import regime_names\nassert regime_names()[:3] == ('sde', 'ode', 'fbm')\n"
            "from deeplimits.studies import STABILITY_PRESETS\nassert 'torch' not in sys.modules\n"
            "from deeplimits import pair\nassert callable(pair)\n"
            "from deeplimits import ResNet\nassert 'torch' in sys.modules and callable(ResNet)\n"
            "assert set(dl.__all__) <= set(dir(dl))\nassert all(getattr(dl, n) is not None for n in dl.__all__)\n"
            "print('ok')")
    r = _run("-c", code)
    assert r.stdout.strip() == "ok", r.stderr


@pytest.mark.slow
def test_json_dash_writes_the_json_alone_to_stdout(tmp_path):
    r = _run("-m", "deeplimits", *C, "--out", str(tmp_path / "run"), "--quiet", "--json", "-")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)  # nothing else on standard output
    assert d["regime"] == "sde" and d["depths"] == [4, 8]
    assert "rate" in r.stderr and "standard output" in r.stderr  # the report went to stderr
    assert json.loads((tmp_path / "run" / "result.json").read_text()) == d
    r = _run("-m", "deeplimits", "runs", "export", str(tmp_path / "run"), "--csv", "-")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "study,setting,depth,quantity,value,stderr,ci_low,ci_high"
    assert "exported" in r.stderr
    r = _run("-m", "deeplimits", "runs", "export", str(tmp_path / "run"), "--records-csv", "-")
    assert r.returncode == 0 and r.stdout.splitlines()[0].startswith("task_key,") and "exported" in r.stderr
    r = _run("-m", "deeplimits", "runs", "export", str(tmp_path / "run"), "--json", "-")
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 1
    r = _run("-m", "deeplimits", "runs", "export", str(tmp_path / "run"), "--json", "-", "--csv", "-")
    assert r.returncode == 2 and "cannot both" in r.stderr and r.stderr.count("\n") == 1


def test_stability_json_dash(tmp_path, capsys):
    assert main(["stability", "--width", "2", "--n-in", "2", "--depths", "2,4", "--betas", "0.5", "--draws", "2",
                 "--out", str(tmp_path / "s"), "--quiet", "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert "records" in json.loads(out) and "median r_h" in err


def test_device_cpu_is_passed_to_the_library(tmp_path, capsys):
    assert main(C + ["--device", "cpu", "--out", str(tmp_path / "d"), "--quiet"]) == 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal of a device this machine lacks")
def test_an_absent_device_is_refused_before_any_work(tmp_path, capsys):
    assert main(C + ["--device", "cuda", "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "not available" in err and err.count("\n") == 1 and not (tmp_path / "d").exists()


def test_device_form_is_checked_at_parse_time(capsys):
    assert main(C + ["--device", "gpu:0"]) == 2
    err = capsys.readouterr().err
    assert "--device" in err and "device must be one of cpu, cuda" in err and err.count("\n") == 1


def test_module_function_activation(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(TESTS)
    js = tmp_path / "a.json"
    assert main(C + ["--activation", "act_helpers:soft_cubic", "--out", str(tmp_path / "a"), "--quiet",
                     "--json", str(js)]) == 0
    assert json.loads(js.read_text())["activation"] == "act_helpers:soft_cubic"
    import deeplimits as dl

    act = dl.activation("act_helpers:soft_cubic")
    assert act.name == "act_helpers:soft_cubic" and abs(act.taylor_at_zero(1)[1] - 1) < 1e-12


@pytest.mark.parametrize("spec,needle", [
    ("no_such_module_xyz:f", "cannot import module 'no_such_module_xyz'"),
    ("act_helpers:missing", "module 'act_helpers' has no 'missing'"),
    ("act_helpers:NOT_CALLABLE", "act_helpers.NOT_CALLABLE is not callable"),
    ("act_helpers:", "expected 'module:Name'"),
])
def test_module_function_activation_errors_are_one_line(spec, needle, capsys, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(TESTS)
    assert main(C + ["--activation", spec, "--out", str(tmp_path / "never")]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and not (tmp_path / "never").exists()


def test_choices_come_from_the_library():
    from deeplimits import _names
    from deeplimits.regimes import regime_names
    from deeplimits.studies.propagation.presets import PHASE_PRESETS, STABILITY_PRESETS

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    opts = {name: {a.dest: a for a in p._actions} for name, p in sub.items()}
    assert tuple(opts["convergence"]["regime"].choices) == regime_names()
    assert all(name in opts["stability"]["driver"].help for name in _names.DRIVERS)  # or MODULE:NAME, one's own
    assert "MODULE:NAME" in opts["stability"]["driver"].help
    assert tuple(opts["stability"]["arch"].choices) == _names.ARCHITECTURES
    assert sorted(opts["stability"]["preset"].choices) == sorted(STABILITY_PRESETS)
    assert sorted(opts["phase"]["preset"].choices) == sorted(PHASE_PRESETS)
    assert tuple(opts["convergence"]["dtype"].choices) == _names.DTYPES


def test_help_shows_the_library_defaults():
    from deeplimits.regimes import REGISTRY
    from deeplimits.studies.propagation.presets import STABILITY_PRESETS

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    conv = sub["convergence"].format_help()
    for name, r in REGISTRY.items():
        assert name in conv
    assert f"{REGISTRY['fbm'].defaults['width']} for fbm" in " ".join(conv.split())
    stab = " ".join(sub["stability"].format_help().split())
    assert f"iid: {STABILITY_PRESETS['iid']['width']}" in stab and "(default iid)" in stab


def test_names_and_defaults_agree_with_the_library():
    import numpy as np

    from deeplimits import _names
    from deeplimits.activations import NAMES
    from deeplimits.networks import ARCHITECTURES
    from deeplimits.paths import DRIVERS
    from deeplimits.diagnostics import weight_diagnostics
    from deeplimits.studies import plan_convergence, plan_phase, plan_scaling, plan_stability, plan_training
    from deeplimits.studies import presets as P
    from deeplimits.studies.convergence import presets as CP
    from deeplimits.studies.presets import linspace
    from deeplimits.studies.propagation import presets as PP
    from deeplimits.studies.scaling import presets as SP
    from deeplimits.studies.scheme_order import presets as OP
    from deeplimits.studies.training import presets as TP

    assert (DRIVERS, ARCHITECTURES, NAMES) == (_names.DRIVERS, _names.ARCHITECTURES, _names.ACTIVATIONS)
    from deeplimits.studies import strong_order

    from deeplimits.studies.settings import defaults
    from deeplimits.studies.training.conv import plan_conv_training

    # each study's defaults in its own package's presets (the weights command's, a diagnostic, shared)
    DEFAULTS = {"convergence": CP.DEFAULTS, "order": OP.DEFAULTS, "phase": PP.DEFAULTS["phase"], "scaling": SP.DEFAULTS,
                "stability": PP.DEFAULTS["stability"], "train": TP.DEFAULTS, "train-conv": TP.CONV_DEFAULTS,
                "weights": P.WEIGHTS_DEFAULTS}
    for study, fn in (("convergence", plan_convergence), ("stability", plan_stability), ("phase", plan_phase),
                      ("train", plan_training), ("scaling", plan_scaling), ("weights", weight_diagnostics),
                      ("order", strong_order), ("train-conv", plan_conv_training)):
        params = defaults(fn)  # its parameters' and its groups' (deeplimits.studies.settings)
        if study == "order":  # strong_order passes its plan's settings on to plan_strong_order
            from deeplimits.studies.scheme_order.study import plan_strong_order

            params = {**defaults(plan_strong_order), **params}
        for name, value in DEFAULTS[study].items():
            if (study, name) in (("order", "tables"), ("order", "pool_factor")):  # --calibrate: calibrate's
                from deeplimits.studies.scheme_order.calibration import calibrate

                assert inspect.signature(calibrate).parameters[name].default == value
                continue
            default = params[name]
            default = list(default) if isinstance(default, tuple) else default
            assert (str(default).replace("torch.", "") if name == "dtype" else default) == value, (study, name)
    assert list(inspect.signature(plan_scaling).parameters["depths"].default) == SP.SCALING_PRESETS["cpu"]["depths"]
    for a, b, n in ((0.05, 0.97, 51), (0, 1.3, 70), (10, 1000, 10), (0, 1.2, 7), (2, 2, 3), (1, 0, 5)):
        assert linspace(a, b, n) == np.linspace(a, b, n).tolist()


def test_out_of_memory_advice_names_the_commands_own_flags(capsys):
    # issue 38: `weights` was told to lower --draws/--width/--chunk, flags it does not have
    from deeplimits.cli.errors import RUNTIME, status_of

    assert status_of(MemoryError(), "deeplimits weights") == RUNTIME
    assert "a smaller file" in capsys.readouterr().err
    status_of(MemoryError(), "deeplimits order")
    assert "--reference" in capsys.readouterr().err and "--chunk" not in capsys.readouterr().err


def test_a_list_that_starts_with_a_minus_sign_is_a_value():
    """``--lrs -6,4`` is the list ``[-6, 4]`` as ``--lrs=-6,4`` is (argparse alone reads a flag
    there); what is not a number still reads as a flag, and the error says how to give it."""
    from deeplimits.cli import build_parser
    from deeplimits.cli.errors import UsageError

    p = build_parser()
    assert p.parse_args(["transfer", "--lrs", "-6,4"]).lrs == p.parse_args(["transfer", "--lrs=-6,4"]).lrs == [-6, 4]
    assert p.parse_args(["transfer", "--lrs", "-6:4:11"]).lrs == list(range(-6, 5))
    assert p.parse_args(["stability", "--betas", "-0.5,1e-1"]).betas == [-0.5, 0.1]
    with pytest.raises(UsageError, match=r"--lrs: expected one argument \(a value that starts with '-' is written "
                                         r"--lrs=VALUE\)"):
        p.parse_args(["transfer", "--lrs", "-x,4"])
    with pytest.raises(UsageError, match="unrecognized arguments: -6"):
        p.parse_args(["transfer", "-6"])  # not after a flag that takes a value: no value of anything
