"""Layer-indexed weights from where they live (docs/weights.md): a ``.npy`` or ``.pt`` file
(one tensor, a ``state_dict``, or a training chunk saved by ``deeplimits train``), a training
run directory, a :class:`~deeplimits.training.ResidualNetwork` or any ``torch.nn.Module``, a
driver sample.

Every source gives ``{name: A}`` with ``A`` of shape ``(L, ...)``: a plain tensor is ``'A'``;
a :class:`ResidualNetwork` (or a saved chunk) gives its per-layer weights one configuration at
a time (``'V[0]'``, ``'V[1]'``, ...); in a ``state_dict`` the entries that differ only by a
layer index (``layers.0.weight``, ``layers.1.weight``, ...) are stacked in index order
(``'layers.*.weight'``). Convolution kernels (per-layer weights of 4 dimensions) whose shape
changes with depth are split into stages, the runs of consecutive layers of one shape, as a
:class:`~deeplimits.diagnostics.ConvKernels`; a deeplimits convolutional network (``arch ==
'conv'``: a module, or its ``state_dict`` with the configuration axis first in
``blocks.k.A`` and ``blocks.k.delta``) gives its kernels ``A`` and ``delta`` one configuration at
a time (``'blocks.*.A[0]'``, ...), with the module's grids. Names are what a family of depths is
matched by."""

from __future__ import annotations

import math
import numbers
import os
import re
import warnings

import numpy as np
import torch

from .. import _resources as R_
from .. import _validate as V_
from ..errors import DamagedFileError, ParameterError
from .conv_depth import ConvKernels
from .measures import real_array, real_tensor
from .pt_files import fits as _fits, read_pt

__all__ = ["load_weights"]

_INDEX = re.compile(r"(?<![^.])(\d+)(?=\.)")  # a whole dotted component: "layers.3.weight", "3.weight"


def load_weights(source, *, depth: int | None = None) -> dict[str, torch.Tensor | ConvKernels]:
    """``{name: A}`` (a tensor, or :class:`~deeplimits.diagnostics.ConvKernels` for convolution
    kernels in stages: module docstring) of a file, a run directory, a module, a tensor, or a driver sample
    (:class:`~deeplimits.paths.DriverSample`: its weights at ``depth`` layers, an integer >= 1,
    default its resolution, one entry per draw ``'A[0]'``, ``'A[1]'``, ...).

    ``source`` is a path (``str`` or ``os.PathLike``: a ``.npy`` or ``.pt`` file or a training
    run directory), a tensor or array of real numbers, a module or a driver sample; a file that
    cannot be read as real numbers (empty, complex, strings, a plain pickle) is a one-line
    ``ValueError`` naming it (the warnings PyTorch and NumPy give on the way are silenced)."""
    from ..training import ResidualNetwork

    if depth is not None:
        depth = V_.integer("depth", depth)
    if isinstance(source, (torch.Tensor, np.ndarray)):
        return {"A": _layered("source", real_tensor("source", source))}
    if callable(getattr(source, "weights", None)) and hasattr(source, "draws"):  # a driver sample (its interface)
        depth = depth or getattr(source, "resolution", None)
        if depth is None:
            raise ParameterError("depth", "depth is required: give depth for a sample without a resolution (a smooth "
                                          "driver's)")
        w = source.weights(depth)  # (L, draws, *shape)
        return {f"A[{i}]": w[:, i] for i in range(w.shape[1])}
    if isinstance(source, ResidualNetwork):
        return _per_config(source.residual_weights())
    if isinstance(source, torch.nn.Module) and getattr(source, "arch", None) == "conv":
        return _conv_module(source)
    if isinstance(source, torch.nn.Module):
        return _stacked(source.state_dict(), "the module's")
    if source is None or isinstance(source, (bool, numbers.Number)):
        raise ParameterError("source", "source must be a path (str or os.PathLike), a tensor, an array, a module or a "
                                       f"driver sample, got {source!r}")
    path = V_._path("source", source)
    kind = source_kind(path)
    if kind == "directory":
        return _run(path)
    if kind == "npy":
        return {"A": _layered(f"source: {path}", _npy(path))}
    return _from_object(_pt(path), path)


