"""Argument checks shared by every public entry point.

Every check raises :class:`~deeplimits.errors.ParameterError` (a ``ValueError``) carrying the
parameter's name in ``param``, whose message names the parameter and the allowed range, so the
same mistake gives the same message whichever function it reaches first.
All checks run before any computation.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from typing import Callable, Iterable, Sequence

import torch

# the output paths, probed before any work (what a probe creates, it removes): re-exported
from ._devices import device, device_spec  # noqa: F401 - checks of every entry point, here by name
from ._files import _path, missing_dirs, remove_empty_dirs, writable_dir, writable_file  # noqa: F401
from .errors import ParameterError, ResourceError, param_name  # noqa: F401 - re-exported: the plans raise it
from .options import HURST, LENGTH_SCALE, YOUNG_HURST

FLOAT_DTYPES = (torch.float32, torch.float64)


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def real(name: str, value, *, low=None, high=None, low_open=False, high_open=False, context: str = "") -> float:
    """A finite real number in the interval given by ``low``/``high`` (closed unless ``*_open``);
    ``context`` (e.g. ``" for regime 'inside-ode'"``) follows the range in the message."""
    lo_br = "(" if low_open else "["
    hi_br = ")" if high_open else "]"
    rng = f"{lo_br}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi_br}{context}"
    if not _is_real(value) or not math.isfinite(_float(value)):
        raise ParameterError(param_name(name), f"{name} must be a finite real number in {rng}, got {_short(value)}")
    v = float(value)
    if low is not None and (v < low or (low_open and v == low)):
        raise ParameterError(param_name(name), f"{name} must lie in {rng}, got {v!r}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ParameterError(param_name(name), f"{name} must lie in {rng}, got {v!r}")
    return v


#: the largest integer any parameter takes (sizes, counts and seeds are 64-bit integers in torch,
#: NumPy and the run store): a larger one is refused naming its parameter before any estimate
MAX_INT = 2 ** 63 - 1


def _float(value) -> float:
    """``float(value)``, infinite for an integer too large for a float (``10**400``)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _short(value) -> str:
    """``repr(value)``, an integer of many digits shortened (``10**400``: its digit count)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) > 10 ** 30:
        return f"an integer of {len(str(abs(int(value))))} digits"
    return " ".join(f"{value!r:.200}".split())


def integer(name: str, value, *, low: int = 1, high: int | None = None) -> int:
    """An integer ``>= low`` (and ``<= high`` when given), at most :data:`MAX_INT` (2^63 - 1)."""
    rng = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(param_name(name), f"{name} must be {rng}, got {_short(value)}")
    v = int(value)
    if v < low or (high is not None and v > high):
        raise ParameterError(param_name(name), f"{name} must be {rng}, got {_short(v)}")
    if v > MAX_INT:  # a request no 64-bit count can hold: refused as a size (ResourceError), naming it
        raise ResourceError(f"{name} must be an integer in [{low}, 2^63 - 1], got {_short(v)}", needed=v,
                            available=MAX_INT, knobs=(param_name(name),))
    return v


def option(spec, value, *, name: str | None = None, context: str = "", missing_ok: bool = True):
    """The value of a declared option (:class:`deeplimits.options.Option`), checked against its
    type and range: the one check of every declared option (:func:`deeplimits.pair`, the drivers,
    the limits). ``None`` (with ``missing_ok``) is the option's default, or an error for a
    required one; ``name`` (default the option's) and ``context`` (e.g. ``" for regime 'fbm'"``)
    go into the message, followed by the declaration's ``note``; a value at or below the lower
    bound is told the declaration's ``below``, one at or above the upper bound its ``above``."""
    name = spec.name if name is None else name
    ctx = context + (f" ({spec.note})" if spec.note else "")
    if value is None and missing_ok:
        if spec.required:
            what = " ".join(t for t in (spec.help, spec.range_text()) if t)
            raise ParameterError(param_name(name), f"{name} must be given{context}" + (f" ({what})" if what else ""))
        return spec.default
    if spec.type is bool:
        return flag(name, value)
    if spec.type is str:
        if not isinstance(value, str):
            raise ParameterError(param_name(name), f"{name} must be a string{ctx}, got {_short(value)}")
        return value
    if spec.type is int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise ParameterError(param_name(name), f"{name} must be an integer{ctx}, got {_short(value)}")
    if spec.below and _is_real(value) and spec.low is not None and _float(value) <= spec.low:
        raise ParameterError(param_name(name), f"{name} must lie {spec.range_text()}{ctx}, got {_float(value)!r}: "
                                               f"{spec.below}")
    if spec.above and _is_real(value) and spec.high is not None and _float(value) >= spec.high:
        raise ParameterError(param_name(name), f"{name} must lie {spec.range_text()}{ctx}, got {_float(value)!r}: "
                                               f"{spec.above}")
    v = real(name, value, low=spec.low, high=spec.high, low_open=spec.low_open, high_open=spec.high_open, context=ctx)
    return int(value) if spec.type is int else v


def hurst(value, *, name: str = "hurst", above_half: bool = False, spec=None) -> float:
    """A Hurst index in (0, 1) (:data:`deeplimits.options.HURST`), or in (1/2, 1) for a Young
    equation when ``above_half`` (:data:`deeplimits.options.YOUNG_HURST`), or in the range of the
    declaration ``spec`` (:data:`~deeplimits.options.ROUGH_HURST`, ...): the one Hurst check."""
    return option(spec or (YOUNG_HURST if above_half else HURST), value, name=name, missing_ok=False)


def length_scale(value, *, name: str = "length_scale") -> float:
    """An RBF length scale (:data:`deeplimits.options.LENGTH_SCALE`)."""
    return option(LENGTH_SCALE, value, name=name, missing_ok=False)


def inside_activation(act, *, regime: str, tol: float = 1e-8) -> tuple[float, ...]:
    """The inside regimes need a C^3 activation with ``sigma(0) = 0`` and ``sigma'(0) = 1``
    (Cohen, Cont, Rossier & Xu 2021). ``act`` is an :class:`~deeplimits.activations.Activation`.

    Both values are checked by automatic differentiation to ``tol``, and smoothness at 0 by
    comparing the one-sided derivatives ``sigma^(m)(+-h)``, ``m = 0..3``, at ``h = 1e-2`` and
    ``1e-3``: for a C^3 function (derivatives up to 4 being enough in practice) their gap shrinks
    with ``h``, across a kink it does not. Returns ``(sigma''(0), sigma'''(0), sigma''''(0),
    sigma'''''(0))``.
    """
    where = f"for regime {regime!r}"
    steps = (1e-2, 1e-3)
    pts = [x for h in steps for x in (-h, h)] + [0.0]
    d = act.derivatives_at(pts, order=5).tolist()  # rows: derivative order; columns: points
    if not all(math.isfinite(v) for row in d[:4] for v in row):
        raise ParameterError("activation", f"activation must be C^3 at 0 {where}; {act.name!r} has non-finite "
                                           "derivatives there")
    for m in range(4):
        gap = [abs(d[m][2 * i + 1] - d[m][2 * i]) for i in range(len(steps))]
        if gap[1] > 1e-6 and gap[1] > 0.5 * gap[0]:
            name = "sigma" + "'" * m
            raise ParameterError("activation", f"activation must be C^3 at 0 {where}; {act.name!r} is not: {name} "
                                               f"jumps from {d[m][2]:.6g} to {d[m][3]:.6g} across 0")
    s0, s1 = d[0][-1], d[1][-1]
    if abs(s0) > tol or abs(s1 - 1) > tol:
        raise ParameterError("activation", f"activation must satisfy sigma(0) = 0 and sigma'(0) = 1 {where}, got "
                                           f"sigma(0) = {s0:.6g} and sigma'(0) = {s1:.6g} for {act.name!r}")
    return tuple(0.0 if not math.isfinite(row[-1]) else row[-1] for row in d[2:])


def power_of_two(name: str, value) -> int:
    v = integer(name, value, low=1)
    if v & (v - 1):
        raise ParameterError(param_name(name), f"{name} must be a power of two (1, 2, 4, ...), got {v}")
    return v


def flag(name: str, value) -> bool:
    """``True`` or ``False`` (not ``1``, ``'yes'`` or ``None``)."""
    if not isinstance(value, bool):
        raise ParameterError(param_name(name), f"{name} must be True or False, got {_short(value)}")
    return value


def callback(name: str, value) -> Callable | None:
    """``None`` or a function (``progress``: called with the units of work done)."""
    if value is not None and not callable(value):
        raise ParameterError(param_name(name), f"{name} must be a function or None, got {_short(value)}")
    return value


def callbacks(name: str, value) -> list[Callable]:
    """``None`` (none), a function, or a list of functions: the list of functions."""
    if value is None:
        return []
    items = [value] if callable(value) else sequence(name, value, what="a function or a list of functions")
    for v in items:
        if not callable(v):
            raise ParameterError(param_name(name), f"{name} must be a function or a list of functions, got {v!r}")
    return items


def per_config(name: str, value, configs: int) -> torch.Tensor:
    """``(configs,)`` float64 values, each finite and > 0, from a number or one real per config
    (a list or a tensor): learning rates."""
    bad = ParameterError(param_name(name), f"{name} must be a number or one real number per config ({configs}), got "
                                           f"{value!r:.80}")
    if _is_real(value):
        value = [_float(value)] * configs  # (10**400: inf, refused below)
    elif isinstance(value, torch.Tensor):
        has_data(name, value)
        if value.dtype == torch.bool or value.is_complex():
            raise bad
    elif isinstance(value, (str, bytes, bool)) or not hasattr(value, "__len__"):
        raise bad
    try:
        t = torch.as_tensor(value, dtype=torch.float64).detach().clone().reshape(-1).cpu()
    except (TypeError, ValueError, RuntimeError):
        raise bad from None
    if t.numel() != configs:
        raise ParameterError(param_name(name), f"{name} must be a number or have one value per config ({configs}), got "
                                               f"{t.numel()}")
    if not bool(torch.isfinite(t).all()) or bool((t <= 0).any()):
        raise ParameterError(param_name(name), f"{name} must be finite and > 0, got {t.tolist()}")
    return t


def sequence(name: str, value, check: Callable | None = None, *, what: str = "a list") -> list:
    """The items of a list (a tuple, a range, an array...: anything iterable but a string, a
    mapping or a single number), each passed through ``check`` when given. May be empty: the
    caller says what an empty one means. ``what`` names the expected value in the message."""
    if isinstance(value, (str, bytes, Mapping)) or isinstance(value, (numbers.Number, bool)):
        raise ParameterError(param_name(name), f"{name} must be {what}, got {_short(value)}")
    try:
        items = list(value)
    except TypeError:  # not iterable (a 0-d tensor or array among them)
        raise ParameterError(param_name(name), f"{name} must be {what}, got {_short(value)}") from None
    return items if check is None else [check(v) for v in items]


def depths(name: str, values: Iterable[int], *, dyadic: bool = True) -> list[int]:
    """A non-empty, strictly increasing list of depths (powers of two when ``dyadic``)."""
    vals = sequence(name, values, what="a non-empty list of depths >= 1")
    if not vals:
        raise ParameterError(param_name(name), f"{name} must be a non-empty list of depths >= 1")
    out = [power_of_two(name, v) if dyadic else integer(name, v) for v in vals]
    if any(b <= a for a, b in zip(out, out[1:])):
        raise ParameterError(param_name(name), f"{name} must be strictly increasing, got {out}")
    return out


def divides(name: str, depth: int, resolution: int) -> int:
    depth = integer(name, depth)
    if resolution % depth:
        raise ParameterError(
            param_name(name), f"{name} must divide the sample's resolution {resolution} (depths coupled to one "
            f"sample are its divisors), got {depth}"
        )
    return depth


def choice(name: str, value, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ParameterError(param_name(name), f"{name} must be one of {', '.join(map(repr, allowed))}; got {_short(value)}")
    return value


def dtype(value, *, name: str = "dtype") -> torch.dtype:
    if value not in FLOAT_DTYPES:
        raise ParameterError(param_name(name), f"{name} must be torch.float32 or torch.float64, got {_short(value)}")
    return value


def size(value, *, name: str = "size") -> tuple[int, ...]:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value,)
    try:
        out = tuple(value)
    except TypeError:
        raise ParameterError(param_name(name), f"{name} must be a tuple of integers >= 1, got {_short(value)}") from None
    for s in out:
        integer(name, s)
    return out


def has_data(name: str, value: torch.Tensor) -> torch.Tensor:
    """A tensor that holds numbers: not on the ``meta`` device (shapes without data)."""
    if value.device.type == "meta":
        raise ParameterError(param_name(name), f"{name} is on the 'meta' device, which holds no data; give a tensor on "
                                               "'cpu', 'cuda' or 'mps'")
    return value


def same_device(name: str, value: torch.Tensor, where: torch.device, whose: str = "the network's") -> torch.Tensor:
    if value.device != where:
        raise ParameterError(param_name(name), f"{name} must be on {whose} device ({where}), got {value.device}")
    return value


def tensor(name: str, value, *, shape: Sequence[int | None] | None = None,
           dtype_: torch.dtype | None = None, finite: bool = True) -> torch.Tensor:
    """A floating tensor of the given shape (``None`` entries are free) and dtype, all finite
    (``finite=False``: not checked, no pass over the data), holding data (not on ``meta``)."""
    if not isinstance(value, torch.Tensor):
        raise ParameterError(param_name(name), f"{name} must be a torch.Tensor, got {type(value).__name__}")
    has_data(name, value)
    if value.dtype not in FLOAT_DTYPES:
        raise ParameterError(param_name(name), f"{name} must have dtype torch.float32 or torch.float64, got "
                                               f"{value.dtype}")
    if dtype_ is not None and value.dtype != dtype_:
        raise ParameterError(param_name(name), f"{name} must have dtype {dtype_} to match the weights, got "
                                               f"{value.dtype}")
    if shape is not None:
        ok = value.dim() == len(shape) and all(s is None or s == v for s, v in zip(shape, value.shape))
        if not ok:
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ParameterError(param_name(name), f"{name} must have shape {want}, got {tuple(value.shape)}")
    if finite and not bool(torch.isfinite(value).all()):
        raise ParameterError(param_name(name), f"{name} must contain only finite values (no NaN or inf)")
    return value


def inputs(name: str, value, features: int, like: torch.Tensor) -> torch.Tensor:
    """Inputs ``(n, features)`` of a network: ``n >= 1``, finite, with the dtype and on the device
    of ``like`` (its parameters)."""
    same_device(name, tensor(name, value, shape=(None, features), dtype_=like.dtype), like.device)
    if value.shape[0] == 0:
        raise ParameterError(param_name(name), f"{name} must hold at least one sample, got shape {tuple(value.shape)}")
    return value


def labels(name: str, value, classes: int, n: int | None = None) -> torch.Tensor:
    """Class labels: an ``int64`` tensor ``(n,)`` with values in ``[0, classes)``."""
    if not isinstance(value, torch.Tensor):
        raise ParameterError(param_name(name), f"{name} must be a torch.Tensor of class labels, got "
                                               f"{type(value).__name__}")
    has_data(name, value)
    if value.dtype != torch.int64:
        raise ParameterError(param_name(name), f"{name} must hold class labels of dtype torch.int64, got {value.dtype}")
    if value.dim() != 1 or (n is not None and value.shape[0] != n):
        raise ParameterError(param_name(name), f"{name} must have shape ({'n' if n is None else n},), got "
                                               f"{tuple(value.shape)}")
    if value.numel() and not (0 <= int(value.min()) and int(value.max()) < classes):
        raise ParameterError(param_name(name), f"{name} must hold class labels in [0, {classes}), got values in "
                         f"[{int(value.min())}, {int(value.max())}]")
    return value


def states(name: str, value) -> torch.Tensor:
    """Hidden states ``(draws, width)`` or ``(draws, inputs, width)``, returned as the latter;
    every axis non-empty."""
    value = tensor(name, value)
    given = tuple(value.shape)
    if value.dim() == 2:
        value = value.unsqueeze(-2)
    if value.dim() != 3:
        raise ParameterError(param_name(name), f"{name} must have shape (draws, width) or (draws, inputs, width), got "
                                               f"{given}")
    if 0 in given:
        raise ParameterError(param_name(name), f"{name} must have at least one draw, input and coordinate, got shape "
                                               f"{given}")
    return value


def generator(value) -> torch.Generator | None:
    if value is not None and not isinstance(value, torch.Generator):
        raise ParameterError("generator", f"generator must be a torch.Generator or None, got {type(value).__name__}")
    return value
