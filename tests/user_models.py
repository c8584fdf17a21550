"""A researcher's own objects, written outside the package as a user would: a residual block, a
driver (an i.i.d. law), a law given by its quantile hook, a test function, a network factory and a
data set. tests/test_user_models.py registers them and runs each through every study it applies
to; tests/test_cli_user.py gives them to the command line as ``user_models:Name``."""

import math

import numpy as np
import torch
from scipy import special

from deeplimits.blocks import Block
from deeplimits.paths import IIDLaw


class Gated(Block):
    """``g(h, V) = V tanh(h) * (1 + tanh(mean(h)) / 2)``: not elementwise, linear in ``V``."""

    name = "gated-tanh"
    weights = ("V",)
    linear = ("V",)

    def residual(self, h, *, pre=None, V):
        gate = 1 + torch.tanh(h.mean(-1, keepdim=True)) / 2
        return (self.activation(h) * gate) @ V.transpose(-1, -2)


class Laplace(IIDLaw):
    """Laplace entries of unit variance (scale 1/sqrt 2): ``q(g) = -sign(u) log(1 - 2|u|) / sqrt 2``
    with ``u = Phi(g) - 1/2``."""

    name = "laplace"

    def from_normal(self, g):
        u = 0.5 * torch.erf(g.double() / math.sqrt(2.0))  # Phi(g) - 1/2, in (-1/2, 1/2); float64: far tails
        a = (2 * u.abs()).clamp(max=1 - 2 ** -52)  # erf rounds to 1 beyond g = 8.3
        return (-torch.sign(u) * torch.log1p(-a) / math.sqrt(2.0)).to(g.dtype)


def _t5_table(n: int = 1 << 15, edge: float = 8.5):
    """The unit-variance Student-t(5) quantile ``sqrt(3/5) t5^-1(Phi(g))`` on a grid of ``g``
    (computed once by scipy in float64), read by linear interpolation."""
    g = np.linspace(-edge, edge, n)
    q = special.stdtrit(5.0, special.ndtr(g)) * math.sqrt(3.0 / 5.0)
    return edge, (2 * edge) / (n - 1), torch.from_numpy(q)


class StudentT(IIDLaw):
    """Student-t entries with 5 degrees of freedom, scaled to unit variance: centred, symmetric, a
    finite fourth moment (kurtosis 9), heavier tails than any law of the package."""

    name = "student-t5"
    _table = None

    def from_normal(self, g):
        if StudentT._table is None:
            StudentT._table = _t5_table()
        edge, step, q = StudentT._table
        q = q.to(g.device, g.dtype)
        x = ((g.clamp(-edge, edge) + edge) / step)
        i = x.floor().clamp(max=len(q) - 2)
        w = x - i
        i = i.long()
        return q[i] * (1 - w) + q[i + 1] * w


def cube_mean(h):
    """mean_i h_i^3 / 3 + mean_i h_i (an odd test function: its weak error is set by the drift)"""
    return (h ** 3).mean(dim=1) / 3 + h.mean(dim=1)


class Mixer(Block):
    """``g(h; V, W) = V tanh(W h)`` written out by hand: linear in ``V`` only (an ODE limit with
    smooth weights, no Itô limit with Brownian ones)."""

    name = "mixer"
    weights = ("V", "W")
    linear = ("V",)

    def residual(self, h, *, pre=None, V, W):
        return self.activation(h @ W.transpose(-1, -2)) @ V.transpose(-1, -2)
