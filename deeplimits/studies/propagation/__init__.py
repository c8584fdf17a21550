"""Signal propagation at initialisation (docs/propagation.md), one family of studies in one
package:

* :mod:`~deeplimits.studies.propagation.core`: the shared pass (forward and backward recursions
  over depths x betas), its chunking and checks, and the task estimates;
* :mod:`~deeplimits.studies.propagation.stability`: the stability study (stability curves,
  criticality distributions): its plan, task and result;
* :mod:`~deeplimits.studies.propagation.phase`: the (H, beta) phase diagram: its plan, task and result;
* :mod:`~deeplimits.studies.propagation.stability_theory`: each bound of
  :mod:`deeplimits.studies.theory` beside its measured counterpart;
* :mod:`~deeplimits.studies.propagation.memory`: the peak bytes of a task.

The bounds themselves stay in :mod:`deeplimits.studies.theory` and
:mod:`deeplimits.studies.theory_conditions`. The function :func:`deeplimits.stability` is exported
at the top level (here ``stability`` is the module). Names are resolved on first access (PEP 562):
importing the package imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("plan_stability", "run_stability", "StabilityPlan", "StabilityResult", "DELTA"), "stability"),
    **dict.fromkeys(("phase_diagram", "plan_phase", "run_phase", "PhasePlan", "PhaseResult"), "phase"),
    **dict.fromkeys(("CAP", "estimate_stability", "estimate_phase"), "core"),
    **dict.fromkeys(("quantiles", "fits", "theory_lines", "fit_lines", "ratio_statistics", "lognormal_fit"),
                    "stability_theory"),
    **dict.fromkeys(("propagation_bytes", "default_draw_bytes"), "memory"),
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
