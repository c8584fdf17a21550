"""The strong order of any one-step map on the coupled driver path (docs/schemes.md), one study in
one package:

* :mod:`~deeplimits.studies.scheme_order.study`: :func:`~deeplimits.strong_order`, its plan and
  the errors of a scheme at every depth;
* :mod:`~deeplimits.studies.scheme_order.cases`: the cases of known order it is calibrated on;
* :mod:`~deeplimits.studies.scheme_order.calibration`: how often its verdict is wrong, its size and
  power (``deeplimits order --calibrate``), and :mod:`~deeplimits.studies.scheme_order.sized` the same
  for runs sized to decide;
* :mod:`~deeplimits.studies.scheme_order.result`: a strong order's result and the calibration's,
  :mod:`~deeplimits.studies.scheme_order.report` the calibration's table and
  :mod:`~deeplimits.studies.scheme_order.plots` its figure;
* :mod:`~deeplimits.studies.scheme_order.memory`: the peak bytes of a chunk of draws;
* :mod:`~deeplimits.studies.scheme_order.presets`: the defaults of the command.

The engine, the fits and the expansion it shares with the convergence study stay in
:mod:`deeplimits.studies.strong_error`, :mod:`deeplimits.studies.fits` and
:mod:`deeplimits.studies.expansion_fit`. Names are resolved on first access (PEP 562): importing
the package imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("strong_order", "plan_strong_order", "OrderPlan"), "study"),
    **dict.fromkeys(("Case", "CASES", "scheme_case", "regime_case"), "cases"),
    **dict.fromkeys(("calibrate", "plan_calibration", "SHIFTS"), "calibration"),
    **dict.fromkeys(("Calibration", "CalibrationRow", "order_result"), "result"),
    "calibration_table": "report",
    "plot_calibration": "plots",
    "scheme_order_bytes": "memory",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
