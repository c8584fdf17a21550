"""The diagnostics of convolution kernels along depth (Cohen, Cont, Rossier & Xu, ICML 2021,
§3.2 and Table 1; docs/weights.md, "Convolution kernels along depth"): the quantities of
:func:`~deeplimits.diagnostics.weight_diagnostics` with the Frobenius norm of a layer's weight
replaced by the spectral norm of its convolution (:func:`~deeplimits.diagnostics.conv_spectral_norms`).

A convolutional network's kernels come in stages: within a stage the kernels ``A_k`` of shape
``(c_out, c_in, kh, kw)`` share their shape and input grid; from one stage to the next the
channels and the resolution change. With ``||.||`` the spectral norm on the stage's grid:

* ``max_norm = max_k ||A_k||``, ``rss = sqrt(sum_k ||A_k||^2)`` and ``layers_90`` over all the
  layers of all the stages (across stages);
* ``increment_norm = L^beta max_k ||A_{k+1} - A_k||``, ``quadratic_variation = sum_k ||A_{k+1} - A_k||^2``
  and ``cumsum_norm = max_k ||sum_{j<=k} A_j||`` within each stage (kernels of different
  shapes have no difference), the max or the sum over the stages; NaN when no stage has two
  layers;
* ``hurst`` and the noise part (``noise_qv``: the sum of its squared spectral norms) per stage,
  over the coordinates of the stages with at least 2 (20 for the noise) layers;

``L`` is the number of layers of all the stages (the paper's number of residual blocks).
"""

from __future__ import annotations

import dataclasses
import math

import torch

from .. import _resources as R_
from .. import _validate as V_
from .._plain import PlainData
from ..errors import ParameterError
from .conv_norms import conv_norms_bytes, conv_spectral_norms, grid_size
from .measures import NOISE_BANDWIDTH, WeightDiagnostics, _hurst, _quartiles, layers_holding, real_tensor
from .trend import _split

__all__ = ["ConvKernels", "ConvLayerNorms", "ConvWeightDiagnostics", "conv_layer_norms", "conv_weight_diagnostics"]


@dataclasses.dataclass
class ConvKernels:
    """Convolution kernels along depth, stage by stage: what :func:`~deeplimits.diagnostics.load_weights`
    gives for kernels whose shape changes with depth."""

    stages: list
    """One tensor ``(L_s, c_out, c_in, kh, kw)`` per stage."""
    input_sizes: list | None = None
    """The grid ``(n, m)`` of every stage, or ``None`` where the source does not say (the caller's grid)."""


@dataclasses.dataclass
class ConvLayerNorms(PlainData):
    """The spectral norms of every layer of one family of kernels, stage by stage (plain data)."""

    name: str
    """The kernels' name."""
    input_size: list
    """The grid ``[n, m]`` of every stage."""
    norms: list[list[float]]
    """Per stage, ``||A_k||`` of its ``L_s`` layers."""
    increments: list[list[float]]
    """Per stage, ``||A_{k+1} - A_k||`` of its ``L_s - 1`` consecutive pairs."""
    cumsum: list[list[float]]
    """Per stage, ``||sum_{j<=k} A_j||`` of its ``L_s`` partial sums."""


@dataclasses.dataclass
class ConvWeightDiagnostics(WeightDiagnostics):
    """:class:`~deeplimits.diagnostics.WeightDiagnostics` of convolution kernels, on spectral norms
    (module docstring); ``shape`` is the kernel shape of every stage."""

    input_size: list = dataclasses.field(default_factory=list)
    """The grid ``[n, m]`` of every stage."""
    stage_layers: list = dataclasses.field(default_factory=list)
    """The number of layers of every stage."""
    norms: list[list[float]] = dataclasses.field(default_factory=list)
    """Per stage, the spectral norms ``||A_k||`` of its layers (:attr:`ConvLayerNorms.norms`)."""
    increments: list[list[float]] = dataclasses.field(default_factory=list)
    """Per stage, ``||A_{k+1} - A_k||`` (:attr:`ConvLayerNorms.increments`)."""


