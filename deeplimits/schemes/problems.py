"""Test equations for :func:`~deeplimits.strong_order` (docs/schemes.md), with their exact
solutions where they have one:

* :func:`linear_sde`: the scalar linear Itô SDE ``dX = a X dt + b X dW``,
  ``X_t = x0 exp((a - b^2/2) t + b W_t)`` (Stratonovich: ``dX = a X dt + b X o dW``,
  ``X_t = x0 exp(a t + b W_t)``);
* :func:`regime_noise`: the noise of the ``sde`` regime, ``dH^i = sum_j s sigma(H^j) dB^{ij}``
  (``s = d^-1/2``): ``d^2`` channels, not commutative;
* :func:`linear_young`: the scalar linear Young equation ``dX = b X dB^H``, ``X_t = x0 exp(b B^H_t)``;
* :func:`ornstein_uhlenbeck`: ``dX = -a X dt + s dW``, additive noise (Euler-Maruyama has strong
  order 1 there); its solution needs the whole path, so the reference is nested;
* :func:`sin_cos`: ``dX = sin X dt + s cos X dW``, a nonlinear scalar SDE (nested reference).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import torch
from ..errors import ParameterError

__all__ = ["Problem", "linear_sde", "regime_noise", "linear_young", "ornstein_uhlenbeck", "sin_cos", "PROBLEMS",
           "scheme_on", "scheme_and_problem"]


@dataclasses.dataclass(frozen=True)
class Problem:
    """An equation ``dX = drift dt + diffusion dW``: ``drift(t, x)`` (or ``None``), ``diffusion(t, x)
    -> (batch, d, m)``, ``derivative(t, x)``: ``L^j g^k`` as ``(m, batch, d, m)`` (or ``None``),
    ``exact(x0, W_t, t)`` (or ``None``), the dimensions ``d`` and ``m`` and the noise structure."""

    drift: Callable | None
    diffusion: Callable
    derivative: Callable | None
    exact: Callable | None
    d: int
    m: int
    noise: str
    #: scheme name -> (the error constant of :class:`~deeplimits.orders.StrongOrder`, its source), where known
    constants: dict = dataclasses.field(default_factory=dict)


def linear_sde(a: float = 0.1, b: float = 0.5, *, stratonovich: bool = False) -> Problem:
    """``dX = a X dt + b X dW`` (``o dW`` when ``stratonovich``), scalar, with its exact solution."""
    shift = a if stratonovich else a - b * b / 2
    # Euler–Maruyama (Itô): L^1/2 (h_L - X_1) -> X_1 b^2 B'_1 / sqrt(2) (Kurtz & Protter 1991), so
    # E|.| = x0 e^a b^2 / sqrt(pi) for x0 = 1 (docs/mathematics.md, "Error constants")
    constants = {} if stratonovich else {"euler-maruyama": (math.exp(a) * b * b / math.sqrt(math.pi), (
        "Kurtz & Protter 1991: L^1/2 (h_L - X_1) -> X_1 b^2 B'_1 / sqrt(2), E|.| = e^a b^2 / sqrt(pi) at x0 = 1"))}
    return Problem(lambda t, x: a * x, lambda t, x: b * x[..., None], lambda t, x: (b * b * x)[None, ..., None],
                   lambda x0, w, t: x0 * torch.exp(shift * t + b * w), 1, 1, "diagonal", constants)


def regime_noise(width: int, activation: Callable = torch.tanh, derivative: Callable | None = None) -> Problem:
    """The ``sde`` regime's equation ``dH^i = sum_j s sigma(H^j) dB^{ij}``, ``s = d^-1/2``, as a
    diffusion on ``d^2`` channels ``(i, j)``; ``derivative`` is ``sigma'`` (default: that of tanh).
    ``L^{(a,b)} g^{(c,e)} = s^2 sigma(H^b) sigma'(H^a) 1{e = a} e_c`` in closed form."""
    d, s = width, width ** -0.5
    dsig = derivative or (lambda x: 1 - torch.tanh(x) ** 2)
    eyes: dict = {}

    def eye(x):  # the identity where the states live, made once per device and dtype (no copy per step)
        key = (x.device, x.dtype)
        if key not in eyes:
            eyes[key] = torch.eye(d, dtype=x.dtype, device=x.device)
        return eyes[key]

    def g(t, x):
        return s * (eye(x)[None, :, :, None] * activation(x)[:, None, None, :]).reshape(len(x), d, d * d)

    def lg(t, x):  # [(a, b), batch, c, (c', e)] = s^2 sigma(x_b) sigma'(x_a) 1{e = a} 1{c = c'}
        sig, dsg = activation(x), dsig(x)
        coef = s * s * sig[:, None, :] * dsg[:, :, None]  # (batch, a, b)
        out = coef[:, :, :, None, None, None] * eye(x)[None, None, None, :, :, None] * \
            eye(x)[None, :, None, None, None, :]  # (batch, a, b, c, c', e)
        return out.reshape(len(x), d * d, d, d * d).movedim(1, 0)

    return Problem(None, g, lg, None, d, d * d, "general")


