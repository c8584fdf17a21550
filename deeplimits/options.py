"""Options declared as data: each keyword option of a regime is one :class:`Option` (name, type,
default, allowed range, help text), and the quantities shared with the numerical code (the
Hurst index of fractional weights, the RBF length scale of smooth weights, the entry scales of
the inside model) are declared here once.

Everything else reads these declarations: :func:`deeplimits.pair` (which options apply, their
validation through :func:`deeplimits._validate.option`, their defaults), the convergence plan
(its spec fields) and result, the command line (one flag per declared option, with its help and
default) and the documentation. A regime lists the options it accepts in ``Regime.options``, so
the regimes that take an option are the ones that list it (docs/mathematics.md, "Adding a
regime"). Torch-free: the command line builds its ``--help`` from these without the numerical
stack.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .errors import ParameterError

__all__ = ["Option", "HURST", "YOUNG_HURST", "ROUGH_HURST", "CORRECTED_HURST", "LENGTH_SCALE", "SA", "SB",
           "DRIVER_OPTIONS"]

#: the value types an option may have (the command line parses the first two as numbers)
TYPES = (float, int, bool, str)


def _num(x) -> str:
    """A bound in words: ``inf``, ``0.5``; a third as ``1/3`` (not ``0.333333``)."""
    if x is None:
        return "inf"
    thirds = round(3 * x)
    return f"{thirds}/3" if thirds % 3 and abs(3 * x - thirds) < 1e-12 else f"{x:g}"


@dataclasses.dataclass(frozen=True)
class Option:
    """One keyword option of a regime, declared once.

    Args:
        name: the keyword of :func:`deeplimits.pair` (a Python identifier); the command-line
            flag is ``--name-with-dashes`` (``--no-name`` for a boolean that defaults to True).
        type: ``float``, ``int``, ``bool`` or ``str``.
        default: the value used when the option is not given (``None``: no value; the regime's
            code decides what that means).
        help: what the option is, in a few words (the range and the default are added from
            the other fields wherever it is shown); for a boolean, what True does, said as an
            order (``"use the modified Euler network ..."``).
        off: a boolean's text for False, said as an order (``"drop the Itô correction ..."``;
            empty: ``"do not "`` and the help).
        low, high: the allowed range of a number (``None``: unbounded on that side).
        low_open, high_open: whether the range excludes that end.
        required: whether the option must be given.
        note: a few words shown after the range in an error message (e.g. what the option is).
        below: why a value at or below ``low`` is refused, appended to the error message.
        above: why a value at or above ``high`` is refused, appended to the error message.

    Values are checked against a declaration by :func:`deeplimits._validate.option`.
    """

    name: str
    """The keyword of :func:`deeplimits.pair`; the flag is ``--name-with-dashes``."""
    type: type = float
    """``float``, ``int``, ``bool`` or ``str``."""
    default: Any = None
    """The value used when the option is not given (``None``: no value)."""
    help: str = ""
    """What the option is, in a few words (a boolean: what True does)."""
    off: str = ""
    """A boolean's text for False (empty: ``"do not "`` and :attr:`help`)."""
    low: float | None = None
    """The lower end of a number's range (``None``: unbounded)."""
    high: float | None = None
    """The upper end of a number's range (``None``: unbounded)."""
    low_open: bool = False
    """Whether the range excludes ``low``."""
    high_open: bool = False
    """Whether the range excludes ``high``."""
    required: bool = False
    """Whether the option must be given."""
    note: str = ""
    """A few words shown after the range in an error message."""
    below: str = ""
    """Why a value at or below ``low`` is refused, appended to the error message."""
    above: str = ""
    """Why a value at or above ``high`` is refused, appended to the error message."""

    def __post_init__(self):
        if not (isinstance(self.name, str) and self.name.isidentifier()):
            raise ParameterError("name", f"Option name must be a Python identifier, got {self.name!r}")
        if self.type not in TYPES:
            raise ParameterError("type", f"Option {self.name!r}: type must be one of float, int, bool, str; got "
                                         f"{self.type!r}")
        if self.type is bool and not isinstance(self.default, bool):
            raise ParameterError("default", f"Option {self.name!r}: a bool option needs a default True or False, got "
                                            f"{self.default!r}")

    @property
    def flag(self) -> str:
        """The command-line flag: ``--name-with-dashes``; ``--no-name`` for a boolean that
        defaults to True (the flag sets False)."""
        dashed = self.name.replace("_", "-")
        return f"--no-{dashed}" if self.type is bool and self.default else f"--{dashed}"

    @property
    def neutral(self):
        """The value that means "not given" when passed to any regime: ``None``, or a boolean's
        default (``corrected=False``, ``ito_correction=True``)."""
        return self.default if self.type is bool else None

    def range_text(self) -> str:
        """The allowed range in words: ``in (0.5, 1)``, ``>= 1``, ``> 0``; ``''`` if unbounded."""
        if self.low is not None and self.high is not None:
            return f"in {'(' if self.low_open else '['}{_num(self.low)}, {_num(self.high)}{')' if self.high_open else ']'}"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {_num(self.low)}"
        if self.high is not None:
            return f"{'<' if self.high_open else '<='} {_num(self.high)}"
        return ""

    def default_text(self) -> str:
        """``default X`` (``''`` without a default; ``required`` for a required option)."""
        if self.required:
            return "required"
        if self.default is None:
            return ""
        return f"default {_num(self.default) if isinstance(self.default, float) else self.default}"

    def effect(self, value: bool) -> str:
        """A boolean option's text for ``value``: its :attr:`help` for True, :attr:`off` for False."""
        return self.help if value else (self.off or f"do not {self.help}")

    def flag_help(self) -> str:
        """The help of a boolean's flag: what giving the flag does, then what happens without it,
        e.g. ``'drop the Itô correction from the limit, an ablation (default: keep it in the
        limit)'``."""
        return f"{self.effect(not self.default)} (default: {self.effect(self.default)})"

    def describe(self) -> str:
        """The help line: ``help (range; default)``, e.g. ``'RBF length scale of the smooth
        weights (in [0.05, 100]; default 0.1)'``."""
        extra = "; ".join(t for t in (self.range_text(), self.default_text()) if t)
        return f"{self.help} ({extra})" if extra else self.help