def _stages(stages) -> list[torch.Tensor]:
    """The stages: one tensor ``(L_s, c_out, c_in, kh, kw)`` or a list of them, real and finite."""
    if isinstance(stages, ConvKernels):
        stages = stages.stages
    items = [stages] if isinstance(stages, torch.Tensor) else stages
    if not isinstance(items, (list, tuple)) or not items:
        raise ParameterError("stages", "stages must be a tensor (L, c_out, c_in, kh, kw) or a non-empty list of them, "
                                       f"got {type(stages).__name__}")
    out = []
    for s, K in enumerate(items):
        K = real_tensor(f"stages[{s}]", K)
        if K.dim() != 5 or min(K.shape) < 1:
            raise ParameterError("stages", f"stages[{s}] must have shape (L, c_out, c_in, kh, kw) with every size >= 1, "
                                           f"got {tuple(K.shape)}")
        out.append(K)
    if sum(K.shape[0] for K in out) < 3:
        raise ParameterError("stages", f"stages must hold L >= 3 layers in all, got {[K.shape[0] for K in out]}")
    return out


def _sizes(input_size, count: int) -> list[tuple[int, int]]:
    """One grid per stage: a list holds one per stage; an integer or a tuple is every stage's."""
    if isinstance(input_size, list):
        if len(input_size) != count:
            raise ParameterError("input_size", f"input_size must be an integer, a tuple (n, m), or a list of one per "
                                               f"stage ({count}), got {input_size!r}")
        return [grid_size(s) for s in input_size]
    return [grid_size(input_size)] * count


