"""The exact limit of the training dynamics for a linear activation (docs/shapes.md, "The exact
limit"; Chizat 2025; Chaintron, Chizat & Maass 2026).

The network ``h_0 = W_e x``, ``h_{l+1} = h_l + alpha/(L M) V_l U_l^T h_l / D``, ``f = W_u^T h_L / D``
trained by gradient descent (``U <- U - (lr/alpha) h q^T``, ``V <- V - (lr/alpha) B p^T`` with
``p = U^T h / D``, ``q = V^T B / D``, ``B = D dloss/dh``) has, as ``L, M, D`` grow, a limit in
which every embedding coordinate ``d`` follows a path that is linear in its own embedding row
``w_d = (W_e[d], W_u[d])`` (``n = d_in + d_out`` numbers):
``H_d(s, k) = w_d . h_k(s)`` and ``B_d(s, k) = w_d . b_k(s)`` for ``s`` in ``[0, 1]`` (the layer
``l`` sits at ``s = l/L``) and step ``k``. The coefficient paths solve, one step after the other,

* ``h_k' = b_{<k}^T C_k h_{<k} h_k`` from ``h_k(0) = (x, 0)``;
* ``b_k' = -h_{<k}^T C_k^T b_{<k} b_k`` back from ``b_k(1) = (0, f_k - y)``, ``f_k = h_k(1)[d_in:]``,

where ``h_{<k}``, ``b_{<k}`` stack the earlier steps' coefficients (``k x n``) and ``C_k(s)``
(``k x k``) is built from the kernels ``Gamma_H = h h^T``, ``Gamma_B = b b^T`` of the earlier steps
and the matrices ``P^u, P^v, Q^u, Q^v`` that write one neuron's pre-activations ``p^(k)`` and
back-signals ``q^(k)`` through the Gaussian fields ``u^(j) = U_0^T h^(j)/D`` (covariance
``Gamma_H``) and ``v^(j) = V_0^T B^(j)/D`` (covariance ``Gamma_B``):
``C = -lr (Q^v^T + P^u) + (lr^2/alpha)(P^u Gamma_H Q^u^T + P^v Gamma_B Q^v^T)``. The kernels are
the Gram matrices of the coefficient paths, so solving the paths solves the kernel ODEs in the
depth variable; the outputs are ``f_k`` and the loss ``|f_k - y|^2 / 2``.

Each linear ODE is solved by Chebyshev collocation on ``N + 1`` Chebyshev-Lobatto nodes of
``[0, 1]`` (the coefficients are analytic in ``s``: the error falls geometrically in ``N``), the
earlier steps read at the same nodes; :func:`linear_limit` doubles ``N`` until two solutions agree
within a tolerance and states the difference it measured.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ...errors import ParameterError

__all__ = ["LinearLimit", "linear_limit", "solve_limit", "chebyshev", "barycentric"]


def chebyshev(N: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``N + 1`` Chebyshev-Lobatto nodes of ``[0, 1]`` (increasing, ``0`` and ``1`` included)
    and the differentiation matrix on them (``(N + 1) x (N + 1)``)."""
    j = np.arange(N + 1)
    t = np.cos(np.pi * j / N)
    c = np.where((j == 0) | (j == N), 2.0, 1.0) * (-1.0) ** j
    dt = (c[:, None] / c[None, :]) / (t[:, None] - t[None, :] + np.eye(N + 1))
    dt -= np.diag(dt.sum(axis=1))
    return (1.0 - t) / 2.0, -2.0 * dt


def barycentric(nodes: np.ndarray, values: np.ndarray, s) -> np.ndarray:
    """``values`` (``(N + 1, ...)`` on the Chebyshev-Lobatto ``nodes``) interpolated at the points
    ``s`` (the polynomial of degree ``N`` through them, by the barycentric formula): ``(len(s), ...)``."""
    s = np.asarray(s, dtype=np.float64).reshape(-1)
    N = len(nodes) - 1
    w = (-1.0) ** np.arange(N + 1)
    w[0] *= 0.5
    w[-1] *= 0.5
    diff = s[:, None] - nodes[None, :]
    exact = diff == 0
    diff[exact] = 1.0
    k = w / diff
    k[exact.any(axis=1)] = exact[exact.any(axis=1)]  # a point on a node takes the node's value
    k /= k.sum(axis=1, keepdims=True)
    return np.tensordot(k, values, axes=(1, 0))


