"""The param groups of the batched optimisers (docs/training.md, "Batched optimisers").

A group is a PyTorch param group (``params`` and the optimiser's options) with two more keys:

* ``axis``: the configuration axis of its tensors: an integer, or ``None`` to read each
  tensor's own ``config_axis`` attribute (every
  :class:`~deeplimits.training.ResidualNetwork` parameter carries one);
* ``lr_scale``: ``(C,)`` float64 factors on the parameters' device, and ``lr_ref``: a float.
  The learning rate of configuration ``c`` is ``lr * lr_scale[c]``: ``lr`` is the one number
  a ``torch.optim.lr_scheduler`` reads and writes. A group built from one number ``x`` has
  ``lr = lr_ref = x`` and factors 1; from ``C`` values ``r`` it has ``lr = lr_ref = 1`` and
  factors ``r``, which a scheduler then scales together.

The rates are computed as ``(lr_scale * lr_ref) / (lr_ref / lr)``: ``lr * lr_scale`` up to
rounding, and bitwise the rates ``r`` (no schedule yet) and ``r / 10`` (after a decay by
``gamma = 0.1`` from ``lr = 1``: ``1 / 0.1`` is exactly 10) that the optimisers applied before
they took schedulers, so :func:`~deeplimits.training.train`'s default decay gives the same
numbers as before.
"""

from __future__ import annotations

import torch

from .. import _validate as V_
from ..errors import ParameterError

__all__ = ["normalise", "split_lr", "rates", "resolve_axes"]

_PARAMS = ("params must be a non-empty dict {parameter: config axis}, an iterable of parameters or of param "
           "groups (dicts), or a module with config_axes()")


def normalise(params) -> list[dict]:
    """PyTorch param groups from the forms the batched optimisers take: a module with
    ``config_axes()`` or a dict ``{parameter: axis}`` (one group per axis), an iterable of
    tensors (one group) or of ``(name, tensor)`` pairs, or an iterable of group dicts."""
    if hasattr(params, "config_axes"):
        params = params.config_axes()
    if isinstance(params, dict):
        if not params:
            raise ParameterError("params", f"{_PARAMS}, got {{}}")
        groups: dict = {}
        for p, a in params.items():
            if not isinstance(p, torch.Tensor):
                raise ParameterError("params", f"params keys must be tensors that require grad, got {type(p).__name__}")
            try:
                V_.integer("config axis", a, low=0, high=max(p.dim() - 1, 0))
            except ParameterError as e:  # the axis of an entry of params
                raise ParameterError("params", str(e)) from None
            groups.setdefault(a, []).append(p)
        return [{"params": ps, "axis": a} for a, ps in groups.items()]
    if params is None or isinstance(params, (torch.Tensor, str, bytes)) or not hasattr(params, "__iter__"):
        raise ParameterError("params", f"{_PARAMS}, got {type(params).__name__}")
    items = list(params)
    if not items:
        raise ParameterError("params", f"{_PARAMS}, got an empty {type(params).__name__}")
    if all(isinstance(g, dict) for g in items):
        return [dict(g) for g in items]
    if any(isinstance(g, dict) for g in items):
        raise ParameterError("params", f"{_PARAMS}: not a mix of parameters and groups")
    return [{"params": items}]


def tensors(params) -> tuple[list, list[torch.Tensor]]:
    """The items of a group's ``params`` (a tensor, an iterable of tensors or of ``(name,
    tensor)`` pairs) as a list, and their tensors, checked."""
    if isinstance(params, torch.Tensor):
        params = [params]
    if isinstance(params, (set, str, bytes, dict)) or not hasattr(params, "__iter__"):
        raise ParameterError("params", "params of a param group must be a list of tensors, got "
                                       f"{type(params).__name__}")
    items = list(params)
    out = [p[1] if isinstance(p, tuple) and len(p) == 2 else p for p in items]
    for p in out:
        if not isinstance(p, torch.Tensor) or not p.requires_grad:
            raise ParameterError("params", f"params must be tensors that require grad, got {type(p).__name__}")
    if not out:
        raise ParameterError("params", "params of a param group must not be empty")
    if len({id(p) for p in out}) != len(out):
        raise ParameterError("params", "params must not list a tensor twice")
    return items, out


def resolve_axes(ps: list[torch.Tensor], axis) -> list[int]:
    """The configuration axis of each tensor: ``axis`` (an integer) or, for ``None``, the
    tensor's ``config_axis`` attribute."""
    if axis is None:
        missing = [tuple(p.shape) for p in ps if not isinstance(getattr(p, "config_axis", None), int)]
        if missing:
            raise ParameterError("axis", "axis must be given (axis=... or a group's 'axis'): a tensor of shape "
                                         f"{missing[0]} has no config_axis (only ResidualNetwork parameters carry one)")
        return [V_.integer("axis", p.config_axis, low=0, high=max(p.dim() - 1, 0)) for p in ps]
    return [V_.integer("axis", axis, low=0, high=max(p.dim() - 1, 0)) for p in ps]


def configs_of(ps, axes) -> int:
    """The number of configurations the tensors share along their axes."""
    sizes = {p.shape[a] for p, a in zip(ps, axes)}
    if len(sizes) != 1:
        raise ParameterError("params", "params must all have the same number of configs along their axis, got "
                                       f"{sorted(sizes)}")
    return sizes.pop()


def split_lr(lr, configs: int, name: str = "lr") -> tuple[float, torch.Tensor, float]:
    """``(lr, lr_scale, lr_ref)`` of a group from a number or ``C`` values (see the module)."""
    t = V_.per_config(name, lr, configs)
    if V_._is_real(lr):
        return float(lr), torch.ones(configs, dtype=torch.float64), float(lr)
    return 1.0, t, 1.0


def scalar_lr(group: dict) -> float:
    """The group's ``lr``, checked (a scheduler or a user writes it): a finite real >= 0."""
    lr = group["lr"]
    if isinstance(lr, torch.Tensor) and lr.numel() == 1:
        lr = float(lr)
    return V_.real("lr", lr, low=0.0)


def rates(group: dict) -> torch.Tensor:
    """The learning rates ``(C,)`` float64 of a group: ``lr * lr_scale`` (rounded as in the module
    docstring; 0 where a schedule reached ``lr = 0``)."""
    ref, lr = group["lr_ref"], scalar_lr(group)
    if lr == 0:
        return group["lr_scale"] * 0.0
    return (group["lr_scale"] * ref) / (ref / lr)
