"""Trend and noise of layer-indexed weights (Cohen, Cont, Rossier & Xu, ICML 2021, §3;
docs/weights.md): the weights ``A_k`` split into a smooth trend, a Gaussian-kernel average over
neighbouring layers, and the rough rest; the network rebuilt from the trend alone, and its loss
against the original's (the trend alone keeps the loss when the weights are a smooth function
of depth plus noise; it loses it when they are the increments of a rough process)."""

from __future__ import annotations

import math

import torch

from .. import _resources as R_
from .. import _validate as V_
from ..errors import ParameterError

__all__ = ["trend_split", "trend_bytes", "from_trend", "trend_loss"]


def _half_width(L: int, bandwidth: float) -> int:
    """Layers on each side of the Gaussian kernel of :func:`trend_split` (three standard deviations)."""
    return min(L - 1, max(1, math.ceil(3 * (bandwidth * L))))  # sd = bandwidth * L layers


def _fft_len(n: int) -> int:
    """The least ``2^a 3^b 5^c >= n``: the FFT's length (a length with a large prime factor takes
    pocketfft's slower algorithm, up to 3x the time; zeros past the convolution change nothing)."""
    best, p5 = 1 << max(0, n - 1).bit_length(), 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            best = min(best, p35 << max(0, -(-n // p35) - 1).bit_length())
            p35 *= 3
        p5 *= 5
    return best


def trend_bytes(shape, item: int, bandwidth: float = 0.05) -> int:
    """Peak bytes of :func:`trend_split` of a tensor of ``shape`` ``(L, ...)`` with ``item``
    bytes per number, from the shape alone: the reflected copy (``L + 2 half`` layers) and the
    FFT of the convolution (:func:`_fft_len` ``(L + 4 half)`` numbers per coordinate: the product
    of the transforms and the inverse transform alive together)."""
    L, half = shape[0], _half_width(shape[0], bandwidth)
    return item * (math.prod(shape) // L) * ((L + 2 * half) + 2 * _fft_len(L + 4 * half))


def trend_split(A: torch.Tensor, bandwidth: float = 0.05) -> tuple[torch.Tensor, torch.Tensor]:
    """``(trend, noise)`` of ``A`` of shape ``(L, ...)``, ``trend + noise = A``: the trend of each
    coordinate is its average over the layers with Gaussian weights of standard deviation
    ``bandwidth * L`` layers (``bandwidth`` a fraction of the depth in (0, 1); the ends are
    reflected, so a constant or, away from the ends, a linear function of depth is its own
    trend). ``A``: a float32 or float64 tensor, all finite. An ``A`` whose transforms
    (:func:`trend_bytes`) cannot fit in memory is refused (``ResourceError``) before any is
    computed."""
    bandwidth = _bandwidth(bandwidth)
    if not isinstance(A, torch.Tensor):
        raise ParameterError("A", f"A must be a torch.Tensor, got {type(A).__name__}")
    if A.dim() < 1 or A.shape[0] < 3:
        raise ParameterError("A", f"A must be a tensor of shape (L, ...) with L >= 3, got {tuple(A.shape)}")
    _require_memory(A, bandwidth)  # before the finiteness check: an expanded view holds no memory
    return _split(V_.tensor("A", A), bandwidth)


def _bandwidth(bandwidth) -> float:
    return V_.real("bandwidth", bandwidth, low=0.0, high=1.0, low_open=True, high_open=True)


def _require_memory(A: torch.Tensor, bandwidth: float) -> None:
    R_.require_memory(trend_bytes(A.shape, A.element_size(), bandwidth), f"for the trend of A of shape "
                      f"{tuple(A.shape)} at bandwidth={bandwidth}", ("A", "bandwidth"), device=A.device)


def _split(A: torch.Tensor, bandwidth: float) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`trend_split` of a checked ``A`` (a blown-up network's weights give a NaN trend)."""
    _require_memory(A, bandwidth)
    L = A.shape[0]
    sd = bandwidth * L
    half = _half_width(L, bandwidth)
    k = torch.arange(-half, half + 1, dtype=torch.float64, device=A.device)
    w = torch.exp(-0.5 * (k / sd) ** 2)
    w = (w / w.sum()).to(A.dtype)
    a = A.detach().reshape(L, -1).T.unsqueeze(1)  # (coordinates, 1, L)
    padded = torch.nn.functional.pad(a, (half, half), mode="reflect").squeeze(1)  # (coordinates, L + 2 half)
    # the valid convolution by FFT: memory O(coordinates x L) at any bandwidth (conv1d would
    # unfold a (coordinates, kernel, L) tensor: 124 GB for d = 25 at L = 9100)
    n = _fft_len(padded.shape[-1] + w.numel() - 1)
    full = torch.fft.irfft(torch.fft.rfft(padded, n=n) * torch.fft.rfft(w, n=n), n=n)
    trend = full[:, w.numel() - 1: w.numel() - 1 + L].T.reshape(A.shape).to(A.dtype)
    return trend, A.detach() - trend


@torch.no_grad()
def from_trend(module, bandwidth: float = 0.05):
    """A copy of a :class:`~deeplimits.training.ResidualNetwork` (of depth >= 3) whose per-layer
    weights are replaced by their trend (:func:`trend_split` of each configuration)."""
    import copy

    bandwidth = _bandwidth(bandwidth)
    _module(module)
    out = copy.deepcopy(module)
    for name, w in module.residual_weights().items():
        trend, _ = _split(w, bandwidth)  # (L, C, ...): the layer axis first, configs ride along
        getattr(out, name).copy_(trend)
    return out


def trend_loss(module, x: torch.Tensor, y: torch.Tensor, *, loss: str = "squared", bandwidth: float = 0.05) -> dict:
    """The mean loss ``(C,)`` of ``module`` on ``(x, y)`` and of the network rebuilt from the
    trend of its weights: ``{'loss', 'trend_loss', 'ratio'}`` as lists over configurations
    (``x``, ``y``, ``loss`` as for :func:`deeplimits.training.evaluate`)."""
    from ..training.train import _evaluate, evaluate

    bandwidth = _bandwidth(bandwidth)
    base, _ = evaluate(_module(module), x, y, loss)
    trend, _ = _evaluate(from_trend(module, bandwidth), x, y, loss)
    return {"loss": base.tolist(), "trend_loss": trend.tolist(), "ratio": (trend / base).tolist()}


def _module(module, scaled: bool = False):
    """A :class:`~deeplimits.training.ResidualNetwork` (with ``scaled``, of a block whose branch a
    trained ``delta`` scales, :attr:`~deeplimits.blocks.Block.trained_scale`: ``inside``) whose
    per-layer weights have a trend (depth >= 3)."""
    from ..training import ResidualNetwork

    if not isinstance(module, ResidualNetwork) or (scaled and not module.block.trained_scale):
        what = "a ResidualNetwork" + (" of a block scaled by a trained delta (inside)" if scaled else "")
        raise ParameterError("module", f"module must be {what}, got {getattr(module, 'arch', type(module).__name__)!r}")
    if module.depth < 3:
        raise ParameterError("module", f"module must have depth >= 3 (the trend of its weights averages over layers), "
                                       f"got depth {module.depth}")
    return module
