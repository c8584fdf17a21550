"""Residual networks at initialisation (docs/mathematics.md, "The implemented regimes").

``h_{k+1} = h_k + L^-beta * g(h_k, w_{k+1})``, the residual map ``g`` a
:class:`~deeplimits.blocks.Block`: the built-in ``res-1`` (``V sigma(h)``), ``res-2``
(``V sigma(W h)``), ``res-3`` (``V ReLU(W h)``), ``inside`` (``sigma(W h + b)``)
(:mod:`deeplimits.blocks.residual`), or one of your own (docs/convergence.md, "Bring your own network").

States are batched as ``(draws, inputs, width)`` and each draw has its own weights
``(draws, width, width)``. Weights are passed as tensors ``(depth, draws, ...)`` or as
iterables of chunks ``(c, draws, ...)`` of consecutive layers (streamed from a driver sample).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Iterator

import torch

from . import _validate as V_
from ._transforms import not_under_vmap
from .activations import Activation
from .blocks import Block, make_block
from .blocks.residual import weight_shape
from .errors import ParameterError
from .options import CORRECTED_HURST

__all__ = ["ResNet", "ModifiedEulerResNet", "CorrectedResNet", "Trajectory", "ARCHITECTURES", "weight_shape"]

from ._names import ARCHITECTURES  # noqa: E402 - the names the command line lists (each block declares its weights)


Weights = torch.Tensor | Iterable[torch.Tensor] | None


@dataclasses.dataclass
class Trajectory:
    """Hidden states ``h_0..h_L`` (and gradients ``p_k = dl/dh_k`` when asked), each of shape
    ``(depth + 1, draws, inputs, width)``, or ``(depth + 1, draws, width)`` when ``h0`` was
    given as ``(draws, width)``."""

    states: torch.Tensor
    """The hidden states ``h_0..h_L``."""
    gradients: torch.Tensor | None
    """The gradients ``p_k = dl/dh_k`` when asked, else ``None``."""
    depth: int
    """The depth ``L``."""
    beta: float
    """The scaling exponent (``alpha_L = L^-beta``)."""


class ResNet:
    """A residual network of any depth with scaling ``alpha_L = L^-beta``.

    Args:
        arch: a registered block name (``'res-1'``, ``'res-2'``, ``'res-3'``, ``'inside'``, or one
            entered with :func:`deeplimits.blocks.register_block`) or a :class:`~deeplimits.blocks.Block`.
        activation: name or callable (default ``tanh``; ``res-3`` is ReLU by definition).
        beta: scaling exponent ``>= 0``.
    """

    def __init__(self, arch="res-1", activation=None, beta: float = 0.5):
        self.block: Block = make_block(arch, activation)
        """The residual map ``g`` (a :class:`~deeplimits.blocks.Block`)."""
        self.arch = self.block.name
        """The block's name: ``'res-1'``, ``'res-2'``, ``'res-3'``, ``'inside'`` or a registered one."""
        self.activation: Activation = self.block.activation
        """The activation ``sigma`` (the block's)."""
        self.beta = V_.real("beta", beta, low=0.0)
        """The scaling exponent: ``alpha_L = L^-beta``."""

    @property
    def weight_names(self) -> tuple[str, ...]:
        """The weights of this architecture (its block's), in drawing order."""
        return self.block.weights

    # -- one layer: the block's ------------------------------------------------------------
    def preactivation(self, h: torch.Tensor, W=None, b=None, **w) -> torch.Tensor:
        """The activation's argument in :meth:`residual` (:meth:`Block.preactivation
        <deeplimits.blocks.Block.preactivation>`): ``h`` (res-1), ``W h`` (res-2, res-3) or
        ``W h + b`` (inside). A pass that keeps it for the backward recursion
        (:meth:`residual_vjp` with ``pre=``) multiplies by ``W`` once a layer instead of twice."""
        return self.block.preactivation(h, **_given(None, W, b, w))

    def residual(self, h: torch.Tensor, V=None, W=None, b=None, *, pre=None, **w) -> torch.Tensor:
        """The residual branch ``V g(h, W)`` (``sigma(W h + b)`` for ``inside``); ``pre``: its
        :meth:`preactivation`, when already known."""
        return self.block.residual(h, pre=pre, **_given(V, W, b, w))

    def step(self, h, alpha: float, depth: int, V=None, W=None, b=None, *, pre=None, **w) -> torch.Tensor:
        """One layer: ``h + alpha * residual(h, V, W, b)`` (:meth:`residual`; ``pre`` as there)."""
        return self.block.step(h, alpha, pre=pre, **_given(V, W, b, w))

    def residual_vjp(self, h, p, V=None, W=None, b=None, *, pre=None, **w) -> torch.Tensor:
        """``J^T p`` with ``J`` the Jacobian of :meth:`residual` at ``h``; ``pre``: the
        :meth:`preactivation` at ``h``, when kept from the forward pass."""
        return self.block.residual_vjp(h, p, pre=pre, **_given(V, W, b, w))

    def step_vjp(self, h, p, alpha, depth, V=None, W=None, b=None, *, pre=None, **w) -> torch.Tensor:
        """``(d step / d h)^T p``: one layer of the backward recursion for ``p_k`` (``pre``: as in
        :meth:`residual_vjp`)."""
        return self.block.step_vjp(h, p, alpha, pre=pre, **_given(V, W, b, w))

    # -- whole network ------------------------------------------------------------------
    def iterate(self, h0: torch.Tensor, V: Weights = None, W: Weights = None, b: Weights = None, *,
                depth: int | None = None, **weights: Weights) -> Iterator[torch.Tensor]:
        """Yield ``h_0, h_1, ..., h_L`` one at a time (memory independent of depth). The
        arguments are checked when this is called, before the first state is asked for; a
        block's weights other than ``V``, ``W``, ``b`` are given by their names."""
        h, depth, layers = self._prepare(h0, _given(V, W, b, weights), depth)
        return self._states(h, depth, layers)

    def _states(self, h, depth, layers, alpha=None):
        """``h_0..h_L``; ``alpha`` defaults to ``depth^-beta`` and may be a tensor that
        broadcasts against the states (several scalings at once)."""
        alpha = float(depth) ** -self.beta if alpha is None else alpha
        yield h
        step = self.step  # (a subclass may change the step: ModifiedEulerResNet)
        for layer in layers:
            h = step(h, alpha, depth, **layer)
            yield h

    def forward(self, h0: torch.Tensor, V: Weights = None, W: Weights = None, b: Weights = None, *,
                depth: int | None = None, readout: torch.Tensor | None = None,
                target: torch.Tensor | None = None, **weights: Weights) -> Trajectory:
        """All hidden states, and with ``readout`` (``B``, shape ``(n_out, width)``) the
        gradients ``p_k = dl/dh_k`` of ``l = ||B h_L - target||^2 / 2`` by the backward
        recursion ``p_k = p_{k+1} + alpha J_k^T p_{k+1}`` (weights must then be tensors). A block's
        weights other than ``V``, ``W``, ``b`` are given by their names."""
        not_under_vmap("h0", "ResNet", "give the draws as the first axis of h0, (draws, inputs, width), and the "
                                          "second of the weights, (depth, draws, width, width)")
        h = V_.states("h0", h0)
        squeeze = h0.dim() == 2
        weights = _given(V, W, b, weights)
        if readout is not None:
            for name, w in weights.items():
                if not isinstance(w, torch.Tensor):
                    raise ParameterError(name, f"{name} must be a tensor (depth, draws, ...) when readout is given")
            readout, target = self._check_loss(h, readout, target)
        states = torch.stack(list(self.iterate(h, depth=depth, **weights)))
        depth = states.shape[0] - 1
        grads = None
        if readout is not None:
            grads = self._backward(states, weights, readout, target)
        if squeeze:
            states = states.squeeze(-2)
            grads = None if grads is None else grads.squeeze(-2)
        return Trajectory(states, grads, depth, self.beta)

    __call__ = forward

    @staticmethod
    def _check_loss(h0, readout, target):
        n, m, d = h0.shape
        readout = V_.tensor("readout", readout, dtype_=h0.dtype)
        if not (readout.dim() == 2 or (readout.dim() == 3 and readout.shape[0] == n)) or readout.shape[-1] != d:
            raise ParameterError("readout", f"readout must have shape (n_out, {d}) or ({n}, n_out, {d}), got "
                                            f"{tuple(readout.shape)}")
        if target is not None:
            if isinstance(target, torch.Tensor) and target.dim() == 2:  # (draws, n_out) for one input
                target = target.unsqueeze(-2)
            target = V_.tensor("target", target, shape=(n, m, readout.shape[-2]), dtype_=h0.dtype)
        return readout, target

    def _backward(self, states, weights, readout, target):
        out = states[-1] @ readout.transpose(-1, -2)
        if target is not None:
            out = out - target
        return torch.stack(self._gradients(states, out @ readout, weights))

    def _gradients(self, states, p, weights, alpha=None):
        """``p_0..p_L`` from ``p_L = p`` by ``p_k = (d step_k / d h)^T p_{k+1}``; ``weights`` maps
        weight names to tensors indexable by layer."""
        depth = len(states) - 1
        alpha = float(depth) ** -self.beta if alpha is None else alpha
        grads = [p]
        for k in range(depth - 1, -1, -1):
            p = self.step_vjp(states[k], p, alpha, depth, **{n: w[k] for n, w in weights.items()})
            grads.append(p)
        return grads[::-1]

    # -- validation ---------------------------------------------------------------------
    def _prepare(self, h0, given, depth):
        """``(h0, depth, layers)``: the weights ``given`` (name -> tensor or chunks) checked against
        the block's declarations, and an iterator of per-layer dicts."""
        block = self.block
        for name in block.required:
            if given.get(name) is None:
                raise ParameterError(name, f"{name} is required for arch {self.arch!r}")
        for name in given:
            if name not in block.weights:
                raise ParameterError(name, f"{name} is not used by arch {self.arch!r}; pass only "
                                           f"{', '.join(block.required)}")
        h0 = V_.states("h0", h0)
        n, _, d = h0.shape
        streams = {}
        for name, w in given.items():
            if isinstance(w, torch.Tensor):
                _same_device(name, w, h0)
                V_.tensor(name, w, shape=(None, n, *block.weight_shape(name, d)), dtype_=h0.dtype)
                if depth is None:
                    depth = w.shape[0]
                elif w.shape[0] != depth:
                    raise ParameterError(name, f"{name} must have {depth} layers (depth), got {w.shape[0]}")
                streams[name] = [w]
            else:
                streams[name] = _checked_chunks(name, w, (n, *block.weight_shape(name, d)), h0)
        if depth is None:
            raise ParameterError("depth", "depth must be given when the weights are streamed")
        depth = V_.integer("depth", depth)
        layers = _zip_layers(streams, depth)
        return h0, depth, layers


