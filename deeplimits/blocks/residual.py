"""The built-in residual maps (docs/mathematics.md, "The implemented regimes"), with their
Jacobians in closed form:

=========  =============================  ==============
``res-1``  ``V sigma(h)``                 V
``res-2``  ``V sigma(W h)``               V, W
``res-3``  ``V ReLU(W h)``                V, W
``inside`` ``sigma(W h + b)`` (no V)      W, b (optional)
=========  =============================  ==============

States are ``(..., inputs, width)`` and weights ``(..., width, width)`` (``b``: ``(..., width)``)
with the same leading (draws) axes; a layer is one batched product (``torch.bmm`` /
``torch.baddbmm`` for 3-D operands).
"""

from __future__ import annotations

import torch

from .._names import RES3_ACTIVATION
from .base import Block, register_block

__all__ = ["Res1", "Res2", "Res3", "Inside", "FUSED_ACTIVATIONS", "fused_kind", "weight_shape"]

FUSED_ACTIVATIONS = ("tanh", "relu", "identity")
"""The activations the hand-written training passes run (their derivative is a function of their output)."""


def fused_kind(act) -> str | None:
    """The name of a ``tanh``/``relu``/``identity`` activation made by name (its closed-form
    derivative is the one the hand-written passes use), else ``None``."""
    if act is None:
        return None
    if act.fn is torch.tanh:
        return "tanh"
    if act.fn is torch.relu:
        return "relu"
    if act.name == "identity" and act._derivative is torch.ones_like:
        return "identity"
    return None


def weight_shape(name: str, width: int) -> tuple[int, ...]:
    """The shape of one layer's weight ``name`` at ``width`` in the built-in blocks: ``(d, d)`` for
    the matrices ``V``, ``W`` and ``(d,)`` for the bias ``b`` (a ``_drift`` or ``_noise`` suffix, the
    smooth or the Brownian part of a weight, has the weight's shape)."""
    return (width,) if name.removesuffix("_drift").removesuffix("_noise") == "b" else (width, width)


class _Map(Block):
    """``V sigma(pre)`` with ``pre = h`` (res-1) or ``W h`` (res-2/3), and its closed-form VJP."""

    linear = ("V",)  # the outer matrix V
    moment_bounds = True  # V g(W h): Marion et al.'s Lemma 15 and Proposition 8
    inner_weight = True

    def weight_shape(self, name, width):
        return weight_shape(name, width)

    def preactivation(self, h, *, V=None, W=None, b=None):
        """The activation's argument: ``h`` (res-1), ``W h`` (res-2, res-3), ``W h + b`` (inside).
        A pass that keeps it for the backward recursion multiplies by ``W`` once a layer, not twice."""
        if W is None:
            return h
        u = _times(h, W.transpose(-1, -2))
        return u if b is None else u + b.unsqueeze(-2)

    def _branch(self, h, V, W, b, pre):
        """``(s, M)`` with the residual ``s M`` (``M = V^T``)."""
        return self.activation(self.preactivation(h, W=W, b=b) if pre is None else pre), V.transpose(-1, -2)

    def _branch_vjp(self, h, p, V, W, b, pre):
        """``(q, M)`` with ``J^T p = q M``."""
        ds = self.activation.derivative(self.preactivation(h, W=W, b=b) if pre is None else pre)
        return ds * _times(p, V), W

    def residual(self, h, *, pre=None, V=None, W=None, b=None):
        s, M = self._branch(h, V, W, b, pre)
        return _times(s, M)

    def residual_vjp(self, h, p, *, pre=None, V=None, W=None, b=None):
        q, M = self._branch_vjp(h, p, V, W, b, pre)
        return q if M is None else _times(q, M)

    def step(self, h, alpha, *, pre=None, V=None, W=None, b=None):
        s, M = self._branch(h, V, W, b, pre)
        return _plus_times(h, alpha * s, M)

    def step_vjp(self, h, p, alpha, *, pre=None, V=None, W=None, b=None):
        q, M = self._branch_vjp(h, p, V, W, b, pre)
        return _plus_times(p, alpha * q, M)


@register_block
class Res1(_Map):
    """``res-1``: ``V sigma(h)`` (Marion et al. 2025; the SDE, ODE and fBm regimes)."""

    name = "res-1"
    weights = ("V",)
    inner_weight = False  # sigma(h): no inner weight
    rough_correction = True  # V sigma(h): the first-order correction of rough weights applies

    def fused(self):
        return fused_kind(self.activation) is not None

    @classmethod
    def kept_numbers(cls, width, batch, fused):
        return batch * width * (1 if fused else 8)  # the fused stack keeps sigma(h_k) only

    def kept_states(self):
        return 1  # its preactivation is h itself


@register_block
class Res2(_Map):
    """``res-2``: ``V sigma(W h)``."""

    name = "res-2"
    weights = ("V", "W")


@register_block
class Res3(_Map):
    """``res-3``: ``V ReLU(W h)`` (ReLU by definition)."""

    name = "res-3"
    weights = ("V", "W")
    activation_kind = RES3_ACTIVATION
    high_probability = True  # Marion et al.'s Propositions 3 and 4


@register_block
class Inside(_Map):
    """``inside``: ``sigma(W h + b)``, no outer matrix (the inside regimes; the bias is optional)."""

    name = "inside"
    weights = ("W", "b")
    optional = ("b",)
    linear = ()
    moment_bounds = inner_weight = False
    trained_scale = True  # h + delta sigma(W h + b), delta trained
    buffers = 4
    """The ``(batch, width)`` tensors its hand-written training pass keeps per layer (:mod:`deeplimits.training._inside`)."""

    @classmethod
    def kept_numbers(cls, width, batch, fused):
        if not fused:
            return super().kept_numbers(width, batch, fused)
        # the buffers, a row of ones, and the (2d, 2d + 1) product matrix of the layer
        return batch * (cls.buffers * width + 1) + 2 * width * (2 * width + 1)

    def _branch(self, h, V, W, b, pre):
        return self.activation(self.preactivation(h, W=W, b=b) if pre is None else pre), None

    def _branch_vjp(self, h, p, V, W, b, pre):
        return self.activation.derivative(self.preactivation(h, W=W, b=b) if pre is None else pre) * p, W

    def residual(self, h, *, pre=None, V=None, W=None, b=None):
        return self._branch(h, V, W, b, pre)[0]

    def fused(self):
        return fused_kind(self.activation) is not None


def _batched(x: torch.Tensor, M: torch.Tensor) -> bool:
    """Whether ``x @ M`` is a plain batched product (3-D, the same batch): then ``torch.bmm``
    does it without ``matmul``'s broadcasting bookkeeping (microseconds a call, which the
    per-layer loops of the propagation studies pay thousands of times)."""
    return x.dim() == 3 and M.dim() == 3 and x.shape[0] == M.shape[0]


def _times(x: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """``x @ M``."""
    return torch.bmm(x, M) if _batched(x, M) else x @ M


def _plus_times(h: torch.Tensor, s: torch.Tensor, M) -> torch.Tensor:
    """``h + s @ M`` (``h + s`` when ``M`` is None), one fused ``baddbmm`` for batched operands of
    ``h``'s shape."""
    if M is None:
        return h + s
    if _batched(s, M) and s.shape == h.shape:
        return torch.baddbmm(h, s, M)
    return h + _times(s, M)
