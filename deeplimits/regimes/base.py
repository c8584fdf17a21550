"""The regime registry: a regime is a class that declares its network, limit, weights, scaling
and strong order, and builds its :class:`~deeplimits.pairs.Pair`.

Importing this module (and the built-in regimes) does not import torch: the declarations are
plain class attributes and :meth:`Regime.build` imports what it needs. So the command line can
list the regimes and their options without loading the numerical stack.

Adding a regime is one class and one registration (docs/mathematics.md, "Adding a regime")::

    @register_regime
    class MyRegime(Regime):
        name = "my-regime"
        options = (Option("gain", float, default=1.0, low=0.0, help="..."),)
        ...
        def build(self, width, activation, arch, gain): ...
"""

from __future__ import annotations

import abc
from typing import ClassVar

from .._names import ARCHITECTURES
from ..errors import ParameterError
from ..options import Option  # re-exported: a regime declares its options
from ..orders import StrongOrder, Term  # re-exported: a regime declares its order and its expansion

__all__ = ["Regime", "Option", "StrongOrder", "Term", "REGISTRY", "register_regime", "get_regime", "regime_names", "pair",
           "regimes_table", "takes", "declarations", "is_given", "check_options", "DEPTHS"]

DEPTHS = [8, 16, 32, 64, 128, 256, 512]
"""The default depths of a convergence study (a regime's ``defaults['depths']``)."""

#: names an option may not take: the other keywords of :func:`pair`, of a convergence study and of
#: its command (``deeplimits convergence``: an option's flag is ``--NAME``); ``paths``, the key that
#: holds ``draws`` in a convergence spec (its run store's key), stays reserved
RESERVED = frozenset({"name", "regime", "width", "activation", "arch", "driver", "options", "depths", "paths", "draws",
                      "inputs", "reference", "seed", "dtype", "chunk", "device", "progress", "store", "workers", "scheduler",
                      "timeout", "out", "json", "quiet", "help", "version", "command", "func"})


