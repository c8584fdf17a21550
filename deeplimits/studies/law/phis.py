"""The test functions of the law study as values (docs/law.md, "Bring your own"): a
:class:`TestFunction` is a function ``phi`` of the network's output ``h`` ``(draws, d) -> (draws,)``,
one number per draw computed from that draw's row alone, with its gradient (in closed form for the
built-in four; by automatic differentiation otherwise) for the control variates.

The built-in ones are registered here (:data:`PHIS`); :func:`register_test_function` enters one of
your own under its name, and :func:`test_function` turns a name, a :class:`TestFunction` or a named
Python function into the registered value (a plan records the names; its tasks look them up).
Each is verified where a plan first uses it (:func:`check_test_function`): one finite number per
draw, of the states' dtype, the same whether a row is computed alone or with others.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import torch

from ...errors import ParameterError

__all__ = ["TestFunction", "PHIS", "DEFAULT_PHIS", "register_test_function", "unregister_test_function",
           "test_function", "check_test_function", "phi_text", "phi_values", "phi_gradients"]


@dataclasses.dataclass(frozen=True)
class TestFunction:
    """A test function ``phi`` of the output: ``fn(h)`` maps states ``(draws, d)`` to ``(draws,)``;
    ``gradient(h)``, when given, its gradient ``(draws, d)`` in closed form (else autograd)."""

    __test__ = False  # not a pytest test class

    name: str
    """The registry key (a plan's ``phis`` records it)."""
    fn: Callable
    """``phi``: ``(draws, d) -> (draws,)``, each draw's value from its own row."""
    text: str = ""
    """What it is, in words (the report)."""
    gradient: Callable | None = None
    """``grad phi``: ``(draws, d) -> (draws, d)`` in closed form; ``None``: automatic differentiation."""

    def values(self, h: torch.Tensor) -> torch.Tensor:
        """``phi(h)``, ``(draws,)``."""
        return self.fn(h)

    def grad(self, h: torch.Tensor) -> torch.Tensor:
        """``grad phi(h)``, ``(draws, d)``: :attr:`gradient`, or autograd through :attr:`fn` (the
        gradient of the sum over draws is each draw's gradient: its value reads its row alone)."""
        if self.gradient is not None:
            return self.gradient(h)
        with torch.enable_grad():
            x = h.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.fn(x).sum(), x)
        return g


def _log_norm(h):
    return torch.log(h.norm(dim=1)) - 0.5 * math.log(h.shape[1])  # log(|h| / |h_0|), h_0 = (1, ..., 1)


def _tanh_cos(h):
    t = torch.tanh(h)
    return (t * t + torch.cos(h) / 2).mean(dim=1)


def _tanh_cos_grad(h):
    t = torch.tanh(h)
    return (2 * t * (1 - t * t) - torch.sin(h) / 2) / h.shape[1]


_BUILT_IN = (
    TestFunction("coord2", lambda h: (h * h).mean(dim=1),
                 "mean_i h_i^2 (the second moment of a coordinate: they are exchangeable)",
                 lambda h: 2 * h / h.shape[1]),
    TestFunction("coord4", lambda h: (h ** 4).mean(dim=1), "mean_i h_i^4 (the fourth moment of a coordinate)",
                 lambda h: 4 * h ** 3 / h.shape[1]),
    TestFunction("tanh-cos", _tanh_cos, "mean_i tanh(h_i)^2 + cos(h_i) / 2", _tanh_cos_grad),
    TestFunction("log-norm", _log_norm, "log(|h_L| / |h_0|)", lambda h: h / (h * h).sum(dim=1, keepdim=True)),
)
_REGISTRY: dict[str, TestFunction] = {t.name: t for t in _BUILT_IN}

PHIS = {t.name: t.text for t in _BUILT_IN}
"""The built-in test functions ``phi`` of the output: name -> what it is."""
DEFAULT_PHIS = tuple(PHIS)
"""The test functions of a plan that names none (and of specs stored before ``phis`` was recorded)."""


