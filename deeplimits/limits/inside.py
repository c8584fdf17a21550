"""The Itô SDE limit of the inside network with Brownian weights (Euler–Maruyama on the finest grid)."""

from __future__ import annotations


import torch

from .. import _validate as V_
from .._names import INSIDE_ACTIVATION
from ..errors import ParameterError
from ..options import SA, SB
from ..activations import activation as _activation
from ..paths import BrownianSample, DriverSample, SmoothSample
from .base import Limit, grid as _grid


DEFAULT_SA = SA.default
"""The entry scale ``s_A`` of the inside weights ``A`` (declared by :data:`deeplimits.options.SA`)."""
DEFAULT_SB = SB.default
"""The entry scale ``s_b`` of the inside biases ``b`` (declared by :data:`deeplimits.options.SB`)."""
_SCALE_OF = {"W": "sa", "b": "sb"}


class InsideSDEScheme:
    """One Euler–Maruyama step of the inside-SDE limit (see :class:`InsideSDELimit`):

        H + alpha (dX^A H + dX^b) + [ (c/2) (s_A^2 ||H||^2 + s_b^2) 1 + A(t) H + b(t) ] / n

    with ``c = sigma''(0)`` (``0`` without the Itô correction), ``dX^A``, ``dX^b`` the Brownian
    increments over the step (``W``, ``b``) and ``A(t)``, ``b(t)`` the smooth drift (``W_drift``,
    ``b_drift``, omitted when the limit has none). ``step(H, 1.0, n, W=dX^A, ...)`` is one step
    of size ``1/n``, like the other limits' schemes.
    """

    def __init__(self, sigma2: float, sa: float, sb: float):
        self.sigma2, self.sa, self.sb = sigma2, sa, sb

    def step(self, h, alpha, depth, W=None, b=None, W_drift=None, b_drift=None) -> torch.Tensor:
        """One step of size ``1/depth`` from ``h``: the increments ``W``, ``b`` scaled by ``alpha``, the Itô
        term and the drift ``W_drift``, ``b_drift`` over ``dt = 1/depth``."""
        out = h + alpha * (h @ W.transpose(-1, -2))
        if b is not None:
            out = out + alpha * b.unsqueeze(-2)
        dt = 1.0 / depth
        if self.sigma2:
            qv = self.sa ** 2 * (h * h).sum(-1, keepdim=True) + self.sb ** 2  # d<H^i>/dt, every i
            out = out + (0.5 * self.sigma2 * dt) * qv
        if W_drift is not None:
            out = out + dt * (h @ W_drift.transpose(-1, -2))
        if b_drift is not None:
            out = out + dt * b_drift.unsqueeze(-2)
        return out