def _same_device(name, w, h0):
    """Weights live where the states do: a clear error instead of torch's mid-computation one."""
    if w.device != h0.device:
        raise ParameterError(name, f"{name} must be on the device of h0 ({h0.device}), got {w.device}")


def _checked_chunks(name, chunks, shape, h0):
    dtype = h0.dtype
    for c in chunks:
        if not isinstance(c, torch.Tensor) or tuple(c.shape[1:]) != shape or c.dtype != dtype:
            got = tuple(c.shape) if isinstance(c, torch.Tensor) else type(c).__name__
            raise ParameterError(name, f"{name} chunks must be tensors (c, {', '.join(map(str, shape))}) of dtype "
                                       f"{dtype}, got {got}")
        _same_device(name, c, h0)
        yield c


def _layers(chunks):
    for c in chunks:
        yield from c.unbind(0)


def _given(V, W, b, more: dict) -> dict:
    """The weights given by name: ``V``, ``W``, ``b`` (those not ``None``) and a block's others."""
    out = {k: v for k, v in (("V", V), ("W", W), ("b", b)) if v is not None}
    out.update(more)
    return out


def _zip_layers(streams: dict, depth):
    names = tuple(streams)
    n = 0
    for n, layer in enumerate(zip(*(_layers(s) for s in streams.values())), start=1):
        yield dict(zip(names, layer))
        if n == depth:
            return
    raise ParameterError("depth", f"the weights provide {n} layers, fewer than depth = {depth}")