def source_kind(path: str) -> str:
    """``'directory'`` (a training run's), ``'npy'`` or ``'pt'``: what the path ``path`` is, read
    from its name and its kind, not its content (a one-line ParameterError otherwise)."""
    if os.path.isdir(path):
        return "directory"
    if not os.path.isfile(path):
        raise ParameterError("source", f"source: no file or run directory {path}")
    for ext in ("npy", "pt"):
        if path.endswith("." + ext):
            return ext
    raise ParameterError("source", f"source: {path} must be a .npy or .pt file or a training run directory")


def _layered(name: str, t: torch.Tensor) -> torch.Tensor:
    """A tensor of shape ``(L, ...)`` holding numbers: not 0-d, not empty."""
    if t.dim() < 1 or t.numel() == 0:
        raise ParameterError("source", f"{name} must have shape (L, ...) with L >= 1 layers and some numbers, got "
                                       f"shape {tuple(t.shape)}")
    return t


def _npy(path: str) -> torch.Tensor:
    """The array of a ``.npy`` file as a tensor of real numbers; its header is read first, and an
    array larger than the file holds (truncated or crafted) or than the machine's memory is refused
    before anything is allocated."""
    _npy_header(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, OSError) as e:  # empty, truncated, not a .npy, an object array
        raise DamagedFileError(path, f"source: {path} is not a NumPy .npy file of numbers "
                                     f"({' '.join(str(e).split())})") from None
    if not isinstance(arr, np.ndarray):
        raise DamagedFileError(path, f"source: {path} is not a NumPy .npy file of numbers")
    return torch.from_numpy(real_array(f"source: {path}", arr).copy())


def _npy_header(path: str) -> None:
    """The declared shape and dtype of a ``.npy`` file, checked against its size and the memory."""
    from numpy.lib import format as npf

    try:
        with open(path, "rb") as f:
            version = npf.read_magic(f)
            shape, _, dtype = (npf.read_array_header_1_0 if version == (1, 0) else npf.read_array_header_2_0)(f)
            offset = f.tell()
    except (ValueError, EOFError, OSError, SyntaxError) as e:
        raise DamagedFileError(path, f"source: {path} is not a NumPy .npy file of numbers "
                                     f"({' '.join(str(e).split())[:100]})") from None
    if dtype.hasobject:
        return  # np.load refuses it (allow_pickle=False) with its own message
    declared = math.prod(shape) * dtype.itemsize
    held = os.path.getsize(path) - offset
    if declared > held:
        raise DamagedFileError(path, f"source: {path} declares an array of shape {shape} ({R_.fmt_bytes(declared)}) "
                                     f"but holds {R_.fmt_bytes(held)} of data: truncated or crafted")
    _fits(path, declared, shape)


def _pt(path: str):
    """The object of a ``.pt`` file (tensors and containers of them only): :func:`read_pt`."""
    return read_pt(path, what="a PyTorch file of tensors", prefix="source: ")


#: the entries of a training chunk's state_dict that are not per-layer weights (the embedding ``A``, the
#: readout ``B``; ``delta``, the trained scale, is per layer only when it is ``(L, C)``)
_NOT_LAYERED = ("A", "B", "delta")


