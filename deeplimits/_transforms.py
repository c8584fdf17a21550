"""``torch.func`` transforms (``vmap``, ``grad``): whether one is active, and the one-line refusal of
what cannot run under ``vmap`` (docs/faq.md, "Can I use torch.func.vmap?")."""

from __future__ import annotations

import torch

from ._validate import param_name
from .errors import ParameterError

__all__ = ["under_vmap", "under_transform", "not_under_vmap"]


def under_vmap() -> bool:
    """Whether a ``torch.func.vmap`` transform is active (its interpreter is on functorch's stack,
    under any other transform such as ``torch.func.grad``)."""
    try:
        from torch._C._functorch import TransformType, get_interpreter_stack
    except ImportError:  # a torch without functorch has no vmap
        return False
    return any(i.key() == TransformType.Vmap for i in (get_interpreter_stack() or ()))


def under_transform() -> bool:
    """Whether any ``torch.func`` transform (``vmap``, ``grad``, ``jacrev``, ...) is active."""
    active = getattr(torch._C, "_are_functorch_transforms_active", None)
    return bool(active()) if active is not None else False


def not_under_vmap(name: str, what: str, instead: str) -> None:
    """Refuse (one line, naming ``name``) to run ``what`` under ``torch.func.vmap``: its checks
    read values (data-dependent control flow, which vmap cannot batch); ``instead`` says how it
    batches already."""
    if under_vmap():
        raise ParameterError(param_name(name), f"{what} does not run under torch.func.vmap (its checks read the "
                                               f"values); it batches already: {instead}")