def linear_young(b: float = 1.0) -> Problem:
    """``dX = b X dB^H``, scalar, with its exact solution ``x0 exp(b B^H_t)`` (Young chain rule)."""
    return Problem(None, lambda t, x: b * x[..., None], lambda t, x: (b * b * x)[None, ..., None],
                   lambda x0, w, t: x0 * torch.exp(b * w), 1, 1, "diagonal")


def ornstein_uhlenbeck(a: float = 1.0, s: float = 0.3) -> Problem:
    """``dX = -a X dt + s dW``, scalar, additive noise (no exact solution from ``W_t`` alone)."""
    return Problem(lambda t, x: -a * x, lambda t, x: torch.full_like(x, s)[..., None],
                   lambda t, x: torch.zeros_like(x)[None, ..., None], None, 1, 1, "additive")


def sin_cos(s: float = 0.5) -> Problem:
    """``dX = sin X dt + s cos X dW``, scalar, nonlinear (Itô), with ``L g = -s^2 cos X sin X``."""
    return Problem(lambda t, x: torch.sin(x), lambda t, x: (s * torch.cos(x))[..., None],
                   lambda t, x: (-s * s * torch.cos(x) * torch.sin(x))[None, ..., None], None, 1, 1, "diagonal")


#: problem name -> builder ``(width, hurst) -> Problem``
PROBLEMS = {"linear-sde": lambda width, hurst: linear_sde(),
            "linear-stratonovich": lambda width, hurst: linear_sde(stratonovich=True),
            "sde-regime": lambda width, hurst: regime_noise(width or 2),
            "linear-young": lambda width, hurst: linear_young(),
            "ou": lambda width, hurst: ornstein_uhlenbeck(),
            "sin-cos": lambda width, hurst: sin_cos()}


def scheme_on(scheme: str, problem: str, *, width: int | None = None, hurst: float | None = None,
              noise: str | None = None):
    """The shipped scheme ``scheme`` (:data:`deeplimits._names.SCHEMES`) on the test equation
    ``problem`` (:data:`PROBLEMS`): ``(scheme, problem)`` (what ``deeplimits order`` runs).
    ``noise`` declares the noise structure (default: the problem's); ``hurst`` is required by
    ``linear-young`` and ``modified-euler``, and refused elsewhere."""
    from .. import _validate as V_
    from .._names import SCHEMES
    from . import EulerMaruyama, Heun, Milstein, ModifiedEuler

    problem = V_.choice("problem", problem, tuple(PROBLEMS))
    scheme = V_.choice("scheme", scheme, SCHEMES)
    young = problem == "linear-young"
    if young != (scheme == "modified-euler"):
        raise ParameterError("scheme", f"scheme {scheme!r} does not apply to problem {problem!r} (modified-euler is for "
                         "linear-young, the others for the Itô and Stratonovich SDEs)")
    if young != (hurst is not None):
        raise ParameterError("hurst", "hurst must be given for problem 'linear-young' (in (0.5, 1)), and only for it")
    if width is not None and problem != "sde-regime":
        raise ParameterError("width", f"width applies only to problem 'sde-regime', not {problem!r}")
    width = None if width is None else V_.integer("width", width)
    if problem == "sde-regime":  # the d^2 channels: a diffusion (d, d^2) per draw, Milstein's L^j g^k (d^6)
        from .. import _resources as R_

        d = width or 2
        R_.require_memory(8 * (3 * d ** 3 + d * d + (2 * d ** 6 if scheme == "milstein" else 0)),
                          f"per draw for the {scheme} step of problem 'sde-regime' at width={d}", ("width",))
    p = PROBLEMS[problem](width, hurst)
    noise = p.noise if noise is None else noise
    if scheme == "modified-euler":
        return ModifiedEuler(p.diffusion, hurst, p.drift, derivative=p.derivative), p
    if scheme.startswith("torchsde-"):
        return _torchsde(scheme.split("-", 1)[1], p, problem), p
    cls = {"euler-maruyama": EulerMaruyama, "milstein": Milstein, "heun": Heun}[scheme]
    kw = {"derivative": p.derivative} if scheme == "milstein" else {}
    s = cls(p.drift, p.diffusion, noise=noise, **kw)
    if scheme in p.constants:
        c, source = p.constants[scheme]
        s.order = dataclasses.replace(s.order, constant=c, constant_source=source)
    return s, p


