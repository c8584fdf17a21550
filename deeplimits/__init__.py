"""deeplimits: very deep residual networks paired with their continuous-time limits.

The user's API, re-exported by name (the mathematics is in docs/mathematics.md; every other
public name lives in its module, e.g. :mod:`deeplimits.studies.theory`):

* drivers: :func:`fgn`, :class:`IIDDriver`, :class:`FractionalDriver`, :class:`SmoothDriver`,
  :func:`make_driver` (:mod:`deeplimits.paths`);
* networks and limits: :class:`ResNet`, :class:`ModifiedEulerResNet`, :class:`SDELimit`,
  :class:`ODELimit`, :class:`YoungLimit`, :class:`RoughLimit`, :class:`InsideSDELimit`, :class:`InsideODELimit`,
  :func:`activation`;
* residual maps: :class:`Block`, :func:`register_block` (:mod:`deeplimits.blocks`: a block of
  your own gets the ``sde`` or ``ode`` regime and its limit);
* pairs and regimes: :func:`pair` builds the network of a regime with its limit and declared
  strong order; :data:`REGISTRY` of :class:`Regime` classes, :func:`register_regime` adds one
  (its options declared as :class:`Option`);
* studies, each a plan, a run and a result: :func:`strong_convergence` (its error expansion
  fitted and tested by :func:`fit_expansion`), :func:`stability`, :func:`phase_diagram`,
  :func:`train_grid`, :func:`plan_scaling`; :func:`results_from_store` rebuilds the results of a
  stored run;
* any scheme on the coupled path: :func:`strong_order` with a :class:`Scheme`
  (:class:`EulerMaruyama`, :class:`Milstein`, :class:`Heun`, :class:`ModifiedEuler`,
  :class:`TorchsdeScheme`);
* training: :class:`ResidualNetwork`, :func:`train`, :class:`BatchedAdam`, :class:`BatchedSGD`,
  :func:`init_from_driver`, :func:`load_dataset`;
* diagnostics of trained weights: :func:`weight_diagnostics`, :func:`scaling_exponents`,
  :func:`load_weights`;
* runs: :class:`RunStore`;
* exceptions (:mod:`deeplimits.errors`): :class:`DeeplimitsError` and its kinds, e.g.
  :class:`ParameterError` (a ``ValueError`` carrying the parameter's name).

Names are resolved on first access (PEP 562): ``import deeplimits`` (and the command line's
``--help``) does not import torch; ``from deeplimits import pair`` imports what ``pair`` needs.
A name not in the table below is not the root's: it lives in its module only (e.g.
``deeplimits.paths.Driver``), and asking the root for it is an ``AttributeError``.
"""
from ._lazy import lazy_exports
from ._version import __version__

_WHERE = {
    **dict.fromkeys(("fgn", "IIDDriver", "FractionalDriver", "SmoothDriver", "make_driver", "DRIVERS"), "paths"),
    **dict.fromkeys(("ResNet", "ModifiedEulerResNet"), "networks"),
    **dict.fromkeys(("Block", "register_block"), "blocks"),
    **dict.fromkeys(("SDELimit", "ODELimit", "YoungLimit", "RoughLimit", "InsideSDELimit", "InsideODELimit"), "limits"),
    **dict.fromkeys(("Activation", "activation"), "activations"),
    **dict.fromkeys(("Pair", "InsidePair"), "pairs"),
    **dict.fromkeys(("pair", "REGISTRY", "Regime", "StrongOrder", "Term", "get_regime", "register_regime"), "regimes"),
    "Option": "options",
    **dict.fromkeys(("strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "fit_rate"),
                    "studies.convergence.study"),
    "ConvergenceResult": "studies.convergence.result",
    **dict.fromkeys(("fit_expansion", "ExpansionFit"), "studies.expansion_fit"),
    "strong_order": "studies.scheme_order.study",
    **dict.fromkeys(("Scheme", "EulerMaruyama", "Milstein", "Heun", "ModifiedEuler", "TorchsdeScheme"), "schemes"),
    **dict.fromkeys(("stability", "plan_stability", "run_stability", "StabilityPlan", "phase_diagram", "plan_phase",
                     "run_phase", "PhasePlan"), "studies.propagation.study"),
    **dict.fromkeys(("StabilityResult", "PhaseResult"), "studies.propagation.result"),
    **dict.fromkeys(("train_grid", "plan_training", "TrainPlan"), "studies.training.study"),
    "TrainGridResult": "studies.training.result",
    **dict.fromkeys(("plan_scaling", "ScalingPlan"), "studies.scaling.study"),
    "ScalingResult": "studies.scaling.result",
    "results_from_store": "studies",
    **dict.fromkeys(("ResidualNetwork", "train", "BatchedAdam", "BatchedSGD", "init_from_driver"), "training"),
    "load_dataset": "data",
    **dict.fromkeys(("weight_diagnostics", "scaling_exponents", "load_weights"), "diagnostics"),
    "RunStore": "runs",
    **dict.fromkeys(("DeeplimitsError", "ParameterError", "MissingDataError", "ResourceError", "DamagedFileError",
                     "RunStoreError",
                     "DamagedStoreError", "DiskFullError", "SweepError", "ExecutorError", "MissingExtra"), "errors"),
}
"""Public name -> the submodule that defines it (imported when the name is first used)."""

__all__ = ["__version__", *_WHERE]

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
