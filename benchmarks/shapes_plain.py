"""The shapes study's arithmetic written plainly: one network at a time, numpy, a Python loop over
the layers, weights stored ``(D, M, L)`` as the authors' released Python code stores them (Chaintron,
Chizat & Maass 2026). The floor of ``benchmarks/bench_shapes.py`` and the independent transcription
tests/test_shapes.py checks the batched networks against."""

import numpy as np


def train_plain(U, V, W_e, W_u, x, y, *, steps=15, lr=0.1, alpha=1.0, tanh=False):
    """Train one network (``U``, ``V``: ``(D, M, L)``, changed in place) by the protocol; returns
    ``(outputs (steps, d_out), states (steps, L + 1, D))``, recorded before each step."""
    D, M, L = U.shape
    c = alpha / (L * M)
    act = np.tanh if tanh else (lambda p: p)
    dact = (lambda p: 1.0 - np.tanh(p) ** 2) if tanh else (lambda p: np.ones_like(p))
    outputs, states = [], []
    for k in range(steps):
        H = np.zeros((D, L + 1))
        P = np.zeros((M, L))
        H[:, 0] = W_e @ x
        for layer in range(L):
            P[:, layer] = U[:, :, layer].T @ H[:, layer] / D
            H[:, layer + 1] = H[:, layer] + c * V[:, :, layer] @ act(P[:, layer])
        f = W_u.T @ H[:, L] / D
        outputs.append(f)
        states.append(H.T.copy())
        if k == steps - 1:
            break
        B = W_u @ (f - y)
        grad_u, grad_v = np.zeros_like(U), np.zeros_like(V)
        for layer in range(L - 1, -1, -1):
            q = dact(P[:, layer]) * (V[:, :, layer].T @ B) / D
            grad_u[:, :, layer] = np.outer(H[:, layer], q)
            grad_v[:, :, layer] = np.outer(B, act(P[:, layer]))
            B = B + c * U[:, :, layer] @ q
        U -= (lr / alpha) * grad_u
        V -= (lr / alpha) * grad_v
    return np.array(outputs), np.array(states)
