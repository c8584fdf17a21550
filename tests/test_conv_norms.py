"""Spectral norms of convolutions (issue 32): the batched FFT method (Sedghi, Gupta & Long, ICLR
2019) against the largest singular value of the explicit dense matrix of the convolution, built
here from PyTorch's conv2d applied to every basis image (another code path: no FFT), the
zero-padding bound, batches against one kernel at a time, and bad inputs."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from deeplimits.diagnostics import conv_spectral_norms
from deeplimits.errors import ParameterError

G = lambda s: torch.Generator().manual_seed(s)  # noqa: E731


def dense_matrix(K: torch.Tensor, grid: tuple[int, int], padding: str = "circular") -> torch.Tensor:
    """The ``(c_out n m) x (c_in n m)`` matrix of the convolution by ``K`` on an ``n x m`` grid:
    circular (the image wrapped around) or zero padding ``(k - 1) / 2`` on each side ('same')."""
    c_out, c_in, kh, kw = K.shape
    n, m = grid
    basis = torch.eye(c_in * n * m, dtype=K.dtype).reshape(-1, c_in, n, m)
    if padding == "circular":
        out = F.conv2d(F.pad(basis, (0, kw - 1, 0, kh - 1), mode="circular"), K)
    else:
        out = F.conv2d(basis, K, padding=((kh - 1) // 2, (kw - 1) // 2))
    return out.reshape(out.shape[0], -1).T


def dense_norm(K, grid, padding="circular") -> float:
    return float(torch.linalg.matrix_norm(dense_matrix(K, grid, padding), ord=2))


CASES = [(c_out, c_in, k, n) for c_out in (1, 2, 4) for c_in in (1, 3) for k in (1, 3) for n in (3, 5, 8)]


@pytest.mark.slow
@pytest.mark.parametrize("c_out,c_in,k,n", CASES)
def test_equals_the_largest_singular_value_of_the_dense_matrix(c_out, c_in, k, n):
    """Two exact computations of one number in float64: rel 1e-6 leaves room for the SVDs' rounding."""
    K = torch.randn(c_out, c_in, k, k, generator=G(100 * c_out + 10 * c_in + n), dtype=torch.float64)
    got = conv_spectral_norms(K, n)
    assert got.shape == () and got.dtype == torch.float64
    assert float(got) == pytest.approx(dense_norm(K, (n, n)), rel=1e-6)


def test_rectangular_grids_and_kernels():
    K = torch.randn(2, 3, 3, 2, generator=G(7), dtype=torch.float64)
    assert float(conv_spectral_norms(K, (4, 7))) == pytest.approx(dense_norm(K, (4, 7)), rel=1e-6)


def test_known_values():
    """A 1x1 kernel is the channel matrix at every pixel; the 3x3 averaging kernel has norm 1
    (its transform is 1 at frequency 0, less elsewhere); a delta kernel is a shift (norm |c|)."""
    M = torch.randn(3, 2, generator=G(1), dtype=torch.float64)
    assert float(conv_spectral_norms(M[..., None, None], 6)) == pytest.approx(float(torch.linalg.matrix_norm(M, 2)))
    assert float(conv_spectral_norms(torch.full((1, 1, 3, 3), 1 / 9, dtype=torch.float64), 8)) == pytest.approx(1.0)
    delta = torch.zeros(1, 1, 3, 3, dtype=torch.float64)
    delta[0, 0, 2, 1] = -2.5
    assert float(conv_spectral_norms(delta, 5)) == pytest.approx(2.5)


@pytest.mark.parametrize("c,n", [(1, 3), (2, 4), (3, 6)])
def test_zero_padding_is_bounded_by_the_circular_norm_on_the_padded_grid(c, n):
    """'Same' zero padding p = 1 of a 3x3 kernel is a compression of the circular convolution on
    the n + 2 grid: its norm is at most that one's (rounding: rel 1e-10), and on 20 random kernels
    the bound is attained nowhere near exactly, while the same-size circular norm is no bound."""
    K = torch.randn(20, c, c, 3, 3, generator=G(c * n), dtype=torch.float64)
    zero = torch.tensor([dense_norm(k, (n, n), "zero") for k in K], dtype=torch.float64)
    assert bool((zero <= conv_spectral_norms(K, n + 2) * (1 + 1e-10)).all())


def test_the_same_size_circular_norm_is_no_bound_either_way():
    """What the docstring says of zero padding on a fixed grid: on 60 random 3x3 kernels on a 3x3
    grid the circular norm lies above the zero-padded one for some and below it for others."""
    K = torch.randn(60, 1, 1, 3, 3, generator=G(3), dtype=torch.float64)
    zero = torch.tensor([dense_norm(k, (3, 3), "zero") for k in K], dtype=torch.float64)
    circ = conv_spectral_norms(K, 3)
    assert bool((circ > zero * (1 + 1e-9)).any()) and bool((circ < zero * (1 - 1e-9)).any())


