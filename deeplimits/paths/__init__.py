"""Weight laws as functions of depth ("drivers") and their samples: one interface for every path.

A :class:`Driver` is the law of one random path on [0, 1] per weight entry (see
docs/mathematics.md, "Drivers"); :meth:`Driver.sample` draws a batch of them (a
:class:`DriverSample`) from which the weights of a network of any depth are read:
``weights(L)`` / ``iter_weights(L)`` (normalised layer weights), and for rough paths
``increments(L)`` / ``iter_increments(L)`` and ``path(L)``; smooth paths are also read at any
time with ``at(t)``. Every network, limit and study reads its weights through this interface.

Drivers by name (:func:`make_driver`, read off the table of :func:`register_driver`): ``gaussian``
(Brownian increments), ``uniform`` and ``rademacher`` (i.i.d.), ``fractional`` (fBm increments,
needs ``hurst``) and ``smooth`` (RBF Gaussian process, ``length_scale``): :data:`DRIVERS`, the
built-in ones; a law of your own is one class with ``@register_driver`` (docs/mathematics.md,
"Adding a driver").
"""

from __future__ import annotations

from ..errors import ParameterError
from .base import KINDS, Driver, DriverSample, PathSample, pair_sums
from .brownian import BrownianSample, IIDDriver, IIDSample
from .fractional import FractionalDriver, FractionalSample, fgn, fgn_autocovariance
from .iid import IIDLaw, NormalMapSample
from .registry import driver_class, driver_from_spec, make_driver, register_driver, registered_drivers, unregister_driver
from .smooth import SmoothDriver, SmoothSample, rbf_kernel

__all__ = [
    "fgn", "fgn_autocovariance", "rbf_kernel", "Driver", "IIDDriver", "FractionalDriver", "SmoothDriver",
    "DriverSample", "PathSample", "BrownianSample", "FractionalSample", "IIDSample", "SmoothSample",
    "DRIVERS", "KINDS", "make_driver", "driver_spec", "driver_from_spec", "register_driver", "unregister_driver",
    "registered_drivers", "pair_sums", "IIDLaw", "NormalMapSample", "driver_class",
]

# The built-in names in one torch-free place (the command line's choices, its fast --help);
# tests/test_driver_registry.py checks they are the names the classes above register, in order.
from .._names import DRIVERS  # noqa: E402


def driver_spec(driver: Driver) -> dict:
    """A driver as plain JSON (``{'driver': name, ...}``), the inverse of :func:`make_driver`: a
    :class:`Driver` whose class is registered under its name (a study records it by name, and its
    tasks rebuild it from the spec), a one-line error naming ``driver`` otherwise."""
    if not isinstance(driver, Driver):
        raise ParameterError("driver", f"driver must be a Driver (or a name in {', '.join(registered_drivers())}), "
                                       f"got {driver!r:.80}")
    spec = driver.spec()
    if spec.get("driver") not in registered_drivers() or driver_class(spec["driver"]) is not type(driver):
        raise ParameterError("driver", f"driver {spec.get('driver')!r} must be registered (@register_driver) to run in "
                                       "a study, which records it by name")
    return spec
