"""A trainable residual network holding ``C`` independent configurations at once (docs/training.md).

    h_0 = x A,   h_{k+1} = h_k + L^-beta (V_{k+1} g(h_k, W_{k+1}) [+ b_{k+1}]),   F(x) = h_L B

with ``g`` as in :class:`~deeplimits.networks.ResNet` (``res-1``: ``sigma(h)``, ``res-2``:
``sigma(W h)``, ``res-3``: ``ReLU(W h)``), and for ``inside``
``h_{k+1} = h_k + delta_{k+1} sigma(W_{k+1} h_k + b_{k+1})`` with a trainable scale ``delta``
initialised at ``1/L`` (Cohen, Cont, Rossier & Xu, ICML 2021).

Every parameter carries the configuration axis ``C``: the ``C`` networks share nothing but the
input batch, so one forward/backward trains all of them (each config's gradient only depends on
its own loss when the total loss is the sum of the per-config losses). :meth:`config_axes`
declares that axis for the batched optimisers of :mod:`.optim`, and every parameter carries it
as its attribute ``config_axis`` (so a plain list of the parameters can go to an optimiser).
:meth:`get_config` / :meth:`from_config` write and read the constructor's arguments as plain
JSON; :meth:`release_grads` is the public hook the optimisers' ``zero_grad`` calls.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..activations import activation as _activation

import torch

from .. import _resources as R_
from .. import _validate as V_
from .._transforms import under_transform
from ..errors import ParameterError
from ..blocks import Inside, Res1, block_class, fused_kind, make_block, registered_blocks
from ..networks import ResNet
from ._inside import inside_stack
from ._own import check_names
from ._stack import Workspace, res1_stack

__all__ = ["ResidualNetwork", "DELTA_MODES", "CONFIG_KEYS", "parameter_count", "activation_count"]

DELTA_MODES = ("shared", "per-layer")
"""The trainable scales of the ``inside`` model: one per configuration, or one per layer."""
#: the keys of :meth:`ResidualNetwork.get_config` (the first five are required by ``from_config``)
CONFIG_KEYS = ("arch", "depth", "width", "in_features", "out_features", "configs", "beta", "activation", "bias",
               "delta", "dtype")


class ResidualNetwork(torch.nn.Module):
    """``configs`` independent residual networks of depth ``depth`` and width ``width``.

    Args:
        arch: ``'res-1'``, ``'res-2'``, ``'res-3'``, ``'inside'`` or a registered block of your own
            (:func:`deeplimits.blocks.register_block`).
        depth, width: ``L`` residual layers of width ``d``.
        in_features, out_features: sizes of the input ``x`` and of the output.
        configs: number ``C`` of independent networks held in every parameter.
        beta: scaling ``L^-beta`` of the residual branch (``res-*``; ``inside`` uses ``delta``).
        activation: name or callable (default ``tanh``; ``res-3`` is ReLU by definition).
        bias: per-layer bias ``b`` of shape ``(L, C, d)``, zero-initialised; outside the
            activation for ``res-*`` (``h + L^-beta (V g + b)``), inside it for ``inside``.
        delta: ``inside`` only: ``'shared'`` (default, one ``delta`` per config, shape ``(C,)``)
            or ``'per-layer'`` (shape ``(L, C)``), trainable, initialised at ``1/L``.
        dtype, device: of every parameter: ``torch.float32`` or ``torch.float64``; ``None``
            (the CPU), ``'cpu'``, ``'cuda'``, ``'cuda:N'``, ``'mps'`` or a :class:`torch.device`
            this machine has (not ``'meta'``, which holds no numbers).

    Every argument is checked at construction (a one-line ``ValueError`` naming it).

    Raises:
        ResourceError: before any allocation, when the parameters alone
            (:func:`parameter_count` numbers) exceed the memory of the machine (or the free
            memory of a CUDA ``device``), naming ``depth``, ``width`` and ``configs``.

    Parameters: ``A`` ``(C, d_in, d)``, ``V``/``W`` ``(L, C, d, d)``, ``b`` ``(L, C, d)``,
    ``B`` ``(C, d, d_out)``, ``delta``. Initialisation (:meth:`reset_parameters`): i.i.d.
    ``N(0, 1/fan_in)`` entries for ``A``, ``V``, ``W``, ``B`` (the i.i.d. Gaussian driver) and
    zero biases; :func:`~deeplimits.training.init.init_from_driver` reads ``V``, ``W`` (and the
    ``inside`` bias) off a driver path instead.
    """

    def __init__(self, arch: str, depth: int, width: int, in_features: int, out_features: int, *,
                 configs: int = 1, beta: float = 0.5, activation=None, bias: bool = False, delta=None,
                 dtype: torch.dtype = torch.float32, device=None):
        super().__init__()
        self.arch = V_.choice("arch", arch, registered_blocks())
        """``'res-1'``, ``'res-2'``, ``'res-3'``, ``'inside'`` or a registered block's name (:mod:`deeplimits.blocks`)."""
        self._net = ResNet(arch, activation, beta)  # validates activation and beta, computes residuals
        self.activation, self.beta = self._net.activation, self._net.beta
        self.depth, self.width = V_.integer("depth", depth), V_.integer("width", width)
        self.in_features = V_.integer("in_features", in_features)
        """The input dimension ``d_in``."""
        self.out_features = V_.integer("out_features", out_features)
        """The output dimension ``d_out``."""
        self.configs = V_.integer("configs", configs)
        """The number ``C`` of independent configurations held."""
        self.bias = V_.flag("bias", bias)
        """Whether the residual branch has the bias ``b``."""
        self.delta_mode = self._delta_mode(delta)
        """``inside`` only: ``'shared'`` or ``'per-layer'`` trained scale ``delta`` (``None`` otherwise)."""
        where = V_.device("device", device, V_.dtype(dtype))
        self._options = dict(beta=beta, activation=activation, bias=bias, delta=delta, dtype=dtype, device=device)
        L, C, d = self.depth, self.configs, self.width
        _require_parameters(arch, L, d, self.in_features, self.out_features, C, self.bias, self.delta_mode, dtype,
                            where)
        kw = dict(dtype=dtype, device=where)
        self.A = torch.nn.Parameter(torch.empty(C, self.in_features, d, **kw))
        """The input layer, ``(C, d_in, d)``."""
        block = self._net.block
        check_names(block)
        for name in block.required:  # the block's weights (the bias: below)
            self.register_parameter(name, torch.nn.Parameter(torch.empty(L, C, *block.weight_shape(name, d), **kw)))
        self.b = torch.nn.Parameter(torch.empty(L, C, d, **kw)) if bias else None
        """The biases, ``(L, C, d)`` (``None`` without bias)."""
        if self.delta_mode is not None:
            shape = (C,) if self.delta_mode == "shared" else (L, C)
            self.delta = torch.nn.Parameter(torch.empty(shape, **kw))
            """``inside`` only: the trained scale, ``(C,)`` (shared) or ``(L, C)`` (per layer)."""
        self.B = torch.nn.Parameter(torch.empty(C, d, self.out_features, **kw))
        """The output layer, ``(C, d, d_out)``."""
        self._workspace = Workspace()
        self._mark_axes()
        self.reset_parameters()

    @property
    def block(self):
        """The residual map (a :class:`~deeplimits.blocks.Block`, with the activation)."""
        return self._net.block

    @property
    def fused(self) -> bool:
        """Whether the residual stack runs a hand-written pass: ``res-1`` (:mod:`._stack`) or
        ``inside`` (:mod:`._inside`), with ``tanh``, ``relu`` or ``identity``."""
        return type(self.block) in _STACKS and self.block.fused()

    def _delta_mode(self, delta):
        if not self._net.block.trained_scale:
            if delta is not None:
                raise ParameterError("delta", f"delta applies only to a block scaled by a trained delta (inside), "
                                              f"not {self.arch!r}")
            return None
        return V_.choice("delta", "shared" if delta is None else delta, DELTA_MODES)

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None):
        """i.i.d. ``N(0, 1/fan_in)`` weights, zero biases, ``delta = 1/L``."""
        V_.generator(generator)
        for name, p in self.named_parameters():
            if name == "delta":
                p.fill_(1.0 / self.depth)
            elif name == "b":
                p.zero_()
            else:
                fan_in = p.shape[-2] if name in ("A", "B") else p.shape[-1]
                z = torch.randn(p.shape, generator=generator, dtype=p.dtype)
                p.copy_(z * fan_in ** -0.5)

    # -- the configuration axis -------------------------------------------------------
    def config_axes(self) -> dict:
        """``{parameter: axis}``: the axis of each trainable parameter that indexes the configs
        (a parameter with ``requires_grad=False``, e.g. a fixed input layer, is left out)."""
        return {p: _config_axis(name, p) for name, p in self.named_parameters() if p.requires_grad}

    def _mark_axes(self):
        """Write each parameter's configuration axis on it (``p.config_axis``), where the batched
        optimisers read it for a plain list of parameters."""
        for name, p in self.named_parameters():
            p.config_axis = _config_axis(name, p)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._mark_axes()  # a copy's parameters are new tensors (copy.deepcopy, pickle)

    def release_grads(self, params=None) -> None:
        """Set the gradients of ``params`` (an iterable of this module's parameters; default all)
        to ``None``, handing the larger ones back to the module's workspace: the next backward
        pass of the ``res-1`` stack writes into them instead of a fresh tensor (on CPU a fresh
        tensor costs a page fault per 4 KiB). A reference to an old ``.grad`` kept across steps
        is then overwritten, as with ``zero_grad(set_to_none=False)``. The batched optimisers'
        ``zero_grad`` calls this."""
        mine = list(self.parameters())
        for p in mine if params is None else params:
            if not any(p is q for q in mine):
                raise ParameterError("params", "params must be parameters of this module")
            if p.grad is not None:
                if p.grad.dim() >= 3:
                    self._workspace.recycle(p.grad)
                p.grad = None

    # -- the constructor's arguments as plain JSON ----------------------------------------
    def get_config(self) -> dict:
        """The constructor's arguments as plain JSON (keys :data:`CONFIG_KEYS`; ``activation`` by
        name, ``dtype`` as ``'float32'``/``'float64'``, no device): ``from_config(get_config())``
        builds the same architecture (the weights are in ``state_dict()``). An activation given
        as a callable must be one that its name gives back (a named activation or
        ``'module:function'``), else ``ValueError``."""
        act = self._options["activation"]
        if not isinstance(act, str):
            act = self.activation.name
            try:
                _activation(act)
            except ValueError:
                raise ParameterError("activation", f"activation {act!r} cannot be written to a config: give the "
                                                   "module its name ('module:function' for a function of an "
                                                   "importable module)") from None
        return {"arch": self.arch, "depth": self.depth, "width": self.width, "in_features": self.in_features,
                "out_features": self.out_features, "configs": self.configs, "beta": self.beta, "activation": act,
                "bias": self.bias, "delta": self.delta_mode, "dtype": str(self.A.dtype).replace("torch.", "")}

    @classmethod
    def from_config(cls, config: dict, *, device=None) -> "ResidualNetwork":
        """A new module (freshly initialised) from :meth:`get_config`'s dict, or an older one
        lacking some keys (``configs``, ``beta``, ``activation``, ``bias``, ``delta``, ``dtype``
        take the constructor's defaults); ``dtype`` may be a name or a ``torch.dtype``.

        Args:
            config: a dict with at least ``arch``, ``depth``, ``width``, ``in_features``,
                ``out_features`` and no key outside :data:`CONFIG_KEYS`.
            device: where the parameters live (as for the constructor).
        """
        if not isinstance(config, Mapping):
            raise ParameterError("config", "config must be a dict (ResidualNetwork.get_config()), got "
                                           f"{type(config).__name__}")
        missing = [k for k in CONFIG_KEYS[:5] if k not in config]
        unknown = [k for k in config if k not in CONFIG_KEYS]
        if missing or unknown:
            raise ParameterError("config", f"config must have the keys {', '.join(CONFIG_KEYS[:5])} and no others of "
                                           f"{', '.join(CONFIG_KEYS[5:])}, got missing {missing}, unknown {unknown}")
        kw = dict(config)
        dtype = kw.pop("dtype", torch.float32)
        if isinstance(dtype, str) and dtype in ("float32", "float64"):
            dtype = getattr(torch, dtype)
        return cls(**kw, dtype=V_.dtype(dtype, name="config['dtype']"), device=device)

    def residual_names(self) -> tuple[str, ...]:
        """Names of the per-layer parameters ``(L, C, ...)``: ``V``, ``W``, ``b`` as present."""
        return self.block.required + (("b",) if self.bias else ())

    def residual_weights(self) -> dict[str, torch.Tensor]:
        """The per-layer weights as detached ``(L, C, ...)`` tensors (sharing storage)."""
        out = {name: getattr(self, name).detach() for name in self.residual_names()}
        if self.delta_mode == "per-layer":
            out["delta"] = self.delta.detach()
        return out

    @torch.no_grad()
    def load_sample(self, samples: dict) -> "ResidualNetwork":
        """Set residual weights from driver samples ``{name: DriverSample}`` (``draws = C``):
        ``name`` gets ``sample.weights(L)`` (for a path sample whose resolution is a larger power
        of two than ``L``, its first ``L`` finest-grid layers, equal in law for nested drivers)."""
        if not isinstance(samples, Mapping):
            raise ParameterError("samples", f"samples must be a dict {{name: DriverSample}}, got "
                                            f"{type(samples).__name__}")
        for name, sample in samples.items():
            V_.choice("samples key", name, self.residual_names())
            if getattr(sample, "kind", None) is None or not hasattr(sample, "draws"):  # the samples' interface
                raise ParameterError("samples", f"samples[{name!r}] must be a DriverSample (driver.sample(...)), "
                                                f"got {type(sample).__name__}")
            p = getattr(self, name)
            want = tuple(p.shape[2:])
            if sample.draws != self.configs or tuple(sample.shape) != want:
                raise ParameterError("samples", f"samples[{name!r}] must have draws = {self.configs} and shape {want}, "
                                                f"got draws = {sample.draws} and shape {tuple(sample.shape)}")
            p.copy_(_layer_weights(sample, self.depth))
        return self

    @torch.no_grad()
    def config(self, c: int) -> "ResidualNetwork":
        """A new one-config network holding a copy of config ``c``."""
        c = V_.integer("c", c, low=0, high=self.configs - 1)
        out = ResidualNetwork(self.arch, self.depth, self.width, self.in_features, self.out_features,
                              configs=1, **self._options)
        for (name, p), (_, q) in zip(self.named_parameters(), out.named_parameters()):
            q.copy_(p.narrow(_config_axis(name, p), c, 1))
            q.requires_grad_(p.requires_grad)
        return out

    # -- forward -------------------------------------------------------------------------
    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """``h_0 = x A``: ``x`` ``(batch, d_in)`` (shared) or ``(C, batch, d_in)`` -> ``(C, batch, d)``;
        ``x`` has the dtype and device of the parameters (checked without a pass over its values)."""
        V_.same_device("x", V_.tensor("x", x, dtype_=self.A.dtype, finite=False), self.A.device)
        if x.dim() not in (2, 3) or x.shape[-1] != self.in_features or (x.dim() == 3 and x.shape[0] != self.configs):
            raise ParameterError("x", f"x must have shape (batch, {self.in_features}) or ({self.configs}, batch, "
                                      f"{self.in_features}), got {tuple(x.shape)}")
        return x @ self.A

    def propagate(self, h: torch.Tensor) -> torch.Tensor:
        """The residual stack: ``h_0`` ``(C, batch, d)`` -> ``h_L``.

        ``res-1`` with ``tanh``, ``relu`` or ``identity`` runs the stack of :mod:`._stack`,
        ``inside`` the stack of :mod:`._inside` (hand-written backward passes, the
        same gradients), except under a ``torch.func`` transform (``vmap``, ``grad``). Otherwise the layers are taken
        with ``unbind(0)`` once: indexing ``V[k]`` inside the loop would
        make autograd build a full ``(L, C, d, d)`` gradient for every layer (O(L^2) work)."""
        names = self.block.required
        if self.fused and not under_transform():  # under torch.func (vmap, grad): plain autograd
            return _STACKS[type(self.block)](self, h)
        layers = [getattr(self, n).unbind(0) for n in names]
        biases = self.b.unbind(0) if self.b is not None else [None] * self.depth
        if self.block.trained_scale:
            return self._scaled(h, names, layers, biases)
        alpha = float(self.depth) ** -self.beta
        for k, bk in enumerate(biases):
            w = dict(zip(names, (layer[k] for layer in layers)))
            r = self._net.residual(h, **w)
            h = h + alpha * (r if bk is None else r + bk.unsqueeze(-2))
        return h

    def _scaled(self, h, names, layers, biases):
        """The stack of a block scaled by the trained ``delta`` (``inside``), through autograd; the
        bias is the block's own optional weight (inside the activation)."""
        if self.delta_mode == "shared":
            deltas = [self.delta.reshape(-1, 1, 1)] * self.depth
        else:
            deltas = [dk.reshape(-1, 1, 1) for dk in self.delta.unbind(0)]
        for k, (bk, dk) in enumerate(zip(biases, deltas)):
            w = dict(zip(names, (layer[k] for layer in layers)))
            if bk is not None:
                w["b"] = bk
            h = h + dk * self._net.residual(h, **w)
        return h

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        """``F = h_L B``: ``(C, batch, d)`` -> ``(C, batch, d_out)``."""
        return h @ self.B

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` ``(batch, d_in)`` shared by the configs -> outputs ``(C, batch, d_out)``."""
        return self.readout(self.propagate(self.embed(x)))

    def extra_repr(self) -> str:
        """The configuration, shown by ``repr`` of the module."""
        return (f"arch={self.arch!r}, depth={self.depth}, width={self.width}, in_features={self.in_features}, "
                f"out_features={self.out_features}, configs={self.configs}, beta={self.beta}, "
                f"activation={self.activation.name!r}, bias={self.bias}, delta={self.delta_mode!r}")


def parameter_count(arch: str, depth: int, width: int, in_features: int, out_features: int, *, configs: int = 1,
                    bias: bool = False, delta: str | None = None) -> int:
    """The numbers held by the parameters of ``ResidualNetwork(arch, depth, width, in_features,
    out_features, configs=..., bias=..., delta=...)``, counted without allocating anything:
    ``A``, ``B``, the per-layer ``V``/``W`` (and ``b``) and ``delta`` (``inside``: shared unless
    ``delta='per-layer'``)."""
    block = make_block(arch)
    per_layer = block.parameter_count(width) + (width if bias else 0)
    deltas = 0 if not block.trained_scale else depth if delta == "per-layer" else 1
    return configs * (depth * per_layer + deltas + in_features * width + width * out_features)


def activation_count(arch: str, fused: bool, depth: int, width: int, batch: int, configs: int = 1) -> int:
    """The numbers a training step keeps for its backward pass on a mini-batch of ``batch``:
    one ``(L, C, batch, d)`` buffer for the fused ``res-1`` stack (:mod:`._stack`), four for the
    fused ``inside`` stack (:mod:`._inside`: and a row of ones per layer, and its ``(2d, 2d + 1)``
    product matrix per layer and configuration), about eight tensors of that size per layer
    through autograd otherwise (the inputs and outputs of the product, the bias, the
    activation and the scaled sum of every layer)."""
    return depth * configs * block_class(arch).kept_numbers(width, batch, fused)


def _require_parameters(arch, depth, width, in_features, out_features, configs, bias, delta, dtype, device):
    """Refuse (:class:`~deeplimits._validate.ResourceError`) parameters that cannot fit in the
    memory of ``device`` (of the machine unless it is a CUDA device)."""
    n = parameter_count(arch, depth, width, in_features, out_features, configs=configs, bias=bias, delta=delta)
    what = (f"for the parameters of {configs} configuration{'s' * (configs != 1)} of {arch} at depth={depth}, "
            f"width={width}" + "".join(f", {k}={v}" for k, v in (("in_features", in_features),
                                                                ("out_features", out_features)) if v > width))
    R_.require_memory(n * dtype.itemsize, what, ("depth", "width", "configs"), device=device)


#: the hand-written passes, by the block class they run (:attr:`ResidualNetwork.fused`); any other
#: block trains through autograd
_STACKS = {Res1: lambda net, h: res1_stack(h, net.V, net.b, float(net.depth) ** -net.beta, fused_kind(net.activation),
                                           net._workspace),
           Inside: lambda net, h: inside_stack(h, net.W, net.b, net.delta, fused_kind(net.activation), net._workspace)}


def _layer_weights(sample, depth: int) -> torch.Tensor:
    """``(depth, draws, *shape)`` weights of ``sample``: ``weights(depth)``, or the first ``depth``
    layers at the sample's resolution when ``depth`` does not divide it."""
    res = getattr(sample, "resolution", None)
    if res is None or res % depth == 0:
        return sample.weights(depth)
    if res < depth:
        raise ParameterError("depth", f"the sample's resolution {res} must be >= depth {depth}")
    return sample.weights(res)[:depth]


def _config_axis(name: str, p: torch.Tensor) -> int:
    """The configuration axis of parameter ``name``: 0 for ``A``, ``B`` and a shared ``delta``,
    1 (after the layer axis) for the per-layer parameters."""
    return 0 if name in ("A", "B") or (name == "delta" and p.dim() == 1) else 1


def is_fused(arch: str, activation) -> bool:
    """The one definition of a fused network: does the residual stack of ``arch`` with
    ``activation`` (a name or an :class:`~deeplimits.activations.Activation`) run a hand-written
    pass? The block says (:meth:`Block.fused <deeplimits.blocks.Block.fused>`: ``res-1`` and
    ``inside`` with ``tanh``, ``relu`` or ``identity``); training and the memory models both ask it."""
    block = make_block(arch, activation)
    return type(block) in _STACKS and block.fused()