class Regime(abc.ABC):
    """A network, its continuous limit and the law of its weights, declared.

    Class attributes (declarations, read by :func:`pair`, the convergence plans and results, the
    command line, the reports, the plots and the documentation table):

    * ``name``: the registry key (``--regime NAME``);
    * ``network``, ``limit``, ``weights``, ``scaling``, ``rate_text``: one-line descriptions;
    * ``architectures``: the residual maps it accepts (the first is the default);
    * ``options``: the keyword options of :func:`pair` it accepts, each an :class:`Option`
      (name, type, default, range, help): :func:`pair` validates them and fills in their
      defaults, and the command line has one flag per option name;
    * ``spec_options``: the options recorded as fields of a convergence plan's spec (its run
      store key). ``None`` (the default): every declared option. The built-in regimes list the
      fields their specs held before options were declared; their other options are recorded
      under ``'options'`` when given;
    * ``defaults``: convergence defaults (``width``, ``depths``, ``draws``, ``reference``).

    The declared :class:`StrongOrder` is a short error expansion (its leading term and the next
    :class:`Term` s theory knows of, each with how it is seen against a nested reference): the
    convergence study fits it and tests it (docs/mathematics.md, "Error expansions and the verdict").

    Methods: :meth:`strong_order` (the declared :class:`StrongOrder`, given the options),
    :meth:`check` (rules between options, beyond each one's declaration) and :meth:`build`.
    """

    name: ClassVar[str]
    """The registry key (``--regime NAME``)."""
    network: ClassVar[str]
    """The network, in one line."""
    limit: ClassVar[str]
    """The limit, in one line."""
    weights: ClassVar[str]
    """The law of the weights, in one line."""
    scaling: ClassVar[str]
    """The scaling ``beta``, in one line."""
    rate_text: ClassVar[str] = ""
    """The strong order in words, for tables (e.g. ``"1/2"``, ``"2H - 1"``)."""
    architectures: ClassVar[tuple[str, ...]] = ("res-1",)
    """The residual maps it accepts (the first is the default)."""
    options: ClassVar[tuple[Option, ...]] = ()
    """The keyword options of :func:`pair` it accepts, each an :class:`Option`."""
    spec_options: ClassVar[tuple[str, ...] | None] = None
    """The options recorded as fields of a convergence spec (``None``: every declared option)."""
    defaults: ClassVar[dict] = dict(width=16, depths=DEPTHS, draws=256, reference=None)
    """Convergence defaults (``width``, ``depths``, ``draws``, ``reference``)."""
    order: ClassVar[StrongOrder | None] = None
    """A strong order that does not depend on the options (else override :meth:`strong_order`)."""

    def strong_order(self, **options) -> StrongOrder:
        """The theoretical strong order of the pair built with ``options``."""
        if self.order is None:
            raise NotImplementedError(f"regime {self.name!r} declares no strong order")
        return self.order

    def option(self, name: str) -> Option | None:
        """The declaration of the option ``name``, ``None`` if this regime does not take it."""
        return next((o for o in self.options if o.name == name), None)

    def spec_fields(self) -> tuple[str, ...]:
        """The options recorded as fields of a convergence spec (see ``spec_options``)."""
        return tuple(o.name for o in self.options) if self.spec_options is None else tuple(self.spec_options)

    def check(self, options: dict) -> dict:
        """Rules between options beyond each one's declaration (one of two must be given, say):
        ``options`` are the given ones, each validated; returns them (completed where a rule
        sets one from another). Options still missing then get their declared defaults."""
        return options

    def accepts(self, block) -> str | None:
        """Whether a registered block outside :attr:`architectures` (a
        :class:`~deeplimits.blocks.Block`) gives this regime's pair: ``None`` if it does, else why
        not, in words. By default only the declared architectures do."""
        return f"regime {self.name!r} takes only {', '.join(map(repr, self.architectures))}"

    def accepts_driver(self, driver) -> str | None:
        """Whether a registered driver of one's own (a :class:`~deeplimits.paths.Driver`) drives
        this regime's pair in place of its own weights: ``None`` if it does, else why not, in
        words naming the declaration that is missing (:mod:`deeplimits.regimes.drivers`). By
        default a regime reads only its own laws."""
        return f"regime {self.name!r} reads the weights of its own laws only (it declares no accepts_driver)"

    def driver_options(self, driver, options: dict) -> dict:
        """The given ``options`` with those a driver sets (``fbm``: its Hurst index, the driver's
        regularity); an option the driver contradicts is refused in one line. By default, as given."""
        return options

    def hint(self, option: str) -> str:
        """Extra text for the error when ``option`` does not apply to this regime."""
        return ""

    @abc.abstractmethod
    def build(self, width: int, activation, arch: str, **options):
        """The :class:`~deeplimits.pairs.Pair` of this regime (options checked, defaults filled in)."""

    def __repr__(self) -> str:
        return f"<regime {self.name!r}: {self.network} -> {self.limit}>"


REGISTRY: dict[str, Regime] = {}
"""The regimes by name, in registration order."""


def _check_options(cls: type[Regime]) -> None:
    """The options of a regime being registered: a tuple of :class:`Option` with distinct names,
    none reserved, each consistent with the options of that name of the other regimes (one
    command-line flag serves them all: same type, and for a boolean the same default)."""
    opts = cls.options
    if not isinstance(opts, tuple) or not all(isinstance(o, Option) for o in opts):
        raise ParameterError("options", f"{cls.__name__}.options must be a tuple of deeplimits.regimes.Option, got "
                                        f"{opts!r}")
    names = [o.name for o in opts]
    for o in opts:
        if names.count(o.name) > 1 or o.name in RESERVED:
            why = "twice" if names.count(o.name) > 1 else "(a name taken by pair or the convergence study)"
            raise ParameterError("options", f"{cls.__name__}.options declares {o.name!r} {why}")
        for other, r in REGISTRY.items():
            theirs = r.option(o.name)
            if other != cls.name and theirs is not None and (theirs.type, theirs.neutral) != (o.type, o.neutral):
                raise ParameterError("options", f"{cls.__name__}.options: {o.name!r} is declared by regime {other!r} "
                                                f"as {theirs.type.__name__} (default {theirs.default!r}); declare it "
                                                "the same way")


