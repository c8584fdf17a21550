"""The residual map of one layer as a value: the :class:`Block` protocol and its registry.

A block is the ``g`` of ``h_{k+1} = h_k + L^-beta g(h_k, w_{k+1})``: it declares its weights
(names, shapes, which are optional, which the residual is linear in), computes the residual and
its vector-Jacobian product, and says what a layer costs (parameters, the activations a training
step keeps, whether a hand-written pass runs it). The networks (:class:`deeplimits.ResNet`), the
limits (:mod:`deeplimits.limits`), the regimes and the trained networks read a block through this
interface only. res-1/2/3 and inside are its built-in instances (:mod:`.residual`); a block of
your own is one class with ``@register_block`` (docs/convergence.md, "Bring your own network").
"""

from __future__ import annotations

import abc
import math
from typing import ClassVar

import torch

from .. import _validate as V_
from .._names import DEFAULT_ACTIVATION
from ..activations import Activation, activation as _activation
from ..errors import ParameterError
from . import _checks
from ._checks import MAX_LAYER_ENTRIES

__all__ = ["Block", "register_block", "unregister_block", "registered_blocks", "block_class", "make_block",
           "recorded_block",
           "MAX_LAYER_ENTRIES"]

_BLOCKS: dict[str, type] = {}


class Block(abc.ABC):
    """A residual map ``g(h, w)``: one layer's branch, declared.

    Class attributes: ``name`` (the registry key, ``arch=NAME``), ``weights`` (the per-layer
    weight names, in drawing order), ``optional`` (those a layer may do without), ``linear`` (those
    the residual is linear in: a Brownian increment may drive them, so the network is an
    Euler–Maruyama scheme of an Itô SDE), ``activation_kind`` (``'default'``: any activation,
    ``tanh`` when none is given; a name: that one only). A block need not use its activation.

    Args:
        activation: name, ``'module:function'`` or callable (as for :func:`deeplimits.activation`).
    """

    name: ClassVar[str]
    """The registry key (``ResNet(NAME)``, ``pair(..., arch=NAME)``)."""
    weights: ClassVar[tuple[str, ...]]
    """The per-layer weight names, in the order their samples are drawn."""
    optional: ClassVar[tuple[str, ...]] = ()
    """The weights a layer may do without (``None`` given)."""
    linear: ClassVar[tuple[str, ...]] = ()
    """The weights the residual is linear in (a Brownian increment may drive them)."""
    activation_kind: ClassVar[str] = "default"
    """``'default'`` (any activation, tanh by default) or the one activation's name it takes."""
    trained_scale: ClassVar[bool] = False
    """Does a trained network scale the branch by a trained ``delta`` (``1/L`` at the start; shared
    or per layer) instead of ``L^-beta`` (``inside``: ``h + delta sigma(W h + b)``)?"""
    moment_bounds: ClassVar[bool] = False
    """Do Marion et al.'s bounds on ``E r_h^2``, ``E r_p^2`` (Lemma 15, Proposition 8) hold for
    this map with i.i.d. weights and an activation with ``x^2/2 <= sigma(x)^2 <= x^2`` (res-1/2/3)?"""
    inner_weight: ClassVar[bool] = False
    """Is the activation's argument ``W h`` with an i.i.d. symmetric ``W`` (res-2, res-3)? Then ReLU
    meets those bounds too (``E ReLU(W h)_i^2 = E (W h)_i^2 / 2``)."""
    high_probability: ClassVar[bool] = False
    """Are Marion et al.'s high-probability bounds (Propositions 3 and 4) stated for this map
    (res-3, ``V ReLU(W h)``)?"""
    rough_correction: ClassVar[bool] = False
    """Whether the residual is ``V sigma(h)`` (res-1), so that the network ``h + alpha V sigma(h)`` has
    the first-order correction of rough weights, ``(alpha^2 scale^2 / 2) sigma'(h) sigma(h)`` per layer
    (Liu & Tindel 2019; :class:`~deeplimits.networks.CorrectedResNet`, the ``rough`` regime)."""

    def __init__(self, activation=None):
        kind = self.activation_kind
        if kind != "default":
            if activation is not None and _activation(activation).name != kind:
                raise ParameterError("activation", f"activation must be {kind!r} (or omitted) for arch "
                                                   f"{self.name!r}, got {activation!r}")
            act = _activation(kind)
        else:
            act = _activation(DEFAULT_ACTIVATION if activation is None else activation)
        self.activation: Activation = act
        """The activation ``sigma``."""

    @property
    def required(self) -> tuple[str, ...]:
        """The weights a layer cannot do without (:attr:`weights` less :attr:`optional`)."""
        return tuple(n for n in self.weights if n not in self.optional)

    def weight_shape(self, name: str, width: int) -> tuple[int, ...]:
        """The shape of one layer's weight ``name`` at ``width`` (``(d, d)`` by default; a
        ``_drift`` suffix, a smooth part of a weight, has the weight's shape)."""
        return (width, width)

    def shape(self, name: str, width: int) -> tuple[int, ...]:
        """:meth:`weight_shape`, checked before anything is allocated: a tuple of integers >= 1
        holding at most :data:`MAX_LAYER_ENTRIES` numbers (a one-line error naming the block otherwise)."""
        return _checks.shape(self, name, width)

    def kept_states(self) -> int:
        """The ``(inputs, width)`` tensors a propagation pass keeps per layer for its backward
        recursion: the state, and the :meth:`preactivation` when the block computes one."""
        return 1 if type(self).preactivation is Block.preactivation else 2

    def check(self, width: int, dtype=torch.float64) -> "Block":
        """The block, once its declarations are verified at ``width`` (:mod:`._checks`): the shapes
        of its weights, and a residual of the state's shape, dtype and device, finite on random
        inputs; a one-line :class:`~deeplimits.errors.ParameterError` naming the block otherwise."""
        done = self.__dict__.setdefault("_verified", set())
        if (width, dtype) not in done:
            _checks.probe(self, width, dtype)
            done.add((width, dtype))
        return self

    def linearity(self, width: int = 3) -> str | None:
        """``None`` if the residual is linear, as declared, in each weight of :attr:`linear`
        (verified on random draws at ``width``, float64), else why not, in words."""
        return _checks.linearity(self, width)

    # -- one layer ---------------------------------------------------------------------------
    def preactivation(self, h: torch.Tensor, **w) -> torch.Tensor | None:
        """What a pass may keep for the backward recursion (``pre=`` of :meth:`residual` and
        :meth:`residual_vjp`); ``None``: nothing."""
        return None

    @abc.abstractmethod
    def residual(self, h: torch.Tensor, *, pre=None, **w) -> torch.Tensor:
        """``g(h, w)`` for states ``h`` ``(..., inputs, width)`` and this layer's weights ``w``
        (each with its :meth:`weight_shape`, batched like ``h``)."""

    def residual_vjp(self, h: torch.Tensor, p: torch.Tensor, *, pre=None, **w) -> torch.Tensor:
        """``J^T p``, ``J`` the Jacobian of :meth:`residual` in ``h`` (automatic
        differentiation unless a block writes it in closed form)."""
        with torch.enable_grad():
            hh = h.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.residual(hh, **w), hh, p)
        return g

    def step(self, h: torch.Tensor, alpha, *, pre=None, **w) -> torch.Tensor:
        """One layer: ``h + alpha g(h, w)``."""
        return h + alpha * self.residual(h, pre=pre, **w)

    def step_vjp(self, h: torch.Tensor, p: torch.Tensor, alpha, *, pre=None, **w) -> torch.Tensor:
        """``(d step / d h)^T p = p + alpha J^T p``."""
        return p + alpha * self.residual_vjp(h, p, pre=pre, **w)

    # -- what a layer costs ------------------------------------------------------------------
    def parameter_count(self, width: int, bias: bool = False) -> int:
        """The numbers one layer's weights hold at ``width`` (the optional ones only with ``bias``)."""
        names = self.weights if bias else self.required
        return sum(math.prod(self.weight_shape(n, width)) for n in names)

    def fused(self) -> bool:
        """Whether training runs this block (with its activation) by a hand-written pass that keeps
        one state per layer instead of autograd's graph (:mod:`deeplimits.training`)."""
        return False

    @classmethod
    def kept_numbers(cls, width: int, batch: int, fused: bool) -> int:
        """The numbers a training step keeps per layer and configuration for its backward pass on a
        mini-batch of ``batch``: about eight ``(batch, width)`` tensors through autograd (the
        product's inputs and outputs, the bias, the activation and the scaled sum), fewer for a
        hand-written pass (``fused``: :meth:`fused`)."""
        return 8 * batch * width

    def __repr__(self) -> str:
        return f"<block {self.name!r}: weights {', '.join(self.weights)}, activation={self.activation.name!r}>"