HURST = Option("hurst", float, help="Hurst index H", low=0.0, high=1.0, low_open=True, high_open=True)
"""The Hurst index of fractional weights (fBm increments), H in (0, 1)."""

YOUNG_HURST = dataclasses.replace(
    HURST, low=0.5,
    below="for H <= 1/2 the Euler scheme of the Young equation has no strong limit (the critical scaling saturates "
          "at beta = 1/2); use the 'sde' regime for H = 1/2 and the 'rough' regime for 1/3 < H < 1/2")
"""The Hurst index of a Young equation and of its Euler networks (the ``fbm`` regime, the Young limit, the
modified Euler network): H in (1/2, 1)."""

_FIRST_ORDER = ("for H <= 1/3 the first-order (Liu-Tindel) correction is not enough: the third-order terms of "
                "the steps, L^(1-3H) over the depth, no longer vanish")

ROUGH_HURST = dataclasses.replace(
    HURST, low=1 / 3, high=0.5, below=_FIRST_ORDER,
    above="H >= 1/2 is not rough: H = 1/2 is the Brownian case, an Itô SDE (the 'sde' regime), and above 1/2 the "
          "equation is a Young equation (the 'fbm' regime)")
"""The Hurst index of a rough differential equation driven by fBm and of its corrected network (the ``rough``
regime, the rough limit): H in (1/3, 1/2)."""

CORRECTED_HURST = dataclasses.replace(HURST, low=1 / 3, below=_FIRST_ORDER)
"""The Hurst index of the corrected (modified Euler) network: H in (1/3, 1) (Liu & Tindel 2019 below 1/2, Hu,
Liu & Nualart 2016 above)."""

LENGTH_SCALE = Option("length_scale", float, default=0.1, help="RBF length scale of the smooth weights",
                      low=0.05, high=100.0)
"""The RBF length scale of smooth (Gaussian process) weights, in units of the whole depth."""

DRIVER_OPTIONS = {"fractional": (dataclasses.replace(HURST, help="a Hurst index", required=True),),
                  "smooth": (LENGTH_SCALE,)}
"""The declared parameters of the built-in drivers that take any, torch-free: each driver class reads
its ``options`` here (:mod:`deeplimits.paths`), and the command line makes one flag per option
from the same declarations (``--hurst``, ``--length-scale``: type, help and range)."""

SA = Option("sa", float, default=0.25, help="entry standard deviation of A", low=0.0, low_open=True)
"""The entry standard deviation ``s_A`` of the inside weights ``A`` (docs/mathematics.md, "The inside
model")."""

SB = Option("sb", float, default=1.0, help="entry standard deviation of b; 0: no bias", low=0.0)
"""The entry standard deviation ``s_b`` of the inside biases ``b`` (0: no bias)."""