def _from_object(obj, path) -> dict:
    if isinstance(obj, torch.Tensor):
        return {"A": _layered(f"source: {path}", real_tensor(f"source: {path}", obj))}
    if isinstance(obj, dict) and "state_dict" in obj and "module" in obj:  # a deeplimits training chunk
        sd = obj["state_dict"]
        if not isinstance(sd, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in sd.items()):
            raise DamagedFileError(path, f"source: {path} is not a training chunk: its state_dict is a "
                                         f"{type(sd).__name__}, not a dict of named tensors")
        if isinstance(obj["module"], dict) and "image_shape" in obj["module"]:  # of `train --arch conv`
            return _conv_chunk(sd, obj["module"], path)  # per configuration, on its own grids
        # the per-layer parameters (L, C, ...), as ResidualNetwork.residual_weights: every entry but the
        # embedding, the readout and the trained scale (whatever the block names its weights)
        layered = {k: w for k, w in sd.items() if k not in _NOT_LAYERED}
        if "delta" in sd and sd["delta"].dim() == 2:
            layered["delta"] = sd["delta"]
        for k, w in layered.items():
            if w.dim() < 2 or 0 in w.shape[:2]:
                raise DamagedFileError(path, f"source: {path} is not a training chunk: its state_dict entry {k!r} has "
                                             f"shape {tuple(w.shape)}, not per-layer weights (L, C, ...)")
        if not layered:
            raise DamagedFileError(path, f"source: {path} is not a training chunk: its state_dict holds none of the "
                                         "per-layer weights (entries besides A, B and delta)")
        return _per_config(layered)
    if isinstance(obj, dict) and obj and all(isinstance(v, torch.Tensor) for v in obj.values()):
        if not all(isinstance(k, str) for k in obj):
            raise DamagedFileError(path, f"source: {path} holds a dict whose keys are not all names: not a state_dict")
        return _stacked(obj, path)
    raise DamagedFileError(path, f"source: {path} holds a {type(obj).__name__}, not a tensor or a state_dict")


def _per_config(weights: dict) -> dict:
    """``(L, C, ...)`` weights of a batched module, one entry per configuration."""
    return {f"{name}[{c}]": w[:, c] for name, w in weights.items() for c in range(w.shape[1])}


def _stacked(state: dict, where: str) -> dict:
    groups: dict = {}
    for key, t in state.items():
        m = _INDEX.search(key)
        if m is not None:
            groups.setdefault(key[:m.start()] + "*" + key[m.end():], []).append((int(m.group(1)), t))
    out = {}
    for name, items in groups.items():
        items.sort(key=lambda kv: kv[0])
        tensors = [t.detach() for _, t in items]
        if len(items) < 3:
            continue
        if name in _CONV_KERNELS and all(t.dim() == 5 for t in tensors):  # a deeplimits conv network's
            out.update({f"{name}[{c}]": _runs([t[c] for t in tensors]) for c in range(tensors[0].shape[0])})
        elif len({tuple(t.shape) for t in tensors}) == 1:
            out[name] = real_tensor(f"source: {where} {name}", torch.stack(tensors))
        elif all(t.dim() == 4 for t in tensors):  # convolution kernels whose shape changes with depth
            out[name] = _runs(tensors)
    if not out:
        raise ParameterError("source", "source: no layer-indexed tensors (entries named like 'layers.0.weight', "
                                       "'layers.1.weight', ... of one shape)")
    return out


#: the per-layer kernels of a deeplimits convolutional network's state_dict (configuration axis first)
_CONV_KERNELS = ("blocks.*.A", "blocks.*.delta")


def _runs(kernels: list, sizes: list | None = None) -> ConvKernels:
    """Per-layer kernels ``(c_out, c_in, kh, kw)`` (and their grids) in stages: the runs of
    consecutive layers of one shape (and grid)."""
    stages, grids, start = [], [], 0
    keys = [(tuple(k.shape), None if sizes is None else tuple(sizes[i])) for i, k in enumerate(kernels)]
    for i in range(1, len(kernels) + 1):
        if i == len(kernels) or keys[i] != keys[start]:
            stages.append(real_tensor("source", torch.stack(kernels[start:i])))
            grids.append(keys[start][1])
            start = i
    return ConvKernels(stages, None if sizes is None else grids)