@pytest.mark.slow
def test_both_tend_to_the_norm_on_the_infinite_grid():
    """Both norms are at most sup ||P|| over the torus (taken on a 512 grid, which is within
    (pi k / 512)^2 ~ 3e-4 of it for a 3x3 kernel) and approach it as the grid grows."""
    K = torch.randn(4, 4, 3, 3, generator=G(4), dtype=torch.float64)
    sup = float(conv_spectral_norms(K, 512))
    gaps = [sup - dense_norm(K, (n, n), "zero") for n in (4, 8, 16)]
    assert all(g >= -1e-3 * sup for g in gaps) and gaps[0] > gaps[1] > gaps[2]
    assert float(conv_spectral_norms(K, 64)) == pytest.approx(sup, rel=1e-2)


def test_a_batch_equals_one_kernel_at_a_time():
    K = torch.randn(2, 5, 3, 4, 3, 3, generator=G(5), dtype=torch.float64)
    got = conv_spectral_norms(K, 6)
    assert got.shape == (2, 5)
    one = torch.stack([torch.stack([conv_spectral_norms(K[i, j], 6) for j in range(5)]) for i in range(2)])
    torch.testing.assert_close(got, one, rtol=1e-12, atol=0)  # the same batched LAPACK calls per matrix


def test_dtypes_devices_and_non_finite_kernels():
    K = torch.randn(6, 2, 2, 3, 3, generator=G(6))
    single = conv_spectral_norms(K, 5)
    double = conv_spectral_norms(K, 5, dtype=torch.float64)
    assert single.dtype == torch.float32 and double.dtype == torch.float64
    torch.testing.assert_close(single.double(), double, rtol=1e-5, atol=0)  # float32 rounding of the FFT
    assert conv_spectral_norms(torch.ones(1, 1, 3, 3, dtype=torch.int64), 4).dtype == torch.float32
    K[2, 0, 1, 1, 1] = math.nan
    K[4, 1, 0, 0, 0] = math.inf
    out = conv_spectral_norms(K, 5)
    assert torch.isnan(out[[2, 4]]).all() and torch.isfinite(out[[0, 1, 3, 5]]).all()
    torch.testing.assert_close(out[[0, 1, 3, 5]], single[[0, 1, 3, 5]])
    assert conv_spectral_norms(torch.zeros(0, 2, 2, 3, 3), 4).shape == (0,)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_on_cuda_the_norms_live_on_the_kernels_device():
    K = torch.randn(3, 4, 4, 3, 3, generator=G(8), dtype=torch.float64)
    got = conv_spectral_norms(K.cuda(), 8)
    assert got.device.type == "cuda"
    torch.testing.assert_close(got.cpu(), conv_spectral_norms(K, 8), rtol=1e-10, atol=0)


@pytest.mark.parametrize("kernels,input_size,param,match", [
    (torch.zeros(3, 3, 3), 8, "kernels", r"shape \(\.\.\., c_out, c_in, kh, kw\)"),
    (np.zeros((1, 1, 3, 3)), 8, "kernels", "torch.Tensor"),
    (torch.zeros(1, 1, 3, 3, dtype=torch.complex64), 8, "kernels", "real tensor"),
    (torch.zeros(1, 0, 3, 3), 8, "kernels", ">= 1"),
    (torch.zeros(1, 1, 3, 3, device="meta"), 8, "kernels", "meta"),
    (torch.zeros(1, 1, 3, 3), 2, "input_size", "at least the kernel's size"),
    (torch.zeros(1, 1, 3, 5), (8, 4), "input_size", "at least the kernel's size"),
    (torch.zeros(1, 1, 1, 1), 0, "input_size", ">= 1"),
    (torch.zeros(1, 1, 1, 1), (4, 4, 4), "input_size", "pair"),
    (torch.zeros(1, 1, 1, 1), 2.5, "input_size", "integers >= 1"),
    (torch.zeros(1, 1, 1, 1), True, "input_size", "integers >= 1"),
])
def test_bad_inputs_name_the_parameter(kernels, input_size, param, match):
    with pytest.raises(ParameterError, match=match) as e:
        conv_spectral_norms(kernels, input_size)
    assert e.value.param == param and param in str(e.value)


def test_a_bad_dtype_names_it():
    with pytest.raises(ParameterError, match="dtype") as e:
        conv_spectral_norms(torch.zeros(1, 1, 3, 3), 4, dtype=torch.float16)
    assert e.value.param == "dtype"


def test_kernels_too_large_for_memory_are_refused_before_any_copy():
    from deeplimits.errors import ResourceError

    huge = torch.zeros(1, 1, 1, 1, 1).expand(10 ** 5, 512, 512, 3, 3)  # one number; its transforms: petabytes
    with pytest.raises(ResourceError, match="input_size"):
        conv_spectral_norms(huge, 64)
