"""deeplimits: very deep residual networks paired with their continuous-time limits.

The public API, re-exported by name:

* drivers (SPEC §2): :func:`fgn`, :class:`IIDDriver`, :class:`FractionalDriver`,
  :class:`SmoothDriver` and their samples;
* networks (SPEC §1): :class:`ResNet`, :class:`ModifiedEulerResNet`;
* limits (SPEC §3): :class:`SDELimit`, :class:`ODELimit`, :class:`YoungLimit`, and for the
  inside model :class:`InsideSDELimit` (Itô-corrected SDE) and :class:`InsideODELimit`;
* pairs: :func:`pair` builds a network with its limit and theoretical strong rate
  (:class:`InsidePair` for the inside regimes);
* strong convergence (SPEC §4): :func:`strong_convergence` measures the error against depth
  and fits its rate;
* signal propagation (SPEC §4): :func:`stability` computes the ratios r_h, r_p over depths
  and betas with the theory bounds and the criticality distributions; :func:`phase_diagram`
  maps the (H, beta) plane with fractional weights and extracts beta*(H).
"""
from .activations import Activation, activation
from .drivers import (BrownianSample, Driver, DriverSample, FractionalDriver, FractionalSample,
                      IIDDriver, IIDSample, PathSample, SmoothDriver, SmoothSample, fgn,
                      fgn_autocovariance, rbf_kernel)
from .convergence import (ConvergencePlan, ConvergenceResult, fit_rate, plan_convergence, run_plan,
                          strong_convergence)
from .limits import GridBrownian, InsideODELimit, InsideSDELimit, InsideSDEScheme, ODELimit, SDELimit, YoungLimit
from .networks import ARCHITECTURES, ModifiedEulerResNet, ResNet, Trajectory
from .pairs import INSIDE_REGIMES, REGIMES, InsidePair, Pair, PairSample, PairSolution, pair
from .propagation import (PhaseResult, StabilityResult, bounds_apply, critical_beta, phase_diagram, stability,
                          theory_bounds)

__version__ = "0.1.0"

__all__ = [
    "Activation", "activation",
    "fgn", "fgn_autocovariance", "rbf_kernel", "Driver", "IIDDriver", "FractionalDriver",
    "SmoothDriver", "DriverSample", "PathSample", "BrownianSample", "FractionalSample",
    "IIDSample", "SmoothSample",
    "ResNet", "ModifiedEulerResNet", "Trajectory", "ARCHITECTURES",
    "SDELimit", "ODELimit", "YoungLimit", "GridBrownian", "InsideSDELimit", "InsideSDEScheme", "InsideODELimit",
    "pair", "Pair", "InsidePair", "PairSample", "PairSolution", "REGIMES", "INSIDE_REGIMES",
    "strong_convergence", "plan_convergence", "run_plan", "ConvergencePlan", "ConvergenceResult", "fit_rate",
    "stability", "StabilityResult", "theory_bounds", "bounds_apply", "phase_diagram", "PhaseResult", "critical_beta",
]
