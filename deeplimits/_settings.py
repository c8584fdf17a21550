"""Grouped settings: small frozen dataclasses in place of 20-parameter signatures.

A :class:`Group` is a frozen dataclass of related settings (the network, the training, the
computation, ...). A field left at :data:`DEFAULT` takes the study's default. A function
decorated with :func:`grouped` declares each group it takes as a keyword parameter whose default
is the group of the study's defaults (its fields at :data:`DEFAULT` are the settings the study
does not take); it is called with the group objects, or, as before the groups, with their
fields as flat keywords (``plan_training(depth=8)`` is ``plan_training(network=Network(depth=8))``).
Giving a field the study does not take, a field both in its group and as a keyword, or an
unknown keyword is a one-line :class:`~deeplimits.errors.ParameterError` naming it.

:class:`Training` lives here (not in :mod:`deeplimits.studies.settings`, which re-exports it)
because :func:`deeplimits.training.train` takes it too. Torch-free.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

from .errors import ParameterError

__all__ = ["DEFAULT", "REQUIRED", "Group", "grouped", "group", "Training", "defaults", "keywords"]


class _Marker:
    """A named singleton that survives copying and pickling (compared by identity)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):
        return self.name  # the module's global of that name: copies and pickles are the singleton


DEFAULT = _Marker("DEFAULT")
"""A group field left to the study's default (in a study's default group: a setting it does not take)."""
REQUIRED = _Marker("REQUIRED")
"""In a study's default group: a setting the caller must give."""


@dataclasses.dataclass(frozen=True, repr=False)
class Group:
    """The base of the settings groups: a frozen dataclass whose fields left at :data:`DEFAULT`
    take the study's default; its ``repr`` shows the fields given."""

    def given(self) -> dict:
        """The fields set (not :data:`DEFAULT`), by name."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not DEFAULT}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.given().items())})"

    def merged(self, where: str, name: str, group, flat: dict) -> "Group":
        """The study's group: this one (the study's defaults) with the fields of the caller's
        ``group`` (``None``: not given) or of the flat keywords ``flat``, checked."""
        if group is not None:
            if not isinstance(group, type(self)):
                shown = " ".join(repr(group).split())[:60]  # one line, whatever the object
                raise ParameterError(name, f"{name} must be a {type(self).__name__} or None, got {shown}")
            if flat:
                key = next(iter(flat))
                raise ParameterError(key, f"{key} is given twice, as a keyword and in {name}: give it once")
            flat = group.given()
        for key in flat:
            if getattr(self, key) is DEFAULT:
                raise ParameterError(key, f"{key} does not apply to {where} (it takes {name} fields "
                                          f"{', '.join(self.given())})")
        out = dataclasses.replace(self, **flat)
        missing = [k for k, v in out.given().items() if v is REQUIRED]
        if missing:
            raise ParameterError(missing[0], f"{missing[0]} must be given to {where}")
        return out


def _groups(sig: inspect.Signature) -> dict:
    """A signature's group parameters: name -> the default group (the study's defaults)."""
    return {n: p.default for n, p in sig.parameters.items() if isinstance(p.default, Group)}


def _flat(sig: inspect.Signature, study: Group, kwargs: dict) -> dict:
    """The fields of ``study``'s group among ``kwargs`` (taken out of it) that are not parameters of their own."""
    return {k: kwargs.pop(k) for k in [f.name for f in dataclasses.fields(study)]
            if k in kwargs and k not in sig.parameters}


def grouped(fn):
    """Decorator: ``fn``'s keyword parameters whose defaults are :class:`Group` objects take
    their group, or its fields as flat keywords (the study's default group filled in with the
    caller's fields, see the module's docstring); other unknown keywords are refused unless
    ``fn`` takes ``**kwargs`` (then they pass on)."""
    sig = inspect.signature(fn)
    groups = _groups(sig)
    rest = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())

    @functools.wraps(fn)
    def call(*args, **kwargs):
        for name, study in groups.items():
            flat = _flat(sig, study, kwargs)
            kwargs[name] = study.merged(fn.__name__, name, kwargs.get(name), flat)
        unknown = [k for k in kwargs if k not in sig.parameters]
        if unknown and not rest:
            raise ParameterError(unknown[0], f"{unknown[0]} is not a parameter of {fn.__name__} (nor a field of its "
                                             f"{', '.join(groups) or 'groups'})")
        return fn(*args, **kwargs)

    if not rest:  # the signature shows the flat keywords' way in
        params = list(sig.parameters.values()) + [inspect.Parameter("settings", inspect.Parameter.VAR_KEYWORD)]
        call.__signature__ = sig.replace(parameters=params)
    return call


def group(fn, kwargs: dict) -> dict:
    """``kwargs`` of a call of ``fn`` with the fields of its groups, given as flat keywords,
    gathered into their groups (``{'depth': 8}`` -> ``{'network': Network(depth=8)}``): the
    grouped form of the same call (the command line builds its calls so)."""
    sig, out = inspect.signature(fn), dict(kwargs)
    for name, study in _groups(sig).items():
        flat = _flat(sig, study, out)
        if flat and out.get(name) is None:
            out[name] = type(study)(**flat)
        else:
            out.update(flat)  # (given both ways: fn says so)
    return out


def defaults(fn) -> dict:
    """The defaults of a :func:`grouped` function by flat name: its plain parameters' and the
    fields of its default groups (those it takes)."""
    out = {}
    for name, p in inspect.signature(fn).parameters.items():
        if isinstance(p.default, Group):
            out.update(p.default.given())
        elif p.default is not p.empty:
            out[name] = p.default
    return out


def keywords(fn) -> list[str]:
    """The keywords ``fn`` takes by name, in order: its keyword-only parameters, a group's as the
    fields it takes (``plan_convergence``: ``depths, ..., width, activation, arch, seed, ...``),
    for a message that lists them."""
    out = []
    for name, p in inspect.signature(fn).parameters.items():
        if p.kind is not p.KEYWORD_ONLY:
            continue
        out.extend(p.default.given() if isinstance(p.default, Group) else [name])
    return out


@dataclasses.dataclass(frozen=True, repr=False)
class Training(Group):
    """How networks train (:func:`deeplimits.training.train` and the training studies); a field
    left at :data:`DEFAULT` takes the function's default."""

    epochs: int = DEFAULT
    """Passes over the training data (the scaling study's most epochs is its own ``max_epochs``)."""
    batch_size: int | None = DEFAULT
    """The mini-batch size."""
    optimizer: object = DEFAULT
    """``'adam'`` or ``'sgd'`` (:func:`~deeplimits.training.train` takes an optimiser too)."""
    lr: object = DEFAULT
    """The learning rate (of the studies that train at one rate, or a list of rates; a training
    grid's rates are its ``grid``'s ``lrs``)."""
    lr_decay_halfway: bool | None = DEFAULT
    """Whether the learning rate is divided by 10 halfway through."""
    stop_loss: float | None = DEFAULT
    """Stop once every live configuration's training loss is at most this (``None``: never)."""
