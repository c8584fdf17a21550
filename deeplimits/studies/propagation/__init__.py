"""Signal propagation at initialisation (docs/propagation.md), one family of studies in one
package:

* :mod:`~deeplimits.studies.propagation.core`: the shared pass (forward and backward recursions
  over depths x betas), its chunking and checks, and the task estimates;
* :mod:`~deeplimits.studies.propagation.study`: the stability study (stability curves, criticality
  distributions) and the (H, beta) phase diagram: their plans, tasks and runs;
* :mod:`~deeplimits.studies.propagation.result`: their results, :mod:`~deeplimits.studies.propagation.report`
  their text, :mod:`~deeplimits.studies.propagation.plots` their figures;
* :mod:`~deeplimits.studies.propagation.boundary`: the gradients' phase boundary across depths
  (Marion et al.'s Fig. 7(b)): its plan, task and result;
* :mod:`~deeplimits.studies.propagation.presets`: the published protocols and the defaults;
* :mod:`~deeplimits.studies.propagation.stability_theory`: each bound of
  :mod:`deeplimits.studies.theory` beside its measured counterpart;
* :mod:`~deeplimits.studies.propagation.memory`: the peak bytes of a task.

The bounds themselves stay in :mod:`deeplimits.studies.theory` and
:mod:`deeplimits.studies.theory_conditions`. The function :func:`deeplimits.stability` is exported
at the top level too. Names are resolved on first access (PEP 562):
importing the package imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("stability", "plan_stability", "run_stability", "StabilityPlan", "stability_task", "phase_diagram", "plan_phase",
                     "run_phase", "PhasePlan", "phase_task"), "study"),
    **dict.fromkeys(("StabilityResult", "PhaseResult", "summarise_stability", "summarise_phase"), "result"),
    **dict.fromkeys(("gradient_boundary", "plan_gradient_boundary", "BoundaryPlan", "BoundaryResult", "boundary_task",
                     "BOOTSTRAP"), "boundary"),
    **dict.fromkeys(("stability_report", "phase_report", "boundary_report"), "report"),
    **dict.fromkeys(("plot_stability", "plot_histograms", "plot_theory", "plot_phase", "plot_boundary"), "plots"),
    **dict.fromkeys(("STABILITY_PRESETS", "PHASE_PRESETS", "DEFAULT_PRESET", "TASK_BYTES", "DEFAULTS", "DELTA"),
                    "presets"),
    **dict.fromkeys(("CAP", "estimate_stability", "estimate_phase"), "core"),
    **dict.fromkeys(("quantiles", "fits", "theory_lines", "fit_lines", "ratio_statistics", "lognormal_fit"),
                    "stability_theory"),
    **dict.fromkeys(("propagation_bytes", "default_draw_bytes"), "memory"),
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
