"""Weight laws as functions of depth ("drivers") and their samples: one interface for every path.

A :class:`Driver` is the law of one random path on [0, 1] per weight entry (see
docs/mathematics.md, "Drivers"); :meth:`Driver.sample` draws a batch of them (a
:class:`DriverSample`) from which the weights of a network of any depth are read:
``weights(L)`` / ``iter_weights(L)`` (normalised layer weights), and for rough paths
``increments(L)`` / ``iter_increments(L)`` and ``path(L)``; smooth paths are also read at any
time with ``at(t)``. Every network, limit and study reads its weights through this interface.

Drivers by name (:data:`DRIVERS`, :func:`make_driver`): ``gaussian`` (Brownian increments),
``uniform`` and ``rademacher`` (i.i.d.), ``fractional`` (fBm increments, needs ``hurst``) and
``smooth`` (RBF Gaussian process, ``length_scale``).
"""

from __future__ import annotations

from .. import _validate as V_
from ..errors import ParameterError
from ..options import HURST
from .base import KINDS, Driver, DriverSample, PathSample, pair_sums
from .brownian import BrownianSample, IIDDriver, IIDSample
from .fractional import FractionalDriver, FractionalSample, fgn, fgn_autocovariance
from .smooth import SmoothDriver, SmoothSample, rbf_kernel

__all__ = [
    "fgn", "fgn_autocovariance", "rbf_kernel", "Driver", "IIDDriver", "FractionalDriver", "SmoothDriver",
    "DriverSample", "PathSample", "BrownianSample", "FractionalSample", "IIDSample", "SmoothSample",
    "DRIVERS", "KINDS", "make_driver", "driver_spec", "pair_sums",
]

from .._names import DRIVERS  # noqa: E402 - the names in one torch-free place


def make_driver(name: str, hurst: float | None = None, length_scale: float | None = None) -> Driver:
    """The driver named ``name`` (one of :data:`DRIVERS`), validated."""
    name = V_.choice("driver", name, DRIVERS)
    if hurst is not None and name != "fractional":
        raise ParameterError("hurst", f"hurst applies only to the fractional driver, not {name!r}")
    if length_scale is not None and name != "smooth":
        raise ParameterError("length_scale", f"length_scale applies only to the smooth driver, not {name!r}")
    if name == "fractional":
        if hurst is None:
            raise ParameterError("hurst", "hurst must be given for the fractional driver (a Hurst index "
                                          f"{HURST.range_text()})")
        return FractionalDriver(hurst)
    if name == "smooth":
        return SmoothDriver(length_scale)
    return IIDDriver(name)


def driver_spec(driver: Driver) -> dict:
    """A driver as plain JSON (``{'driver': name, ...}``), the inverse of :func:`make_driver`."""
    if not isinstance(driver, Driver):
        raise ParameterError("driver", f"driver must be an IIDDriver, FractionalDriver or SmoothDriver (or a name in "
                                       f"{', '.join(DRIVERS)}), got {driver!r}")
    return driver.spec()
