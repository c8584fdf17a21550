"""One task of the convolutional scaling experiment (``deeplimits scaling --arch conv``;
docs/weights.md, "Convolutional networks"): the network of one depth and one seed trained with
the protocol of :func:`~deeplimits.training.conv_train.train_conv`, then the spectral norms of its
kernels along depth (:func:`~deeplimits.diagnostics.conv_spectral_norms`, Sedghi, Gupta & Long,
ICLR 2019) and the quantities of Cohen, Cont, Rossier & Xu's steps (ICML 2021, Table 1) on them.

Along depth, the kernels are a path within a stage: the cumulative sums ``sum_{j<=k} K_j`` and
the increments ``K_{k+1} - K_k`` run over the blocks of a stage that share one shape (a stage's
first block, whose ``A`` takes the previous stage's channels at its stride, starts a run of its
own); every norm is that of the convolution on the grid the kernel acts on (the stride-1
convolution's for a strided ``A``: an upper bound of the strided one's; a grid of at least 3 x 3).
"""

from __future__ import annotations

import time

import torch

from ..runs import register_task

__all__ = ["conv_scaling_task", "kernel_norms", "KERNELS"]

#: the kernels measured: delta (alpha from its max norm) and the inner kernels A (beta)
KERNELS = ("delta", "A")
def _runs(net) -> list[list[int]]:
    """The blocks along which the kernels are a path: within each stage, the blocks sharing the
    shape and grid of their kernels."""
    out = []
    for stage in net.stage_blocks():
        first, rest = stage[:1], stage[1:]
        same = first and rest and net.layout[first[0]][:3] == net.layout[rest[0]][:3]
        out += [stage] if same or not rest else [first, rest]
    return out


@torch.no_grad()
def kernel_norms(net, name: str) -> dict:
    """Per configuration, the spectral norms along depth of kernel ``name`` (``'A'``, ``'delta'``):
    ``norms`` ``(L, C)`` of every block, ``cumsum`` ``(C,)`` the largest norm of a cumulative
    sum and ``increment`` ``(C,)`` the largest norm of an increment along a run (module
    docstring), ``quadratic_variation`` ``(C,)`` the sum of the increments' squared norms."""
    from ..diagnostics import conv_spectral_norms

    sizes = net.input_sizes()
    grid = [sizes[k] if name == "A" else sizes[k + 1] for k in range(net.depth)]
    grid = [(max(h, 3), max(w, 3)) for h, w in grid]
    kernels = net.kernels(name)
    C = net.configs
    zeros = torch.zeros(C, dtype=torch.float64)
    norms, cum, inc, qv = [None] * net.depth, zeros.clone(), zeros.clone(), zeros.clone()
    for run in _runs(net):
        K = torch.stack([kernels[k] for k in run]).to(torch.float64)  # (n, C, c_out, c_in, 3, 3)
        g = grid[run[0]]
        for k, v in zip(run, conv_spectral_norms(K, g).cpu()):
            norms[k] = v
        cum = torch.maximum(cum, conv_spectral_norms(K.cumsum(0), g).amax(0).cpu())
        if len(run) > 1:
            d = conv_spectral_norms(K.diff(dim=0), g).cpu()
            inc, qv = torch.maximum(inc, d.amax(0)), qv + d.square().sum(0)
    return {"norms": torch.stack(norms), "cumsum": cum, "increment": inc, "quadratic_variation": qv}


def _record(K: dict, c: int, depth: int) -> dict:
    """The quantities of one configuration (plain JSON): the norms along depth and Table 1's."""
    n = K["norms"][:, c]
    return {"norms": n.tolist(), "max_norm": float(n.max()), "cumsum_norm": float(K["cumsum"][c]),
            "increment_norm": float(K["increment"][c]), "rss": float(n.square().sum().sqrt()),
            "quadratic_variation": float(K["quadratic_variation"][c]), "depth": depth}


@register_task("scaling-conv-depth")
def conv_scaling_task(params: dict, seed: int) -> dict:
    """Sweep task: one depth and seed, trained with the plan's protocol, then its kernels' norms."""
    from ..data import load_dataset
    from ..data.augment import IMAGE_SHAPES
    from ..training.conv_train import train_conv
    from .conv_training import conv_network, conv_threads

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
    rec = {"depth": params["depth"], "seed": params["seed_index"], **res.records[0], "epochs": res.epochs,
           "seconds": seconds, "history": [h["train_loss"][0] for h in res.history]}
    for name in KERNELS:
        rec[name] = _record(kernel_norms(net, name), 0, params["depth"])
    return {"records": [rec]}
