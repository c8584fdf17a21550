"""Residual networks at initialisation (docs/mathematics.md, "The implemented regimes").

``h_{k+1} = h_k + L^-beta * V_{k+1} g(h_k, W_{k+1})`` with the residual maps

=========  =============================  ==============
``res-1``  ``V sigma(h)``                 V
``res-2``  ``V sigma(W h)``               V, W
``res-3``  ``V ReLU(W h)``                V, W
``inside`` ``sigma(W h + b)`` (no V)      W, b (optional)
=========  =============================  ==============

States are batched as ``(draws, inputs, width)`` and each draw has its own weights
``(draws, width, width)``. Weights are passed as tensors ``(depth, draws, ...)`` or as
iterables of chunks ``(c, draws, ...)`` of consecutive layers (streamed from a driver sample).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Iterable, Iterator

import torch

from . import _validate as V_
from ._transforms import not_under_vmap
from .activations import Activation, activation as _activation
from .errors import ParameterError

__all__ = ["ResNet", "ModifiedEulerResNet", "Trajectory", "ARCHITECTURES", "WEIGHTS", "OPTIONAL_WEIGHTS", "REQUIRED",
           "LAYER_WEIGHTS", "weight_names", "weight_shape"]

from ._names import (ARCHITECTURES, DEFAULT_ACTIVATION, LAYER_WEIGHTS, OPTIONAL_WEIGHTS,  # noqa: E402
                     RES3_ACTIVATION, REQUIRED, WEIGHTS, weight_names)  # one torch-free place (the weight table)


def weight_shape(name: str, width: int) -> tuple[int, ...]:
    """The shape of one layer's weight ``name`` at ``width``: ``(d, d)`` for the matrices ``V``,
    ``W`` and ``(d,)`` for the bias ``b`` (a ``_drift`` suffix, the smooth part of a weight, has
    the weight's shape)."""
    return (width,) if name.removesuffix("_drift") == "b" else (width, width)

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
        arch: ``'res-1'``, ``'res-2'``, ``'res-3'`` or ``'inside'``.
        activation: name or callable (default ``tanh``; ``res-3`` is ReLU by definition).
        beta: scaling exponent ``>= 0``.
    """

    def __init__(self, arch: str = "res-1", activation=None, beta: float = 0.5):
        self.arch = V_.choice("arch", arch, ARCHITECTURES)
        """``'res-1'``, ``'res-2'``, ``'res-3'`` or ``'inside'``."""
        if arch == "res-3":
            if activation is not None and _activation(activation).name != RES3_ACTIVATION:
                raise ParameterError("activation", f"activation must be {RES3_ACTIVATION!r} (or omitted) for arch "
                                                   f"'res-3', got {activation!r}")
            activation = RES3_ACTIVATION
        self.activation: Activation = _activation(DEFAULT_ACTIVATION if activation is None else activation)
        """The activation ``sigma``."""
        self.beta = V_.real("beta", beta, low=0.0)
        """The scaling exponent: ``alpha_L = L^-beta``."""

    @property
    def weight_names(self) -> tuple[str, ...]:
        """The weights of this architecture (:data:`WEIGHTS`), in drawing order."""
        return WEIGHTS[self.arch]

    # -- one layer -------------------------------------------------------------------
    def preactivation(self, h: torch.Tensor, W=None, b=None) -> torch.Tensor:
        """The activation's argument in :meth:`residual`: ``h`` (res-1), ``W h`` (res-2, res-3) or
        ``W h + b`` (inside). A pass that keeps it for the backward recursion
        (:meth:`residual_vjp` with ``pre=``) multiplies by ``W`` once a layer instead of twice."""
        if self.arch == "res-1":
            return h
        u = _times(h, W.transpose(-1, -2))
        return u + b.unsqueeze(-2) if self.arch == "inside" and b is not None else u

    def _branch(self, h, V, W, b, pre):
        """``(s, M)`` with the residual ``s M`` (``M = V^T``), or ``s`` itself when ``M`` is None."""
        s = self.activation(self.preactivation(h, W, b) if pre is None else pre)
        return s, None if self.arch == "inside" else V.transpose(-1, -2)

    def _branch_vjp(self, h, p, V, W, b, pre):
        """``(q, M)`` with ``J^T p = q M`` (``q`` itself when ``M`` is None), ``J`` the Jacobian of
        the residual at ``h`` (closed form)."""
        ds = self.activation.derivative(self.preactivation(h, W, b) if pre is None else pre)
        if self.arch == "res-1":
            return ds * _times(p, V), None
        return (ds * p if self.arch == "inside" else ds * _times(p, V)), W

    def residual(self, h: torch.Tensor, V=None, W=None, b=None, *, pre=None) -> torch.Tensor:
        """The residual branch ``V g(h, W)`` (``sigma(W h + b)`` for ``inside``); ``pre``: its
        :meth:`preactivation`, when already known."""
        s, M = self._branch(h, V, W, b, pre)
        return s if M is None else _times(s, M)

    def step(self, h, alpha: float, depth: int, V=None, W=None, b=None, *, pre=None) -> torch.Tensor:
        """One layer: ``h + alpha * residual(h, V, W, b)`` (:meth:`residual`; ``pre`` as there)."""
        s, M = self._branch(h, V, W, b, pre)
        return _plus_times(h, alpha * s, M)

    def residual_vjp(self, h, p, V=None, W=None, b=None, *, pre=None) -> torch.Tensor:
        """``J^T p`` with ``J`` the Jacobian of :meth:`residual` at ``h`` (closed form); ``pre``:
        the :meth:`preactivation` at ``h``, when kept from the forward pass."""
        q, M = self._branch_vjp(h, p, V, W, b, pre)
        return q if M is None else _times(q, M)

    def step_vjp(self, h, p, alpha, depth, V=None, W=None, b=None, *, pre=None) -> torch.Tensor:
        """``(d step / d h)^T p``: one layer of the backward recursion for ``p_k`` (``pre``: as in
        :meth:`residual_vjp`)."""
        q, M = self._branch_vjp(h, p, V, W, b, pre)
        return _plus_times(p, alpha * q, M)

    # -- whole network ------------------------------------------------------------------
    def iterate(self, h0: torch.Tensor, V: Weights = None, W: Weights = None, b: Weights = None, *,
                depth: int | None = None) -> Iterator[torch.Tensor]:
        """Yield ``h_0, h_1, ..., h_L`` one at a time (memory independent of depth). The
        arguments are checked when this is called, before the first state is asked for."""
        h, depth, layers = self._prepare(h0, V, W, b, depth)
        return self._states(h, depth, layers)

    def _states(self, h, depth, layers, alpha=None):
        """``h_0..h_L``; ``alpha`` defaults to ``depth^-beta`` and may be a tensor that
        broadcasts against the states (several scalings at once)."""
        alpha = float(depth) ** -self.beta if alpha is None else alpha
        yield h
        for Vk, Wk, bk in layers:
            h = self.step(h, alpha, depth, Vk, Wk, bk)
            yield h

    def forward(self, h0: torch.Tensor, V: Weights = None, W: Weights = None, b: Weights = None, *,
                depth: int | None = None, readout: torch.Tensor | None = None,
                target: torch.Tensor | None = None) -> Trajectory:
        """All hidden states, and with ``readout`` (``B``, shape ``(n_out, width)``) the
        gradients ``p_k = dl/dh_k`` of ``l = ||B h_L - target||^2 / 2`` by the backward
        recursion ``p_k = p_{k+1} + alpha J_k^T p_{k+1}`` (weights must then be tensors)."""
        not_under_vmap("h0", "ResNet", "give the draws as the first axis of h0, (draws, inputs, width), and the "
                                          "second of the weights, (depth, draws, width, width)")
        h = V_.states("h0", h0)
        squeeze = h0.dim() == 2
        if readout is not None:
            if not all(isinstance(w, torch.Tensor) or w is None for w in (V, W, b)):
                raise ParameterError("V", "V, W, b must be tensors (depth, draws, ...) when readout is given")
            readout, target = self._check_loss(h, readout, target)
        states = torch.stack(list(self.iterate(h, V, W, b, depth=depth)))
        depth = states.shape[0] - 1
        grads = None
        if readout is not None:
            grads = self._backward(states, V, W, b, readout, target)
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

    def _backward(self, states, V, W, b, readout, target):
        out = states[-1] @ readout.transpose(-1, -2)
        if target is not None:
            out = out - target
        return torch.stack(self._gradients(states, out @ readout, (V, W, b)))

    def _gradients(self, states, p, weights, alpha=None):
        """``p_0..p_L`` from ``p_L = p`` by ``p_k = (d step_k / d h)^T p_{k+1}``; ``weights`` is
        ``(V, W, b)``, each indexable by layer or ``None``."""
        depth = len(states) - 1
        alpha = float(depth) ** -self.beta if alpha is None else alpha
        grads = [p]
        for k in range(depth - 1, -1, -1):
            layer = [None if w is None else w[k] for w in weights]
            p = self.step_vjp(states[k], p, alpha, depth, *layer)
            grads.append(p)
        return grads[::-1]

    # -- validation ---------------------------------------------------------------------
    def _prepare(self, h0, V, W, b, depth):
        given = dict(zip(LAYER_WEIGHTS, (V, W, b)))
        for name in REQUIRED[self.arch]:
            if given[name] is None:
                raise ParameterError(name, f"{name} is required for arch {self.arch!r}")
        for name, w in given.items():
            if w is not None and name not in WEIGHTS[self.arch]:
                raise ParameterError(name, f"{name} is not used by arch {self.arch!r}; pass only "
                                           f"{', '.join(REQUIRED[self.arch])}")
        h0 = V_.states("h0", h0)
        n, _, d = h0.shape
        streams = []
        for name in LAYER_WEIGHTS:
            w = given[name]
            if w is None:
                streams.append(None)
            elif isinstance(w, torch.Tensor):
                _same_device(name, w, h0)
                V_.tensor(name, w, shape=(None, n, *weight_shape(name, d)), dtype_=h0.dtype)
                if depth is None:
                    depth = w.shape[0]
                elif w.shape[0] != depth:
                    raise ParameterError(name, f"{name} must have {depth} layers (depth), got {w.shape[0]}")
                streams.append([w])
            else:
                streams.append(_checked_chunks(name, w, (n, *weight_shape(name, d)), h0))
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


def _zip_layers(streams, depth):
    its = [itertools.repeat(None) if s is None else _layers(s) for s in streams]
    n = 0
    for n, layer in enumerate(zip(*its), start=1):
        yield layer
        if n == depth:
            return
    raise ParameterError("depth", f"the weights provide {n} layers, fewer than depth = {depth}")


class ModifiedEulerResNet(ResNet):
    """The "corrected" res-1 network for fractional weights (docs/mathematics.md, "fBm").

    Each layer adds ``(scale^2 / 2) L^{-2H} sigma'(h) sigma(h)`` to the Euler step, the mean
    of the second-order term of the Young equation ``dH = dX sigma(H)`` with ``X`` of entry
    variance ``scale^2 t^{2H}`` (Hu, Liu & Nualart, Ann. Appl. Probab. 2016). Its strong
    rate is ``L^{1/2-2H}`` for H < 3/4 and about ``L^{-1}`` above, against ``L^{1-2H}`` for
    the plain network.

    Args:
        hurst: Hurst index of the weights (the scaling is ``beta = hurst``).
        scale: entry standard deviation of the weights, ``1/sqrt(width)`` by default.
    """

    def __init__(self, activation=None, hurst: float = 0.75, scale: float | None = None):
        self.hurst = V_.hurst(hurst, above_half=True)
        """The Hurst index ``H`` of the weights (the scaling is ``beta = H``)."""
        super().__init__("res-1", activation, beta=self.hurst)
        self.scale = None if scale is None else V_.real("scale", scale, low=0.0, low_open=True)
        """The entry standard deviation of the weights (``None``: ``1/sqrt(width)``)."""

    def step(self, h, alpha, depth, V=None, W=None, b=None, *, pre=None):
        """One layer: the Euler step plus the correction ``(scale^2 / 2) depth^{-2H} sigma'(h) sigma(h)``."""
        # the correction is a function of the depth alone (not of alpha), so that a caller
        # may pass raw increments as V with alpha = 1
        s2 = h.shape[-1] ** -1.0 if self.scale is None else self.scale ** 2
        sig = self.activation(h)
        corr = 0.5 * s2 * float(depth) ** (-2 * self.hurst)
        return h + alpha * (sig @ V.transpose(-1, -2)) + corr * self.activation.derivative(h) * sig

    def step_vjp(self, h, p, alpha, depth, V=None, W=None, b=None, *, pre=None):
        # the correction involves sigma'' : differentiate the step itself (pre, which is h, unused)
        with torch.enable_grad():
            hh = h.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.step(hh, alpha, depth, V, W, b), hh, p)
        return g


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

