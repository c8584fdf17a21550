"""Drivers: coupling across depths, exact laws, the smooth process between grid points."""

import math

import numpy as np
import pytest
import torch

import deeplimits as dl
from deeplimits import paths
import deeplimits.paths.base as paths_base
import deeplimits.paths.smooth as drivers


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.fixture(params=[1 << 22, 64], ids=["one-block", "many-small-blocks"])
def block_elements(request, monkeypatch):
    # small blocks force the lazy Brownian stream through its multi-block summation path
    monkeypatch.setattr(paths_base, "_BLOCK_ELEMENTS", request.param)
    return request.param


@pytest.mark.parametrize("driver", [dl.IIDDriver("gaussian"), dl.FractionalDriver(0.3), dl.FractionalDriver(0.8)],
                         ids=repr)
def test_depth_L_increments_are_sums_of_depth_2L_ones(driver, block_elements):
    s = driver.sample((3, 3), draws=5, resolution=64, generator=gen(1))
    for depth in (1, 2, 4, 8, 16, 32):
        coarse = s.increments(depth)
        fine = s.increments(2 * depth)
        assert coarse.shape == (depth, 5, 3, 3)
        torch.testing.assert_close(coarse, fine.reshape(depth, 2, 5, 3, 3).sum(1), rtol=0, atol=1e-13)
        # the path at the grid points does not depend on the depth it is read at
        torch.testing.assert_close(s.path(depth), s.path(2 * depth)[::2], rtol=0, atol=1e-13)


def test_brownian_stream_is_reproducible_and_constant_memory(block_elements):
    s = dl.IIDDriver().sample((4, 4), draws=3, resolution=128, generator=gen(2))
    a = s.increments(128)
    b = torch.cat(list(s.iter_increments(128)))
    assert torch.equal(a, b)  # streamed twice, same numbers
    if block_elements == 64:
        assert s.block < s.resolution and all(c.shape[0] <= s.block for c in s.iter_increments(128))


def test_brownian_weights_have_the_spec_law():
    # V^(L)_k = sqrt(L/d) (B_{k/L} - B_{(k-1)/L}): entries N(0, 1/d), independent
    d, draws, L = 8, 400, 16
    s = dl.IIDDriver().sample((d, d), draws=draws, resolution=64, generator=gen(3))
    w = s.weights(L) * math.sqrt(d)  # unit variance
    x = w.flatten()
    n = x.numel()
    assert abs(x.mean().item()) < 4 / math.sqrt(n)
    assert abs(x.var().item() - 1) < 4 * math.sqrt(2 / n)
    lag1 = (w[1:] * w[:-1]).mean().item()
    assert abs(lag1) < 4 / math.sqrt(w[1:].numel())
    kurt = (x ** 4).mean().item() / x.var().item() ** 2
    assert abs(kurt - 3) < 4 * math.sqrt(96 / n)


@pytest.mark.slow
@pytest.mark.parametrize("hurst", [0.2, 0.75])
def test_fractional_weights_are_unit_fgn_at_every_depth(hurst):
    # self-similarity: aggregated fGn, renormalised by L^H, is again unit-variance fGn
    d, draws = 4, 300
    s = dl.FractionalDriver(hurst).sample((d, d), draws=draws, resolution=256, generator=gen(4))
    gamma = paths.fgn_autocovariance(3, hurst)
    for depth in (256, 16):
        w = s.weights(depth) * math.sqrt(d)  # (L, draws, d, d)
        for k in range(3):
            per_path = (w[: depth - k] * w[k:]).mean(0).flatten()
            est, se = per_path.mean().item(), per_path.std().item() / math.sqrt(per_path.numel())
            assert abs(est - gamma[k]) < 4.5 * se, (depth, k, est, gamma[k])


def test_smooth_covariance_matches_rbf_kernel_on_and_between_grid_points():
    ell = 0.1
    draws = 20000
    s = dl.SmoothDriver(ell).sample((1,), draws=draws, generator=gen(5))
    assert s.kernel_error < 1e-10
    times = torch.tensor([0.0, 0.0312, 0.05, 0.0731, 0.1, 0.2, 0.2377, 0.5, 1.0], dtype=torch.float64)
    v = s.at(times)[:, :, 0]  # (T, draws)
    emp = v @ v.T / draws
    exact = paths.rbf_kernel(times[:, None], times[None, :], ell)
    # Var of the product estimator of Cov(X, Y) for Gaussians: (1 + rho^2) / draws
    se = torch.sqrt((1 + exact ** 2) / draws)
    assert ((emp - exact).abs() < 4.5 * se).all(), (emp - exact).abs().max()
    assert (v.mean(1).abs() < 4.5 / math.sqrt(draws)).all()


def test_smooth_process_is_gaussian_and_reads_right_points():
    s = dl.SmoothDriver(0.2).sample((3, 3), draws=4000, generator=gen(6), scale=1.0)
    x = s.at(0.377).flatten()
    kurt = ((x - x.mean()) ** 4).mean().item() / x.var().item() ** 2
    assert abs(kurt - 3) < 4 * math.sqrt(96 / x.numel())
    w = s.weights(8)
    k = torch.arange(1, 9, dtype=torch.float64) / 8
    torch.testing.assert_close(w, s.at(k))  # V^(L)_k = V(k/L), k = 1..L
    torch.testing.assert_close(w[3], s.at(0.5))


def test_default_scale_is_fan_in():
    s = dl.SmoothDriver().sample((5, 9), draws=2000, generator=gen(7))
    assert s.scale == pytest.approx(1 / 3)
    assert abs(s.at(0.4).var().item() * 9 - 1) < 0.05
    assert dl.IIDDriver().sample((7,), draws=1, resolution=2, generator=gen(7)).scale == 1.0


