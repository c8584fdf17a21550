"""Neural ODE limits of networks with smooth weights (torchdiffeq), with a Picard cross-check."""

from __future__ import annotations


import numpy as np
import torch

from .. import _validate as V_
from ..errors import ParameterError
from ..paths import DriverSample
from ..networks import ResNet
from .base import Limit, grid as _grid


class ODELimit(Limit):
    """Neural ODE ``dH_t = V(t) g(H_t, W(t)) dt``, the limit of res-1/2/3 with smooth weights
    at ``beta = 1`` (the network is its right-point Euler scheme: strong rate ``L^{-1}``).

    Existence and uniqueness: Picard–Lindelöf (g Lipschitz, V, W continuous).

    Args:
        arch: residual map of the network (``res-1``, ``res-2``, ``res-3``, ``inside``, or a
            :class:`~deeplimits.blocks.Block` of your own or its registered name: then
            ``dH_t = g(H_t, w(t)) dt``).
        activation: as for :class:`~deeplimits.networks.ResNet`.
        rtol, atol: tolerances of the adaptive ``dopri5`` solve (default 1e-10, or 1e-8 for
            ReLU-type activations, whose kinks make tight tolerances very costly).
    """

    def __init__(self, arch="res-1", activation=None, rtol: float | None = None, atol: float | None = None):
        self.field = ResNet(arch, activation, beta=1.0)
        """The vector field ``g(H, W(t))``: the residual map at ``beta = 1`` (a
        :class:`~deeplimits.networks.ResNet`)."""
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
        block, arch = self.field.block, self.field.arch
        for name, s in weights.items():
            if s is None:
                if name in block.required:
                    raise ParameterError(name, f"{name} is required for arch {arch!r}")
                continue
            if name not in block.weights:
                raise ParameterError(name, f"{name} is not used by arch {arch!r}; pass only "
                                           f"{', '.join(block.required)}")
            if hasattr(s, "kind"):  # a driver sample: the limit reads it at any time
                DriverSample.expect(name, s, "smooth")
            elif not callable(s):
                raise ParameterError(name, f"{name} must be a SmoothSample or a callable t -> weights")
            w0 = self._at(s, torch.zeros((), dtype=h0.dtype, device=h0.device))
            V_.tensor(name, w0, shape=(n, *block.weight_shape(name, d)), dtype_=h0.dtype)
        return h0

    @staticmethod
    def _at(s, t):
        if s is None:
            return None
        return s.at(t) if hasattr(s, "kind") else s(t)

    @staticmethod
    def _at_many(s, ts):
        if s is None:
            return None
        if hasattr(s, "kind"):  # a smooth sample reads many times at once
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

        ts = _grid(depth, h0.dtype, h0.device)
        import torchdiffeq  # here, not at import: torchdiffeq loads SciPy's integrators with it

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
        S, E = S.to(device=h0.device, dtype=h0.dtype), E.to(device=h0.device, dtype=h0.dtype)
        s = torch.from_numpy(_lobatto(nodes)).to(device=h0.device, dtype=h0.dtype)
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

    def solve_sample(self, h0, weights, depth):
        return self._solve(h0, dict(weights), depth)



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
        """The vector field ``A(t) H + b(t)``: the inside residual map with the identity."""
        self._tolerances(rtol, atol)

    def solve(self, h0, W, depth: int, b=None) -> torch.Tensor:
        """Solve on ``k / depth``; ``W``: ``(draws, d, d)``, ``b``: ``(draws, d)`` at each time."""
        return self._solve(h0, {"W": W, "b": b}, depth)

    def picard(self, h0, W, depth: int, b=None, *, nodes: int = 256, tol: float = 1e-12,
               max_iter: int = 200) -> torch.Tensor:
        """Independent solve by Picard iteration (see :meth:`ODELimit.picard`)."""
        return self._picard(h0, {"W": W, "b": b}, depth, nodes, tol, max_iter)

    def solve_sample(self, h0, weights, depth):
        return self.solve(h0, weights["W"], depth, b=weights.get("b"))



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