def _conv_chunk(state: dict, config: dict, path) -> dict:
    """The kernels of a stored ``train --arch conv`` network (its state_dict and config), each on the
    grid it acts on, as :func:`_conv_module` reads a module."""
    from ..training.conv import _blocks, conv_input_sizes

    try:
        stem, channels, strides, blocks, image_shape = _conv_config(config, state)
        layout = _blocks(stem, channels, strides, blocks)
        sizes = conv_input_sizes(image_shape, layout)
        kernels = {name: [state[f"blocks.{k}.{name}"].detach() for k in range(len(layout))] for name in ("A", "delta")}
        configs = {k.shape[0] if k.dim() == 5 else -1 for ks in kernels.values() for k in ks}
        if len(configs) != 1 or min(configs) < 1:
            raise _NotAChunk("its kernels blocks.k.A and blocks.k.delta must be (C, c_out, c_in, kh, kw) with one C >= 1"
                             f", got shapes {sorted({tuple(k.shape) for ks in kernels.values() for k in ks})[:3]}")
    except (KeyError, TypeError, ValueError, _NotAChunk) as e:
        raise DamagedFileError(path, f"source: {path} is not a convolutional network's chunk ({type(e).__name__}: "
                                     f"{' '.join(str(e).split())[:200]})") from None
    return _on_grids(kernels, sizes)


class _NotAChunk(Exception):
    """What makes a stored object no convolutional chunk (said as a DamagedFileError of its file)."""


def _conv_config(config: dict, state: dict) -> tuple:
    """The layout of a stored conv chunk's config, checked before any block is listed: integers >= 1
    (channels, strides, blocks per stage, the image's shape), one per stage, and as many blocks as
    its state_dict holds kernels ``blocks.k.A`` (a ValueError or :class:`_NotAChunk` names the first
    that is not)."""
    stem = V_.integer("stem", config["stem"])
    channels = V_.sequence("channels", config["channels"], lambda c: V_.integer("channels", c))
    strides = V_.sequence("strides", config["strides"], lambda s: V_.integer("strides", s))
    blocks = V_.sequence("blocks", config["blocks"], lambda n: V_.integer("blocks", n))
    image_shape = V_.size(config["image_shape"], name="image_shape")
    if len(image_shape) != 3 or not channels or not len(channels) == len(strides) == len(blocks):
        raise _NotAChunk(f"image_shape {image_shape} must be (channels, height, width) and channels {channels}, "
                         f"strides {strides} and blocks {blocks} one per stage")
    held = sum(1 for k in state if re.fullmatch(r"blocks\.\d+\.A", k))
    if sum(blocks) != held:
        raise _NotAChunk(f"its config declares {sum(blocks)} blocks, its state_dict holds the kernels of {held}")
    return stem, channels, strides, blocks, image_shape


def _on_grids(kernels: dict, sizes: list) -> dict:
    """Per configuration, the runs of ``kernels['A']`` on the blocks' input grids ``sizes[:-1]`` and of
    ``kernels['delta']`` on their output grids ``sizes[1:]`` (each kernel ``(C, c_out, c_in, kh, kw)``).

    A grid smaller than the kernel (the last stages of a deep layout on small images) is read two
    pixels larger: the zero-padded convolution there is a compression of the circular one on the
    grid ``n + 2`` (docs/weights.md, "Spectral norms of convolutions"), whose norm bounds it."""
    out = {}
    for name, grids in (("A", sizes[:-1]), ("delta", sizes[1:])):
        ks = kernels[name]
        kh, kw = ks[0].shape[-2:]
        for c in range(ks[0].shape[0]):
            runs = _runs([k[c] for k in ks], grids)  # stages as the network has them, then the grid each is read on
            runs.input_sizes = [(h + 2, w + 2) if h < kh or w < kw else (h, w) for h, w in runs.input_sizes]
            out[f"blocks.*.{name}[{c}]"] = runs
    return out


def _conv_module(module) -> dict:
    """The kernels ``A`` (acting on each block's input grid) and ``delta`` (on its output grid) of a
    deeplimits convolutional network, one configuration at a time."""
    return _on_grids({name: module.kernels(name) for name in ("A", "delta")}, module.input_sizes())


def _run(directory: str) -> dict:
    sub = os.path.join(directory, "weights")
    files = sorted(f for f in os.listdir(sub) if f.endswith(".pt")) if os.path.isdir(sub) else []
    if not files:
        raise ParameterError("source", f"source: {directory} has no stored weights (weights/*.pt of a 'deeplimits "
                                       "train' run)")
    out = {}
    for f in files:
        stem = f[:-3]
        out.update({f"{stem}/{k}": v for k, v in load_weights(os.path.join(sub, f)).items()})
    return out
