"""The scaling of trained weights with depth (Cohen, Cont, Rossier & Xu, ICML 2021; docs/weights.md),
one study in one package:

* :mod:`~deeplimits.studies.scaling.study`: the plan and its checks;
* :mod:`~deeplimits.studies.scaling.task`: the sweep task (one depth and seed, trained to a threshold);
* :mod:`~deeplimits.studies.scaling.result`: the result and its exponents, with its report
  (:mod:`~deeplimits.studies.scaling.report`) and figure (:mod:`~deeplimits.studies.scaling.plots`);
* :mod:`~deeplimits.studies.scaling.ablation`: the published ablation tables;
* :mod:`~deeplimits.studies.scaling.memory`: the peak bytes of one task.

Names are resolved on first access (PEP 562): importing the package imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("ScalingPlan", "plan_scaling", "SECONDS_PER_LAYER_STEP"), "study"),
    **dict.fromkeys(("ScalingResult", "family_exponents", "PUBLISHED", "PUBLISHED_EMBEDDED", "LOSS_NAMES"), "result"),
    **dict.fromkeys(("scaling_task", "train_to_threshold", "effective_weights", "on_sphere", "COORDINATES"), "task"),
    **dict.fromkeys(("ABLATION", "PER_LAYER_ABLATION", "RELEASED_ABLATION", "ablation_rows", "ablation_plans",
                     "ablation_row", "ablation_table"), "ablation"),
    "protocol_line": "report",  # not report(), which the submodule report would shadow
    "plot_scaling": "plots",
    "scaling_bytes": "memory",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
