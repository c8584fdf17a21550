"""The public surface (issue 22): the root exports the user's API, theory internals and types
live in their modules (the names the root exported before 0.1.0 no longer resolve there: the
rename shims are gone, issue 51), and a lazy root imports only the module of a name."""

import os
import subprocess
import sys
import warnings

import pytest

import deeplimits as dl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: what a user reaches for (docs/reference/index.md lists it with each name's page)
USER_API = {
    "__version__",
    # drivers
    "fgn", "IIDDriver", "FractionalDriver", "SmoothDriver", "make_driver", "DRIVERS",
    # networks, limits, activations
    "ResNet", "ModifiedEulerResNet", "SDELimit", "ODELimit", "YoungLimit", "RoughLimit", "InsideSDELimit",
    "InsideODELimit",
    "Activation", "activation", "Block", "register_block",
    # pairs and regimes
    "pair", "Pair", "InsidePair", "Regime", "StrongOrder", "Option", "REGISTRY", "register_regime", "get_regime",
    # studies: the main calls, their plans and results
    "strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "ConvergenceResult", "fit_rate",
    "stability", "plan_stability", "run_stability", "StabilityPlan", "StabilityResult",
    "phase_diagram", "plan_phase", "run_phase", "PhasePlan", "PhaseResult",
    "train_grid", "plan_training", "TrainPlan", "TrainGridResult", "plan_scaling", "ScalingPlan", "ScalingResult",
    "results_from_store",
    # the verdict's fit, and any scheme on the coupled path
    "fit_expansion", "ExpansionFit", "Term", "strong_order", "Scheme", "EulerMaruyama", "Milstein", "Heun",
    "ModifiedEuler", "TorchsdeScheme",
    # training, data, diagnostics, runs
    "ResidualNetwork", "train", "BatchedAdam", "BatchedSGD", "init_from_driver", "load_dataset",
    "weight_diagnostics", "scaling_exponents", "load_weights", "RunStore",
    # exceptions
    "DeeplimitsError", "ParameterError", "MissingDataError", "ResourceError", "DamagedFileError", "RunStoreError", "DamagedStoreError", "DiskFullError",
    "SweepError", "ExecutorError", "MissingExtra",
}


def test_the_root_exports_the_users_api():
    assert set(dl.__all__) == USER_API and len(dl.__all__) == len(USER_API)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in dl.__all__:
            assert getattr(dl, name) is not None, name


def test_every_export_is_its_modules_object():
    from deeplimits._lazy import submodule

    for name, module in dl._WHERE.items():
        assert getattr(dl, name) is getattr(submodule("deeplimits", module), name), name


#: names the root exported before 0.1.0, each now only in its module (the shims that still resolved
#: them, with a DeprecationWarning, are removed)
MOVED = {"Driver": "paths", "DriverSample": "paths", "BrownianSample": "paths", "Trajectory": "networks",
         "GridBrownian": "limits", "PairSample": "pairs", "bounds_apply": "studies.theory",
         "critical_beta": "studies.theory", "theory_bounds": "studies.theory"}


@pytest.mark.parametrize("name", sorted(MOVED))
def test_a_name_dropped_from_the_root_lives_in_its_module_only(name):
    from deeplimits._lazy import submodule

    assert getattr(submodule("deeplimits", MOVED[name]), name) is not None
    with pytest.raises(AttributeError, match=f"no attribute {name!r}"):
        getattr(dl, name)
    assert not hasattr(dl, "_MOVED")


def test_the_theory_internals_are_not_exported_from_the_root():
    for name in ("bounds_apply", "CRITICAL_LIMITS", "theory_bounds", "critical_beta", "quantile_bound",
                 "high_probability_bounds"):
        assert name not in dl.__all__
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        dl.nothing_here  # noqa: B018


def _fresh(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": ROOT}
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], env=env, capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


@pytest.mark.slow
def test_a_name_imports_only_the_module_that_defines_it():
    """``deeplimits.studies.PhaseResult`` imports the phase study (and what it needs), not the others;
    ``import deeplimits`` and a star import of the root import no study and no torch before use."""
    out = _fresh("import sys, deeplimits, deeplimits.studies as s\n"
                 "assert 'torch' not in sys.modules\n"
                 "s.PhaseResult\n"
                 "print(sorted(m for m in sys.modules if m.startswith('deeplimits.studies.')))\n")
    loaded = set(eval(out))
    assert "deeplimits.studies.propagation.result" in loaded
    assert not loaded & {"deeplimits.studies.training.study", "deeplimits.studies.scaling.study", "deeplimits.studies.convergence.study",
                         "deeplimits.studies.training.trained",
                         "deeplimits.studies.propagation.study"}, loaded
    out = _fresh("import sys\nfrom deeplimits import RunStore, ParameterError\n"
                 "print(sorted(m for m in sys.modules if m.startswith('deeplimits.studies')))\n")
    assert eval(out) == [], out


@pytest.mark.slow
def test_a_star_import_gives_the_api_without_warnings():
    out = _fresh("from deeplimits import *\nprint(callable(train_grid) and callable(ResidualNetwork)"
                 " and issubclass(ParameterError, ValueError))")
    assert out.strip() == "True"
