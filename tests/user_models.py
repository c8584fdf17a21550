"""A researcher's own objects, written outside the package as a user would: a residual block, a
driver (an i.i.d. law), a law given by its quantile hook, path drivers (a smooth law, a Brownian
path built by Lévy's midpoint construction, fractional Brownian motion by a Cholesky factor), a
test function, a network factory and a data set. tests/test_user_models.py registers them and runs
each through every study it applies to; tests/test_cli_user.py gives them to the command line as
``user_models:Name``."""

import math

import numpy as np
import torch
from scipy import special

from deeplimits.blocks import Block
from deeplimits.options import Option
from deeplimits.paths import Driver, DriverSample, IIDLaw, PathSample


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
    lower = special.stdtrit(5.0, special.ndtr(-np.abs(g)))  # from the lower tail: Phi(8.5) rounds to 1
    q = np.where(g < 0, lower, -lower) * math.sqrt(3.0 / 5.0)
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


class ScaledInside(Block):
    """``h + delta_k sigma(M_k h + b_k)`` written out by hand, its one matrix named ``M``: a block
    scaled by a trained ``delta`` (the scaling study's model, through autograd)."""

    name = "scaled-inside"
    weights = ("M", "b")
    optional = ("b",)
    trained_scale = True

    def weight_shape(self, name, width):
        return (width,) if name == "b" else (width, width)

    def residual(self, h, *, pre=None, M, b=None):
        u = h @ M.transpose(-1, -2)
        return self.activation(u if b is None else u + b.unsqueeze(-2))


class ResidualMLP(torch.nn.Module):
    """A residual MLP of one's own, ``h + depth^-beta V_k tanh(h)``: a fixed random embedding and
    readout around ``depth`` blocks (the parameters under ``blocks``), N(0, 1/fan-in) initial values."""

    def __init__(self, depth, beta, width=16, inputs=64, classes=10):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.randn(inputs, width) / math.sqrt(inputs))
        self.blocks = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(width, width) / math.sqrt(width))
                                              for _ in range(depth)])
        self.readout = torch.nn.Parameter(torch.randn(width, classes) / math.sqrt(width))
        self.alpha = float(depth) ** -beta

    def forward(self, x):
        h = x @ self.embed
        for V in self.blocks:
            h = h + self.alpha * torch.tanh(h) @ V.T
        return h @ self.readout


def digits_tensors():
    """The bundled digits as a user's tensors (x_train, y_train, x_test, y_test)."""
    from deeplimits.data import load_dataset

    d = load_dataset("digits", seed=0, dtype=torch.float64)
    return d.x_train, d.y_train, d.x_test, d.y_test


def _gbm(a=0.2, b=0.4):
    """Geometric Brownian motion dX = a X dt + b X dW (Itô), with its exact solution."""
    from deeplimits.schemes.problems import Problem

    return Problem(lambda t, x: a * x, lambda t, x: b * x[..., None],
                   lambda t, x: (b * b * x)[None, ..., None],
                   lambda x0, W, t: x0 * torch.exp((a - b * b / 2) * t + b * W), 1, 1, "commutative")


GBM = _gbm()
"""A test equation of one's own (``deeplimits order --problem user_models:GBM``)."""


def _drift_euler():
    """Euler-Maruyama written out by hand for GBM, declaring strong order 1/2."""
    import deeplimits as dl

    def step(h, dw, t, dt):
        return h + 0.2 * h * dt + 0.4 * h * dw

    order = dl.StrongOrder(0.5, "Lipschitz coefficients", "Euler-Maruyama by hand", kind="fluctuation",
                           next_terms=(dl.Term(1.0),))
    return dl.Scheme.of(step, order, name="hand-euler")


HAND_EULER = _drift_euler()
"""A scheme of one's own (``deeplimits order --scheme user_models:HAND_EULER``)."""


# -- path drivers of one's own ---------------------------------------------------------------------

class WavesSample(DriverSample):
    """``V(t) = sum_j a_j cos(w_j t) + b_j sin(w_j t)``, read at any time (a smooth sample)."""

    kind = "smooth"
    regularity = 1.0

    def __init__(self, shape, draws, dtype, scale, coef, omega):
        super().__init__(shape, draws, dtype, scale, coef.device)
        self.coef, self.omega = coef, omega  # (2m, draws, *shape), (m,)

    def at(self, t):
        t = torch.as_tensor(t, dtype=self.dtype, device=self.device)
        phase = t.reshape(-1, 1) * self.omega
        out = torch.tensordot(torch.cat([phase.cos(), phase.sin()], 1), self.coef, dims=1)
        return out[0] if t.dim() == 0 else out

    def iter_weights(self, depth):
        yield self.at(torch.arange(1, depth + 1, dtype=torch.float64).to(self.dtype) / depth)


