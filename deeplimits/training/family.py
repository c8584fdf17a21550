"""A family of depths trained from ONE driver sample (docs/trained-limit.md).

Sander, Ablin & Peyré (NeurIPS 2022) and Marion, Wu, Sander & Biau (ICLR 2024): a residual
network ``h_{k+1} = h_k + L^-beta V_{k+1} g(h_k, W_{k+1})`` whose weights start as a
discretisation ``V_k = V(k/L)`` of smooth functions and are trained by gradient descent stays
such a discretisation, close to one neural ODE at rate ``1/L`` for every training time.

The family: every depth ``L`` (and the reference depth) reads its residual weights off the SAME
driver sample (:meth:`~deeplimits.paths.DriverSample.weights` at ``L``, as the strong-error
engine reads one sample at every depth), starts from ``h_0 = x`` and is read out as ``F(x) =
h_L`` (the input and output layers are fixed identities, not trained; the ``inside`` model's
``delta`` is fixed at ``1/L``, so that it is the ``beta = 1`` network ``h + (1/L) sigma(W h)``),
and is trained on the same data for the same number of steps with the depth-scaled learning
rate of :func:`depth_lr`, so that every depth is trained for the same time. A family on data
not of its width (the transfer study's, docs/transfer.md) has instead a fixed random embedding
and readout shared by every depth (:func:`family_head`), still not trained.
"""

from __future__ import annotations


import torch

from .. import _validate as V_
from ..blocks import make_block
from ..networks import ResNet
from .modules import ResidualNetwork
from .train import train

__all__ = ["LR_RULE", "LR_FORMULA", "effective_beta", "depth_lr", "family_sample", "family_member",
           "family_head", "snapshot", "train_member"]

LR_RULE = ("gradient descent: lr L^(2 beta - 1) on every layer's weights (the gradient of layer k is "
           "O(L^-beta) and its effect on the output O(L^-beta), so every depth moves its function by O(lr) per "
           "step: the same training time lr x steps); Adam: lr at every depth (its steps are normalised)")
"""The learning-rate rule of :func:`depth_lr`, in words (reports and docs quote it)."""
LR_FORMULA = {"sgd": "lr L^(2 beta - 1)", "adam": "lr at every depth"}
"""The rule as a formula per optimiser (the reports' short form)."""


def effective_beta(arch, beta: float) -> float:
    """The exponent of the residual branch: ``beta``, or 1 for a block whose branch a trained scale
    multiplies (:attr:`~deeplimits.blocks.Block.trained_scale`, ``inside``: ``delta = 1/L``)."""
    return 1.0 if make_block(arch).trained_scale else float(beta)


def depth_lr(lr: float, depth: int, beta: float, optimizer: str, exponent: float | None = None) -> float:
    """The learning rate of depth ``depth``: ``lr L^(2 beta - 1)`` for (stochastic) gradient
    descent, ``lr`` for Adam (:data:`LR_RULE`; at ``beta = 1`` Marion et al.'s ``0.01 L``);
    with ``exponent`` given, ``lr L^exponent`` for either (e.g. the transfer study's rule,
    docs/transfer.md)."""
    lr = V_.real("lr", lr, low=0.0, low_open=True)
    depth = V_.integer("depth", depth)
    optimizer = V_.choice("optimizer", optimizer, ("sgd", "adam"))
    if exponent is not None:
        return lr * float(depth) ** V_.real("exponent", exponent, low=-4.0, high=4.0)
    return lr if optimizer == "adam" else lr * float(depth) ** (2.0 * beta - 1.0)


def family_sample(arch: str, width: int, driver, configs: int, reference: int, generator: torch.Generator,
                  dtype: torch.dtype, device=None) -> dict:
    """One driver sample per residual weight the block cannot do without (``V``, ``W``; ``W`` for
    ``inside``) with ``draws = configs``: every depth of the family reads it (a path driver at
    ``resolution = reference``)."""
    res = reference if driver.needs_resolution else None
    block = make_block(arch)
    return {name: driver.sample(block.shape(name, width), draws=configs, resolution=res, generator=generator,
                                dtype=dtype, device=device) for name in block.required}


