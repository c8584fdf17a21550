"""Convolutional residual networks without batch normalisation (docs/training.md, "Convolutional
networks"), holding ``C`` independent configurations at once.

The residual block of Cohen, Cont, Rossier & Xu (ICML 2021, §3.2)::

    h_{k+1} = ReLU(h_k + delta_k * ReLU(A_k * h_k))            (same channels and resolution)
    h_{k+1} = ReLU(F_k * h_k + delta_k * ReLU(A_k * h_k))      (where they change)

with ``*`` a convolution (zero padding), ``A_k`` and ``delta_k`` 3x3 kernels and ``F_k`` a 1x1
shortcut kernel present only where the channels or the resolution change (``A_k`` and ``F_k``
then carry the stage's stride; ``F_k * h_k`` is the skip connection there, as ``h_k`` cannot be
added). A 3x3 stem ``h_0 = ReLU(S * x)``, stages of blocks, global average pooling and a linear
head. :data:`RESNET18` is the published layout (64-channel stem, stages 64/128/256/512 with
strides 1/2/2/2); the depth ``L`` is the number of residual blocks.

The configurations are batched as grouped convolutions (``groups = C``): every parameter has the
configuration axis first, the ``C`` networks share only the input batch, and the sum of their
losses gives each its own gradient, as for :class:`~deeplimits.training.ResidualNetwork`.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F_

from .. import _resources as R_
from .. import _validate as V_
from ..errors import ParameterError

__all__ = ["ConvResidualNetwork", "RESNET18", "CONV_CONFIG_KEYS", "conv_layout", "conv_parameter_count"]

RESNET18 = dict(stem=64, channels=(64, 128, 256, 512), strides=(1, 2, 2, 2))
"""The ResNet-18 layout of Cohen et al.'s networks: stem channels, stage channels and strides."""
#: the keys of :meth:`ConvResidualNetwork.get_config`
CONV_CONFIG_KEYS = ("image_shape", "classes", "blocks", "stem", "channels", "strides", "configs", "beta", "dtype")


