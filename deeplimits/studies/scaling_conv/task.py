"""One task of the convolutional scaling experiment (``deeplimits scaling --arch conv``;
docs/weights.md, "Convolutional networks"): the network of one depth and one seed trained with
the protocol of :func:`~deeplimits.training.conv_train.train_conv`, then Table 1's quantities of
Cohen, Cont, Rossier & Xu (ICML 2021) on the spectral norms of its kernels ``delta_k`` and
``A_k`` along depth (:func:`~deeplimits.diagnostics.conv_weight_diagnostics`: increments and
partial sums within a run of blocks of one kernel shape and grid, the rest across them; the
kernels read by :func:`~deeplimits.diagnostics.load_weights`, ``A_k`` on its block's input grid,
``delta_k`` on its output grid).
"""

from __future__ import annotations

import time

import torch

from ...runs import register_task

__all__ = ["conv_scaling_task", "kernel_diagnostics", "KERNELS"]

#: the kernels measured: delta (alpha from its max norm) and the inner kernels A (beta)
KERNELS = ("delta", "A")


@torch.no_grad()
def kernel_diagnostics(net, config: int = 0) -> dict | None:
    """``{name: ConvWeightDiagnostics as plain data}`` for the kernels of :data:`KERNELS` of
    configuration ``config``; ``None`` when a kernel is not finite (a blown-up network: a result
    with no diagnostics)."""
    from ...diagnostics import conv_weight_diagnostics, load_weights

    if not all(bool(torch.isfinite(p).all()) for p in net.parameters()):
        return None
    kernels = load_weights(net)
    return {name: conv_weight_diagnostics(kernels[f"blocks.*.{name}[{config}]"], name=name).to_dict()
            for name in KERNELS}


@register_task("scaling-conv-depth")
def conv_scaling_task(params: dict, seed: int) -> dict:
    """Sweep task: one depth and seed, trained with the plan's protocol, then its kernels' diagnostics."""
    from ...data import load_dataset
    from ...data.augment import IMAGE_SHAPES
    from ...training.conv_train import train_conv
    from .._shared.conv import conv_threads
    from ..training.conv import conv_network

    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    data = load_dataset(params["dataset"], root=params.get("root"), seed=params["seed"], dtype=dtype, device=device)
    net = conv_network(params, 1, IMAGE_SHAPES[params["dataset"]], dtype, device)
    net.reset_parameters(torch.Generator().manual_seed(seed))  # i.i.d. Gaussian, drawn on the CPU
    t0 = time.perf_counter()
    with conv_threads(params, device):
        res = train_conv(net, data, lr=params["lr"], epochs=params["epochs"], batch_size=params["batch_size"],
                         momentum=params["momentum"], weight_decay=params["weight_decay"], augment=params["augment"],
                         padding=params["padding"], seed=params["seed"] + params["seed_index"])
    seconds = time.perf_counter() - t0
    diagnostics = kernel_diagnostics(net)
    rec = {"depth": params["depth"], "seed": params["seed_index"], **res.records[0], "epochs": res.epochs,
           "seconds": seconds, "history": [h["train_loss"][0] for h in res.history]}
    rec["finite"] = rec["finite"] and diagnostics is not None
    rec.update(diagnostics or {name: None for name in KERNELS})
    return {"records": [rec]}
