"""Exact fractional Gaussian noise: covariance, pairing independence, agreement with `fbm`."""

import numpy as np
import pytest
import torch
from scipy import stats

import deeplimits as dl
from deeplimits import paths
from deeplimits.paths.fractional import _circulant_sqrt_eigenvalues

HURSTS = [0.1, 0.3, 0.5, 0.7, 0.9, 0.97]


def lag_products(x, k):
    """Per-path mean of x_i x_{i+k}: independent across paths, so their spread gives the SE."""
    return (x[..., : x.shape[-1] - k] * x[..., k:]).mean(-1)


@pytest.mark.slow
@pytest.mark.parametrize("hurst", HURSTS)
def test_autocovariance_matches_gamma(hurst):
    g = torch.Generator().manual_seed(int(hurst * 1000))
    x = dl.fgn(128, hurst, (4000,), generator=g)
    assert x.shape == (4000, 128) and x.dtype == torch.float64
    exact = paths.fgn_autocovariance(6, hurst)
    for k in range(6):
        per_path = lag_products(x, k)
        est, se = per_path.mean().item(), per_path.std().item() / np.sqrt(len(per_path))
        # 4.5 standard errors: 36 comparisons, false-alarm probability < 3e-4 in all
        assert abs(est - exact[k]) < 4.5 * se, (hurst, k, est, exact[k], se)


def test_autocovariance_is_the_spec_formula():
    h = 0.8
    k = np.arange(5)
    expected = 0.5 * (np.abs(k + 1) ** (2 * h) - 2 * np.abs(k) ** (2 * h) + np.abs(k - 1) ** (2 * h))
    np.testing.assert_allclose(paths.fgn_autocovariance(5, h), expected)
    np.testing.assert_allclose(paths.fgn_autocovariance(3, 0.5), [1, 0, 0])


@pytest.mark.parametrize("hurst", [0.05, 0.5, 0.97, 0.999])
def test_circulant_eigenvalues_nonnegative_and_cached(hurst):
    lam = _circulant_sqrt_eigenvalues(1000, hurst)
    assert lam.dtype == torch.float64 and bool(torch.isfinite(lam).all())
    assert _circulant_sqrt_eigenvalues(1000, hurst) is lam  # cached per (n, H)


@pytest.mark.slow
@pytest.mark.parametrize("hurst", [0.3, 0.9])
def test_two_paths_of_one_fft_are_independent(hurst):
    # paths i and i + P/2 are the real and imaginary parts of one FFT (see fgn's docstring)
    g = torch.Generator().manual_seed(7)
    p = 6000
    x = dl.fgn(64, hurst, (2 * p,), generator=g)
    re, im = x[:p], x[p:]
    for k in range(-3, 4):
        a, b = (re[:, : 64 - k], im[:, k:]) if k >= 0 else (re[:, -k:], im[:, : 64 + k])
        per_path = (a * b).mean(-1)
        est, se = per_path.mean().item(), per_path.std().item() / np.sqrt(p)
        assert abs(est) < 4.5 * se, (k, est, se)
    # and each half is exact on its own
    for half in (re, im):
        per_path = lag_products(half, 1)
        assert abs(per_path.mean().item() - paths.fgn_autocovariance(2, hurst)[1]) < 4.5 * per_path.std().item() / np.sqrt(p)


def test_odd_batch_and_shapes():
    g = torch.Generator().manual_seed(0)
    assert dl.fgn(10, 0.7, generator=g).shape == (10,)
    assert dl.fgn(10, 0.7, 3, generator=g).shape == (3, 10)
    assert dl.fgn(10, 0.7, (2, 3, 5), generator=g).shape == (2, 3, 5, 10)
    assert dl.fgn(1, 0.7, (4,), generator=g).shape == (4, 1)
    assert dl.fgn(8, 0.7, (3,), dtype=torch.float32, generator=g).dtype == torch.float32


def test_same_seed_same_numbers():
    a = dl.fgn(50, 0.6, (7,), generator=torch.Generator().manual_seed(3))
    b = dl.fgn(50, 0.6, (7,), generator=torch.Generator().manual_seed(3))
    c = dl.fgn(50, 0.6, (7,), generator=torch.Generator().manual_seed(4))
    assert torch.equal(a, b) and not torch.equal(a, c)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Combination of increments:UserWarning")  # fbm falls back to Hosking
