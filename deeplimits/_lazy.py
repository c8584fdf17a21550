"""Names resolved on first use (PEP 562), for the package roots: ``import deeplimits`` and the
command line's ``--help`` then load no torch. One helper for every lazy ``__init__``: a name
imports the one submodule that defines it (and what that submodule needs), nothing else; any other
name is an ``AttributeError`` (a name a package no longer exports lives in its module only)."""

from __future__ import annotations

import importlib

__all__ = ["lazy_exports", "submodule"]


def lazy_exports(namespace: dict, where: dict[str, str]):
    """The module-level ``__getattr__`` and ``__dir__`` of a package.

    Args:
        namespace: the package's ``globals()``; a resolved name is cached there.
        where: public name -> the submodule that defines it, relative to the package
            (``"studies.propagation.study"``); only that submodule is imported.
    """
    package = namespace["__name__"]

    def __getattr__(name: str):
        if name in where:
            value = getattr(submodule(package, where[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__


def submodule(package: str, name: str):
    """The submodule ``package.name``, imported (the layout test reads each package's table of
    names, so these imports are edges of its import graph)."""
    return importlib.import_module(f"{package}.{name}")
