"""Drivers by name: the table ``name -> Driver class`` that :func:`make_driver` reads.

A driver class declares its ``name`` (or ``names``, for a family such as the i.i.d. laws) and its
parameters as declared :class:`~deeplimits.options.Option` s (``options``), and is entered here by
:func:`register_driver`; :func:`make_driver` then looks the name up, refuses a parameter of another
driver, checks each of its own against its declaration (:func:`deeplimits._validate.option`) and
builds the driver. Adding a law is one
class with ``@register_driver`` (docs/mathematics.md, "Adding a driver"): its spec
(:meth:`~deeplimits.paths.Driver.spec`), :func:`driver_from_spec` and the memory models of the
studies (the driver's own ``*_bytes`` methods) follow from the class.
"""

from __future__ import annotations

from .. import _validate as V_
from ..errors import ParameterError
from ..options import Option

__all__ = ["register_driver", "unregister_driver", "registered_drivers", "driver_class", "driver_parameters",
           "make_driver", "driver_from_spec", "POSITIONAL"]

_DRIVERS: dict[str, type] = {}

POSITIONAL = ("hurst", "length_scale")
"""The parameters :func:`make_driver` takes by position (its historical signature,
``make_driver(name, hurst, length_scale)``); every other parameter is given by keyword."""


def register_driver(cls):
    """Class decorator: enter the :class:`~deeplimits.paths.Driver` subclass ``cls`` under each of
    its names (``cls.names``, or ``(cls.name,)``), with its declared parameters ``cls.options``.
    A name already taken by another class is refused (the same class of a reloaded module replaces it)."""
    names = tuple(cls.names or (cls.name,))
    for name in names:
        if not (isinstance(name, str) and name):
            raise ParameterError("name", f"a driver's name must be a non-empty string, got {name!r}")
        known = _DRIVERS.get(name, cls)
        if (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):  # (a reloaded module: its own)
            raise ParameterError("name", f"driver {name!r} is already registered (by {_DRIVERS[name].__name__})")
    for opt in cls.options:
        if not isinstance(opt, Option):
            raise ParameterError("options", f"{cls.__name__}.options must hold Option declarations, got {opt!r}")
    for name in names:
        _DRIVERS[name] = cls
    return cls


def unregister_driver(name: str) -> None:
    """Remove the driver registered as ``name`` (a law registered for a test or a session)."""
    _DRIVERS.pop(driver_name(name))


def registered_drivers() -> tuple[str, ...]:
    """The names of the registered drivers, in registration order (the built-in ones first:
    :data:`deeplimits.paths.DRIVERS`)."""
    return tuple(_DRIVERS)


def driver_name(name) -> str:
    """``name`` if a driver is registered under it, else a one-line ParameterError naming ``driver``."""
    return V_.choice("driver", name, tuple(_DRIVERS))


def driver_class(name: str) -> type:
    """The :class:`~deeplimits.paths.Driver` class registered as ``name``."""
    return _DRIVERS[driver_name(name)]


def driver_parameters() -> set[str]:
    """The names of the parameters any registered driver declares (``hurst``, ``length_scale``, ...)."""
    return {o.name for cls in _DRIVERS.values() for o in cls.options}


def _owners(param: str) -> list[str]:
    """The names of the drivers that declare ``param``."""
    return [n for n, cls in _DRIVERS.items() if any(o.name == param for o in cls.options)]


def _not_applicable(param: str, name: str) -> ParameterError:
    owners = _owners(param)
    if owners:
        said = " or ".join(owners) + (" drivers" if len(owners) > 1 else " driver")
        return ParameterError(param, f"{param} applies only to the {said}, not {name!r}")
    return ParameterError(param, f"{param} is not a parameter of any driver (the {name} driver takes "
                                 f"{', '.join(o.name for o in _DRIVERS[name].options) or 'none'})")


def make_driver(name: str, *values, **params):
    """The driver registered as ``name`` (one of :func:`registered_drivers`), validated.

    Its parameters are given by keyword (``make_driver('fractional', hurst=0.7)``), or by position
    in the order of :data:`POSITIONAL` (``make_driver('fractional', 0.7)``); ``None`` is "not
    given". Each declared parameter is checked against its declaration (:func:`deeplimits._validate.option`:
    its type and range; its default when not given); a parameter the driver does not declare, a
    value out of range or a required one missing is refused with a one-line
    :class:`~deeplimits.errors.ParameterError` naming it."""
    cls = driver_class(name)
    if len(values) > len(POSITIONAL):
        raise TypeError(f"make_driver() takes at most {len(POSITIONAL) + 1} positional arguments")
    for param, value in zip(POSITIONAL, values):
        if param in params:
            raise TypeError(f"make_driver() got multiple values for argument {param!r}")
        params[param] = value
    own = {o.name: o for o in cls.options}
    for param, value in params.items():
        if value is not None and param not in own:
            raise _not_applicable(param, name)
    checked = {}
    for opt in cls.options:  # a missing value: the declared default, or refused if required
        value = params.get(opt.name)
        checked[opt.name] = V_.option(opt, value, context=f" for the {name} driver" if value is None else "")
    return cls.create(name, **checked)


def driver_from_spec(spec: dict):
    """The driver of a spec (``{'driver': name, param: value, ...}``, :meth:`~deeplimits.paths.Driver.spec`,
    or the spec of a study with the driver's parameters among its keys): the inverse of
    :func:`~deeplimits.paths.driver_spec`. Keys that are not the driver's own parameters are ignored."""
    cls = driver_class(spec["driver"])
    return make_driver(spec["driver"], **{o.name: spec.get(o.name) for o in cls.options})