@pytest.mark.parametrize("hurst", [0.25, 0.75, 0.95])
def test_agrees_in_distribution_with_fbm_package(hurst):
    fbm = pytest.importorskip("fbm")
    n, paths = 32, 1500
    np.random.seed(11)
    ref = np.stack([fbm.FBM(n=n, hurst=hurst, length=1, method="daviesharte").fgn() for _ in range(paths)])
    ref = ref * n ** hurst  # the package's fGn has variance (length / n)^(2H)
    ours = dl.fgn(n, hurst, (paths,), generator=torch.Generator().manual_seed(12)).numpy()
    # fixed seeds make these deterministic; each statistic is a different view of the law
    for stat in (lambda x: x[:, 0], lambda x: x.sum(1),
                 lambda x: (x[:, 1:] * x[:, :-1]).mean(1), lambda x: (x ** 2).mean(1)):
        assert stats.ks_2samp(stat(ours), stat(ref)).pvalue > 1e-3
    # the exact covariance of both, within sampling error of each other
    cov_ours = np.cov(ours[:, :4].T)
    cov_ref = np.cov(ref[:, :4].T)
    assert np.abs(cov_ours - cov_ref).max() < 0.2


def _fgn_in_one_batch(n, hurst, size, seed, dtype):
    """fgn as it was computed before issue 40: every normal at once, one FFT, real parts then imaginary ones."""
    from deeplimits import _random

    count = int(np.prod(size)) if size else 1
    noise = _random.normal(((count + 1) // 2, 2 * n, 2), _random.seed_from(torch.Generator().manual_seed(seed)), dtype)
    y = torch.fft.fft(torch.view_as_complex(noise) * _circulant_sqrt_eigenvalues(n, hurst).to(dtype), dim=-1)[:, :n]
    return torch.cat([y.real, y.imag])[:count].reshape(*size, n)


@pytest.mark.parametrize("n,size,dtype", [(8192, (33,), torch.float64), (1000, (37,), torch.float64),
                                          (64, (), torch.float64), (256, (7, 3), torch.float32)])
def test_fgn_by_sub_batches_is_the_fgn_of_one_batch(n, size, dtype):
    """Issue 40: sub-batches of pairs (several at n = 8192, a cut sub-stream at n = 1000) give the same numbers."""
    got = dl.fgn(n, 0.7, size, generator=torch.Generator().manual_seed(5), dtype=dtype)
    tol = 1e-12 if dtype == torch.float64 else 1e-5  # FFTs of batches of other sizes: rounding, not bits
    torch.testing.assert_close(got, _fgn_in_one_batch(n, 0.7, size, 5, dtype), rtol=tol, atol=tol)
    if len(size) >= 1 and n & (n - 1) == 0:  # a sample of the same paths keeps them time-major
        s = paths.FractionalDriver(0.7).sample(size[1:] or (1,), draws=size[0], resolution=n, dtype=dtype,
                                               generator=torch.Generator().manual_seed(5))
        torch.testing.assert_close(s._noise.reshape(n, -1), got.reshape(-1, n).T, rtol=tol, atol=tol)


def test_normal_rows_are_rows_of_normal():
    from deeplimits import _random

    full = _random.normal((300, 1000), 9, torch.float64)
    for r0, r1 in [(0, 300), (0, 1), (131, 132), (17, 290), (299, 300)]:
        assert torch.equal(_random.normal_rows((300, 1000), 9, torch.float64, (r0, r1)), full[r0:r1])
        out = torch.empty(r1 - r0, 1000, dtype=torch.float64)
        assert _random.normal_rows((300, 1000), 9, torch.float64, (r0, r1), out=out) is out and torch.equal(out, full[r0:r1])


@pytest.mark.slow
@pytest.mark.parametrize("driver", [paths.FractionalDriver(0.7), paths.IIDDriver("gaussian")])
def test_reused_chunks_carry_the_same_increments(driver):
    s = driver.sample((4, 4), draws=8, resolution=1 << 15, generator=torch.Generator().manual_seed(2))
    plain = torch.cat(list(s.iter_increments(1 << 15)))
    reused = torch.cat([x.clone() for x in s.iter_increments(1 << 15, reuse=True, most=512)])
    torch.testing.assert_close(plain, reused, rtol=1e-12, atol=1e-12)
