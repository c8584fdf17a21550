"""Residual maps as values (docs/convergence.md, "Bring your own network").

A :class:`Block` declares one layer's branch ``g(h, w)``: its weights (names, shapes, the
optional ones, those it is linear in), the residual and its vector-Jacobian product, and what a
layer costs. The built-in ones are ``res-1``, ``res-2``, ``res-3`` and ``inside``
(:data:`deeplimits.networks.ARCHITECTURES`); ``@register_block`` enters one of your own, which
:class:`deeplimits.ResNet`, :func:`deeplimits.pair` (regimes ``sde`` and ``ode``) and the trained
networks then take by name.
"""

from .base import (MAX_LAYER_ENTRIES, Block, block_class, make_block, recorded_block, register_block,
                   registered_blocks, unregister_block)
from .residual import FUSED_ACTIVATIONS, Inside, Res1, Res2, Res3, fused_kind

__all__ = ["Block", "register_block", "unregister_block", "registered_blocks", "block_class", "make_block",
           "recorded_block", "MAX_LAYER_ENTRIES",
           "Res1", "Res2", "Res3", "Inside", "FUSED_ACTIVATIONS", "fused_kind"]
