"""Studies built on pairs and drivers: strong convergence, signal propagation (stability
curves, criticality distributions) and the (H, beta) phase diagram. Each is a plan (every check
and the resource estimate, nothing computed), a run (sweep tasks registered by name) and a
result (plain data with ``to_dict`` / ``from_dict``, a report and a figure).

The function :func:`deeplimits.stability` is exported at the top level (here ``stability`` is
the module)."""

from __future__ import annotations

from .convergence import (ConvergencePlan, ConvergenceResult, plan_convergence, run_plan,
                          strong_convergence)
from .convergence_result import MAX_CI_WIDTH, MIN_FINITE_DRAWS
from .phase import PHASE_PRESETS, PhasePlan, PhaseResult, phase_diagram, plan_phase, run_phase
from .plan import Plan, plan_from_dict, results_from_store
from .propagation import CAP, bounds_apply, classify, critical_beta, estimate_phase, estimate_stability, theory_bounds
from .stability import STABILITY_PRESETS, StabilityPlan, StabilityResult, plan_stability, run_stability
from .strong_error import fit_rate, sweep_errors

__all__ = ["strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "ConvergenceResult", "fit_rate",
           "sweep_errors", "MIN_FINITE_DRAWS", "MAX_CI_WIDTH", "plan_stability",
           "run_stability", "StabilityResult", "STABILITY_PRESETS", "phase_diagram", "plan_phase", "run_phase",
           "PhaseResult", "PHASE_PRESETS", "theory_bounds", "bounds_apply", "critical_beta", "classify", "CAP",
           "estimate_stability", "estimate_phase", "results_from_store", "Plan", "StabilityPlan", "PhasePlan",
           "plan_from_dict"]
