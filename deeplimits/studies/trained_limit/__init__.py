"""The limit of trained networks across depths (docs/trained-limit.md), one study in one package:

* :mod:`~deeplimits.studies.trained_limit.study`: the plan, its sweep task and the depth family;
* :mod:`~deeplimits.studies.trained_limit.presets`: the cases, presets and defaults (torch-free,
  read by the command line's ``--help``);
* :mod:`~deeplimits.studies.trained_limit.result`: the result, its rates and verdicts;
* :mod:`~deeplimits.studies.trained_limit.plots`: its figure;
* :mod:`~deeplimits.studies.trained_limit.memory`: the peak bytes of one task.

Names are resolved on first access (PEP 562): importing the package, or its presets, imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("TrainedLimitPlan", "plan_trained_limit", "train_depth_family"), "study"),
    **dict.fromkeys(("CASES", "PRESETS", "DEFAULT_PRESET", "DEFAULTS"), "presets"),
    **dict.fromkeys(("TrainedLimitResult", "summarise_case", "QUANTITIES"), "result"),
    "plot_trained_limit": "plots",
    "trained_limit_bytes": "memory",
}

__all__ = ["TrainedLimitPlan", "plan_trained_limit", "train_depth_family", "CASES", "PRESETS", "DEFAULT_PRESET",
           "DEFAULTS", "TrainedLimitResult", "summarise_case", "QUANTITIES", "plot_trained_limit",
           "trained_limit_bytes"]

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