def register_test_function(phi) -> TestFunction:
    """Enter ``phi`` (a :class:`TestFunction`, or a named Python function, registered under its
    ``__name__``) under its name; a name taken by another function is refused in one line."""
    tf = phi if isinstance(phi, TestFunction) else _wrapped(phi)
    if not (isinstance(tf.name, str) and tf.name and callable(tf.fn)):
        raise ParameterError("phis", f"phis: a test function needs a non-empty name and a callable, got {phi!r:.80}")
    known = _REGISTRY.get(tf.name)
    if known is not None and known.fn is not tf.fn:
        raise ParameterError("phis", f"phis: test function {tf.name!r} is already registered (another function)")
    _REGISTRY[tf.name] = tf
    return tf


def unregister_test_function(name: str) -> None:
    """Remove the test function registered as ``name`` (one of your own)."""
    if name in PHIS or name not in _REGISTRY:
        raise ParameterError("phis", f"phis: {name!r} is not a test function of your own")
    del _REGISTRY[name]


def _wrapped(fn) -> TestFunction:
    name = getattr(fn, "__name__", "")
    if not callable(fn) or not name or name == "<lambda>":
        raise ParameterError("phis", "phis: a test function given as a Python function needs a name (def phi(h): "
                                     f"...), or give TestFunction(name, fn); got {fn!r:.60}")
    return TestFunction(name, fn, (getattr(fn, "__doc__", None) or name).strip().splitlines()[0])


def test_function(phi) -> TestFunction:
    """The registered :class:`TestFunction` of ``phi``: a registered name, a :class:`TestFunction`
    or a named Python function (both entered if new)."""
    if isinstance(phi, str):
        if phi not in _REGISTRY:
            raise ParameterError("phis", f"phis must name registered test functions ({', '.join(_REGISTRY)}), "
                                         f"got {phi!r}")
        return _REGISTRY[phi]
    return register_test_function(phi)


test_function.__test__ = False  # not a pytest test


def phi_text(name: str) -> str:
    """What the test function ``name`` is, in words (its name where it is not registered here)."""
    tf = _REGISTRY.get(name)
    return (tf.text or name) if tf is not None else name


def check_test_function(tf: TestFunction, width: int, dtype=torch.float64) -> TestFunction:
    """``tf`` once verified on random states ``(3, width)``: ``(3,)`` finite values of the states'
    dtype, each row's value the same computed alone, and a finite gradient of the states' shape."""
    g = torch.Generator().manual_seed(2)
    h = torch.randn(3, width, generator=g, dtype=dtype)
    try:
        v = tf.values(h)
        alone = torch.cat([tf.values(h[i:i + 1]) for i in range(3)])
        grad = tf.grad(h)
    except Exception as e:
        raise ParameterError("phis", f"phis: test function {tf.name!r} failed on random states (3, {width}): "
                                     f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    for what, x, shape in (("values", v, (3,)), ("gradient", grad, (3, width))):
        if not (isinstance(x, torch.Tensor) and tuple(x.shape) == shape and x.dtype == dtype
                and bool(torch.isfinite(x).all())):
            got = f"{tuple(x.shape)} {x.dtype}" if isinstance(x, torch.Tensor) else type(x).__name__
            raise ParameterError("phis", f"phis: test function {tf.name!r}: its {what} on states (3, {width}) must be "
                                         f"finite, of shape {shape} and dtype {dtype}, got {got}")
    if not torch.allclose(v, alone, rtol=1e-9, atol=1e-12):
        raise ParameterError("phis", f"phis: test function {tf.name!r} mixes the draws: a draw's value must depend on its "
                                     "own row of h alone")
    return tf


def phi_values(h: torch.Tensor, phis=DEFAULT_PHIS) -> torch.Tensor:
    """The test functions ``phis`` (names) at the outputs ``h`` ``(draws, d)``: ``(draws, len(phis))``."""
    return torch.stack([test_function(p).values(h) for p in phis], dim=1)


def phi_gradients(h: torch.Tensor, phis=DEFAULT_PHIS) -> torch.Tensor:
    """Their gradients at the states ``h`` (the integrands of the control variates): ``(draws, len(phis), d)``."""
    return torch.stack([test_function(p).grad(h) for p in phis], dim=1)
