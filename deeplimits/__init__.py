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
  measures the error against depth and fits its rate;
* signal propagation: :func:`stability` (= :func:`plan_stability` + :func:`run_stability`)
  computes the ratios r_h, r_p over depths and betas with the theory bounds and the criticality
  distributions; :func:`phase_diagram` (= :func:`plan_phase` + :func:`run_phase`) maps the
  (H, beta) plane with fractional weights and extracts beta*(H).
"""
from ._version import __version__
from .activations import Activation, activation
from .limits import GridBrownian, InsideODELimit, InsideSDELimit, InsideSDEScheme, ODELimit, SDELimit, YoungLimit
from .networks import ARCHITECTURES, ModifiedEulerResNet, ResNet, Trajectory
from .pairs import InsidePair, Pair, PairSample, PairSolution
from .regimes import REGISTRY, Regime, StrongOrder, get_regime, pair, register_regime
from .paths import (DRIVERS, BrownianSample, Driver, DriverSample, FractionalDriver, FractionalSample, IIDDriver,
                    IIDSample, PathSample, SmoothDriver, SmoothSample, fgn, fgn_autocovariance, make_driver,
                    rbf_kernel)
from .studies.convergence import (ConvergencePlan, ConvergenceResult, fit_rate, plan_convergence, run_plan,
                                  strong_convergence)
from .studies.phase import PhaseResult, phase_diagram, plan_phase, run_phase
from .studies.propagation import bounds_apply, critical_beta, theory_bounds
from .studies.stability import StabilityResult, plan_stability, run_stability, stability

__all__ = [
    "__version__", "Activation", "activation",
    "fgn", "fgn_autocovariance", "rbf_kernel", "Driver", "IIDDriver", "FractionalDriver",
    "SmoothDriver", "DriverSample", "PathSample", "BrownianSample", "FractionalSample",
    "IIDSample", "SmoothSample", "DRIVERS", "make_driver",
    "ResNet", "ModifiedEulerResNet", "Trajectory", "ARCHITECTURES",
    "SDELimit", "ODELimit", "YoungLimit", "GridBrownian", "InsideSDELimit", "InsideSDEScheme", "InsideODELimit",
    "pair", "Pair", "InsidePair", "PairSample", "PairSolution", "Regime", "StrongOrder", "REGISTRY",
    "register_regime", "get_regime",
    "strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "ConvergenceResult", "fit_rate",
    "stability", "plan_stability", "run_stability", "StabilityResult", "theory_bounds", "bounds_apply",
    "phase_diagram", "plan_phase", "run_phase", "PhaseResult", "critical_beta",
]