def _torchsde(method: str, p: Problem, problem: str):
    """A torchsde SDE of the scalar linear problems, stepped by :class:`~deeplimits.schemes.TorchsdeScheme`."""
    from . import TorchsdeScheme

    if problem not in ("linear-sde", "linear-stratonovich"):
        raise ParameterError("problem", f"the torchsde schemes run the scalar linear SDEs (linear-sde, linear-stratonovich), "
                         f"not {problem!r}")

    class Linear:
        noise_type, sde_type = "diagonal", "stratonovich" if problem == "linear-stratonovich" else "ito"

        def f(self, t, y):
            return p.drift(t, y)

        def g(self, t, y):
            return p.diffusion(t, y)[..., 0]

    if method == "milstein" and Linear.sde_type == "stratonovich":
        raise ParameterError("problem", "torchsde-milstein runs the Itô problem linear-sde")
    return TorchsdeScheme(Linear(), method)


def scheme_and_problem(scheme, problem, *, width: int | None = None, hurst: float | None = None,
                       noise: str | None = None):
    """``(scheme, problem)`` where either may be a user's object: a :class:`~deeplimits.schemes.Scheme`
    (or a callable with an ``order``) and a :class:`Problem`; names as :func:`scheme_on`. A user's
    scheme runs on a named problem as it is; a shipped ``euler-maruyama``, ``milstein`` or ``heun``
    is built on a user's problem (its drift, diffusion, derivative and noise); the other shipped
    schemes are written for their own problems and refused there in one line."""
    from .. import _validate as V_
    from .._names import SCHEMES
    from . import EulerMaruyama, Heun, Milstein

    if isinstance(scheme, str) and isinstance(problem, str):
        return scheme_on(scheme, problem, width=width, hurst=hurst, noise=noise)
    if isinstance(problem, str):
        problem = V_.choice("problem", problem, tuple(PROBLEMS))
        if width is not None and problem != "sde-regime":
            raise ParameterError("width", f"width applies only to problem 'sde-regime', not {problem!r}")
        p = PROBLEMS[problem](None if width is None else V_.integer("width", width), hurst)
    elif isinstance(problem, Problem):
        p = problem
    else:
        raise ParameterError("problem", f"problem must be a name ({', '.join(PROBLEMS)}) or a Problem, got "
                                        f"{type(problem).__name__}")
    if not isinstance(scheme, str):
        if not (callable(scheme) and hasattr(scheme, "order")):
            raise ParameterError("scheme", f"scheme must be a name or a Scheme, got {type(scheme).__name__}")
        return scheme, p
    classes = {"euler-maruyama": EulerMaruyama, "milstein": Milstein, "heun": Heun}
    name = V_.choice("scheme", scheme, SCHEMES)
    if name not in classes:
        raise ParameterError("scheme", f"scheme {name!r} is written for its own problems; on a problem of your own "
                                       f"give one of {', '.join(classes)}")
    if name == "milstein" and p.derivative is None:
        raise ParameterError("scheme", "scheme 'milstein' needs the problem's derivative L^j g^k (Problem.derivative)")
    kw = {"derivative": p.derivative} if name == "milstein" else {}
    return classes[name](p.drift, p.diffusion, noise=p.noise if noise is None else noise, **kw), p
