"""Strong convergence of a residual network to its limit (docs/convergence.md), one study in one
package:

* :mod:`~deeplimits.studies.convergence.study`: the plan, its sweep task and the run;
* :mod:`~deeplimits.studies.convergence.statistics`: per-draw errors to a result's statistics;
* :mod:`~deeplimits.studies.convergence.result`: the result, its verdict and report;
* :mod:`~deeplimits.studies.convergence.spec`: how a regime's options are recorded in the spec.

The strong errors themselves (:mod:`deeplimits.studies.strong_error`) and the memory model
(:func:`~deeplimits.studies.convergence.memory.convergence_bytes`) are shared with the scheme-order study.
Names are resolved on first access (PEP 562): importing the package imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "run_task"), "study"),
    **dict.fromkeys(("summarise", "error_statistics"), "statistics"),
    **dict.fromkeys(("ConvergenceResult", "MIN_FINITE_DRAWS", "MAX_CI_WIDTH"), "result"),
    "fit_rate": "study",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