def _solve_linear(dmat: np.ndarray, mats: np.ndarray, value: np.ndarray, at: int) -> np.ndarray:
    """``z' = mats(s) z`` on the nodes (``mats``: ``(N + 1, n, n)``) with ``z(node at) = value``, by
    collocation: ``(N + 1, n)``."""
    N1, n = mats.shape[:2]
    A = np.kron(dmat, np.eye(n))
    idx = np.arange(N1)[:, None] * n + np.arange(n)[None, :]
    A[idx[:, :, None], idx[:, None, :]] -= mats
    A[at * n:(at + 1) * n] = 0.0
    A[at * n:(at + 1) * n, at * n:(at + 1) * n] = np.eye(n)
    rhs = np.zeros((N1 * n, 1))
    rhs[at * n:(at + 1) * n, 0] = value
    import torch  # its LAPACK on the torch threads (numpy's may start a pool per call)

    return torch.linalg.solve(torch.from_numpy(A), torch.from_numpy(rhs)).numpy().reshape(N1, n)


def _t(a: np.ndarray) -> np.ndarray:
    return a.swapaxes(-1, -2)


def solve_limit(x, y, *, steps: int, lr: float, alpha: float, nodes: int) -> dict:
    """The coefficient paths of :mod:`this module <deeplimits.studies.shapes.limit>` on ``nodes + 1``
    Chebyshev-Lobatto nodes: ``{'s', 'h', 'b', 'outputs'}`` with ``h``, ``b`` ``(steps, nodes + 1,
    n)`` and ``outputs`` ``(steps, d_out)`` (the output after ``k`` steps, ``k = 0..steps-1``)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    s, dmat = chebyshev(nodes)
    N1, din, dout, K, r = nodes + 1, len(x), len(y), steps, lr / alpha
    n = din + dout
    h, b = np.zeros((K, N1, n)), np.zeros((K, N1, n))
    h[0, :, :din], b[0, :, din:] = x, -y
    pu, pv, qu, qv = (np.zeros((N1, K, K)) for _ in range(4))
    pu[:, 0, 0] = qv[:, 0, 0] = 1.0
    outputs = np.zeros((K, dout))
    for k in range(1, K):
        hk, bk = h[:k].transpose(1, 0, 2), b[:k].transpose(1, 0, 2)  # (N1, k, n)
        gh, gb = hk @ _t(hk), bk @ _t(bk)
        Pu, Pv, Qu, Qv = pu[:, :k, :k], pv[:, :k, :k], qu[:, :k, :k], qv[:, :k, :k]
        C = -lr * (_t(Qv) + Pu) + lr * r * (Pu @ gh @ _t(Qu) + Pv @ gb @ _t(Qv))
        h[k] = _solve_linear(dmat, _t(bk) @ C @ hk, np.r_[x, np.zeros(dout)], 0)
        g = np.einsum("sjn,sn->sj", hk, h[k])  # Gamma_H^{jk}, j < k
        pu[:, k, :k], pv[:, k, :k] = -r * np.einsum("sjb,sj->sb", Qu, g), -r * np.einsum("sjb,sj->sb", Qv, g)
        pu[:, k, k] = 1.0
        outputs[k] = h[k][-1, din:]
        b[k] = _solve_linear(dmat, -(_t(hk) @ _t(C) @ bk), np.r_[np.zeros(din), outputs[k] - y], nodes)
        gam = np.einsum("sjn,sn->sj", bk, b[k])  # Gamma_B^{jk}, j < k
        qu[:, k, :k], qv[:, k, :k] = -r * np.einsum("sjb,sj->sb", Pu, gam), -r * np.einsum("sjb,sj->sb", Pv, gam)
        qv[:, k, k] = 1.0
    return {"s": s, "h": h, "b": b, "outputs": outputs}


@dataclasses.dataclass(frozen=True)
class LinearLimit:
    """The exact limit of a protocol (from :func:`linear_limit`): its coefficient paths on
    Chebyshev-Lobatto nodes and what is read off them."""

    x: tuple
    """The input."""
    y: tuple
    """The target."""
    nodes: np.ndarray
    """The Chebyshev-Lobatto nodes of ``[0, 1]``."""
    h: np.ndarray
    """Coefficients of the hidden-state paths ``(steps, nodes, n)``: ``H_d(s, k) = w_d . h[k](s)``."""
    b: np.ndarray
    """Coefficients of the back-signal paths, the same way."""
    outputs: np.ndarray
    """The limit's output after ``k`` steps, ``(steps, d_out)``."""
    tolerance: float
    """The largest difference measured between this solution and the one on half the nodes
    (coefficients at the nodes, outputs): the solution's error is well below it."""

    @property
    def loss(self) -> np.ndarray:
        """The limit's loss ``|f_k - y|^2 / 2`` after ``k`` steps, ``(steps,)``."""
        return 0.5 * ((self.outputs - np.asarray(self.y)) ** 2).sum(axis=1)

    def coefficients(self, s) -> np.ndarray:
        """The hidden-state coefficients at the points ``s``: ``(steps, len(s), n)``."""
        return barycentric(self.nodes, self.h.transpose(1, 0, 2), s).transpose(1, 0, 2)

    def paths(self, embeddings, s) -> np.ndarray:
        """The limit paths ``H_d(s, k)`` of the coordinates whose embedding rows are ``embeddings``
        (``(D, n)``: ``W_e`` then ``W_u``) at the points ``s``: ``(steps, len(s), D)``."""
        return self.coefficients(s) @ np.asarray(embeddings, dtype=np.float64).T

    def kernels(self, s) -> tuple[np.ndarray, np.ndarray]:
        """The kernels ``Gamma_H``, ``Gamma_B`` at the points ``s``: each ``(len(s), steps, steps)``."""
        h = self.coefficients(s).transpose(1, 0, 2)
        b = barycentric(self.nodes, self.b.transpose(1, 0, 2), s)
        return h @ _t(h), b @ _t(b)


