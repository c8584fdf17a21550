"""Training limits across depth, width and embedding size (docs/shapes.md; Chizat 2025, "The hidden
width of deep ResNets"; Chaintron, Chizat & Maass 2026, "ResNets of all shapes and sizes"), one
study in one package:

* :mod:`~deeplimits.studies.shapes.study`: the plan (:func:`plan_shapes`) and :func:`shapes`;
* :mod:`~deeplimits.studies.shapes.task`: one depth and a chunk of runs, the registered task;
* :mod:`~deeplimits.studies.shapes.network`: the finite networks, batched and streamed over layers;
* :mod:`~deeplimits.studies.shapes.limit`: the exact limit of the training dynamics (linear activation);
* :mod:`~deeplimits.studies.shapes.fit`: the error law fitted with intervals;
* :mod:`~deeplimits.studies.shapes.verdicts`: the L <-> M swap and the U in D, calibrated tests;
* :mod:`~deeplimits.studies.shapes.calibration`: how often the verdicts are wrong, their power;
* :mod:`~deeplimits.studies.shapes.result`, :mod:`~deeplimits.studies.shapes.report`,
  :mod:`~deeplimits.studies.shapes.plots`: the result, its text and its figure;
* :mod:`~deeplimits.studies.shapes.memory`: the peak bytes and seconds of a task;
* :mod:`~deeplimits.studies.shapes.presets`: protocol, cases, presets and defaults (torch-free, read by ``--help``).

Names are resolved on first access (PEP 562): importing the package, or its presets, imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("ShapesPlan", "plan_shapes", "shapes"), "study"),
    **dict.fromkeys(("depth_task", "embedding_rows", "batches"), "task"),
    **dict.fromkeys(("train_shapes", "draw_weights", "exact_targets", "reference_targets"), "network"),
    **dict.fromkeys(("LinearLimit", "linear_limit", "solve_limit"), "limit"),
    **dict.fromkeys(("fit_law", "fit_with_intervals", "envelope", "law_value"), "fit"),
    **dict.fromkeys(("swap_test", "swap_tests", "ushape_test", "ushape_tests"), "verdicts"),
    **dict.fromkeys(("calibrate_shapes", "CalibrationResult"), "calibration"),
    "ShapesResult": "result",
    "plot_shapes": "plots",
    **dict.fromkeys(("task_bytes", "step_bytes", "task_seconds", "gpu_seconds"), "memory"),
    **dict.fromkeys(("Protocol", "PROTOCOL", "CASES", "GRID", "PUBLISHED", "PRESETS", "DEFAULT_PRESET", "DEFAULTS"),
                    "presets"),
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
