"""A user's network trained in many configurations at once (docs/transfer.md, "Bring your own"):
the grid of one ``(beta, optimiser, depth)`` of the transfer study on a
:class:`~.user.TransferNetwork`, as :func:`~.study.train_grid` does on the study's own networks.

Every configuration (variant x base rate x seed) is one copy of the module's parameters, stacked
along a leading axis and run by ``torch.func.functional_call`` under ``torch.func.vmap``: one
forward and one backward per mini-batch train them all. Each seed's initial values are shared by
every rate and variant; the parameters of the residual blocks (:attr:`~.user.TransferNetwork.trained`)
train at ``base x L^p`` by plain SGD or Adam (no momentum, schedule or weight decay), the others
stay at their initial values. A configuration whose loss stops being finite is frozen and reported
as blown up (``None``), the others go on.
"""

from __future__ import annotations

import math

import torch

from ..._random import mix_seed
from ...errors import ParameterError

__all__ = ["Configs", "train_user_grid"]

_ADAM = (0.9, 0.999, 1e-8)  # the betas and eps of the study's own batched Adam (deeplimits.training.BatchedAdam)


class Configs:
    """The parameters of ``len(seeds)`` modules of ``net`` at ``depth`` and ``beta``, stacked: config
    ``c`` starts from the module built with ``seeds[c]``."""

    def __init__(self, net, depth: int, beta: float, seeds, dtype):
        modules = [net.build(depth, beta, s).to(dtype) for s in seeds]
        self.module = modules[0]
        """The module the stacked parameters are called through."""
        named = [dict(m.named_parameters()) for m in modules]
        self.trained = [n for n in named[0] if n.startswith(net.trained)]
        """The names of the trained parameters (the residual blocks)."""
        if not self.trained:
            raise ParameterError("model", f"model {net.name!r}: no parameter's name starts with {net.trained!r} (its "
                                          "residual blocks, trained at base x L^p)")
        self.params = {n: torch.stack([p[n].detach() for p in named]) for n in named[0]}
        """Every parameter, ``(configs, *shape)``."""
        bufs = [dict(m.named_buffers()) for m in modules]
        self.buffers = {n: torch.stack([b[n] for b in bufs]) for n in bufs[0]}

    def tiled(self, copies: int) -> dict:
        """The parameters of ``copies`` copies of every configuration (copy ``j`` of config ``i`` is
        ``j * C + i``), detached."""
        return {n: p.repeat(copies, *([1] * (p.dim() - 1))).clone() for n, p in self.params.items()}

    def scores(self, params: dict, x: torch.Tensor) -> torch.Tensor:
        """The scores ``(configs, n, classes)`` of every configuration on the inputs ``x`` ``(n, d_in)``."""
        from torch.func import functional_call, vmap

        C = next(iter(params.values())).shape[0]
        buffers = {n: b.repeat(C // b.shape[0], *([1] * (b.dim() - 1))) for n, b in self.buffers.items()}
        return vmap(lambda p, b: functional_call(self.module, (p, b), (x,)))(params, buffers)


def _losses(cfg: Configs, params: dict, x, y) -> torch.Tensor:
    """Each configuration's mean cross-entropy on ``(x, y)``: ``(configs,)``."""
    s = cfg.scores(params, x)
    return torch.nn.functional.cross_entropy(s.flatten(0, 1), y.repeat(s.shape[0]), reduction="none").view(
        s.shape[0], -1).mean(1)


@torch.no_grad()
def _evaluate(cfg: Configs, params: dict, x, y, chunk: int = 4096) -> torch.Tensor:
    total = torch.zeros(next(iter(params.values())).shape[0], dtype=torch.float64)
    for i in range(0, len(x), chunk):
        total += _losses(cfg, params, x[i:i + chunk], y[i:i + chunk]).double() * len(x[i:i + chunk])
    return total / len(x)


def _train(cfg: Configs, params: dict, data, rates, optimizer: str, epochs: int, batch: int, seed: int,
           each_epoch=None) -> torch.Tensor:
    """Train the trained entries of ``params`` in place; returns the mask of configurations still finite.
    ``each_epoch``: called with the epoch (from 1) and that mask after every epoch."""
    x, y = data.x_train, data.y_train
    lr = torch.as_tensor(rates, dtype=x.dtype)
    live = torch.ones(len(lr), dtype=torch.bool)
    state = {n: (torch.zeros_like(params[n]), torch.zeros_like(params[n])) for n in cfg.trained}
    step = 0
    for epoch in range(epochs):
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(mix_seed(seed, epoch)))
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            leaves = {n: params[n].requires_grad_(True) for n in cfg.trained}
            loss = _losses(cfg, {**params, **leaves}, x[idx], y[idx])
            live &= torch.isfinite(loss).detach()
            grads = torch.autograd.grad(torch.where(live, loss, 0.0).sum(), [leaves[n] for n in cfg.trained])
            step += 1
            with torch.no_grad():
                for n, g in zip(cfg.trained, grads):
                    params[n] = _update(params[n].detach(), g, state[n], lr * live, optimizer, step)
        if each_epoch is not None:
            each_epoch(epoch + 1, live)
    return live


def _update(p, g, state, lr, optimizer: str, step: int):
    """One SGD or Adam step of the stacked parameter ``p`` with per-configuration rates ``lr``."""
    shape = (-1,) + (1,) * (p.dim() - 1)
    g = torch.nan_to_num(g, nan=0.0, posinf=0.0, neginf=0.0)
    if optimizer == "sgd":
        return p - lr.view(shape) * g
    b1, b2, eps = _ADAM
    m, v = state
    m.mul_(b1).add_(g, alpha=1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    mhat, vhat = m / (1 - b1 ** step), v / (1 - b2 ** step)
    return p - lr.view(shape) * mhat / (vhat.sqrt() + eps)


def train_user_grid(net, data, *, depth: int, beta: float, optimizer: str, lrs, seeds: int, epochs: int,
                    batch_size: int, coord_steps: int, seed: int = 0, shuffle_seed: int = 0) -> dict:
    """The grid of one ``(beta, optimizer, depth)`` on the user's network ``net`` and data (module
    docstring), in the layout of :func:`~.study.train_grid`'s result; the coordinate check measures
    ``h_L`` as the mean change of the scores (the module's hidden states are its own), ``block`` is
    not measured."""
    from .presets import COORD_SAMPLES, by_setting, exponent_of, horizon_epochs, settings

    variants = [v for b, o, v in settings([beta], [optimizer])]
    exps = [exponent_of(beta, optimizer, v) for v in variants]
    base = [mix_seed(seed, s) for s in range(seeds)]  # each seed's initial values
    cfg = Configs(net, depth, beta, base, data.x_train.dtype)
    initial = _evaluate(cfg, cfg.params, data.x_train, data.y_train)
    K = len(lrs)
    params = cfg.tiled(len(variants) * K)
    rates = [2.0 ** lr * float(depth) ** p for p in exps for lr in lrs for _ in range(seeds)]
    horizons, after = horizon_epochs(epochs), []

    def read(epoch, live):  # the training loss at each horizon, the last the verdict's
        if epoch in horizons:
            losses = _evaluate(cfg, params, data.x_train, data.y_train)
            after.append([float(v) if ok and math.isfinite(v) else None for v, ok in zip(losses.tolist(), live.tolist())])

    _train(cfg, params, data, rates, optimizer, epochs, min(batch_size, len(data.x_train)), shuffle_seed, read)

    def grid(x):  # variants x rates x seeds
        return by_setting(x, len(variants), K, seeds)

    loss = grid(after[-1])
    coords = {v: _coordinate_check(cfg, data, optimizer, 2.0 ** lrs[K // 2] * float(depth) ** p, coord_steps,
                                   COORD_SAMPLES) for v, p in zip(variants, exps)}
    return {"variants": variants, "exponents": exps, "loss": loss, "initial_loss": [float(v) for v in initial],
            "coords": coords, "loss_by_epoch": [grid(a) for a in after], "horizon_epochs": horizons}


def _coordinate_check(cfg: Configs, data, optimizer, lr, steps, samples) -> dict:
    """``h_L``: per seed, the mean entry of ``|scores(after) - scores(before)|`` after ``steps``
    full-batch steps at ``lr`` on the first ``samples`` training inputs (``None`` where it blew up)."""
    import types

    x, y = data.x_train[:samples], data.y_train[:samples]
    sub = types.SimpleNamespace(x_train=x, y_train=y)
    params = cfg.tiled(1)
    with torch.no_grad():
        before = cfg.scores(params, x)
    live = _train(cfg, params, sub, [lr] * len(before), optimizer, steps, len(x), 0)
    with torch.no_grad():
        change = (cfg.scores(params, x) - before).abs().mean(dim=(1, 2))
    h = [float(c) if ok and math.isfinite(c) else None for c, ok in zip(change.tolist(), live.tolist())]
    return {"h_L": h, "block": [None] * len(h)}