def conv_layout(depth: int, width: int, stages: int = 4) -> dict:
    """The ResNet-18-like layout of ``depth`` blocks with base ``width`` channels: stem ``width``,
    ``stages`` stages of ``width * 2^s`` channels with strides 1, 2, 2, ..., ``depth / stages``
    blocks each (``depth`` must be a multiple of ``stages``; ``width = 64``, ``stages = 4``:
    :data:`RESNET18`)."""
    depth, width = V_.integer("depth", depth), V_.integer("width", width)
    stages = V_.integer("stages", stages)
    if depth % stages:
        raise ParameterError("depth", f"depth must be a multiple of the {stages} stages (blocks per stage), got {depth}")
    return dict(stem=width, channels=tuple(width << s for s in range(stages)),
                strides=(1,) + (2,) * (stages - 1), blocks=(depth // stages,) * stages)


def conv_parameter_count(image_shape, classes: int, blocks, stem: int, channels, strides, configs: int = 1) -> int:
    """The numbers held by the parameters of a :class:`ConvResidualNetwork`, counted without allocating
    (in closed form per stage: a stage's first block may change the channels or the resolution, its
    other ``n - 1`` blocks keep them; nothing is listed, so ``blocks=10**9`` is counted at once)."""
    n, cin = stem * image_shape[0] * 9, stem  # the stem
    for cout, stride, k in zip(channels, strides, blocks):
        if k < 1:
            continue
        n += cout * cin * 9 + cout * cout * 9 + (cout * cin if (cin != cout or stride != 1) else 0)
        n += (k - 1) * 18 * cout * cout
        cin = cout
    return configs * (n + channels[-1] * classes + classes)


def _blocks(stem, channels, strides, blocks):
    """``(c_in, c_out, stride, stage)`` of every residual block, in order."""
    out, cin = [], stem
    for s, (cout, stride, n) in enumerate(zip(channels, strides, blocks)):
        for j in range(n):
            out.append((cin, cout, stride if j == 0 else 1, s))
            cin = cout
    return out


def conv_input_sizes(image_shape, layout) -> list[tuple[int, int]]:
    """:meth:`ConvResidualNetwork.input_sizes` of a network of ``image_shape`` and block ``layout``
    (:func:`_blocks`), without building it: the 3x3 convolutions (padding 1) of stride ``s`` take
    an ``h x w`` grid to ``((h - 1) // s + 1) x ((w - 1) // s + 1)``."""
    h, w = image_shape[1:]
    out = []
    for _, _, stride, _ in layout:
        out.append((h, w))
        h, w = (h - 1) // stride + 1, (w - 1) // stride + 1
    return out + [(h, w)]


class ConvResidualNetwork(torch.nn.Module):
    """``configs`` independent convolutional residual networks (the block of the module docstring).

    Args:
        image_shape: ``(channels, height, width)`` of an input image (``(1, 8, 8)`` for digits,
            ``(3, 32, 32)`` for CIFAR-10); inputs are ``(batch, c, h, w)`` or flattened
            ``(batch, c * h * w)`` (channel-major, as the data sets hold them).
        classes: outputs of the linear head.
        blocks: residual blocks per stage (an integer: that many in every stage); their sum is
            the depth ``L``.
        stem, channels, strides: the stem's channels and each stage's channels and stride
            (default :data:`RESNET18`).
        configs: number ``C`` of independent networks held in every parameter.
        beta: the residual scale: ``delta_k`` starts with entries of standard deviation
            ``L^-beta / sqrt(9 c)`` (the dense networks' ``L^-beta`` carried by the kernel, so
            the block is the paper's equation and the trained kernel is ``delta_k`` itself).
        dtype, device: of every parameter (as for :class:`~deeplimits.training.ResidualNetwork`).

    Parameters (configuration axis first): ``stem`` ``(C, c0, c_in, 3, 3)``; per block
    ``blocks.k.A`` ``(C, c_out, c_in, 3, 3)``, ``blocks.k.delta`` ``(C, c_out, c_out, 3, 3)`` and
    ``blocks.k.F`` ``(C, c_out, c_in, 1, 1)`` where it exists; ``head`` ``(C, c_last, classes)``
    and ``head_bias`` ``(C, classes)``. :meth:`reset_parameters`: i.i.d. Gaussian entries, std
    ``sqrt(2 / fan_in)`` for the kernels followed by a ReLU (stem, ``A``, ``F``), the scale above
    for ``delta``, ``1/sqrt(c_last)`` for the head, zero head bias;
    :func:`~deeplimits.training.init_from_driver` reads ``A`` and ``delta`` off driver paths
    in depth, one path per stage.
    """

    arch = "conv"
    """The architecture's name (what the run stores and :func:`~deeplimits.diagnostics.load_weights` read)."""
    branch_multiplier = 1.0
    """A fixed factor of every residual branch, ``h_{k+1} = ReLU(skip + m * delta_k * ReLU(A_k * h_k))``
    (1: Cohen et al.'s block, the depth scale carried by ``delta``'s initial size; an instance
    sets it to ``L^-beta`` for an explicit branch multiplier, docs/transfer.md; not part of
    :meth:`get_config`)."""

    def __init__(self, image_shape, classes: int, blocks=2, *, stem: int = RESNET18["stem"],
                 channels=RESNET18["channels"], strides=RESNET18["strides"], configs: int = 1, beta: float = 0.5,
                 dtype: torch.dtype = torch.float32, device=None):
        super().__init__()
        self.image_shape = tuple(V_.size(image_shape, name="image_shape"))
        """``(channels, height, width)`` of an input image."""
        if len(self.image_shape) != 3:
            raise ParameterError("image_shape", f"image_shape must be (channels, height, width), got {image_shape!r}")
        self.classes = V_.integer("classes", classes)
        """The outputs of the head."""
        self.stem_channels = V_.integer("stem", stem)
        """The stem's output channels."""
        self.channels, self.strides, self.blocks_per_stage = _stages(channels, strides, blocks)
        """Each stage's channels, stride (in its first block) and number of residual blocks."""
        self.configs = V_.integer("configs", configs)
        """The number ``C`` of independent configurations held."""
        self.beta = V_.real("beta", beta, low=0.0)
        """The residual scale: ``delta`` starts with entries of standard deviation ``L^-beta / sqrt(9 c)``."""
        self.depth = sum(self.blocks_per_stage)
        """The number ``L`` of residual blocks."""
        where = V_.device("device", device, V_.dtype(dtype))
        n = conv_parameter_count(self.image_shape, self.classes, self.blocks_per_stage, self.stem_channels,
                                 self.channels, self.strides, self.configs)
        R_.require_memory(n * dtype.itemsize, f"for the parameters of {self.configs} convolutional network(s) of "
                          f"{self.depth} blocks (stem={self.stem_channels}, channels={list(self.channels)}, classes={self.classes}, "
                          f"image_shape={self.image_shape})", ("blocks", "channels", "configs"), device=where)
        kw, C = dict(dtype=dtype, device=where), self.configs
        self.stem = torch.nn.Parameter(torch.empty(C, self.stem_channels, self.image_shape[0], 3, 3, **kw))
        """The stem kernel ``S``, ``(C, c0, c_in, 3, 3)``."""
        self.layout = _blocks(self.stem_channels, self.channels, self.strides, self.blocks_per_stage)
        """``(c_in, c_out, stride, stage)`` of every block."""
        self.blocks = torch.nn.ModuleList(_Block(cin, cout, stride, C, kw) for cin, cout, stride, _ in self.layout)
        """The residual blocks (``A``, ``delta`` and ``F`` of each)."""
        self.head = torch.nn.Parameter(torch.empty(C, self.channels[-1], self.classes, **kw))
        """The linear head, ``(C, c_last, classes)``."""
        self.head_bias = torch.nn.Parameter(torch.empty(C, self.classes, **kw))
        """The head's bias, ``(C, classes)``."""
        self._mark_axes()
        self.reset_parameters()

    # -- initialisation --------------------------------------------------------------------
    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None):
        """i.i.d. Gaussian weights (the class docstring's scales), drawn on the CPU from ``generator``."""
        V_.generator(generator)
        for name, p in self.named_parameters():
            if name == "head_bias":
                p.zero_()
                continue
            z = torch.randn(p.shape, generator=generator, dtype=p.dtype)
            p.copy_(z * self.initial_std(name, p))

    def initial_std(self, name: str, p: torch.Tensor) -> float:
        """The entries' standard deviation of parameter ``name`` at initialisation."""
        if name == "head":
            return p.shape[1] ** -0.5
        fan_in = p.shape[2] * p.shape[3] * p.shape[4]
        if name.endswith(".delta"):
            return float(self.depth) ** -self.beta * fan_in ** -0.5
        return (2.0 / fan_in) ** 0.5

    def stage_blocks(self) -> list[list[int]]:
        """The indices of the blocks of every stage."""
        return [[k for k, b in enumerate(self.layout) if b[3] == s] for s in range(len(self.channels))]

    # -- the configuration axis -------------------------------------------------------
    def config_axes(self) -> dict:
        """``{parameter: 0}`` for the trainable parameters (the batched optimisers read it)."""
        return {p: 0 for p in self.parameters() if p.requires_grad}

    def _mark_axes(self):
        for p in self.parameters():
            p.config_axis = 0

    def __setstate__(self, state):
        super().__setstate__(state)
        self._mark_axes()

    # -- the kernels along depth -----------------------------------------------------------
    def kernels(self, name: str) -> list[torch.Tensor]:
        """The detached kernels ``name`` (``'A'``, ``'delta'``) of the ``L`` blocks, each ``(C, c_out, c_in, 3, 3)``."""
        V_.choice("name", name, ("A", "delta"))
        return [getattr(b, name).detach() for b in self.blocks]

    def input_sizes(self) -> list[tuple[int, int]]:
        """The spatial size ``(h, w)`` of every block's input (where ``A_k`` and ``F_k`` act);
        ``delta_k`` acts on the block's output size (the next entry, or the last size)."""
        return conv_input_sizes(self.image_shape, self.layout)

    # -- the constructor's arguments as plain JSON ----------------------------------------
    def get_config(self) -> dict:
        """The constructor's arguments as plain JSON (keys :data:`CONV_CONFIG_KEYS`)."""
        return {"image_shape": list(self.image_shape), "classes": self.classes, "blocks": list(self.blocks_per_stage),
                "stem": self.stem_channels, "channels": list(self.channels), "strides": list(self.strides),
                "configs": self.configs, "beta": self.beta, "dtype": str(self.stem.dtype).replace("torch.", "")}

    @classmethod
    def from_config(cls, config: dict, *, device=None) -> "ConvResidualNetwork":
        """A new module (freshly initialised) from :meth:`get_config`'s dict."""
        if (not isinstance(config, Mapping) or set(config) - set(CONV_CONFIG_KEYS)
                or not {"image_shape", "classes"} <= set(config)):
            raise ParameterError("config", "config must be a dict with keys among "
                                           f"{', '.join(CONV_CONFIG_KEYS)}, image_shape and classes among them "
                                           f"(ConvResidualNetwork.get_config()), got {config!r}")
        kw = dict(config)
        dtype = kw.pop("dtype", "float32")
        dtype = getattr(torch, dtype) if dtype in ("float32", "float64") else dtype
        image_shape, classes = kw.pop("image_shape"), kw.pop("classes")
        return cls(image_shape, classes, **kw, dtype=V_.dtype(dtype, name="config['dtype']"), device=device)

    # -- forward -------------------------------------------------------------------------
    def images(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` as ``(batch, c, h, w)`` images (from flattened ``(batch, c * h * w)`` inputs)."""
        V_.same_device("x", V_.tensor("x", x, dtype_=self.stem.dtype, finite=False), self.stem.device)
        flat = 1
        for s in self.image_shape:
            flat *= s
        if x.dim() == 2 and x.shape[1] == flat:
            return x.view(x.shape[0], *self.image_shape)
        if x.dim() == 4 and tuple(x.shape[1:]) == self.image_shape:
            return x
        raise ParameterError("x", f"x must have shape (batch, {flat}) or (batch, {', '.join(map(str, self.image_shape))}),"
                                  f" got {tuple(x.shape)}")

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The states after the last block, ``(batch, C * c_last, h, w)`` (config-major channels)."""
        x = self.images(x)
        h = torch.relu(F_.conv2d(x, self.stem.flatten(0, 1), padding=1))
        for block in self.blocks:
            h = block(h, self.configs, self.branch_multiplier)
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Inputs ``(batch, ...)`` shared by the configs -> outputs ``(C, batch, classes)``."""
        h = self.features(x)
        pooled = h.mean((-2, -1)).view(h.shape[0], self.configs, -1).transpose(0, 1)  # (C, batch, c_last)
        return torch.baddbmm(self.head_bias.unsqueeze(1), pooled, self.head)

    def extra_repr(self) -> str:
        """The configuration, shown by ``repr`` of the module."""
        return (f"image_shape={self.image_shape}, classes={self.classes}, blocks={self.blocks_per_stage}, "
                f"stem={self.stem_channels}, channels={self.channels}, strides={self.strides}, "
                f"configs={self.configs}, beta={self.beta}")



def _stages(channels, strides, blocks) -> tuple[tuple, tuple, tuple]:
    """Each stage's channels, stride and blocks, checked: integers >= 1, one of each per stage
    (``blocks`` a number: the same in every stage)."""
    channels = tuple(V_.sequence("channels", channels, lambda c: V_.integer("channels", c),
                                 what="a list of channel counts >= 1"))
    strides = tuple(V_.sequence("strides", strides, lambda s: V_.integer("strides", s), what="a list of strides >= 1"))
    if not channels:
        raise ParameterError("channels", "channels must be a non-empty list of channel counts >= 1, got []")
    if len(strides) != len(channels):
        raise ParameterError("strides", f"strides must give one stride per stage ({len(channels)} stages of channels "
                                        f"{list(channels)}), got {list(strides)}")
    if V_._is_real(blocks):
        blocks = [blocks] * len(channels)
    blocks = tuple(V_.sequence("blocks", blocks, lambda n: V_.integer("blocks", n), what="blocks per stage >= 1"))
    if len(blocks) != len(channels):
        raise ParameterError("blocks", f"blocks must give one count per stage ({len(channels)} stages), got "
                                       f"{list(blocks)}")
    return channels, strides, blocks

class _Block(torch.nn.Module):
    """One residual block of ``C`` configurations: ``A`` ``(C, c_out, c_in, 3, 3)`` with the
    stride, ``delta`` ``(C, c_out, c_out, 3, 3)``, the shortcut ``F`` ``(C, c_out, c_in, 1, 1)``
    where the channels or the resolution change (else ``None``)."""

    def __init__(self, cin: int, cout: int, stride: int, C: int, kw: dict):
        super().__init__()
        self.stride = stride
        self.A = torch.nn.Parameter(torch.empty(C, cout, cin, 3, 3, **kw))
        self.delta = torch.nn.Parameter(torch.empty(C, cout, cout, 3, 3, **kw))
        shortcut = cin != cout or stride != 1
        self.F = torch.nn.Parameter(torch.empty(C, cout, cin, 1, 1, **kw)) if shortcut else None
        for p in self.parameters():
            p.config_axis = 0

    def forward(self, h: torch.Tensor, C: int, multiplier: float = 1.0) -> torch.Tensor:
        inner = torch.relu(F_.conv2d(h, self.A.flatten(0, 1), stride=self.stride, padding=1, groups=C))
        branch = F_.conv2d(inner, self.delta.flatten(0, 1), padding=1, groups=C)
        if multiplier != 1.0:
            branch = branch * multiplier
        skip = h if self.F is None else F_.conv2d(h, self.F.flatten(0, 1), stride=self.stride, groups=C)
        return torch.relu(skip + branch)