class ModifiedEulerResNet(ResNet):
    """The "corrected" res-1 network for fractional weights (docs/mathematics.md, "fBm" and "Rough
    weights").

    Each layer adds ``(scale^2 / 2) L^{-2H} sigma'(h) sigma(h)`` to the Euler step, the mean
    of the second-order term of the equation ``dH = dX sigma(H)`` with ``X`` of entry
    variance ``scale^2 t^{2H}``. For H in (1/2, 1) it is the modified Euler scheme of a Young
    equation (Hu, Liu & Nualart, Ann. Appl. Probab. 2016), strong rate ``L^{1/2-2H}`` for
    H < 3/4 and about ``L^{-1}`` above, against ``L^{1-2H}`` for the plain network; for H in
    (1/3, 1/2) it is the first-order scheme of a rough equation (Liu & Tindel, Ann. Appl.
    Probab. 2019), strong rate ``L^{1/2-2H}``, where the plain network has no limit.

    Args:
        hurst: Hurst index of the weights (the scaling is ``beta = hurst``), in (1/3, 1).
        scale: entry standard deviation of the weights, ``1/sqrt(width)`` by default.
    """

    def __init__(self, activation=None, hurst: float = 0.75, scale: float | None = None):
        self.hurst = V_.hurst(hurst, spec=CORRECTED_HURST)
        """The Hurst index ``H`` of the weights (the scaling is ``beta = H``)."""
        super().__init__("res-1", activation, beta=self.hurst)
        self.scale = None if scale is None else V_.real("scale", scale, low=0.0, low_open=True)
        """The entry standard deviation of the weights (``None``: ``1/sqrt(width)``)."""

    def correction(self, h, alpha, depth):
        """The coefficient of ``sigma'(h) sigma(h)`` in a layer: ``(scale^2 / 2) depth^{-2H}``, a
        function of the depth alone (not of ``alpha``), so that a caller may pass raw increments
        as ``V`` with ``alpha = 1``."""
        s2 = h.shape[-1] ** -1.0 if self.scale is None else self.scale ** 2
        return 0.5 * s2 * float(depth) ** (-2 * self.hurst)

    def step(self, h, alpha, depth, V=None, W=None, b=None, *, pre=None):
        """One layer: the Euler step plus ``correction(h, alpha, depth) sigma'(h) sigma(h)``."""
        sig = self.activation(h)
        corr = self.correction(h, alpha, depth)
        return h + alpha * (sig @ V.transpose(-1, -2)) + corr * self.activation.derivative(h) * sig

    def step_vjp(self, h, p, alpha, depth, V=None, W=None, b=None, *, pre=None):
        # the correction involves sigma'' : differentiate the step itself (pre, which is h, unused)
        with torch.enable_grad():
            hh = h.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.step(hh, alpha, depth, V, W, b), hh, p)
        return g


