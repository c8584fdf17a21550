"""Renamed arguments and attributes: the old name still works for one release, with a
``DeprecationWarning`` naming the new one (the wording of the moved names of
:mod:`deeplimits._lazy`); giving both names at once is a
:class:`~deeplimits.errors.ParameterError`."""

from __future__ import annotations

import warnings

from .errors import ParameterError

__all__ = ["renamed", "renamed_attribute", "warn_renamed"]


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn (``DeprecationWarning``) that ``old`` is deprecated in favour of ``new``."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}", DeprecationWarning,
                  stacklevel=stacklevel)


def renamed(new: str, value, old: str, old_value, *, stacklevel: int = 4):
    """The value of the argument ``new``: ``value``, or ``old_value`` when it was given under its
    deprecated name ``old`` (with a warning naming ``new``); ``None`` means "not given".

    Raises:
        ParameterError: (about ``new``) both names were given.
    """
    if old_value is None:
        return value
    if value is not None:
        raise ParameterError(new, f"{new} and {old} are the same argument ({old} is its deprecated name): give "
                                  f"{new} only")
    warn_renamed(f"{old}=", f"{new}=", stacklevel=stacklevel)
    return old_value


def renamed_attribute(old: str, new: str) -> property:
    """A read-only attribute ``old`` that warns and reads ``new``."""

    def get(self):
        warn_renamed(f"{type(self).__name__}.{old}", f"{type(self).__name__}.{new}")
        return getattr(self, new)

    get.__doc__ = f"Deprecated name of :attr:`{new}` (warns; removed in the next release)."
    return property(get)