def _norms(K: torch.Tensor, grid, dtype) -> torch.Tensor:
    """:func:`conv_spectral_norms` of ``K`` (layers first) in chunks of layers that fit in memory."""
    one = conv_norms_bytes((1, *K.shape[1:]), grid, torch.finfo(dtype).bits // 8)
    avail = R_.available_memory(K.device)
    if one > avail:
        R_.require_memory(one, f"for the FFT of one kernel of shape {tuple(K.shape[1:])} on a {grid[0]} x {grid[1]} "
                               "grid", ("input_size",), device=K.device)
    chunk = max(1, int(avail // (2 * one)))
    return torch.cat([conv_spectral_norms(K[i:i + chunk], grid, dtype=dtype) for i in range(0, K.shape[0], chunk)])


def _stage_norms(K: torch.Tensor, grid, dtype) -> tuple[torch.Tensor, ...]:
    """The norms of the layers, of their increments and of their partial sums in one batch."""
    L = K.shape[0]
    K = K.detach().to(dtype)
    n = _norms(torch.cat([K, K[1:] - K[:-1], torch.cumsum(K, 0)]), grid, dtype)
    return n[:L], n[L:2 * L - 1], n[2 * L - 1:]


def conv_layer_norms(stages, input_size, *, name: str = "A", dtype: torch.dtype = torch.float64) -> ConvLayerNorms:
    """The spectral norms of the layers of ``stages`` (a tensor ``(L, c_out, c_in, kh, kw)``, a
    list of them, one per stage, or a :class:`ConvKernels`; real, finite, ``L >= 3`` layers in
    all), of their increments and of their partial sums within each stage, on the grid
    ``input_size`` (an integer or a tuple ``(n, m)`` for every stage, or a list of one per stage;
    each at least the kernels' size), computed in ``dtype`` (float32 or float64) on the kernels'
    device, batched over the layers of a stage (chunked where memory is short; a stage whose
    copies cannot fit is refused, ``ResourceError``, before any is made); ``name`` a string."""
    sizes, stages, dtype = _checked(stages, input_size, name, dtype)
    parts = [_stage_norms(K, g, dtype) for K, g in zip(stages, sizes)]
    return ConvLayerNorms(name, [list(g) for g in sizes], *([p[i].tolist() for p in parts] for i in range(3)))


def _checked(stages, input_size, name, dtype):
    if not isinstance(name, str):
        raise ParameterError("name", f"name must be a string, got {name!r}")
    dtype = V_.dtype(dtype)
    if input_size is None and isinstance(stages, ConvKernels) and stages.input_sizes is not None:
        input_size = [tuple(s) for s in stages.input_sizes]
    stages = _stages(stages)
    sizes = _sizes(input_size, len(stages))
    for s, (K, g) in enumerate(zip(stages, sizes)):
        if K.shape[-2] > g[0] or K.shape[-1] > g[1]:
            raise ParameterError("input_size", f"input_size {g} of stage {s} must be at least its kernels' size "
                                               f"{tuple(K.shape[-2:])}: a kernel larger than the grid wraps onto itself")
        # before the finiteness check, which reads every entry (an expanded view holds no memory)
        R_.require_memory(3 * torch.finfo(dtype).bits // 8 * K.numel(), f"for the layers, increments and partial "
                          f"sums of kernels of shape {tuple(K.shape)}", ("stages",), device=K.device)
        if not bool(torch.isfinite(K).all()):
            raise ParameterError("stages", f"stages[{s}] must be finite (a blown-up network has no weight diagnostics)")
    return sizes, stages, dtype


def conv_weight_diagnostics(stages, input_size=None, *, beta: float = 0.0, name: str = "A",
                            dtype: torch.dtype = torch.float64) -> ConvWeightDiagnostics:
    """The diagnostics of the module docstring (Table 1's quantities on spectral norms) of
    ``stages`` on the grid ``input_size`` (as for :func:`conv_layer_norms`; ``None``: the grids
    a :class:`ConvKernels` carries); ``beta`` (a finite real) scales the increment norm by
    ``L^beta``; ``name`` and ``dtype`` as there. The Hurst index and the noise part are computed in
    float64."""
    beta = V_.real("beta", beta)
    sizes, stages, dtype = _checked(stages, input_size, name, dtype)
    L = sum(K.shape[0] for K in stages)
    scale = float(L) ** beta if abs(beta * math.log(L)) < 700 else math.inf
    if not math.isfinite(scale):
        raise ParameterError("beta", f"beta must keep L^beta finite (L = {L} layers), got {beta!r}")
    parts = [_stage_norms(K, g, dtype) for K, g in zip(stages, sizes)]
    norms = torch.cat([p[0] for p in parts]).double().cpu()
    inc = torch.cat([p[1] for p in parts]).double().cpu()
    cum = torch.cat([p[2] for p in parts]).double().cpu()
    rough = [_hurst(K.detach().double().reshape(K.shape[0], -1)) for K in stages if K.shape[0] >= 2]
    q25, med, q75 = _quartiles(torch.cat(rough).cpu()) if rough else (math.nan,) * 3
    noise_qv, noise_hurst = _noise(stages, sizes, dtype)
    return ConvWeightDiagnostics(
        name, L, [list(K.shape[1:]) for K in stages] if len(stages) > 1 else list(stages[0].shape[1:]), beta,
        float(norms.max()), scale * float(inc.max()) if len(inc) else math.nan, float(cum.max()),
        float(norms.square().sum().sqrt()), float(inc.square().sum()) if len(inc) else math.nan, med, q75 - q25,
        noise_qv, noise_hurst, layers_holding(norms.square()), [list(g) for g in sizes],
        [K.shape[0] for K in stages], [p[0].tolist() for p in parts], [p[1].tolist() for p in parts])


def _noise(stages, sizes, dtype) -> tuple[float, float]:
    """The noise part's squared spectral norms summed, and its median Hurst index, over the stages
    of at least ``1 / NOISE_BANDWIDTH`` layers (NaN when there is none)."""
    qv, hurst = 0.0, []
    for K, g in zip(stages, sizes):
        if NOISE_BANDWIDTH * K.shape[0] < 1:
            continue
        a = K.detach().double().reshape(K.shape[0], -1)
        _, noise = _split(a, NOISE_BANDWIDTH)
        qv += float(_norms(noise.reshape(K.shape).to(dtype), g, dtype).double().square().sum())
        hurst.append(_hurst(noise))
    if not hurst:
        return math.nan, math.nan
    return qv, _quartiles(torch.cat(hurst).cpu())[1]