def register_block(cls):
    """Class decorator: enter the :class:`Block` subclass ``cls`` under its ``name``. A name taken
    by another class is refused; the weights must be distinct names, ``optional`` and ``linear``
    among them."""
    if not (isinstance(cls, type) and issubclass(cls, Block)):
        raise ParameterError("cls", f"register_block takes a Block subclass, got {cls!r}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ParameterError("name", f"{cls.__name__}.name must be a non-empty string")
    if _BLOCKS.get(name, cls).__qualname__ != cls.__qualname__:
        raise ParameterError("name", f"block {name!r} is already registered (by {_BLOCKS[name].__name__})")
    w = getattr(cls, "weights", None)
    if not (isinstance(w, tuple) and w and all(isinstance(n, str) and n for n in w) and len(set(w)) == len(w)):
        raise ParameterError("weights", f"{cls.__name__}.weights must be a non-empty tuple of distinct names, got {w!r}")
    for attr in ("optional", "linear"):
        extra = [n for n in getattr(cls, attr) if n not in w]
        if extra:
            raise ParameterError(attr, f"{cls.__name__}.{attr} names {extra}, not among its weights {w}")
    _BLOCKS[name] = cls
    return cls


def unregister_block(name: str) -> None:
    """Remove the block registered as ``name`` (one registered for a test or a session)."""
    _BLOCKS.pop(V_.choice("arch", name, tuple(_BLOCKS)))


def registered_blocks() -> tuple[str, ...]:
    """The registered block names, the built-in ones first (:data:`deeplimits.networks.ARCHITECTURES`)."""
    return tuple(_BLOCKS)


def block_class(name) -> type:
    """The :class:`Block` class registered as ``name`` (a one-line error naming ``arch`` otherwise)."""
    if not isinstance(name, str) or name not in _BLOCKS:
        raise ParameterError("arch", f"arch must be one of {', '.join(map(repr, _BLOCKS))}; got {V_._short(name)}")
    return _BLOCKS[name]


def make_block(arch, activation=None) -> Block:
    """The block ``arch``: a registered name (built with ``activation``) or a :class:`Block`
    instance (then ``activation`` must be omitted: the block holds its own)."""
    if isinstance(arch, Block):
        if activation is not None:
            raise ParameterError("activation", f"activation must be omitted when arch is a Block (its activation "
                                               f"is the block's), got {activation!r}")
        return arch
    return block_class(arch)(activation)


def recorded_block(arch, activation=None) -> Block:
    """The block ``arch`` of a study, which records it by name (its tasks, a resumed run and a
    stored result rebuild it from the name): a registered name, or a :class:`Block` whose class is
    registered under its name (a one-line error naming ``arch`` otherwise)."""
    block = make_block(arch, activation)
    if _BLOCKS.get(block.name) is not type(block):
        raise ParameterError("arch", f"arch: the block {block.name!r} must be registered (@register_block) to run in "
                                     "a study, which records it by name")
    return block
