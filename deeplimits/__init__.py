"""deeplimits: very deep residual networks paired with their continuous-time limits.

The public API, re-exported by name (the mathematics is in docs/mathematics.md):

* drivers: :func:`fgn`, :class:`IIDDriver`, :class:`FractionalDriver`, :class:`SmoothDriver`,
  :func:`make_driver` and their samples (one path interface, :mod:`deeplimits.paths`);
* networks: :class:`ResNet`, :class:`ModifiedEulerResNet`;
* limits: :class:`SDELimit`, :class:`ODELimit`, :class:`YoungLimit`, and for the inside model
  :class:`InsideSDELimit` (Itô-corrected SDE) and :class:`InsideODELimit`;
* regimes: :data:`REGISTRY` of :class:`Regime` classes declaring their network, limit, weights,
  scaling and :class:`StrongOrder`; :func:`register_regime` adds one;
* pairs: :func:`pair` builds the network of a regime with its limit and declared strong order
  (:class:`InsidePair` for the inside regimes);
* strong convergence: :func:`strong_convergence` (= :func:`plan_convergence` + :func:`run_plan`)
  measures the error against depth, fits the declared error expansion and tests it
  (:func:`fit_expansion`); :func:`strong_order` does the same for any one-step map
  (:class:`Scheme`: :class:`EulerMaruyama`, :class:`Milstein`, :class:`Heun`,
  :class:`ModifiedEuler`, :class:`TorchsdeScheme`) on the coupled driver path;
* signal propagation: :func:`stability` (= :func:`plan_stability` + :func:`run_stability`)
  computes the ratios r_h, r_p over depths and betas with the theory bounds and the criticality
  distributions; :func:`phase_diagram` (= :func:`plan_phase` + :func:`run_phase`) maps the
  (H, beta) plane with fractional weights and extracts beta*(H).

Names are resolved on first access (PEP 562): ``import deeplimits`` (and the command line's
``--help``) does not import torch; ``from deeplimits import pair`` imports what ``pair`` needs.
"""
from ._lazy import lazy_exports


from ._version import __version__

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("Activation", "activation"), "activations"),
    **dict.fromkeys(("GridBrownian", "InsideODELimit", "InsideSDELimit", "InsideSDEScheme", "ODELimit", "SDELimit",
                     "YoungLimit"), "limits"),
    **dict.fromkeys(("ARCHITECTURES", "ModifiedEulerResNet", "ResNet", "Trajectory"), "networks"),
    **dict.fromkeys(("InsidePair", "Pair", "PairSample", "PairSolution"), "pairs"),
    **dict.fromkeys(("REGISTRY", "Regime", "StrongOrder", "Term", "get_regime", "pair", "register_regime"), "regimes"),
    **dict.fromkeys(("ExpansionFit", "fit_expansion"), "studies.expansion_fit"),
    "strong_order": "studies.scheme_order",
    **dict.fromkeys(("Scheme", "EulerMaruyama", "Milstein", "Heun", "ModifiedEuler", "TorchsdeScheme"), "schemes"),
    **dict.fromkeys(("DRIVERS", "BrownianSample", "Driver", "DriverSample", "FractionalDriver", "FractionalSample",
                     "IIDDriver", "IIDSample", "PathSample", "SmoothDriver", "SmoothSample", "fgn",
                     "fgn_autocovariance", "make_driver", "rbf_kernel"), "paths"),
    **dict.fromkeys(("ConvergencePlan", "ConvergenceResult", "fit_rate", "plan_convergence", "run_plan",
                     "strong_convergence"), "studies.convergence"),
    **dict.fromkeys(("PhaseResult", "phase_diagram", "plan_phase", "run_phase"), "studies.phase"),
    **dict.fromkeys(("bounds_apply", "critical_beta", "theory_bounds", "quantile_bound", "high_probability_bounds",
                     "CRITICAL_LIMITS"), "studies.theory"),
    **dict.fromkeys(("StabilityResult", "plan_stability", "run_stability", "stability"), "studies.stability"),
}

__all__ = [
    "__version__", "Activation", "activation",
    "fgn", "fgn_autocovariance", "rbf_kernel", "Driver", "IIDDriver", "FractionalDriver",
    "SmoothDriver", "DriverSample", "PathSample", "BrownianSample", "FractionalSample",
    "IIDSample", "SmoothSample", "DRIVERS", "make_driver",
    "ResNet", "ModifiedEulerResNet", "Trajectory", "ARCHITECTURES",
    "SDELimit", "ODELimit", "YoungLimit", "GridBrownian", "InsideSDELimit", "InsideSDEScheme", "InsideODELimit",
    "pair", "Pair", "InsidePair", "PairSample", "PairSolution", "Regime", "StrongOrder", "Term", "REGISTRY",
    "register_regime", "get_regime", "fit_expansion", "ExpansionFit", "strong_order", "Scheme", "EulerMaruyama",
    "Milstein", "Heun", "ModifiedEuler", "TorchsdeScheme",
    "strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "ConvergenceResult", "fit_rate",
    "stability", "plan_stability", "run_stability", "StabilityResult", "theory_bounds", "bounds_apply",
    "quantile_bound", "high_probability_bounds", "CRITICAL_LIMITS", "phase_diagram", "plan_phase", "run_phase", "PhaseResult", "critical_beta",
]


def _submodule(name: str):
    """The submodule ``name`` (plain relative imports)."""
    if name == "activations":
        from . import activations as module
    elif name == "limits":
        from . import limits as module
    elif name == "networks":
        from . import networks as module
    elif name == "pairs":
        from . import pairs as module
    elif name == "regimes":
        from . import regimes as module
    elif name == "paths":
        from . import paths as module
    elif name == "studies.convergence":
        from .studies import convergence as module
    elif name == "studies.phase":
        from .studies import phase as module
    elif name == "studies.theory":
        from .studies import theory as module
    elif name == "studies.expansion_fit":
        from .studies import expansion_fit as module
    elif name == "studies.scheme_order":
        from .studies import scheme_order as module
    elif name == "schemes":
        from . import schemes as module
    else:
        from .studies import stability as module
    return module


__getattr__, __dir__ = lazy_exports(globals(), _WHERE, _submodule)
