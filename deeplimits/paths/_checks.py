"""A driver's samples checked, not trusted (:meth:`~deeplimits.paths.Driver.check`): a sample is a
:class:`~deeplimits.paths.DriverSample` of the shape, draws and dtype asked for
(:func:`checked_sample`, on every draw), and a small sample's weights, read at two depths, are
finite tensors of the shape ``(depth, draws, *shape)`` and the dtype asked for (:func:`verified`,
once per driver), so that a law of one's own with NaN or misshapen weights is refused in one line
naming it before a study runs on it. The declarations a regime reads are checked on that sample
too: its ``rough`` is the driver's ``needs_resolution``, its ``regularity`` the driver's; a coupled
path's depth-2 increments are the sums of its depth-4 ones, and a smooth sample's depth-4 weights
are its values ``at(k / 4)`` (the network reads what the limit reads). :func:`sample_kind` is the
kind of the verified sample (``'brownian'``, ``'fractional'``, ``'smooth'``, ``'iid'``).
"""

from __future__ import annotations

import torch

from ..errors import ParameterError

__all__ = ["verified", "checked_sample", "sample_kind"]

_VERIFIED: dict = {}  # (class, spec) -> the kind of its verified sample


def verified(driver):
    """``driver``, once :func:`_probe` passed for its spec (cached)."""
    key = (type(driver), repr(driver.spec()))
    if key not in _VERIFIED:
        _VERIFIED[key] = _probe(driver)
    return driver


def sample_kind(driver) -> str:
    """The ``kind`` of ``driver``'s samples (:attr:`~deeplimits.paths.DriverSample.kind`), read off
    its verified sample (:func:`verified`)."""
    verified(driver)
    return _VERIFIED[(type(driver), repr(driver.spec()))]


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


def _probe(driver) -> str:
    """A driver's small sample, in float32 and float64, read at depths 2 and 4, and its
    declarations (module docstring); the kind of its samples."""
    shape, draws = (3, 2), 2
    for dtype in (torch.float32, torch.float64):
        g = torch.Generator().manual_seed(0)
        try:
            s = driver.sample(shape, draws=draws, resolution=4 if driver.needs_resolution else None, generator=g,
                              dtype=dtype)
        except ParameterError:
            raise
        except Exception as e:
            raise ParameterError("driver", f"driver {driver.name!r}: drawing a sample failed: {type(e).__name__}: "
                                           f"{str(e).splitlines()[0] if str(e) else ''}") from None
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
    try:
        _declared(driver, s)
    except ParameterError:
        raise
    except Exception as e:
        raise ParameterError("driver", f"driver {driver.name!r}: reading its sample's declarations failed: "
                                       f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    return s.kind


def _declared(driver, s) -> None:
    """The declarations of ``driver`` that a regime reads, against its float64 sample ``s``."""
    name = driver.name
    if bool(getattr(s, "rough", False)) != bool(driver.needs_resolution):
        raise ParameterError("driver", f"driver {name!r} declares needs_resolution={driver.needs_resolution}, but its "
                                       f"sample is {'' if s.rough else 'not '}a path on a fine grid (rough={s.rough})")
    got = getattr(s, "regularity", None)
    if not isinstance(got, (int, float)) or abs(float(got) - float(driver.regularity)) > 1e-12:
        raise ParameterError("driver", f"driver {name!r} declares regularity {driver.regularity:g}, but its sample "
                                       f"has regularity {got!r}")
    if not driver.coupled:
        return
    if s.rough:
        two, four = s.increments(2), s.increments(4)
        if not torch.allclose(two, four[0::2] + four[1::2], rtol=1e-9, atol=1e-12):
            raise ParameterError("driver", f"driver {name!r} declares coupled=True, but its depth-2 increments are not "
                                           "the sums of its depth-4 ones (one path read at every depth)")
    elif _reads_any_time(s):
        at = s.at(torch.arange(1, 5, dtype=s.dtype) / 4)
        if not torch.allclose(s.weights(4), at, rtol=1e-9, atol=1e-12):
            raise ParameterError("driver", f"driver {name!r}: its depth-4 weights are not its values at(k / 4), "
                                           "k = 1..4 (the network must read the function the limit reads)")


def _reads_any_time(s) -> bool:
    """Whether the sample overrides ``DriverSample.at`` (a smooth path read at any time)."""
    return getattr(type(s).at, "__qualname__", "") != "DriverSample.at"
