"""Studies built on pairs and drivers: strong convergence, signal propagation (stability
curves, criticality distributions), the (H, beta) phase diagram, and training grids. Each is a plan (every check
and the resource estimate, nothing computed), a run (sweep tasks registered by name) and a
result (plain data with ``to_dict`` / ``from_dict``, a report and a figure).

The function :func:`deeplimits.stability` is exported at the top level (its module is
:mod:`deeplimits.studies.propagation.study`). Names are resolved on first access (PEP 562): a name imports only the study module
that defines it, and importing this package, or the torch-free ``presets`` of its studies
(:mod:`deeplimits.studies.propagation.presets`, ...), does not import torch."""

from __future__ import annotations

from .._lazy import lazy_exports, submodule

from .propagation.presets import PHASE_PRESETS, STABILITY_PRESETS
from .scaling.presets import SCALING_PRESETS
from .training.presets import TRAIN_PRESETS

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan"), "convergence.study"),
    **dict.fromkeys(("ConvergenceResult", "MAX_CI_WIDTH", "MIN_FINITE_DRAWS"), "convergence.result"),
    **dict.fromkeys(("PhasePlan", "phase_diagram", "plan_phase", "run_phase"), "propagation.study"),
    **dict.fromkeys(("PhaseResult", "StabilityResult"), "propagation.result"),
    **dict.fromkeys(("CAP", "estimate_phase", "estimate_stability"), "propagation.core"),
    **dict.fromkeys(("bounds_apply", "classify", "critical_beta", "theory_bounds", "quantile_bound", "QUANTILE_LEVELS",
                     "high_probability_bounds", "high_probability_unmet", "CRITICAL_LIMITS", "regularity",
                     "predicted_slope", "growth_exponent"), "theory"),
    "bootstrap_fit": "fits",
    "strong_order": "scheme_order.study",
    **dict.fromkeys(("fit_expansion", "ExpansionFit"), "expansion_fit"),
    **dict.fromkeys(("StabilityPlan", "plan_stability", "run_stability"), "propagation.study"),
    **dict.fromkeys(("fit_rate", "sweep_errors"), "strong_error"),
    **dict.fromkeys(("TrainPlan", "plan_training", "train_grid", "critical_line"), "training.study"),
    "TrainGridResult": "training.result",
    "load_trained": "training.trained",
    **dict.fromkeys(("ScalingPlan", "plan_scaling"), "scaling.study"),
    "ScalingResult": "scaling.result",
    **dict.fromkeys(("TrainedLimitPlan", "plan_trained_limit", "train_depth_family"), "trained_limit.study"),
    "TrainedLimitResult": "trained_limit.result",
    "Plan": "plan",
    **dict.fromkeys(("Network", "Training", "Grid", "Conv", "ScalingProtocol", "Compute", "Execution"), "settings"),
}

__all__ = ["strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "ConvergenceResult", "fit_rate",
           "sweep_errors", "strong_order", "fit_expansion", "ExpansionFit", "MIN_FINITE_DRAWS", "MAX_CI_WIDTH", "plan_stability",
           "run_stability", "StabilityResult", "STABILITY_PRESETS", "phase_diagram", "plan_phase", "run_phase",
           "PhaseResult", "PHASE_PRESETS", "theory_bounds", "bounds_apply", "critical_beta", "classify", "CAP",
           "quantile_bound", "QUANTILE_LEVELS", "high_probability_bounds", "high_probability_unmet", "CRITICAL_LIMITS",
           "regularity", "predicted_slope", "growth_exponent", "bootstrap_fit",
           "estimate_stability", "estimate_phase", "results_from_store", "Plan", "StabilityPlan", "PhasePlan",
           "plan_from_dict", "TrainPlan", "TrainGridResult", "plan_training", "train_grid", "load_trained",
           "critical_line", "TRAIN_PRESETS", "SCALING_PRESETS", "ScalingPlan", "ScalingResult", "plan_scaling",
           "TrainedLimitPlan", "TrainedLimitResult", "plan_trained_limit", "train_depth_family",
           "Network", "Training", "Grid", "Conv", "ScalingProtocol", "Compute", "Execution"]


__getattr__, __dir__ = lazy_exports(globals(), _WHERE)


def plan_from_dict(spec: dict):
    """The plan of a stored spec, by its ``'study'`` key (:func:`deeplimits.studies.plan.plan_from_dict`,
    with every study's plan class registered)."""
    from .plan import plan_from_dict as from_dict

    _register_plans()
    return from_dict(spec)


def results_from_store(store) -> list:
    """The results of a stored run of any study, rebuilt from its finished tasks (no simulation):
    one result per stored plan with a finished task (:mod:`deeplimits.studies.plan`)."""
    from .plan import results_from_store as from_store

    _register_plans()
    return from_store(store)


def _register_plans():
    """Import every module of the studies that registers a plan class (``@register_plan`` in its
    source, in this package or a sub-package): derived from the files, so a new study needs no
    line here, and a stored run of any study can be reloaded by a fresh process."""
    import pathlib

    here = pathlib.Path(__file__).parent
    for path in sorted(here.rglob("*.py")):
        if path.name != "__init__.py" and "@register_plan" in path.read_text(encoding="utf-8"):
            submodule(__name__, ".".join(path.relative_to(here).with_suffix("").parts))
