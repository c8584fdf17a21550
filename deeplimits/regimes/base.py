"""The regime registry: a regime is a class that declares its network, limit, weights, scaling
and strong order, and builds its :class:`~deeplimits.pairs.Pair`.

Importing this module (and the built-in regimes) does not import torch: the declarations are
plain class attributes and :meth:`Regime.build` imports what it needs. So the command line can
list the regimes and their options without loading the numerical stack.

Adding a regime is one class and one registration (docs/mathematics.md, "Adding a regime")::

    @register_regime
    class MyRegime(Regime):
        name = "my-regime"
        ...
        def build(self, width, activation, **options): ...
"""

from __future__ import annotations

import abc
from typing import ClassVar

from ..orders import StrongOrder  # re-exported: a regime declares its order

__all__ = ["Regime", "StrongOrder", "REGISTRY", "register_regime", "get_regime", "regime_names", "pair",
           "regimes_table"]


class Regime(abc.ABC):
    """A network, its continuous limit and the law of its weights, declared.

    Class attributes (declarations, read by :func:`pair`, the command line, the reports, the
    plots and the documentation table):

    * ``name``: the registry key (``--regime NAME``);
    * ``network``, ``limit``, ``weights``, ``scaling``, ``rate_text``: one-line descriptions;
    * ``architectures``: the residual maps it accepts (the first is the default);
    * ``options``: keyword options of :func:`pair` it accepts, name -> description;
    * ``spec_options``: the options recorded in a convergence plan's spec (run store key);
    * ``defaults``: convergence defaults (``width``, ``depths``, ``paths``, ``reference``).

    Methods: :meth:`strong_order` (the declared :class:`StrongOrder`, given the options),
    :meth:`check` (option rules beyond applicability) and :meth:`build`.
    """

    name: ClassVar[str]
    network: ClassVar[str]
    limit: ClassVar[str]
    weights: ClassVar[str]
    scaling: ClassVar[str]
    #: the strong order in words, for tables (e.g. ``"1/2"``, ``"2H - 1"``)
    rate_text: ClassVar[str] = ""
    architectures: ClassVar[tuple[str, ...]] = ("res-1",)
    options: ClassVar[dict[str, str]] = {}
    #: values of options that mean "not given" (e.g. ``corrected=False``), so they may be passed to any regime
    option_defaults: ClassVar[dict] = {}
    spec_options: ClassVar[tuple[str, ...]] = ()
    defaults: ClassVar[dict] = dict(width=16, depths=[8, 16, 32, 64, 128, 256, 512], paths=256, reference=None)
    #: a strong order that does not depend on the options (else override :meth:`strong_order`)
    order: ClassVar[StrongOrder | None] = None

    def strong_order(self, **options) -> StrongOrder:
        """The theoretical strong order of the pair built with ``options``."""
        if self.order is None:
            raise NotImplementedError(f"regime {self.name!r} declares no strong order")
        return self.order

    def check(self, options: dict) -> dict:
        """Validate and complete the options (defaults filled in); applicability is already checked."""
        return options

    def hint(self, option: str) -> str:
        """Extra text for the error when ``option`` does not apply to this regime."""
        return ""

    @abc.abstractmethod
    def build(self, width: int, activation, arch: str, **options):
        """The :class:`~deeplimits.pairs.Pair` of this regime (options already checked)."""

    def __repr__(self) -> str:
        return f"<regime {self.name!r}: {self.network} -> {self.limit}>"


#: the regimes by name, in registration order
REGISTRY: dict[str, Regime] = {}


def register_regime(cls: type[Regime]) -> type[Regime]:
    """Register a :class:`Regime` subclass under its ``name`` (usable as a class decorator).
    Registering a different class under a taken name is an error; the same class again is allowed."""
    if not (isinstance(cls, type) and issubclass(cls, Regime)):
        raise ValueError(f"register_regime takes a Regime subclass, got {cls!r}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{cls.__name__}.name must be a non-empty string")
    old = REGISTRY.get(name)
    if old is not None and type(old).__qualname__ != cls.__qualname__:
        raise ValueError(f"regime {name!r} is already registered ({type(old).__name__})")
    REGISTRY[name] = cls()
    return cls


def regime_names() -> tuple[str, ...]:
    """The registered regime names, in registration order."""
    return tuple(REGISTRY)


