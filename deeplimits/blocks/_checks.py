"""A block's declarations checked, not trusted (docs/convergence.md, "Bring your own network").

A :class:`~deeplimits.blocks.Block` declares the shapes of its weights and the weights its residual
is linear in; the studies allocate from the first and the ``sde`` regime builds an Itô limit from
the second. Both are verified where a block is first used, each refusal one line naming the block:

* :func:`shape`: a weight's shape, a tuple of integers >= 1 holding at most
  :data:`MAX_LAYER_ENTRIES` numbers (or four ``d x d`` matrices), checked before anything is allocated;
* :func:`probe`: the residual on random inputs at a small width: a tensor of the state's shape,
  dtype and device, finite (a residual of integers, of another shape or of NaNs is refused before
  a study runs on it);
* :func:`linearity`: ``g(h, a X + b Y) = a g(h, X) + b g(h, Y)`` on random draws, ``X``, ``Y``
  values of the weights declared linear (a block declared linear in ``V`` but quadratic in it has
  no Itô limit of the form the ``sde`` regime solves).
"""

from __future__ import annotations

import math
import numbers

import torch

from ..errors import ParameterError

__all__ = ["MAX_LAYER_ENTRIES", "PROBE_WIDTH", "shape", "probe", "linearity"]

MAX_LAYER_ENTRIES = 1 << 31
"""The most numbers one layer's weight may hold, unless it is at most four ``d x d`` matrices (a
weight of a wide network is then the memory models' to refuse, naming ``width``)."""
PROBE_WIDTH = 8
"""The largest width a block's residual is probed at (:func:`probe`): the check costs microseconds."""
_TOLERANCE = 1e-9  # relative, in float64: a linear map's rounding is about 1e-15


def _who(block) -> str:
    return f"block {getattr(block, 'name', type(block).__name__)!r}"


def shape(block, name: str, width: int) -> tuple[int, ...]:
    """``block.weight_shape(name, width)`` checked (module docstring)."""
    try:
        out = block.weight_shape(name, width)
    except Exception as e:  # the user's code: its error, in one line naming the block
        raise ParameterError("arch", f"{_who(block)}: weight_shape({name!r}, {width}) failed: "
                                     f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    ok = isinstance(out, tuple) and len(out) >= 1 and all(
        isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 1 for s in out)
    if not ok:
        raise ParameterError("arch", f"{_who(block)}: weight_shape({name!r}, {width}) must be a non-empty tuple of "
                                     f"integers >= 1, got {out!r:.80}")
    out = tuple(int(s) for s in out)
    most = max(MAX_LAYER_ENTRIES, 4 * int(width) ** 2)
    if math.prod(out) > most:
        raise ParameterError("arch", f"{_who(block)}: weight {name!r} of shape {out} at width={width} holds "
                                     f"{math.prod(out):.3g} numbers per layer, more than {most}")
    return out


def _draw(block, width: int, g: torch.Generator, dtype, names=None) -> dict:
    """Random weights of every weight of ``block`` (or of ``names``), entries of variance 1/fan-in."""
    out = {}
    for name in block.weights if names is None else names:
        s = shape(block, name, width)
        out[name] = torch.randn(2, *s, generator=g, dtype=dtype) / math.sqrt(s[-1] if len(s) > 1 else 1)
    return out


def _call(block, what: str, fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except Exception as e:
        text = str(e).splitlines()[0] if str(e) else ""
        raise ParameterError("arch", f"{_who(block)}: its {what} failed on random inputs: {type(e).__name__}: "
                                     f"{text:.160}") from None


def _checked(block, what: str, out, like: torch.Tensor) -> torch.Tensor:
    if not isinstance(out, torch.Tensor):
        raise ParameterError("arch", f"{_who(block)}: its {what} must return a tensor, got {type(out).__name__}")
    if out.shape != like.shape or out.dtype != like.dtype or out.device != like.device:
        raise ParameterError("arch", f"{_who(block)}: its {what} must return a tensor of the state's shape "
                                     f"{tuple(like.shape)}, dtype {like.dtype} and device {like.device}, got "
                                     f"{tuple(out.shape)}, {out.dtype}, {out.device}")
    if not torch.isfinite(out).all():
        raise ParameterError("arch", f"{_who(block)}: its {what} is not finite on random inputs of moderate size")
    return out


def probe(block, width: int, dtype=torch.float64):
    """``block`` once every weight's shape at ``width`` is checked (:func:`shape`) and its residual
    and vector-Jacobian product, at ``min(width, PROBE_WIDTH)`` on random states ``(2, 3, d)`` of
    ``dtype`` (CPU), return finite tensors of the state's shape and dtype (module docstring)."""
    for name in block.weights:
        shape(block, name, width)
    d = min(int(width), PROBE_WIDTH)
    g = torch.Generator().manual_seed(0)
    h = torch.randn(2, 3, d, generator=g, dtype=dtype)
    w = _draw(block, d, g, dtype)
    with torch.no_grad():
        _checked(block, "residual", _call(block, "residual", block.residual, h, **w), h)
    p = torch.randn(2, 3, d, generator=g, dtype=dtype)
    _checked(block, "residual_vjp", _call(block, "residual_vjp", block.residual_vjp, h, p, **w), h)
    return block


def linearity(block, width: int = 3) -> str | None:
    """``None`` if the residual is jointly linear in the weights of ``block.linear``, ``g(h, a X + b
    Y) = a g(h, X) + b g(h, Y)`` for ``X``, ``Y`` values of all of them (relative error below 1e-9,
    float64) on random ``h``, ``X``, ``Y`` and other weights; else why not, in words."""
    names = tuple(block.linear)
    if not names:
        return None
    d = min(int(width), PROBE_WIDTH)
    g = torch.Generator().manual_seed(1)
    a, b = 0.7, -1.3
    h = 2 * torch.randn(2, 3, d, generator=g, dtype=torch.float64)
    rest = _draw(block, d, g, torch.float64)
    x, y = (_draw(block, d, g, torch.float64, names) for _ in range(2))
    z = {n: a * x[n] + b * y[n] for n in names}
    with torch.no_grad():
        gx, gy, gz = (_checked(block, "residual", _call(block, "residual", block.residual, h, **{**rest, **v}), h)
                      for v in (x, y, z))
    err = float((gz - (a * gx + b * gy)).abs().max())
    scale = float((a * gx).abs().max() + (b * gy).abs().max()) + 1e-300
    if not err <= _TOLERANCE * scale:
        return (f"it is declared linear in {', '.join(map(repr, names))}, but g(h, a X + b Y) differs from "
                f"a g(h, X) + b g(h, Y) by {err / scale:.2g} (relative) on random draws")
    return None