class InsideSDELimit(Limit):
    """Itô SDE limit of the inside network ``h_{k+1} = h_k + sigma(A_k h_k + b_k)`` with
    Brownian weights (Cohen, Cont, Rossier & Xu, ICML 2021, Thm 4.4):

        dH = dX^A H + dX^b + (1/2) sigma''(0) (s_A^2 ||H||^2 + s_b^2) 1 dt + (A(t) H + b(t)) dt

    ``X^A = s_A B^A`` (d x d), ``X^b = s_b B^b`` (d) scaled Brownian motions; the middle term is
    the Itô correction produced by the curvature of sigma at 0 (``s_A^2 ||H||^2 + s_b^2`` is the
    quadratic variation rate of every component of ``dX^A H + dX^b``); the last term is present
    when the weights carry a smooth drift part at ``beta = 1`` (``drift=True``).

    The network is not a discretisation of this SDE (the drift comes from the Taylor expansion
    of sigma), so the reference is the Euler–Maruyama scheme (:meth:`scheme`) on a much finer
    grid of the same Brownian path.

    Args:
        activation: a C^3 activation with ``sigma(0) = 0``, ``sigma'(0) = 1`` (default softplus0).
        sa, sb: entry standard deviations of ``X^A`` and ``X^b`` per unit time (``sb = 0``: no bias).
        drift: include the smooth drift ``A(t) H + b(t)``.
        ito_correction: ``False`` drops the Itô term (an ablation: then this is not the limit).
    """

    reference_method = "Euler–Maruyama on the grid 1/{steps} of the same Brownian paths"

    def __init__(self, activation=None, sa: float = DEFAULT_SA, sb: float = DEFAULT_SB, *, drift: bool = False,
                 ito_correction: bool = True):
        self.activation = _activation(INSIDE_ACTIVATION if activation is None else activation)
        """The activation ``sigma`` (``c = sigma''(0)`` weighs the Itô correction)."""
        self.sigma2 = V_.inside_activation(self.activation, regime="inside-sde")[0]
        """``sigma''(0)``, the coefficient ``c`` of the Itô correction."""
        self.sa, self.sb = V_.option(SA, sa, missing_ok=False), V_.option(SB, sb, missing_ok=False)
        self.drift, self.ito_correction = V_.flag("drift", drift), V_.flag("ito_correction", ito_correction)

    def scheme(self) -> InsideSDEScheme:
        """The Euler–Maruyama scheme: ``step(H, 1.0, n, W=dX^A, b=dX^b[, W_drift=A(t), b_drift=b(t)])``."""
        return InsideSDEScheme(self.sigma2 if self.ito_correction else 0.0, self.sa, self.sb)

    def solve(self, h0, depth: int, *, W: BrownianSample, b: BrownianSample | None = None, W_drift=None,
              b_drift=None, steps: int | None = None) -> torch.Tensor:
        """Solve on ``k / depth`` with ``steps`` Euler–Maruyama steps (default: the resolution
        of ``W``) and return ``(depth + 1, draws, inputs, width)``. ``W`` (shape ``(d, d)``, scale
        ``sa``) and ``b`` (``(d,)``, scale ``sb``) are Brownian samples; ``W_drift``, ``b_drift``
        smooth samples (required iff ``drift``), read at the right end of each step.
        Holds the increments of the finest grid in memory (the convergence engine streams them).
        """
        h0 = V_.states("h0", h0)
        n, _, d = h0.shape
        DriverSample.expect("W", W, "brownian")
        res = W.resolution
        depth = V_.divides("depth", depth, res)
        steps = res if steps is None else V_.divides("steps", steps, res)
        if steps % depth:
            raise ParameterError("steps", f"steps must be a multiple of depth = {depth}, got {steps}")
        paths = {"W": (W, (d, d), self.sa), "b": (b, (d,), self.sb)}
        for name, (s, shape, scale) in paths.items():
            if s is None:
                if name == "b" and self.sb > 0:
                    raise ParameterError("b", f"b is required when sb = {self.sb} > 0")
                continue
            if getattr(s, "kind", None) != "brownian" or s.resolution != res:
                raise ParameterError(name, f"{name} must be a BrownianSample of resolution {res}")
            if s.shape != shape or s.draws != n or s.dtype != h0.dtype:
                raise ParameterError(name, f"{name} must be a {h0.dtype} sample of shape {shape} with {n} draws, "
                                           f"got {s.dtype} {s.shape} with {s.draws}")
            if abs(s.scale - scale) > 1e-12 * max(1.0, scale):
                raise ParameterError(name, f"{name} has scale {s.scale}, the limit expects {_SCALE_OF[name]} = {scale}")
        smooth = {"W_drift": W_drift, "b_drift": b_drift}
        if not self.drift and any(s is not None for s in smooth.values()):
            raise ParameterError("W_drift", "W_drift and b_drift are not used: this limit has no drift part "
                                            "(drift=False)")
        if self.drift:
            for name, s in smooth.items():
                if getattr(s, "kind", None) != SmoothSample.kind:
                    raise ParameterError(name, f"{name} must be a SmoothSample (the drift part, drift=True)")
        parts = {"W": W.increments(steps), "b": None if b is None else b.increments(steps)}
        if self.drift:
            t = _grid(steps, torch.float64)[1:].to(h0.device, h0.dtype)  # right ends of the steps
            parts.update({name: s.at(t) for name, s in smooth.items()})
        scheme = self.scheme()
        every = steps // depth
        out, H = [h0], h0
        for j in range(steps):
            H = scheme.step(H, 1.0, steps, **{k: None if v is None else v[j] for k, v in parts.items()})
            if (j + 1) % every == 0:
                out.append(H)
        return torch.stack(out)

    def _parts(self, weights):
        """The weights the limit uses: the smooth drift parts only when it has a drift."""
        keep = ("W", "b", "W_drift", "b_drift") if self.drift else ("W", "b")
        return {k: v for k, v in weights.items() if k in keep}

    def solve_sample(self, h0, weights, depth):
        return self.solve(h0, depth, **self._parts(weights))

    def reference_step(self, weights, steps):
        scheme, parts = self.scheme(), self._parts
        return lambda H, x: scheme.step(H, 1.0, steps, **parts(x))