def get_regime(name) -> Regime:
    """The registered regime ``name``; a ValueError lists the registered ones."""
    if name not in REGISTRY:
        raise ValueError(f"regime must be one of {', '.join(map(repr, REGISTRY))}, got {name!r}")
    return REGISTRY[name]


def regimes_table() -> str:
    """The registered regimes as a Markdown table (the one in docs/mathematics.md is this)."""
    rows = ["| regime | network | weights | scaling | limit | strong order `r`, error `~ L^(-r)` |",
            "|---|---|---|---|---|---|"]
    for name, r in REGISTRY.items():
        order = r.rate_text or (f"{r.order.rate:g}" if r.order else "")
        rows.append(f"| `{name}` | {r.network} | {r.weights} | {r.scaling} | {r.limit} | {order} |")
    return "\n".join(rows)


def _given(name: str, value) -> bool:
    """Whether an option was given: not ``None`` and not a registered regime's default for it."""
    if value is None:
        return False
    return not any(name in r.option_defaults and r.option_defaults[name] is value for r in REGISTRY.values())


def _applies_to(option: str) -> list[str]:
    return [n for n, r in REGISTRY.items() if option in r.options]


def _not_applicable(option: str, regime: Regime) -> ValueError:
    where = _applies_to(option)
    if not where:
        return ValueError(f"unknown option {option!r}; regime {regime.name!r} accepts "
                          f"{', '.join(sorted(regime.options)) or 'no options'}")
    s = "s" if len(where) > 1 else ""
    return ValueError(f"{option} applies only to regime{s} {' and '.join(map(repr, where))}, not "
                      f"{regime.name!r}{regime.hint(option)}")


def _check_arch(regime: Regime, arch) -> str:
    if arch is None:
        return regime.architectures[0]
    if arch in regime.architectures:
        return arch
    if len(regime.architectures) == 1:
        raise ValueError(f"arch must be {regime.architectures[0]!r} for regime {regime.name!r}, got {arch!r}")
    raise ValueError(f"arch must be one of {', '.join(map(repr, regime.architectures))} for regime "
                     f"{regime.name!r}, got {arch!r}")


def pair(regime: str, *, width: int, activation=None, arch: str | None = None, **options):
    """Build the (network, limit) pair of a registered regime (docs/mathematics.md, "The
    implemented regimes"; :data:`REGISTRY` lists them).

    Args:
        regime: a registered name: ``'sde'``, ``'ode'``, ``'fbm'``, ``'inside-sde'``,
            ``'inside-ode'``, or one you registered (:func:`register_regime`).
        width: hidden width ``d >= 1``.
        activation: name, ``'module:function'`` or callable (default ``tanh``; ReLU for ``res-3``;
            ``softplus0`` for the inside regimes, which need a C^3 activation with
            ``sigma(0) = 0``, ``sigma'(0) = 1``).
        arch: residual map; the regime's first architecture by default (``'res-1'`` for sde and
            fbm, any of res-1/2/3 for ode, ``'inside'`` for the inside regimes).
        **options: the regime's options (``Regime.options``), e.g. for the built-in regimes
            ``hurst`` (fbm: in (1/2, 1)), ``corrected`` (fbm: the modified Euler network),
            ``length_scale`` (RBF length scale of smooth weights, default 0.1), ``alpha``,
            ``beta``, ``sa``, ``sb``, ``ito_correction`` (inside regimes; see
            :class:`~deeplimits.regimes.InsideSDE` and :class:`~deeplimits.regimes.InsideODE`).
            An option that does not apply to the regime is a ValueError naming the regimes it
            applies to.

    Returns:
        A :class:`~deeplimits.pairs.Pair` whose ``order`` (:class:`StrongOrder`) declares the
        strong error's rate (``theory_rate``) and its note (``rate_note``).
    """
    from .. import _validate as V_

    spec = get_regime(regime)
    width = V_.integer("width", width)
    given = {k: v for k, v in options.items() if _given(k, v)}
    for name in given:
        if name not in spec.options:
            raise _not_applicable(name, spec)
    arch = _check_arch(spec, arch)
    options = spec.check({**spec.option_defaults, **given})
    return spec.build(width, activation, arch, **options)