#: the fewest and most collocation nodes :func:`linear_limit` tries
MIN_NODES, MAX_NODES = 4, 256


def linear_limit(x, y, *, steps: int, lr: float, alpha: float = 1.0, tol: float = 1e-10) -> LinearLimit:
    """The exact limit of the linear network trained on one sample ``(x, y)`` for ``steps``
    recorded steps (the network after ``0 .. steps - 1`` updates), solved to ``tol``: the nodes are
    doubled from :data:`MIN_NODES` until two successive solutions differ by at most ``tol``
    (coefficients at the common nodes and outputs, relative to their size), and that difference is
    the :attr:`~LinearLimit.tolerance` returned. Cached per arguments."""
    x, y = tuple(float(v) for v in np.ravel(x)), tuple(float(v) for v in np.ravel(y))
    if not (isinstance(steps, int) and 1 <= steps <= 64):
        raise ParameterError("steps", f"steps must be an integer in [1, 64], got {steps!r}")
    if not (np.isfinite(tol) and 1e-14 <= tol <= 1e-2):
        raise ParameterError("tol", f"tol must be in [1e-14, 1e-2], got {tol!r}")
    return _limit(x, y, steps, float(lr), float(alpha), float(tol))


@functools.lru_cache(maxsize=16)
def _limit(x: tuple, y: tuple, steps: int, lr: float, alpha: float, tol: float) -> LinearLimit:
    from ..._random import single_threaded_torch

    with single_threaded_torch():
        return _doubling(x, y, steps, lr, alpha, tol)


#: a limit whose coefficients grow beyond this times the sample's size has blown up (its training diverges)
_GROWTH = 1e6


def _doubling(x: tuple, y: tuple, steps: int, lr: float, alpha: float, tol: float) -> LinearLimit:
    prev, N = solve_limit(x, y, steps=steps, lr=lr, alpha=alpha, nodes=MIN_NODES), MIN_NODES
    size = max(1.0, float(np.abs(x).max()), float(np.abs(y).max()))
    while True:
        if not np.all(np.isfinite(prev["h"])) or float(np.abs(prev["h"]).max()) > _GROWTH * size:
            raise ParameterError("lr", f"the limit's training diverges at lr {lr:g} over {steps} steps (its paths "
                                       f"grow past {_GROWTH:g} times the sample): lower lr or steps")
        N *= 2
        cur = solve_limit(x, y, steps=steps, lr=lr, alpha=alpha, nodes=N)
        scale = max(1.0, float(np.abs(cur["h"]).max()))
        diff = max(float(np.abs(cur["h"][:, ::2] - prev["h"]).max()),
                   float(np.abs(cur["outputs"] - prev["outputs"]).max()))
        if diff <= tol * scale or N >= MAX_NODES:
            break
        prev = cur
    if not np.isfinite(diff) or diff > tol * scale:
        raise ParameterError("lr", f"the limit does not settle on {MAX_NODES} nodes (difference {diff:.2g}): lr "
                                   f"{lr:g} and {steps} steps make it grow too fast")
    return LinearLimit(x, y, cur["s"], cur["h"], cur["b"], cur["outputs"], diff)
