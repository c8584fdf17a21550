"""Spectral norms of convolutions (Sedghi, Gupta & Long, "The singular values of convolutional
layers", ICLR 2019; docs/weights.md, "Spectral norms of convolutions").

A kernel ``K`` of shape ``(c_out, c_in, kh, kw)`` acting by circular convolution on images of
``c_in`` channels on an ``n x m`` grid is a linear map of ``R^(c_in n m)`` to ``R^(c_out n m)``.
The 2-D discrete Fourier transform block-diagonalises it: its singular values are those of the
``c_out x c_in`` matrices ``P(u, v) = sum_{p, q} K[:, :, p, q] exp(-2 pi i (u p / n + v q / m))``
over the ``n m`` frequencies (Sedghi et al., Theorem 6), so its spectral norm is
``max_{u, v} ||P(u, v)||_2``. Which way the kernel is flipped (convolution or PyTorch's
cross-correlation) and where it is anchored change ``P`` by a conjugation and unimodular phases,
not the singular values.

Zero padding: the convolution with zero padding ``p <= k - 1`` on each side (``'same'`` padding
``(k - 1) / 2`` included) is a compression ``R C E`` of the circular convolution ``C`` on the
larger grid ``n + 2p`` (``E`` puts the image in a zero frame, an isometry; ``R`` keeps the output
window, a coordinate projection): no index wraps around there, so its norm is at most the
circular norm on the ``n + 2p`` grid. Both the zero-padded and the circular norms are at most
``sup ||P||`` over the continuous torus, the norm of the convolution on the infinite grid, and
both tend to it as the grid grows; on a fixed grid the circular norm of the same size is an
approximation of the zero-padded one (above it or below it: neither bounds the other in general),
exact only for circular padding.
"""

from __future__ import annotations

import torch

from .. import _resources as R_
from .. import _validate as V_
from ..errors import ParameterError

__all__ = ["conv_spectral_norms", "grid_size", "conv_norms_bytes"]


def grid_size(input_size) -> tuple[int, int]:
    """``(n, m)`` of ``input_size``: an integer ``n >= 1`` (a square grid) or a pair of them."""
    if isinstance(input_size, (tuple, list)) and len(input_size) != 2:
        raise ParameterError("input_size", f"input_size must be an integer >= 1 or a pair (height, width) of them, "
                                           f"got {input_size!r}")
    size = V_.size(input_size, name="input_size")
    return (size[0], size[0]) if len(size) == 1 else (size[0], size[1])


def conv_norms_bytes(shape, grid: tuple[int, int], item: int = 8) -> int:
    """Peak bytes of :func:`conv_spectral_norms` of kernels of ``shape`` on ``grid`` with ``item``
    bytes per real number: the real FFT over the grid (``n (m // 2 + 1)`` complex numbers per
    channel pair), its channel-last copy, and the Gram matrices of the smaller channel count with
    the eigensolver's copy of them."""
    *lead, c_out, c_in, _, _ = shape
    kernels = 1
    for s in lead:
        kernels *= s
    frequencies = grid[0] * (grid[1] // 2 + 1)
    return 2 * item * kernels * frequencies * (2 * c_out * c_in + 2 * min(c_out, c_in) ** 2)


def _kernels(kernels, grid: tuple[int, int]) -> torch.Tensor:
    if not isinstance(kernels, torch.Tensor):
        raise ParameterError("kernels", f"kernels must be a torch.Tensor of shape (..., c_out, c_in, kh, kw), got "
                                        f"{type(kernels).__name__}")
    V_.has_data("kernels", kernels)
    if kernels.is_complex() or kernels.dtype == torch.bool or kernels.dim() < 4:
        raise ParameterError("kernels", f"kernels must be a real tensor of shape (..., c_out, c_in, kh, kw), got "
                                        f"dtype {kernels.dtype} and shape {tuple(kernels.shape)}")
    c_out, c_in, kh, kw = kernels.shape[-4:]
    if min(c_out, c_in, kh, kw) < 1:
        raise ParameterError("kernels", f"kernels must have c_out, c_in, kh, kw >= 1, got shape {tuple(kernels.shape)}")
    if kh > grid[0] or kw > grid[1]:
        raise ParameterError("input_size", f"input_size {grid} must be at least the kernel's size ({kh}, {kw}): a "
                                           "kernel larger than the grid wraps onto itself")
    return kernels


def conv_spectral_norms(kernels: torch.Tensor, input_size, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """The spectral norm of the circular convolution by each kernel on an ``input_size`` grid
    (module docstring: exact for circular padding, an approximation of zero padding that the
    circular norm on the grid ``n + 2p`` bounds above).

    ``kernels``: a real tensor of shape ``(..., c_out, c_in, kh, kw)`` (any leading dimensions,
    as ``(layers, c_out, c_in, 3, 3)``); ``input_size``: an integer ``n >= kh, kw`` (an ``n x n``
    grid) or a pair ``(n, m)``; ``dtype``: ``torch.float32`` or ``torch.float64`` for the
    computation (``None``: the kernels' own, float32 for a half or integer tensor). Returns a
    tensor of shape ``...`` on the kernels' device; a kernel with a non-finite entry has norm NaN
    (a blown-up network's weights are a result). One batched real FFT and one batched Hermitian
    eigenvalue computation on the Gram matrices of the channel matrices (Sedghi, Gupta & Long,
    ICLR 2019); the working memory (:func:`conv_norms_bytes`) is checked before any is used
    (``ResourceError``)."""
    grid = grid_size(input_size)
    kernels = _kernels(kernels, grid)
    if dtype is None:
        dtype = kernels.dtype if kernels.dtype in V_.FLOAT_DTYPES else torch.float32
    dtype = V_.dtype(dtype)
    R_.require_memory(conv_norms_bytes(kernels.shape, grid, torch.finfo(dtype).bits // 8),
                      f"for the FFT of kernels of shape {tuple(kernels.shape)} on a {grid[0]} x {grid[1]} grid",
                      ("kernels", "input_size"), device=kernels.device)
    k = kernels.detach().to(dtype)
    if k.numel() == 0:  # no kernel in the batch (the FFT refuses an empty one)
        return torch.empty(k.shape[:-4], dtype=dtype, device=k.device)
    finite = torch.isfinite(k).flatten(-4).all(-1)
    k = torch.where(finite[..., None, None, None, None], k, torch.zeros((), dtype=dtype, device=k.device))
    # a real kernel's transform at (-u, -v) is the conjugate of that at (u, v): the same singular
    # values, so the half spectrum of rfft2 holds every frequency's norm
    p = torch.fft.rfft2(k, s=grid)  # (..., c_out, c_in, n, m // 2 + 1), zero-padded to the grid
    p = p.flatten(-2).movedim(-1, -3)  # (..., frequencies, c_out, c_in)
    # the largest singular value is the square root of the largest eigenvalue of the smaller Gram
    # matrix: a Hermitian eigensolver, 20 to 60 times faster than an SVD on the CPU, and the top of a
    # positive semi-definite spectrum is computed to a relative error of the order of the dtype's eps
    gram = p.mH @ p if p.shape[-1] <= p.shape[-2] else p @ p.mH
    norms = torch.linalg.eigvalsh(gram)[..., -1].amax(-1).clamp_min(0).sqrt()
    return torch.where(finite, norms, torch.full((), float("nan"), dtype=dtype, device=k.device))