@torch.no_grad()
def family_member(arch: str, depth: int, width: int, samples: dict, *, beta: float, activation, dtype,
                  device=None, head: dict | None = None) -> ResidualNetwork:
    """The depth-``depth`` network of the family: residual weights ``samples[name].weights(L)``,
    ``h_0 = x``, output ``h_L``; only the residual weights are trained. ``head``: ``None``
    (the identities), or the fixed embedding and readout ``{'A': (C, inputs, width), 'B': (C,
    width, outputs)}`` every depth shares (:func:`family_head`), not trained either."""
    configs = next(iter(samples.values())).draws
    n_in, n_out = (width, width) if head is None else (head["A"].shape[1], head["B"].shape[2])
    scaled = make_block(arch).trained_scale  # the branch's scale is delta = 1/L (beta: not used)
    net = ResidualNetwork(arch, depth, width, n_in, n_out, configs=configs, beta=0.5 if scaled else beta,
                          activation=activation, dtype=dtype, device=device)
    net.load_sample(samples)
    eye = torch.eye(width, dtype=dtype, device=net.A.device)
    for name, p in (("A", net.A), ("B", net.B)):
        p.copy_(eye.expand_as(p) if head is None else head[name])
        p.requires_grad_(False)
    if scaled:  # delta = 1/L, fixed: h + (1/L) sigma(W h)
        net.delta.requires_grad_(False)
    return net


@torch.no_grad()
def family_head(inputs: int, width: int, outputs: int, configs: int, generator: torch.Generator, dtype,
                device=None) -> dict:
    """A fixed random embedding and readout for a family whose data are not of its width:
    ``{'A': (configs, inputs, width), 'B': (configs, width, outputs)}`` with i.i.d. ``N(0,
    1/fan_in)`` entries (as :meth:`~deeplimits.training.ResidualNetwork.reset_parameters`),
    drawn once and shared by every depth (:func:`family_member`)."""
    out = {}
    for name, shape in (("A", (configs, inputs, width)), ("B", (configs, width, outputs))):
        z = torch.randn(shape, generator=generator, dtype=dtype)
        out[name] = (z * shape[1] ** -0.5).to(device)
    return out


@torch.no_grad()
def snapshot(net: ResidualNetwork, x: torch.Tensor, stride: int = 1) -> dict:
    """The residual weights of the layers ``stride, 2 stride, ..., L`` (``{name: (L / stride, C,
    ...)}``, float64 copies, except on MPS) and the hidden states ``h_0, h_stride, ..., h_L``
    on the inputs ``x`` (``(L / stride + 1, C, n, d)``), computed layer by layer."""
    L = net.depth
    f64 = torch.float64 if net.A.device.type != "mps" else net.A.dtype  # MPS has no float64
    weights = {name: w[stride - 1::stride].to(f64, copy=True) for name, w in net.residual_weights().items()
               if name != "delta"}
    resnet = ResNet(net.arch, net.activation, effective_beta(net.arch, net.beta))
    layers = {name: w for name, w in net.residual_weights().items() if name != "delta"}
    kept = [h.to(f64) for k, h in enumerate(resnet.iterate(net.embed(x), **layers, depth=L))
            if k % stride == 0]
    return {"weights": weights, "states": torch.stack(kept)}


def train_member(net: ResidualNetwork, data, *, optimizer: str, lr: float, epochs: int, batch_size: int, seed: int,
                 checkpoints, stride: int = 1, progress=None, loss: str = "squared") -> tuple[dict, object]:
    """Train ``net`` with :func:`~deeplimits.training.train` (``loss``: the squared loss by
    default; no decay of the rate) and keep :func:`snapshot` s before training and after each
    epoch in ``checkpoints``: ``({epochs done: snapshot}, TrainResult)``."""
    x = data.x_train
    snaps = {0: snapshot(net, x, stride)}
    marks = set(checkpoints)

    def keep(record):
        done = record["epoch"] + 1
        if done in marks:
            snaps[done] = snapshot(net, x, stride)

    result = train(net, data, optimizer=optimizer, lr=lr, epochs=epochs, batch_size=batch_size, loss=loss,
                   lr_decay_halfway=False, seed=seed, callbacks=[keep], progress=progress)
    return snaps, result
