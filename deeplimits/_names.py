"""The names the command line lists, in one torch-free place: drivers (laws of the weights),
residual maps, activations (and the ones used when none is given), schemes and problems, floating
dtypes and device types. What a block or a driver is (its weights, shapes, memory) is declared by
the object itself (:mod:`deeplimits.blocks`, :mod:`deeplimits.paths`), not here.

The command line builds its choices from these without importing the numerical stack;
:mod:`deeplimits.activations` reads :data:`ACTIVATIONS`, and tests/test_names.py checks that
``deeplimits.paths.DRIVERS`` and ``deeplimits.networks.ARCHITECTURES`` are these tuples.
"""

from __future__ import annotations

import re

from .errors import ParameterError

__all__ = ["DRIVERS", "ARCHITECTURES", "ACTIVATIONS", "DEFAULT_ACTIVATION", "RES3_ACTIVATION", "INSIDE_ACTIVATION",
           "DTYPES", "DEVICE_TYPES", "device_form", "SCHEMES", "PROBLEMS", "NOISES", "CALIBRATION_CASES"]

DRIVERS = ("uniform", "gaussian", "rademacher", "fractional", "smooth")
"""Laws of the weights (:func:`deeplimits.make_driver`)."""
ARCHITECTURES = ("res-1", "res-2", "res-3", "inside")
"""Residual maps (:class:`deeplimits.ResNet`); their weights are the blocks' own declarations
(:attr:`deeplimits.blocks.Block.required`), never a table here."""

#: named activations (:func:`deeplimits.activation`; ``leaky_relu:SLOPE`` sets the slope, and
#: ``module:function`` names any elementwise callable)
ACTIVATIONS = ("identity", "tanh", "relu", "leaky_relu", "sin", "sigmoid", "softplus0")
#: the activation of a network or a limit when none is given
DEFAULT_ACTIVATION = "tanh"
#: the activation of ``res-3`` (ReLU by definition: the only one it accepts)
RES3_ACTIVATION = "relu"
#: the activation of the inside regimes and limits when none is given (C^3, sigma(0) = 0, sigma'(0) = 1)
INSIDE_ACTIVATION = "softplus0"
#: the shipped one-step schemes by name (``deeplimits order --scheme``; :mod:`deeplimits.schemes`)
SCHEMES = ("euler-maruyama", "milstein", "heun", "modified-euler", "torchsde-euler", "torchsde-milstein")
#: the test equations of ``deeplimits order --problem`` (:mod:`deeplimits.schemes.problems`)
PROBLEMS = ("linear-sde", "linear-stratonovich", "sde-regime", "linear-young", "ou", "sin-cos")
#: the cases of ``deeplimits order --calibrate`` (:mod:`deeplimits.studies.scheme_order.calibration`)
CALIBRATION_CASES = ("euler-maruyama/linear-sde", "milstein/linear-sde", "heun/linear-stratonovich", "euler-maruyama/ou",
                     "euler-maruyama/sin-cos", "euler-maruyama/sde-regime", "sde", "ode", "fbm-H0.6", "fbm-H0.75",
                     "fbm-H0.9", "rough-H0.45", "rough-H0.4", "rough-H0.35")
NOISES = ("general", "commutative", "diagonal", "additive")
"""The noise structures a scheme's declared order depends on (:data:`deeplimits.schemes.NOISES`)."""
#: floating dtypes of the studies, by name
DTYPES = ("float32", "float64")
#: device types a study may run on (``TYPE`` or ``TYPE:INDEX``)
DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu")

_DEVICE = re.compile(r"^(%s)(:\d{1,4})?$" % "|".join(DEVICE_TYPES))


def device_form(text: str) -> str:
    """``text`` if it has the form of a device (``cpu``, ``cuda``, ``cuda:1``, ``mps``): the form
    only, checked without torch; whether the device exists is the library's check at plan time."""
    if not isinstance(text, str) or not _DEVICE.match(text.strip()):
        raise ParameterError("device", f"device must be one of {', '.join(DEVICE_TYPES)}, optionally with ':INDEX' "
                                       f"(e.g. cuda:1), got {text!r}")
    return text.strip()
