"""Flag values, parsed without the numerical stack: lists (``4,8,16``), ranges
(``start:stop:count``), integers below 2^63 (written in digits), finite reals, device names."""

from __future__ import annotations

import argparse
import math
import re

from .._names import device_form
from ..studies.presets import linspace
from .errors import say

MAX_LIST = 100_000  # values in one list flag (and the count of start:stop:count)
MAX_INT = 2 ** 63 - 1  # integer flags (the run store keeps 64-bit integers)
_INTEGER = re.compile(r"^[+-]?[0-9]+$")

__all__ = ["MAX_LIST", "MAX_INT", "DTYPE_HELP", "DIGITS", "tidy", "number", "parse_list", "int_list", "integer", "real",
           "device", "fmt", "by_regime", "yes_no", "preset_default"]

#: what every ``--dtype`` flag sets (its default follows in each command's help)
DTYPE_HELP = "floating-point precision of the tensors"


def _number(token: str, kind, text: str, listed: bool = False):
    """One finite value of a list (or of a flag): ``kind`` is ``float`` or ``int``."""
    try:
        return _value(token, kind, text)
    except argparse.ArgumentTypeError as e:
        if listed:
            raise argparse.ArgumentTypeError(f"{e} (give a comma-separated list or start:stop:count)") from None
        raise


def _value(token: str, kind, text: str):
    token = token.strip()
    if kind is int and not _INTEGER.match(token):  # digits only: '1e3', '8.0' are not integers
        raise argparse.ArgumentTypeError(f"expected {'an integer' if token == text.strip() else 'integers'} "
                                         f"(digits), got {text!r}")
    try:
        v = int(token) if kind is int else float(token)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, "
                                         f"got {text!r}") from None
    if isinstance(v, float) and not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected {'finite numbers' if token != text else 'a finite number'}, "
                                         f"got {text!r}")
    if kind is int:
        if abs(v) > MAX_INT:
            raise argparse.ArgumentTypeError(f"integer out of range (at most 2^63 - 1), got {text!r}")
    return v


def _range(text: str, kind, bad) -> list:
    """``start:stop:count``: ``count`` is checked before any value is built; the values are those
    typed (:func:`tidy`: ``0.3:1:8`` holds 0.4, not ``0.3 + 0.1`` = 0.39999999999999997)."""
    parts = text.split(":")
    if len(parts) != 3:
        raise bad
    start, stop = (_number(t, float, text, True) for t in parts[:2])
    try:
        n = int(parts[2].strip())
    except ValueError:
        raise bad from None
    if not 1 <= n <= MAX_LIST:
        raise argparse.ArgumentTypeError(f"the count of start:stop:count must lie in [1, {MAX_LIST}], got {text!r}")
    vals = linspace(start, stop, n)
    if not all(math.isfinite(v) for v in vals):  # e.g. -1e308:1e308:3
        raise argparse.ArgumentTypeError(f"expected finite numbers, got {text!r}")
    vals = tidy(vals)
    if kind is int:
        if any(v != round(v) for v in vals):
            raise argparse.ArgumentTypeError(f"expected integers, got {text!r}")
        vals = [_number(repr(int(round(v))), int, text, True) for v in vals]
    return vals


#: significant digits a grid's value keeps (:func:`tidy`): far below any step a grid is typed with,
#: far above the last bits that ``start + i * step`` gets wrong
DIGITS = 12


def tidy(values: list) -> list:
    """The inner values of a grid from ``values[0]`` to ``values[-1]`` (kept as typed) snapped to the
    number of :data:`DIGITS` significant digits of the grid's scale where they are that number but for
    the last bits of floating-point arithmetic (within 8 ulps of the scale: ``0.39999999999999997``
    -> ``0.4``, ``-0.1:0.2:4``'s 1.4e-17 -> 0; ``0:1.3:70``'s values are kept), unless that would
    merge two of them."""
    scale = max(abs(values[0]), abs(values[-1]))
    if len(values) < 3 or scale == 0:
        return list(values)
    decimals, near = DIGITS - 1 - math.floor(math.log10(scale)), 8 * math.ulp(scale)
    snapped = [r if abs(r - v) <= near else v for v, r in ((v, round(v, decimals) + 0.0) for v in values[1:-1])]
    rounded = [values[0], *snapped, values[-1]]
    return rounded if len(set(rounded)) == len(set(values)) else list(values)