class Waves(Driver):
    """Smooth weights of one's own: a random trigonometric polynomial of four frequencies with
    independent N(0, 1/4) coefficients (unit variance at every time), regularity 1."""

    name = "waves"
    regularity = 1.0
    FREQUENCIES = (0.5, 1.0, 2.0, 3.0)

    def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
        m = len(self.FREQUENCIES)
        coef = torch.randn((2 * m, draws, *shape), generator=generator, dtype=dtype) * (scale / math.sqrt(m))
        omega = torch.tensor(self.FREQUENCIES, dtype=dtype)
        return WavesSample(shape, draws, dtype, scale, coef.to(device), omega.to(device))


class HeldPath(PathSample):
    """A path held whole as its finest increments ``(resolution, draws, *shape)``."""

    def __init__(self, shape, draws, dtype, scale, resolution, fine, kind, regularity):
        super().__init__(shape, draws, dtype, scale, resolution, fine.device)
        self.fine, self.kind, self.regularity = fine, kind, regularity

    def iter_increments(self, depth, *, transform=None, reuse=False, most=None):
        r = self.resolution // depth
        x = self.fine.reshape(depth, r, self.draws, *self.shape).sum(1)
        c = min(most or depth, depth)  # chunks of powers of two: aligned to every coarser grid
        for k0 in range(0, depth, c):
            yield x[k0:k0 + c] if transform is None else transform(x[k0:k0 + c])


def _held_bytes(shape, draws, resolution, dtype):
    return 4 * (resolution + 1) * draws * math.prod(shape) * dtype.itemsize


class LevyBridge(Driver):
    """Brownian increments of one's own: each path built by Lévy's midpoint construction, ``W_1 ~
    N(0, 1)``, then ``W_(a+b)/2 = (W_a + W_b) / 2 + sqrt((b - a) / 4) Z`` on ever finer dyadic
    grids (a Brownian motion in law, other numbers than the package's)."""

    name = "levy-bridge"
    regularity = 0.5
    needs_resolution = gaussian = stores_path = True

    def sample_bytes(self, shape, draws=1, resolution=None, dtype=torch.float64, device=None):
        return _held_bytes(shape, draws, resolution, dtype)

    def sweep_bytes(self, entries, reference, depths, item, device=None):
        return 4 * (reference + 1) * entries * item

    def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
        n, R = draws * math.prod(shape), resolution
        w = torch.zeros(R + 1, n, dtype=torch.float64)
        w[R] = torch.randn(n, generator=generator, dtype=torch.float64)
        step = R
        while step > 1:
            half = step // 2
            z = torch.randn(R // step, n, generator=generator, dtype=torch.float64)
            w[half::step] = (w[0:R:step] + w[step::step]) / 2 + math.sqrt(step / (4 * R)) * z
            step = half
        fine = (w.diff(dim=0) * scale).to(dtype).reshape(R, draws, *shape)
        return HeldPath(shape, draws, dtype, scale, R, fine.to(device), "brownian", 0.5)


class CholeskyFBM(Driver):
    """Fractional Brownian increments of one's own: fGn drawn through the Cholesky factor of its
    covariance ``(|k+1|^2H - 2|k|^2H + |k-1|^2H) / 2`` on the finest grid (exact, O(R^3): small grids)."""

    name = "cholesky-fbm"
    options = (Option("hurst", float, default=0.7, low=0.5, high=1.0, low_open=True, high_open=True,
                      help="the Hurst index"),)
    needs_resolution = stores_path = True

    def __init__(self, hurst=0.7):
        self.hurst = self.regularity = float(hurst)

    def sample_bytes(self, shape, draws=1, resolution=None, dtype=torch.float64, device=None):
        return _held_bytes(shape, draws, resolution, dtype) + 8 * resolution * resolution

    def sweep_bytes(self, entries, reference, depths, item, device=None):
        return 4 * (reference + 1) * entries * item + 8 * reference * reference

    def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
        R, H, n = resolution, self.hurst, draws * math.prod(shape)
        k = torch.arange(R, dtype=torch.float64)
        gamma = ((k + 1) ** (2 * H) - 2 * k ** (2 * H) + (k - 1).abs() ** (2 * H)) / 2
        i = torch.arange(R)
        chol = torch.linalg.cholesky(gamma[(i[:, None] - i[None, :]).abs()])
        z = torch.randn(R, n, generator=generator, dtype=torch.float64)
        fine = (chol @ z) * (scale * R ** -H)  # the fGn of the scaled path on the grid k / R
        return HeldPath(shape, draws, dtype, scale, R, fine.to(dtype).reshape(R, draws, *shape).to(device),
                        "fractional", H)


GATED_WAVES = dict(name="gated-waves", arch=Gated, activation="tanh", driver=Waves, beta=1.0, coupled=True,
                   theory=1.0, label="the gated block from smooth waves, beta = 1 (the Euler rate 1)")
"""A trained-limit case of one's own (``deeplimits trained-limit --case user_models:GATED_WAVES``)."""
