"""Convergence in law (docs/law.md; Kloeden & Platen §14.1; Talay & Tubaro 1990), one study in
one package:

* :mod:`~deeplimits.studies.law.study`: the plan, its sweep task and :func:`weak_law`;
* :mod:`~deeplimits.studies.law.engine`: the batched networks and SDE, coupled through one path;
* :mod:`~deeplimits.studies.law.phis`: the test functions as values; :mod:`~deeplimits.studies.law.inputs`: the
  law, the block and the test functions checked;
* :mod:`~deeplimits.studies.law.fit`: the weak-error expansion fitted and tested, the verdict;
* :mod:`~deeplimits.studies.law.distances`: 1-Wasserstein and Kolmogorov distances with their floor;
* :mod:`~deeplimits.studies.law.result`, :mod:`~deeplimits.studies.law.report`,
  :mod:`~deeplimits.studies.law.plots`: the result, its text and its figure;
* :mod:`~deeplimits.studies.law.calibration`: how often the verdict is wrong, its size and power;
* :mod:`~deeplimits.studies.law.fig2`: Marion et al.'s Fig. 2 (res-3 quartiles against the limit);
* :mod:`~deeplimits.studies.law.presets`: laws, presets and defaults (torch-free, read by ``--help``);
* :mod:`~deeplimits.studies.law.memory`: the peak bytes of a chunk.

Names are resolved on first access (PEP 562): importing the package, or its presets, imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("LawPlan", "plan_law", "weak_law", "law_task", "chunk_values"), "study"),
    **dict.fromkeys(("simulate", "law_weights", "sde_grids", "law_driver"), "engine"),
    **dict.fromkeys(("PHIS", "TestFunction", "register_test_function", "unregister_test_function", "test_function",
                     "phi_values", "phi_gradients", "DEFAULT_PHIS"), "phis"),
    **dict.fromkeys(("law_of", "block_of", "phis_of"), "inputs"),
    **dict.fromkeys(("fit_weak", "fit_power", "gls", "LEVEL", "VERDICTS", "MARGIN", "MIN_DEPTHS", "MIN_SPAN"),
                    "fit"),
    **dict.fromkeys(("wasserstein1", "kolmogorov", "law_distances", "BOOTSTRAP"), "distances"),
    **dict.fromkeys(("LawResult", "weak_estimates"), "result"),
    **dict.fromkeys(("report_lines", "fit_line"), "report"),
    "plot_law": "plots",
    **dict.fromkeys(("calibrate_law", "calibrate_fit", "synthetic_truths", "CalibrationResult", "SHIFTS", "correct_laws",
                     "SYNTHETIC", "run_verdict"), "calibration"),
    **dict.fromkeys(("Fig2Plan", "plan_fig2", "Fig2Result", "limit_quartiles", "res3_ratios", "MARION"), "fig2"),
    **dict.fromkeys(("LAWS", "METHODS", "PRESETS", "DEFAULT_PRESET", "DEFAULTS", "FIG2"), "presets"),
    **dict.fromkeys(("law_bytes", "fig2_bytes"), "memory"),
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
