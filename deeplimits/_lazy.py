"""Names resolved on first use (PEP 562), for the package roots: ``import deeplimits`` and the
command line's ``--help`` then load no torch. One helper for every lazy ``__init__``."""

from __future__ import annotations

from typing import Callable


def lazy_exports(namespace: dict, where: dict[str, str], load: Callable[[str], object]):
    """The module-level ``__getattr__`` and ``__dir__`` of a package whose public name ``n`` lives
    in the submodule ``load(where[n])``; a resolved name is cached in ``namespace``."""

    def __getattr__(name: str):
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(load(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
