"""Continuous-time limits of residual networks, SPEC §3.

* :class:`SDELimit` — Itô SDE ``dH = dX sigma(H)`` driven by the scaled Brownian matrix path
  ``X = B / sqrt(d)`` (general noise, ``d^2`` channels), solved with torchsde on the finest
  grid of the same Brownian sample. The diffusion is only ever applied as a matrix–vector
  product (``g_prod``); the ``d x d^2`` diffusion matrix is never formed.
* :class:`ODELimit` — neural ODE ``dH = V(t) g(H, W(t)) dt`` with smooth weights evaluated
  between grid points, solved adaptively with torchdiffeq; :meth:`ODELimit.picard` is an
  independent Picard-iteration (Chebyshev collocation) solve to cross-check it.
* :class:`YoungLimit` — Young equation ``dH = dX sigma(H)`` driven by a fractional Brownian
  matrix path (H > 1/2), solved by the modified Euler scheme on the finest grid.
* :class:`InsideSDELimit` — the Itô SDE ``dH = dX^A H + dX^b + (1/2) sigma''(0) (s_A^2 |H|^2 +
  s_b^2) 1 dt (+ smooth drift)`` of the inside network with Brownian weights, solved by
  Euler–Maruyama on the finest grid of the same Brownian paths.
* :class:`InsideODELimit` — the linear ODE ``dH = (A(t) H + b(t)) dt`` of the inside network with
  smooth weights, solved adaptively with torchdiffeq (Picard cross-check as for the ODE).

Every ``solve`` returns the limit on the grid ``k / depth`` as ``(depth + 1, draws, inputs, width)``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torchdiffeq
import torchsde
from torchsde._brownian import BaseBrownian

from . import _validate as V_
from .activations import activation as _activation
from .drivers import BrownianSample, FractionalSample, PathSample, SmoothSample
from .networks import _NEEDS, ModifiedEulerResNet, ResNet

__all__ = ["SDELimit", "ODELimit", "YoungLimit", "GridBrownian", "InsideSDELimit", "InsideSDEScheme", "InsideODELimit"]


class GridBrownian(BaseBrownian):
    """A torchsde Brownian motion whose values on the grid ``k / resolution`` are those of a
    :class:`~deeplimits.drivers.PathSample` (flattened to ``(draws, prod(shape))``).

    Only grid times are valid, which is all a fixed-step solver with ``dt = 1/resolution``
    on dyadic times ever asks for (dyadic times are exact in binary floating point).
    It holds the whole path, ``(resolution + 1) * draws * prod(shape)`` numbers: use it for
    checks against torchsde; the convergence engine streams the increments instead.
    """

    __slots__ = ("_path", "_n")

    def __init__(self, sample: PathSample):
        path = sample.path(sample.resolution)
        self._path = path.reshape(path.shape[0], sample.draws, -1)
        self._n = sample.resolution

    def _index(self, t) -> int:
        x = float(t) * self._n
        k = round(x)
        if abs(x - k) > 1e-6 or not 0 <= k <= self._n:
            raise ValueError(f"GridBrownian queried at t={float(t)!r}, off the grid k/{self._n}")
        return k

    def __call__(self, ta, tb=None, return_U=False, return_A=False):
        if return_U or return_A:
            raise ValueError("GridBrownian has no space-time Levy area; use method='euler'")
        if tb is None:
            return self._path[self._index(ta)]
        return self._path[self._index(tb)] - self._path[self._index(ta)]

    def __repr__(self):
        return f"GridBrownian(resolution={self._n}, shape={tuple(self.shape)})"

    @property
    def dtype(self):
        return self._path.dtype

    @property
    def device(self):
        return self._path.device

    @property
    def shape(self):
        return self._path.shape[1:]

    @property
    def levy_area_approximation(self):
        return "none"


def _grid(depth: int, dtype) -> torch.Tensor:
    return torch.arange(depth + 1, dtype=torch.float64).div_(depth).to(dtype)


class _SDE(torch.nn.Module):
    noise_type = "general"
    sde_type = "ito"

    def __init__(self, sigma, shape):
        super().__init__()
        self.sigma, self.shape = sigma, shape  # shape = (draws, inputs, width)

    def f(self, t, y):
        return torch.zeros_like(y)

    def g_prod(self, t, y, v):
        n, m, d = self.shape
        return (self.sigma(y.view(n, m, d)) @ v.view(n, d, d).transpose(-1, -2)).reshape(n, m * d)


class SDELimit:
    """Itô SDE ``dH_t = d^{-1/2} dB_t sigma(H_t)``, the limit of res-1 with Brownian weights
    at ``beta = 1/2`` (strong rate ``L^{-1/2}``).

    Solved with ``torchsde.sdeint`` (Euler–Maruyama, general noise) on the finest grid
    ``1 / resolution`` of the sample's Brownian path; with increments only no scheme beats
    rate 1/2, so the same scheme on a much finer grid is the reference.
    """

    def __init__(self, activation=None):
        self.activation = _activation("tanh" if activation is None else activation)

    def scheme(self) -> ResNet:
        """The Euler–Maruyama scheme as a network: ``step(H, 1, n, V=dX)`` is one EM step
        with the Brownian increment ``dX`` (identical to torchsde's Euler step)."""
        return ResNet("res-1", self.activation, beta=0.5)

    def solve(self, h0: torch.Tensor, V: BrownianSample, depth: int, *, steps: int | None = None) -> torch.Tensor:
        """Solve on ``k / depth`` with ``steps`` Euler–Maruyama steps (default: the sample's
        resolution; a multiple of ``depth`` dividing the resolution)."""
        if not isinstance(V, BrownianSample):
            raise ValueError("V must be a BrownianSample (IIDDriver('gaussian').sample(...))")
        h0 = V_.states("h0", h0)
        depth = V_.divides("depth", depth, V.resolution)
        n, m, d = h0.shape
        if V.shape != (d, d) or V.draws != n:
            raise ValueError(f"V must be a sample of shape ({d}, {d}) with {n} draws, got {V.shape} with {V.draws}")
        if V.dtype != h0.dtype:
            raise ValueError(f"h0 must have dtype {V.dtype} to match the weights, got {h0.dtype}")
        steps = V.resolution if steps is None else V_.divides("steps", steps, V.resolution)
        if steps % depth:
            raise ValueError(f"steps must be a multiple of depth = {depth}, got {steps}")
        sde = _SDE(self.activation, (n, m, d))
        ts = _grid(depth, h0.dtype)
        ys = torchsde.sdeint(sde, h0.reshape(n, m * d), ts, bm=GridBrownian(V), method="euler",
                             dt=1.0 / steps)
        return ys.reshape(depth + 1, n, m, d)


class ODELimit:
    """Neural ODE ``dH_t = V(t) g(H_t, W(t)) dt``, the limit of res-1/2/3 with smooth weights
    at ``beta = 1`` (the network is its right-point Euler scheme: strong rate ``L^{-1}``).

    Existence and uniqueness: Picard–Lindelöf (g Lipschitz, V, W continuous).

    Args:
        arch: residual map of the network (``res-1``, ``res-2``, ``res-3``).
        activation: as for :class:`~deeplimits.networks.ResNet`.
        rtol, atol: tolerances of the adaptive ``dopri5`` solve (default 1e-10, or 1e-8 for
            ReLU-type activations, whose kinks make tight tolerances very costly).
    """

    def __init__(self, arch: str = "res-1", activation=None, rtol: float | None = None, atol: float | None = None):
        self.field = ResNet(arch, activation, beta=1.0)
        if arch == "inside":
            raise ValueError("arch must be 'res-1', 'res-2' or 'res-3' for the ODE limit")
        self._tolerances(rtol, atol)

    def _tolerances(self, rtol, atol):
        # kinks of ReLU-type activations make a tight tolerance cost thousands of steps
        kinked = self.field.activation.name.startswith(("relu", "leaky_relu"))
        default = 1e-8 if kinked else 1e-10
        self.rtol = default if rtol is None else V_.real("rtol", rtol, low=0.0, low_open=True)
        self.atol = default if atol is None else V_.real("atol", atol, low=0.0, low_open=True)

    def _check(self, h0, weights: dict):
        """``weights``: weight name (V, W, b) -> SmoothSample, callable or None."""
        h0 = V_.states("h0", h0)
        n, _, d = h0.shape
        arch = self.field.arch
        for name, s in weights.items():
            if s is None:
                if name in _NEEDS[arch]:
                    raise ValueError(f"{name} is required for arch {arch!r}")
                continue
            if name not in _NEEDS[arch] + (("b",) if arch == "inside" else ()):
                raise ValueError(f"{name} is not used by arch {arch!r}; pass only {', '.join(_NEEDS[arch])}")
            if not callable(s) and not isinstance(s, SmoothSample):
                raise ValueError(f"{name} must be a SmoothSample or a callable t -> weights")
            w0 = s.at(0.0) if isinstance(s, SmoothSample) else s(torch.zeros((), dtype=h0.dtype))
            V_.tensor(name, w0, shape=(n, d) if name == "b" else (n, d, d), dtype_=h0.dtype)
        return h0

    @staticmethod
    def _at(s, t):
        if s is None:
            return None
        return s.at(t) if isinstance(s, SmoothSample) else s(t)

    @staticmethod
    def _at_many(s, ts):
        if s is None:
            return None
        if isinstance(s, SmoothSample):
            return s.at(ts)
        return torch.stack([s(t) for t in ts])  # a callable of one time

    def solve(self, h0, V, depth: int, W=None) -> torch.Tensor:
        """Solve on ``k / depth``. ``V``/``W`` are :class:`SmoothSample` or callables ``t -> (draws, d, d)``."""
        return self._solve(h0, {"V": V, "W": W}, depth)

    def _solve(self, h0, weights, depth):
        h0 = self._check(h0, weights)
        depth = V_.integer("depth", depth)

        def rhs(t, h):
            return self.field.residual(h, **{k: self._at(s, t) for k, s in weights.items()})

        ts = _grid(depth, h0.dtype)
        return torchdiffeq.odeint(rhs, h0, ts, method="dopri5", rtol=self.rtol, atol=self.atol)

    def picard(self, h0, V, depth: int, W=None, *, nodes: int = 256, tol: float = 1e-12,
               max_iter: int = 200) -> torch.Tensor:
        """Independent solve by Picard iteration ``H <- H_0 + int_0^t V g(H, W) ds``.

        The iterate is represented by its values at ``nodes`` Chebyshev–Lobatto points of
        [0, 1] and integrated spectrally (exact for polynomials of degree < nodes), so for
        smooth weights and activations it converges to the solution geometrically in the
        number of nodes; the iteration itself converges like ``(K t)^m / m!``.
        Raises if ``max_iter`` iterations do not reach ``tol``.
        """
        return self._picard(h0, {"V": V, "W": W}, depth, nodes, tol, max_iter)

    def _picard(self, h0, weights, depth, nodes, tol, max_iter):
        h0 = self._check(h0, weights)
        depth = V_.integer("depth", depth)
        nodes = V_.integer("nodes", nodes, low=2)
        tol = V_.real("tol", tol, low=0.0, low_open=True)
        max_iter = V_.integer("max_iter", max_iter)
        S, E = _chebyshev_operators(nodes, depth)
        S, E = S.to(h0.dtype), E.to(h0.dtype)
        s = torch.from_numpy(_lobatto(nodes)).to(h0.dtype)
        at_nodes = {k: self._at_many(w, s) for k, w in weights.items()}
        H = h0.expand(nodes, *h0.shape).clone()
        for _ in range(max_iter):
            F = self.field.residual(H, **at_nodes)
            H_new = h0 + torch.tensordot(S, F, dims=1)
            delta = float((H_new - H).abs().max())
            H = H_new
            if delta < tol:
                return torch.tensordot(E, H, dims=1)
        raise RuntimeError(f"Picard iteration did not reach tol={tol} in {max_iter} iterations (last change {delta:.2e})")


class InsideODELimit(ODELimit):
    """Linear ODE ``dH_t = (A(t) H_t + b(t)) dt``, the limit of the inside network
    ``h_{k+1} = h_k + L^-alpha sigma(L^-beta (A(t_k) h_k + b(t_k)))`` with smooth ``A``, ``b``,
    ``alpha + beta = 1`` and ``sigma(0) = 0``, ``sigma'(0) = 1`` (the limit does not depend on
    the activation). Solved adaptively (``dopri5``, ``rtol = atol = 1e-10`` by default), with the
    same Picard cross-check as :class:`ODELimit`; ``A`` is passed as ``W`` (the inside
    network's name for it) and ``b`` is optional.
    """

    def __init__(self, rtol: float | None = None, atol: float | None = None):
        self.field = ResNet("inside", "identity", beta=1.0)  # sigma = identity: A h + b
        self._tolerances(rtol, atol)

    def solve(self, h0, W, depth: int, b=None) -> torch.Tensor:
        """Solve on ``k / depth``; ``W``: ``(draws, d, d)``, ``b``: ``(draws, d)`` at each time."""
        return self._solve(h0, {"W": W, "b": b}, depth)

    def picard(self, h0, W, depth: int, b=None, *, nodes: int = 256, tol: float = 1e-12,
               max_iter: int = 200) -> torch.Tensor:
        """Independent solve by Picard iteration (see :meth:`ODELimit.picard`)."""
        return self._picard(h0, {"W": W, "b": b}, depth, nodes, tol, max_iter)


def _lobatto(n: int) -> np.ndarray:
    """Chebyshev–Lobatto points mapped to [0, 1], increasing."""
    return (1.0 - np.cos(np.pi * np.arange(n) / (n - 1))) / 2.0


def _chebyshev_operators(n: int, depth: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Integration matrix ``S`` (values at nodes -> integral from 0 at nodes) and evaluation
    matrix ``E`` (values at nodes -> values at ``k / depth``), both through the degree-(n-1)
    Chebyshev interpolant."""
    from numpy.polynomial import chebyshev as C

    x = 2.0 * _lobatto(n) - 1.0
    inv_vander = np.linalg.inv(C.chebvander(x, n - 1))  # values -> coefficients
    anti = C.chebint(np.eye(n), lbnd=-1.0, axis=0)  # coefficients of antiderivatives
    S = 0.5 * C.chebvander(x, n) @ anti @ inv_vander
    E = C.chebvander(2.0 * np.arange(depth + 1) / depth - 1.0, n - 1) @ inv_vander
    return torch.from_numpy(S), torch.from_numpy(E)


class YoungLimit:
    """Young equation ``dH_t = d^{-1/2} dB^H_t sigma(H_t)`` (H > 1/2), the limit of res-1 with
    fractional weights at ``beta = H`` (the network's strong rate is ``L^{1-2H}``).

    Solved by the modified Euler scheme (Hu, Liu & Nualart 2016; strong rate ``L^{1/2-2H}``
    for H < 3/4, about ``L^{-1}`` above) on the finest grid of the same fBm path.
    """

    def __init__(self, activation=None, hurst: float = 0.75):
        self.hurst = V_.hurst(hurst, above_half=True)
        self.activation = _activation("tanh" if activation is None else activation)

    def scheme(self, scale: float | None = None) -> ModifiedEulerResNet:
        """The modified Euler scheme as a network; ``step(H, 1, n, V=dX)`` is one step of
        size ``1/n`` with the increment ``dX`` of the scaled fBm path."""
        return ModifiedEulerResNet(self.activation, self.hurst, scale=scale)

    def solve(self, h0, V: FractionalSample, depth: int) -> torch.Tensor:
        if not isinstance(V, FractionalSample):
            raise ValueError("V must be a FractionalSample (FractionalDriver(hurst).sample(...))")
        if abs(V.regularity - self.hurst) > 1e-12:
            raise ValueError(f"V has Hurst index {V.regularity}, the limit expects hurst={self.hurst}")
        h0 = V_.states("h0", h0)
        depth = V_.divides("depth", depth, V.resolution)
        every = V.resolution // depth
        out = [h for k, h in enumerate(self.scheme(V.scale).iterate(h0, V.iter_weights(V.resolution),
                                                                    depth=V.resolution))
               if k % every == 0]
        return torch.stack(out)


DEFAULT_SA, DEFAULT_SB = 0.25, 1.0  # entry scales of the inside weights (see docs/mathematics.md)
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


class InsideSDELimit:
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

    def __init__(self, activation=None, sa: float = DEFAULT_SA, sb: float = DEFAULT_SB, *, drift: bool = False,
                 ito_correction: bool = True):
        self.activation = _activation("softplus0" if activation is None else activation)
        self.sigma2 = V_.inside_activation(self.activation, regime="inside-sde")[0]
        self.sa = V_.real("sa", sa, low=0.0, low_open=True)
        self.sb = V_.real("sb", sb, low=0.0)
        for name, flag in (("drift", drift), ("ito_correction", ito_correction)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        self.drift, self.ito_correction = drift, ito_correction

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
        if not isinstance(W, BrownianSample):
            raise ValueError("W must be a BrownianSample (IIDDriver('gaussian').sample(...))")
        res = W.resolution
        depth = V_.divides("depth", depth, res)
        steps = res if steps is None else V_.divides("steps", steps, res)
        if steps % depth:
            raise ValueError(f"steps must be a multiple of depth = {depth}, got {steps}")
        paths = {"W": (W, (d, d), self.sa), "b": (b, (d,), self.sb)}
        for name, (s, shape, scale) in paths.items():
            if s is None:
                if name == "b" and self.sb > 0:
                    raise ValueError(f"b is required when sb = {self.sb} > 0")
                continue
            if not isinstance(s, BrownianSample) or s.resolution != res:
                raise ValueError(f"{name} must be a BrownianSample of resolution {res}")
            if s.shape != shape or s.draws != n or s.dtype != h0.dtype:
                raise ValueError(f"{name} must be a {h0.dtype} sample of shape {shape} with {n} draws, "
                                 f"got {s.dtype} {s.shape} with {s.draws}")
            if abs(s.scale - scale) > 1e-12 * max(1.0, scale):
                raise ValueError(f"{name} has scale {s.scale}, the limit expects {_SCALE_OF[name]} = {scale}")
        smooth = {"W_drift": W_drift, "b_drift": b_drift}
        if not self.drift and any(s is not None for s in smooth.values()):
            raise ValueError("W_drift and b_drift are not used: this limit has no drift part (drift=False)")
        if self.drift:
            for name, s in smooth.items():
                if not isinstance(s, SmoothSample):
                    raise ValueError(f"{name} must be a SmoothSample (the drift part, drift=True)")
        parts = {"W": W.increments(steps), "b": None if b is None else b.increments(steps)}
        if self.drift:
            t = _grid(steps, torch.float64)[1:].to(h0.dtype)  # right ends of the steps
            parts.update({name: s.at(t) for name, s in smooth.items()})
        scheme = self.scheme()
        every = steps // depth
        out, H = [h0], h0
        for j in range(steps):
            H = scheme.step(H, 1.0, steps, **{k: None if v is None else v[j] for k, v in parts.items()})
            if (j + 1) % every == 0:
                out.append(H)
        return torch.stack(out)