class CorrectedResNet(ModifiedEulerResNet):
    """res-1 with the mean second-order term at any scaling ``beta`` (docs/propagation.md, "The
    corrected network"): ``h + L^-beta V sigma(h) + (L^-2beta scale^2 / 2) sigma'(h) sigma(h)``, for
    weights ``V`` of entry variance ``scale^2`` (``1/width`` by default) as the propagation studies
    give them. At ``beta = H`` it is :class:`ModifiedEulerResNet`; ``alpha`` may be a tensor (one
    scaling per column), and the correction follows it.

    Args:
        scale: entry standard deviation of the weights, ``1/sqrt(width)`` by default.
    """

    def __init__(self, activation=None, beta: float = 0.5, scale: float | None = None):
        ResNet.__init__(self, "res-1", activation, beta=beta)
        self.hurst = None
        """No Hurst index: the correction follows the scaling."""
        self.scale = None if scale is None else V_.real("scale", scale, low=0.0, low_open=True)
        """The entry standard deviation of the weights (``None``: ``1/sqrt(width)``)."""

    def correction(self, h, alpha, depth):
        """``(scale^2 / 2) alpha^2``: the mean of the second-order term of ``h + alpha V sigma(h)``."""
        s2 = h.shape[-1] ** -1.0 if self.scale is None else self.scale ** 2
        return 0.5 * s2 * alpha * alpha