def number(value) -> str:
    """A value of a plan as printed: a float to :data:`DIGITS` significant digits in its shortest
    form (``0.4``, ``1.0``, ``1e-07``), anything else as ``str``."""
    if isinstance(value, float) and math.isfinite(value):
        return repr(float(f"{value:.{DIGITS}g}"))
    return str(value)


def parse_list(text: str, kind=float) -> list:
    """``'1,2,3'`` -> ``[1, 2, 3]``; ``'start:stop:count'`` -> ``count`` evenly spaced values (to
    :data:`DIGITS` significant digits: ``0.3:1:8`` is ``0.3, 0.4, ..., 1.0``).

    Values must be finite (integers for ``kind=int``, at most 2^63 - 1), none left out (``'4,,8'``,
    ``'0.5,'``); a list holds at most
    :data:`MAX_LIST` values, and ``count`` is checked before any value is built."""
    bad = argparse.ArgumentTypeError(f"expected a comma-separated list or start:stop:count, got {text!r}")
    if not isinstance(text, str) or not text.strip():
        raise bad
    if ":" in text:
        return _range(text, kind, bad)
    tokens = text.split(",")
    if len(tokens) > MAX_LIST:
        raise argparse.ArgumentTypeError(f"at most {MAX_LIST} values in a list, got {len(tokens)}")
    if not all(t.strip() for t in tokens):  # '0.5,' or '4,,8': a value left out is a typo, not a shorter list
        raise bad
    vals = [_number(t, kind, text, True) for t in tokens]
    return [float(v) for v in vals] if kind is float else vals


def int_list(text):
    """A list of integers (or an integral ``start:stop:count``)."""
    return parse_list(text, int)


def name_list(text):
    """A comma-separated list of names (at most 100,000), none empty."""
    names = [t.strip() for t in text.split(",")]
    if not all(names) or len(names) > 100_000:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r:.60}")
    return names


def integer(text):
    """An integer flag: digits (not ``1e4`` or ``8.0``), at most 2^63 - 1 in size."""
    return _number(text, int, text)


def real(text):
    """A real flag: a finite number."""
    return _number(text, float, text)


def device(text):
    """A device flag: its form only (``cpu``, ``cuda``, ``cuda:1``, ``mps``); torch checks it at plan time."""
    try:
        return device_form(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def fmt(value) -> str:
    """A default as ``--help`` shows it: ``0.1``, ``4,8,16``, ``8,16,...,512 (7 values)``."""
    if isinstance(value, (list, tuple)):
        if len(value) > 4:
            return f"{fmt(value[0])},{fmt(value[1])},...,{fmt(value[-1])} ({len(value)} values)"
        return ",".join(fmt(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def by_regime(values: dict) -> str:
    """``{regime: value}`` as ``'16 for sde, ode; 8 for fbm'`` (one value: just the value)."""
    groups: dict[str, list[str]] = {}
    for name, v in values.items():
        groups.setdefault(fmt(v), []).append(name)
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{v} for {', '.join(names)}" for v, names in groups.items())


def yes_no(value: bool) -> str:
    """A flag's default in ``--help``: ``yes`` or ``no``."""
    return "yes" if value else "no"


def preset_default(presets: dict, default: str, key: str) -> str:
    """``(default: the preset's, iid: 40)``: the value of ``key`` in the default preset."""
    value = presets[default].get(key)
    return f" (default: the preset's; {default}: {fmt(value)})" if value is not None else ""


#: a value that starts with a minus sign and holds only numbers (``-6,4``, ``-6:4:11``, ``-1e-3``):
#: the parser reads it as a flag's value, not as a flag (argparse alone takes ``-6,4`` for a flag)
_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
NEGATIVE = re.compile(rf"^-{_NUMBER}(?:[,:][-+]?{_NUMBER})*$")
_NEEDS_VALUE = re.compile(r"argument (--[\w-]+)(?:/[^:]*)?: expected one argument")


def with_hint(message: str) -> str:
    """argparse's ``message``, with how to give a value that starts with ``-`` where a flag found none."""
    m = _NEEDS_VALUE.search(message)
    return message + (f" (a value that starts with '-' is written {m.group(1)}=VALUE)" if m else "")
