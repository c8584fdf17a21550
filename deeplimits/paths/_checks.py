"""A driver's samples checked, not trusted (:meth:`~deeplimits.paths.Driver.check`): a sample is a
:class:`~deeplimits.paths.DriverSample` of the shape, draws and dtype asked for
(:func:`checked_sample`, on every draw), and a small sample's weights, read at two depths, are
finite tensors of the shape ``(depth, draws, *shape)`` and the dtype asked for (:func:`verified`,
once per driver), so that a law of one's own with NaN or misshapen weights is refused in one line
naming it before a study runs on it.
"""

from __future__ import annotations

import torch

from ..errors import ParameterError

__all__ = ["verified", "checked_sample"]

_VERIFIED: set = set()


def verified(driver):
    """``driver``, once :func:`_probe` passed for its spec (cached)."""
    key = (type(driver), repr(driver.spec()))
    if key not in _VERIFIED:
        _probe(driver)
        _VERIFIED.add(key)
    return driver


def checked_sample(driver, out, shape, draws, dtype):
    """``out``, the sample ``driver`` drew, if it is a :class:`DriverSample` of the ``shape``,
    ``draws`` and ``dtype`` asked for (a one-line error naming the driver otherwise)."""
    if not (_is_sample(out) and tuple(out.shape) == tuple(shape) and out.draws == draws
            and out.dtype == dtype):
        raise ParameterError("driver", f"driver {driver.name!r}: its sample must be a DriverSample of shape {shape}, "
                                       f"{draws} draws and dtype {dtype}, got {_described(out)}")
    return out


def _is_sample(x) -> bool:
    """A :class:`~deeplimits.paths.DriverSample` by its interface (this module sits below paths.base)."""
    return all(hasattr(x, a) for a in ("iter_weights", "weights", "kind", "shape", "draws", "dtype"))


def _described(x) -> str:
    if _is_sample(x):
        return f"shape {x.shape}, {x.draws} draws, dtype {x.dtype}"
    return type(x).__name__


def _probe(driver) -> None:
    """A driver's small sample, in float32 and float64, read at depths 2 and 4 (module docstring)."""
    shape, draws = (3, 2), 2
    for dtype in (torch.float32, torch.float64):
        g = torch.Generator().manual_seed(0)
        s = driver.sample(shape, draws=draws, resolution=4 if driver.needs_resolution else None, generator=g,
                          dtype=dtype)
        for depth in (2, 4):
            try:
                w = s.weights(depth)
            except ParameterError:
                raise
            except Exception as e:
                raise ParameterError("driver", f"driver {driver.name!r}: reading its weights at depth {depth} failed: "
                                               f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                                     ) from None
            want = (depth, draws, *shape)
            if not isinstance(w, torch.Tensor) or tuple(w.shape) != want or w.dtype != dtype:
                got = f"{tuple(w.shape)}, {w.dtype}" if isinstance(w, torch.Tensor) else type(w).__name__
                raise ParameterError("driver", f"driver {driver.name!r}: its weights at depth {depth} must be a tensor "
                                               f"of shape {want} and dtype {dtype}, got {got}")
            if not torch.isfinite(w).all():
                raise ParameterError("driver", f"driver {driver.name!r}: its weights are not finite (depth {depth})")