def register_regime(cls: type[Regime]) -> type[Regime]:
    """Register a :class:`Regime` subclass under its ``name`` (usable as a class decorator).
    Registering a different class under a taken name is an error; the same class again is allowed.
    Its ``options`` must be :class:`Option` declarations consistent with the other regimes'."""
    if not (isinstance(cls, type) and issubclass(cls, Regime)):
        raise ParameterError("cls", f"register_regime takes a Regime subclass, got {cls!r}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ParameterError("name", f"{cls.__name__}.name must be a non-empty string")
    old = REGISTRY.get(name)
    if old is not None and type(old).__qualname__ != cls.__qualname__:
        raise ParameterError("cls", f"regime {name!r} is already registered ({type(old).__name__})")
    _check_options(cls)
    REGISTRY[name] = cls()
    return cls


def regime_names() -> tuple[str, ...]:
    """The registered regime names, in registration order."""
    return tuple(REGISTRY)


def get_regime(name) -> Regime:
    """The registered regime ``name``; a ValueError lists the registered ones."""
    if not isinstance(name, str) or name not in REGISTRY:  # (a list is no name: not looked up, unhashable)
        raise ParameterError("regime", f"regime must be one of {', '.join(map(repr, REGISTRY))}, got {name!r:.80}")
    return REGISTRY[name]


def takes(option: str) -> list[str]:
    """The registered regimes that accept ``option``, in registration order."""
    return [n for n, r in REGISTRY.items() if r.option(option) is not None]


def declarations() -> dict[str, dict[str, Option]]:
    """Every declared option name (in order of first declaration) -> ``{regime: its Option}``."""
    out: dict[str, dict[str, Option]] = {}
    for n, r in REGISTRY.items():
        for o in r.options:
            out.setdefault(o.name, {})[n] = o
    return out


def regimes_table() -> str:
    """The registered regimes as a Markdown table (the one in docs/mathematics.md is this)."""
    rows = ["| regime | network | weights | scaling | limit | strong order `r`, error `~ L^(-r)` |",
            "|---|---|---|---|---|---|"]
    for name, r in REGISTRY.items():
        order = r.rate_text or (f"{r.order.rate:g}" if r.order else "")
        rows.append(f"| `{name}` | {r.network} | {r.weights} | {r.scaling} | {r.limit} | {order} |")
    return "\n".join(rows)


def is_given(name: str, value) -> bool:
    """Whether an option was given: not ``None`` and not the neutral value of a boolean option
    (``corrected=False``, ``ito_correction=True``), which may be passed to any regime."""
    if value is None:
        return False
    return not any(o.type is bool and value is o.neutral for o in declarations().get(name, {}).values())


def check_options(regime: Regime, options: dict, caller=None) -> None:
    """Each keyword of ``options`` (those ``caller``, default :func:`pair`, took beyond its own
    parameters) an option of ``regime``: else one line naming it, and what ``caller`` and the regime
    accept (:func:`_not_applicable`)."""
    for name in options:
        if regime.option(name) is None:
            raise _not_applicable(name, regime, caller)


def _not_applicable(option: str, regime: Regime, caller=None) -> ParameterError:
    where = takes(option)
    if not where:  # no regime declares it: a misspelt parameter, most likely
        import difflib

        from .._settings import keywords

        fn = caller or pair
        params, own = keywords(fn), sorted(o.name for o in regime.options)
        close = difflib.get_close_matches(option, params + own, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return ParameterError(option, f"{option} is not a parameter of {fn.__name__} nor an option of regime "
                                      f"{regime.name!r}{hint}: {fn.__name__} takes {', '.join(params)}; regime "
                                      f"{regime.name!r} accepts {', '.join(own) or 'no options'}")
    s = "s" if len(where) > 1 else ""
    return ParameterError(option, f"{option} applies only to regime{s} {' and '.join(map(repr, where))}, not "
                          f"{regime.name!r}{regime.hint(option)}")


def resolve(regime: Regime, options: dict) -> dict:
    """The options of ``regime`` resolved: the given ones validated through their declarations,
    the regime's rules (:meth:`Regime.check`) applied, the missing ones set to their defaults."""
    from .. import _validate as V_

    where = f" for regime {regime.name!r}"
    values = {name: V_.option(regime.option(name), v, context=where) for name, v in options.items()}
    for o in regime.options:
        if o.required and o.name not in values:
            V_.option(o, None, context=where)  # the error: it must be given
    values = regime.check(values)
    return {**{o.name: o.default for o in regime.options}, **{k: v for k, v in values.items() if v is not None}}


def _check_arch(regime: Regime, arch) -> str:
    if arch is None:
        return regime.architectures[0]
    if arch in regime.architectures:
        return arch
    from ..blocks import Block, make_block, registered_blocks  # torch, only for a block of one's own

    if isinstance(arch, Block) or (isinstance(arch, str) and arch in registered_blocks()
                                   and arch not in ARCHITECTURES):
        why = regime.accepts(make_block(arch) if isinstance(arch, str) else arch)
        if why is None:
            return arch
        raise ParameterError("arch", f"arch {getattr(arch, 'name', arch)!r} does not fit regime {regime.name!r}: {why}")
    if len(regime.architectures) == 1:
        raise ParameterError("arch", f"arch must be {regime.architectures[0]!r} for regime {regime.name!r}, got "
                                     f"{arch!r}")
    raise ParameterError("arch", f"arch must be one of {', '.join(map(repr, regime.architectures))} for regime "
                                 f"{regime.name!r}, got {arch!r}")


def pair(regime: str, *, width: int | None = None, activation=None, arch: str | None = None, driver=None,
         **options):
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
            fbm, any of res-1/2/3 for ode, ``'inside'`` for the inside regimes), or a block of
            your own (a :class:`~deeplimits.blocks.Block` or its registered name) that the regime
            accepts (:meth:`Regime.accepts`: ``sde`` a block linear in all its weights, ``ode``
            any block; docs/convergence.md, "Bring your own network").
        driver: the law of every weight in place of the regime's own (``None``): a
            :class:`~deeplimits.paths.Driver` or a registered name, whose declarations give the
            regime's limit (:meth:`Regime.accepts_driver`: ``sde`` a Brownian path, ``ode`` a
            smooth law, ``fbm`` a fractional path, which sets ``hurst``; docs/convergence.md,
            "Bring your own driver"); anything else is refused in one line naming what is missing.
        **options: the regime's options, each declared once in ``Regime.options`` (an
            :class:`Option`: its type, range, default and help; ``deeplimits convergence
            --help`` lists them): for the built-in regimes ``hurst`` and ``corrected`` (fbm),
            ``length_scale`` (the smooth weights of ode, inside-ode, and inside-sde with
            ``beta``), ``alpha``, ``beta``, ``sa``, ``sb``, ``ito_correction`` (inside regimes;
            see :class:`~deeplimits.regimes.InsideSDE` and :class:`~deeplimits.regimes.InsideODE`).
            Each is validated through its declaration, and the ones not given get their
            declared defaults. An option that does not apply to the regime is a ValueError
            naming the regimes it applies to.

    Returns:
        A :class:`~deeplimits.pairs.Pair` whose ``order`` (:class:`StrongOrder`) declares the
        strong error's rate (``theory_rate``) and its note (``rate_note``).
    """
    from .. import _validate as V_

    spec = get_regime(regime)
    if width is None:
        raise ParameterError("width", f"width must be given: the hidden width d, an integer >= 1 (the studies of "
                                      f"regime {regime!r} use {spec.defaults.get('width')})")
    width = V_.integer("width", width)
    options = {k: v for k, v in options.items() if is_given(k, v)}
    check_options(spec, options)
    arch = _check_arch(spec, arch)
    if driver is not None:
        driver = _check_driver(spec, driver)
        options = spec.driver_options(driver, options)
    resolved = resolve(spec, options)
    p = spec.build(width, activation, arch, **resolved)
    p.network.block.check(width)  # its declared shapes and a residual of the state's shape, finite
    p.options = {**resolved, **p.options}
    if driver is not None:  # every weight read off the user's law
        p.drivers = dict.fromkeys(p.drivers, driver)
    return p


def _check_driver(regime: Regime, driver):
    """``driver`` (a name or a :class:`~deeplimits.paths.Driver`), verified
    (:meth:`~deeplimits.paths.Driver.check`) and accepted by ``regime`` (a one-line error naming
    ``driver`` and what is missing otherwise)."""
    from ..paths import Driver, make_driver  # torch, only for a driver of one's own

    if isinstance(driver, str):
        driver = make_driver(driver)
    if not isinstance(driver, Driver):
        raise ParameterError("driver", f"driver must be a Driver or a registered name, got {driver!r:.80}")
    why = regime.accepts_driver(driver.check())
    if why is not None:
        raise ParameterError("driver", f"driver {driver.name!r} does not fit regime {regime.name!r}: {why}")
    return driver
