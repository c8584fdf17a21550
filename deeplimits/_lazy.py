"""Names resolved on first use (PEP 562), for the package roots: ``import deeplimits`` and the
command line's ``--help`` then load no torch. One helper for every lazy ``__init__``: a name
imports the one submodule that defines it (and what that submodule needs), nothing else; a name
that moved away still resolves, with a ``DeprecationWarning`` naming its new home, for one release."""

from __future__ import annotations

import importlib
import warnings

__all__ = ["lazy_exports", "submodule"]


def lazy_exports(namespace: dict, where: dict[str, str], moved: dict[str, str] | None = None):
    """The module-level ``__getattr__`` and ``__dir__`` of a package.

    Args:
        namespace: the package's ``globals()``; a resolved name is cached there.
        where: public name -> the submodule that defines it, relative to the package
            (``"studies.propagation.study"``); only that submodule is imported.
        moved: name -> submodule, for names no longer exported by the package: each access
            warns (``DeprecationWarning``) and names where to import it from.
    """
    package, moved = namespace["__name__"], moved or {}

    def __getattr__(name: str):
        if name in where:
            value = getattr(submodule(package, where[name]), name)
            namespace[name] = value
            return value
        if name in moved:
            warnings.warn(f"{package}.{name} is deprecated and will be removed in the next release; import it from "
                          f"{package}.{moved[name]}", DeprecationWarning, stacklevel=2)
            return getattr(submodule(package, moved[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__


def submodule(package: str, name: str):
    """The submodule ``package.name``, imported (the layout test reads each package's table of
    names, so these imports are edges of its import graph)."""
    return importlib.import_module(f"{package}.{name}")
