"""The axes of a training grid, checked (:func:`~deeplimits.studies.training.study.plan_training`):
the driver of the initial weights (any registered law, its H axis where it declares a Hurst index,
its other declared parameters) and the lists of values of the grid."""

from __future__ import annotations

from ... import _validate as V_
from ...errors import ParameterError

__all__ = ["driver_axes", "values"]


def driver_axes(driver, hursts, length_scale, fields=()) -> tuple[str, tuple, float | None, dict | None]:
    """The driver's name (a registered one, or a :class:`~deeplimits.paths.Driver` whose class is),
    its H axis (``(None,)`` unless it declares ``hurst``), its length scale (a driver declaring
    ``length_scale``) and its other declared parameters (those of a driver given as an object),
    each checked (none may be named like one of the plan's ``fields``), and the driver verified on a
    small sample (:meth:`~deeplimits.paths.Driver.check`)."""
    from ...paths import Driver, driver_class, driver_spec, make_driver, registered_drivers

    given = driver_spec(driver) if isinstance(driver, Driver) else {"driver": V_.choice("driver", driver,
                                                                                         registered_drivers())}
    name = given.pop("driver")
    declared = {o.name for o in driver_class(name).options}
    if "hurst" in declared:
        if hursts is None:
            raise ParameterError("hursts", f"hursts must be given for driver {name!r}, whose law has a Hurst index "
                                           f"(values {V_.HURST.range_text()})")
        hursts = values("hursts", hursts, lambda h: V_.hurst(h, name="hursts"))
    elif hursts is not None:
        raise ParameterError("hursts", f"hursts apply only to a driver with a Hurst index (fractional), not {name!r}")
    else:
        hursts = (None,)
    if length_scale is not None:
        if "length_scale" not in declared:
            raise ParameterError("length_scale", f"length_scale applies only to a driver declaring it (smooth), "
                                                 f"not {name!r}")
        length_scale = V_.length_scale(length_scale)
    elif "length_scale" in given:
        length_scale = given["length_scale"]
    rest = {k: v for k, v in given.items() if k not in ("hurst", "length_scale")}
    clash = sorted(set(rest) & set(fields))
    if clash:
        raise ParameterError("driver", f"driver {name!r} declares parameters named like fields of the training "
                                       f"plan ({', '.join(clash)}): rename them")
    params = {"length_scale": length_scale} if "length_scale" in declared else {}
    make_driver(name, **params, **rest, **({"hurst": hursts[0]} if hursts[0] is not None else {})).check()
    return name, tuple(hursts), length_scale, (rest or None)


def values(name: str, given, check) -> tuple:
    """``given``: a non-empty list of distinct values, each passed through ``check``."""
    values = V_.sequence(name, given, check, what="a list of numbers")
    if not values:
        raise ParameterError(name, f"{name} must not be empty")
    if len(set(values)) != len(values):
        raise ParameterError(name, f"{name} must not repeat a value, got {values}")
    return tuple(values)
