"""Elementwise activations ``sigma`` with their derivative, by name or from any callable.

``softplus0`` is the softplus normalised at the origin, ``sigma(x) = log((1 + e^{2x}) / 2) =
x + log cosh x``: ``sigma(0) = 0``, ``sigma'(0) = 1``, ``sigma''(0) = 1``, ``sigma'''(0) = 0``,
and ``sigma' = 1 + tanh`` lies in (0, 2). It is smooth (C-infinity) and globally Lipschitz, with
``sigma''(0) != 0``: the activation the inside regimes need to show the Itô correction.

Any elementwise function of a module may be named ``'module:function'`` (``'mypkg.acts:cube'``):
:func:`activation` imports the module through :func:`deeplimits._user_code.load_user_object` (the
one place the package imports a module by a name given at run time; never while a stored run or
weights file is read) and checks that the function exists, is callable and maps tensors
elementwise.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from ._names import ACTIVATIONS
from ._user_code import load_user_object
from .errors import ParameterError

__all__ = ["Activation", "activation", "NAMES"]

NAMES = ACTIVATIONS
"""The activation names :func:`activation` accepts (``leaky_relu:SLOPE`` and ``module:function`` besides)."""


class Activation:
    """An elementwise function with its derivative ``sigma'``.

    Named activations carry closed-form derivatives; for any other callable the derivative
    is taken by automatic differentiation (valid because the map is elementwise).

    An activation pickles (``torch.save`` of a module, a pair sent to a Dask worker): one made
    from a name or ``'module:function'`` by that name, re-resolved when loaded; one made from
    a callable by reference to the callable (a module-level function pickles, a lambda does not).
    """

    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor], name: str,
                 derivative: Callable[[torch.Tensor], torch.Tensor] | None = None):
        self.fn, self.name, self._derivative = fn, name, derivative
        self.spec: str | None = None  # the name it was resolved from (set by :func:`activation`)
        """The name it was resolved from by :func:`activation` (``None`` for a bare callable); it pickles by
        this name."""
        self.source: dict | None = None
        """For a ``'module:function'``: ``{'module', 'name', 'sha256'}`` of the user's source it came from."""

    def __reduce__(self):
        if self.spec is not None:
            return activation, (self.spec,)
        return Activation, (self.fn, self.name, self._derivative)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)

    def derivative(self, x: torch.Tensor) -> torch.Tensor:
        """``sigma'(x)`` elementwise."""
        if self._derivative is not None:
            return self._derivative(x)
        graph = x.requires_grad  # keep the graph when sigma' itself is differentiated
        with torch.enable_grad():
            xx = x if graph else x.detach().requires_grad_(True)
            (d,) = torch.autograd.grad(self.fn(xx).sum(), xx, create_graph=graph)
        return d

    def taylor_at_zero(self, order: int = 3, dtype: torch.dtype = torch.float64) -> tuple[float, ...]:
        """``(sigma(0), sigma'(0), ..., sigma^(order)(0))`` by repeated automatic differentiation."""
        return tuple(self.derivatives_at(0.0, order, dtype).tolist())

    def derivatives_at(self, x, order: int = 3, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """``sigma^(m)(x)`` for ``m = 0..order`` (rows) at the points ``x`` (a number or a 1-d
        sequence), by repeated automatic differentiation; shape ``(order + 1, *x.shape)``."""
        x = torch.as_tensor(x, dtype=dtype).detach().requires_grad_(True)
        with torch.enable_grad():
            y = self.fn(x)
            out = [y.detach()]
            for _ in range(order):
                grad = None
                if y.requires_grad:
                    (grad,) = torch.autograd.grad(y.sum(), x, create_graph=True, allow_unused=True)
                if grad is None:  # the last derivative is constant: every further one vanishes
                    out += [torch.zeros_like(out[0])] * (order + 1 - len(out))
                    break
                y = grad
                out.append(y.detach())
        return torch.stack(out)

    def __repr__(self) -> str:
        return f"Activation({self.name!r})"


def _leaky(slope: float) -> Activation:
    return Activation(lambda x: torch.where(x >= 0, x, slope * x), f"leaky_relu:{slope:g}",
                      lambda x: torch.where(x >= 0, torch.ones_like(x), torch.full_like(x, slope)))


def _from_module(spec: str) -> Activation:
    """The activation ``'module:function'``: ``function`` of the user's importable ``module``
    (:func:`deeplimits._user_code.load_user_object`: never while a stored file is read), checked on
    a small tensor (it must return a tensor of the same shape) before any work."""
    where = f"activation {spec!r}"
    fn, info = load_user_object(spec, what="activation")
    if not callable(fn):
        raise ParameterError("activation", f"{where}: {info['module']}.{info['name']} is not callable (it is a "
                                           f"{type(fn).__name__})")
    _probe(fn, where)
    act = Activation(fn, spec)
    act.source = info
    return act


def _probe(fn, where: str) -> None:
    """``fn`` maps a small float tensor to a tensor of its shape, or the activation is refused."""
    import torch

    x = torch.linspace(-1.0, 1.0, 5, dtype=torch.float64)
    try:
        y = fn(x)
    except Exception as e:  # noqa: BLE001 - any failure of a user's function is a refusal of it
        raise ParameterError("activation", f"{where}: must map a tensor elementwise to a tensor of its shape; on a "
                                           f"tensor it raised {type(e).__name__}: {' '.join(str(e).split())[:100]}") from None
    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
        got = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
        raise ParameterError("activation", f"{where}: must map a tensor elementwise to a tensor of its shape "
                                           f"{tuple(x.shape)}, got {got}")


def activation(spec: str | Callable | Activation) -> Activation:
    """Resolve an activation: one of :data:`NAMES` (``'leaky_relu:SLOPE'`` sets the slope,
    default ``1/sqrt(2)``), ``'module:function'`` (an elementwise function of an importable
    module, e.g. ``'mypkg.acts:cube'``), an :class:`Activation`, or any elementwise callable."""
    if isinstance(spec, Activation):
        return spec
    if callable(spec):
        return Activation(spec, getattr(spec, "__name__", "custom"))
    if isinstance(spec, str):
        act = _named(spec)
        act.spec = spec
        return act
    raise _unknown(spec)


def _unknown(spec) -> ParameterError:
    return ParameterError("activation", f"activation must be one of {', '.join(NAMES)} (leaky_relu:SLOPE with SLOPE "
                                        f"in [0, 1]), 'module:function' or an elementwise callable; got {spec!r}")


def _named(spec: str) -> Activation:
    """The activation named ``spec`` (see :func:`activation`)."""
    name, colon, arg = spec.partition(":")
    if name in NAMES and colon and not arg.strip():  # 'leaky_relu:', 'tanh:'
        raise ParameterError("activation", f"activation {spec!r} ends in ':' with nothing after it; give {name!r}"
                             + (" or 'leaky_relu:SLOPE' with SLOPE in [0, 1]" if name == "leaky_relu" else ""))
    if name == "leaky_relu":
        try:
            slope = float(arg) if arg else 1 / math.sqrt(2)
        except ValueError:
            slope = float("nan")
        if not 0 <= slope <= 1:
            raise ParameterError("activation", f"activation 'leaky_relu:SLOPE' needs a slope in [0, 1], got {arg!r}")
        return _leaky(slope)
    if name == "identity" and not arg:
        return Activation(lambda x: x, "identity", torch.ones_like)
    if name == "tanh" and not arg:
        return Activation(torch.tanh, "tanh", lambda x: 1 - torch.tanh(x) ** 2)
    if name == "relu" and not arg:
        return Activation(torch.relu, "relu", lambda x: (x > 0).to(x.dtype))
    if name == "sin" and not arg:
        return Activation(torch.sin, "sin", torch.cos)
    if name == "softplus0" and not arg:
        return Activation(lambda x: torch.nn.functional.softplus(2 * x) - math.log(2), "softplus0",
                          lambda x: 1 + torch.tanh(x))
    if name == "sigmoid" and not arg:
        return Activation(torch.sigmoid, "sigmoid", lambda x: torch.sigmoid(x) * (1 - torch.sigmoid(x)))
    if ":" in spec and name not in NAMES:
        return _from_module(spec)
    raise _unknown(spec)
