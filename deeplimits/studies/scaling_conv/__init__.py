"""The scaling of trained convolutional residual networks with depth (``deeplimits scaling --arch
conv``; docs/weights.md, "Convolutional networks"), one study in one package:

* :mod:`~deeplimits.studies.scaling_conv.study`: the plan and its checks;
* :mod:`~deeplimits.studies.scaling_conv.task`: the sweep task (one depth and seed);
* :mod:`~deeplimits.studies.scaling_conv.result`: the result, its exponents and verdicts;
* :mod:`~deeplimits.studies.scaling_conv.plots`: its figure (Cohen et al.'s Figs. 7-8).

The networks and the memory model are those of the convolutional training grid
(:mod:`deeplimits.studies.training.conv`, :func:`~deeplimits.studies.training.memory.conv_training_bytes`).
Names are resolved on first access (PEP 562): importing the package imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("ConvScalingPlan", "plan_conv_scaling"), "study"),
    **dict.fromkeys(("ConvScalingResult", "conv_exponents", "conv_family"), "result"),
    **dict.fromkeys(("CONV_SCALING_PRESETS", "PUBLISHED_CONV", "FITTED_ACCURACY"), "presets"),
    **dict.fromkeys(("conv_scaling_task", "kernel_diagnostics", "KERNELS"), "task"),
    "plot_conv_scaling": "plots",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