@pytest.mark.parametrize("law", ["uniform", "rademacher"])
def test_iid_laws(law):
    d = 10
    s = dl.IIDDriver(law).sample((d, d), draws=200, generator=gen(8))
    assert not dl.IIDDriver(law).coupled and dl.IIDDriver("gaussian").coupled
    w = s.weights(50) * math.sqrt(d)
    assert w.shape == (50, 200, d, d)
    n = w.numel()
    assert abs(w.var().item() - 1) < 4 * math.sqrt((1.8 if law == "uniform" else 1e-6) / n) + 1e-12
    if law == "uniform":
        assert w.abs().max().item() <= math.sqrt(3) + 1e-12
        assert w.abs().max().item() > 0.99 * math.sqrt(3)
    else:
        torch.testing.assert_close(w.abs(), torch.ones_like(w))
        assert abs((w > 0).double().mean().item() - 0.5) < 4 * 0.5 / math.sqrt(n)
    assert torch.equal(s.weights(50), s.weights(50))  # reproducible per depth


@pytest.mark.parametrize("driver", [dl.IIDDriver(), dl.IIDDriver("uniform"), dl.FractionalDriver(0.6),
                                    dl.SmoothDriver()], ids=repr)
def test_same_seed_same_numbers(driver):
    kw = {"resolution": 16} if driver.needs_resolution else {}
    a = driver.sample((2, 2), draws=3, generator=gen(9), **kw).weights(8)
    b = driver.sample((2, 2), draws=3, generator=gen(9), **kw).weights(8)
    c = driver.sample((2, 2), draws=3, generator=gen(10), **kw).weights(8)
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_declared_regularity():
    assert dl.IIDDriver().regularity == 0.5
    assert dl.FractionalDriver(0.7).regularity == 0.7
    assert dl.SmoothDriver().regularity == 1.0
    assert dl.FractionalDriver(0.7).sample((1,), draws=1, resolution=4, generator=gen()).regularity == 0.7


def test_float32_samples():
    for drv in (dl.IIDDriver(), dl.FractionalDriver(0.7), dl.SmoothDriver()):
        kw = {"resolution": 8} if drv.needs_resolution else {}
        w = drv.sample((2, 2), draws=2, dtype=torch.float32, generator=gen(), **kw).weights(4)
        assert w.dtype == torch.float32
    np.testing.assert_allclose(paths.rbf_kernel(0.3, 0.3).item(), 1.0)


@pytest.mark.parametrize("ell", [0.05, 0.1, 0.37, 2.0])
def test_smooth_spectral_quadrature_reproduces_the_kernel(ell):
    # deterministic: the covariance of the representation IS sum_m w_m cos(omega_m tau)
    omega, sqrt_w, err = drivers._rbf_quadrature(ell)
    tau = torch.linspace(0, 1, 1237, dtype=torch.float64)
    cov = torch.cos(tau[:, None] * omega[None, :]) @ (sqrt_w ** 2)
    torch.testing.assert_close(cov, paths.rbf_kernel(tau, 0.0, ell), rtol=0, atol=1e-11)
    assert err < 1e-11
    with pytest.raises(ValueError, match=r"t must lie in \[-0.25, 1.25\]"):
        dl.SmoothDriver(ell).sample((1,), draws=1, generator=gen()).at(1.5)


def test_rademacher_float64_weights_are_exactly_plus_minus_the_scale():
    """The sign is taken first and scaled in the sample's dtype (a float32 scale was 3e-8 off)."""
    s = dl.IIDDriver("rademacher").sample((3, 3), draws=2, dtype=torch.float64, generator=gen(0))
    torch.testing.assert_close(s.weights(8).abs(), torch.full((8, 2, 3, 3), 3 ** -0.5, dtype=torch.float64),
                               rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype,bits", [(torch.float32, 24), (torch.float64, 53)])
def test_uniform_numbers_lie_on_the_centred_odd_grid(dtype, bits):
    """Exact: with half-width 2^p the draws are the odd integers of (-2^p, 2^p), so the grid is
    symmetric about 0 (an exactly centred law with fair signs); the conversion is exact."""
    from deeplimits import _random

    x = _random.uniform((300_001,), 11, dtype, -2.0 ** bits, 2.0 ** bits).double()
    assert torch.all(torch.remainder(x, 2) == 1)
    assert x.abs().max() < 2.0 ** bits
    # the top bits are uniform: each of 8 equal bins holds n/8, a binomial count (sd sqrt(n 7/64))
    counts = torch.histc(x, bins=8, min=-2.0 ** bits, max=2.0 ** bits)
    assert (counts - x.numel() / 8).abs().max() < 5 * math.sqrt(x.numel() * 7 / 64)


def test_uniform_moments_and_signs():
    """Mean 0, variance 1/3 and P(x < 0) = 1/2 for the law on (-1, 1), within 5 Monte Carlo
    standard errors (sd of the mean sqrt(1/3n), of the second moment sqrt((1/5 - 1/9)/n), of the
    sign frequency sqrt(1/4n))."""
    from deeplimits import _random

    x = _random.uniform((4_000_000,), 3, torch.float32, -1.0, 1.0).double()
    n = x.numel()
    assert abs(x.mean().item()) < 5 * math.sqrt(1 / 3 / n)
    assert abs(x.pow(2).mean().item() - 1 / 3) < 5 * math.sqrt((1 / 5 - 1 / 9) / n)
    assert abs((x < 0).double().mean().item() - 0.5) < 5 * math.sqrt(0.25 / n)
    y = _random.uniform((10_000,), 3, torch.float32, 2.0, 5.0)  # a shifted interval
    assert 2.0 < y.min() and y.max() < 5.0 and abs(y.double().mean().item() - 3.5) < 5 * math.sqrt(0.75 / 1e4)
