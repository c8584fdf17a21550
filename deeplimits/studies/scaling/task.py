"""One task of the scaling experiment (docs/weights.md, "The scaling experiment"): the inside
model (or a registered block of one's own that fits it, :func:`~.study.scaling_block`; its one
required weight is the ``W`` the records name) of one depth and one seed, its learning rates trained at once (one configuration each,
the fused pass of :mod:`deeplimits.training._inside`), each until its own training loss is
below the threshold, then the diagnostics of its trained weights.

A configuration that reaches the threshold is frozen (the optimiser leaves it alone) while the
others go on: each is trained exactly as it would be alone. The loss is evaluated on the whole
training split after every epoch, in the plan's convention (``'mse'``: ``torch.nn.MSELoss()``,
the mean over the batch and the outputs; ``'squared'``: half the squared error summed over the
outputs, :func:`~deeplimits.training.losses.config_losses`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time

import torch

from ..._random import epoch_seed, single_threaded_torch
from ...runs import register_task
from .presets import ARCH

__all__ = ["scaling_task", "train_to_threshold", "effective_weights", "on_sphere", "COORDINATES"]

#: the weight entries kept along depth for the figures (config 0): (row, column) of W_k
COORDINATES = ((0, 0), (0, 1), (1, 0))
#: numbers per operation (configurations x batch x width) below which a CPU task runs on one
#: thread: torch's own grain size for splitting an operation between threads
ONE_THREAD_BELOW = 32768


@contextlib.contextmanager
def _threads_for(numbers: int, device):
    """One intra-op thread on the CPU while each operation touches fewer than
    :data:`ONE_THREAD_BELOW` numbers (the layers of this model: ``C x 32 x 10``), the previous
    count restored after. A second thread gains nothing there and, on a machine shared with
    other work, each operation waits for it: a (1, 32, 10) x (10, 10) product measured 32 ms
    with two threads under load against microseconds with one (benchmarks/RESULTS.md)."""
    one = torch.device(device).type == "cpu" and numbers < ONE_THREAD_BELOW
    with single_threaded_torch(one):
        yield


def _data(params: dict, dtype, device):
    """The synthetic task (its inputs on the unit sphere with ``inputs='sphere'``), or digits
    with one-hot targets for the squared losses."""
    from ...data import load_dataset

    if params.get("dataset", "synthetic") == "synthetic":
        ds = load_dataset("synthetic", seed=params["seed"], dtype=dtype, n=params["samples"], dim=params["width"],
                          angle_start=params.get("angle_start", 1), device=device)
        return on_sphere(ds) if params.get("inputs", "cube") == "sphere" else ds
    ds = load_dataset("digits", seed=params["seed"], dtype=dtype, device=device)

    class OneHot:  # regression targets: squared loss against the one-hot labels
        x_train, x_test = ds.x_train, ds.x_test
        y_train = torch.nn.functional.one_hot(ds.y_train, 10).to(dtype)
        y_test = torch.nn.functional.one_hot(ds.y_test, 10).to(dtype)
        task = "regression"
    return OneHot


def on_sphere(ds):
    """The synthetic task with its inputs ``x / ||x||``, its targets those of ``x`` (the published
    code normalises the inputs after computing the targets)."""
    unit = lambda x: x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)  # noqa: E731
    return dataclasses.replace(ds, x_train=unit(ds.x_train), x_test=unit(ds.x_test))


def _network(params: dict, data, C: int, seed: int, dtype, device):
    """The inside network of the protocol: ``W`` of order ``init_scale / (L d)``, the biases 0 or
    (``bias_init='normal'``, the published code's) ``N(0, (init_scale / (L sqrt d))^2)`` (both
    without the ``1/L`` with ``init_method='xavier'``, the released code's default), ``delta`` at
    ``1/L`` (``delta_init='constant'``) or, one per layer, drawn from ``N(0, 1/L^2)`` with
    random signs (``'normal'``: the published code's per-layer initialisation), the input and
    output layers fixed (identities, or a random embedding for digits)."""
    from ...training import ResidualNetwork

    L, d = params["depth"], params["width"]
    per = 1 if params.get("init_method", "xavier-depth") == "xavier" else L  # a spec before the option: 1/L
    net = ResidualNetwork(params.get("arch") or ARCH, L, d, data.x_train.shape[1], data.y_train.shape[1], configs=C,
                          activation=params["activation"], bias=True, delta=params["delta"], dtype=dtype, device=device)
    A = matrix(net)
    g = torch.Generator().manual_seed(seed)  # drawn on the CPU: the same networks on every device
    with torch.no_grad():
        draw = torch.randn((L, 1, d, d), generator=g, dtype=dtype).expand(A.shape)  # one draw, every rate
        A.copy_(draw * params["init_scale"] / (per * d))
        if params.get("dataset", "synthetic") == "synthetic":  # h_0 = x, F(x) = h_L
            for p in (net.A, net.B):
                p.copy_(torch.eye(d, dtype=dtype).expand_as(p))
        else:  # a fixed random embedding of the inputs, a fixed random read-out (Cohen et al.'s MNIST protocol)
            for p in (net.A, net.B):
                p.copy_(torch.randn(p.shape[1:], generator=g, dtype=dtype).expand_as(p) * p.shape[1] ** -0.5)
        if params.get("bias_init", "zero") == "normal":  # the published code's: N(0, (init_scale / (L sqrt d))^2)
            net.b.copy_(torch.randn((L, 1, d), generator=g, dtype=dtype).expand(net.b.shape)
                        * params["init_scale"] / (per * d ** 0.5))
        if params.get("delta_init", "constant") == "normal":  # a spec written before the option: 1/L
            net.delta.copy_(torch.randn(net.delta.shape[:-1] + (1,), generator=g, dtype=dtype).expand(net.delta.shape)
                            / L)
        net.A.requires_grad_(False)
        net.B.requires_grad_(False)
    return net


def matrix(net):
    """The per-layer matrix ``A_k`` of ``h + delta_k sigma(A_k h + b_k)``: the block's one required
    weight (``W`` of the published inside block; :func:`~.study.scaling_block`)."""
    return getattr(net, net.block.required[0])


PATIENCE, IMPROVEMENT = 5, 0.99
"""The published code's patience (``stop_rule='running'``): training stops after ``PATIENCE``
epochs in a row whose running loss is not below ``IMPROVEMENT`` times the best so far."""


def _epoch_batches(x, y, batch_size: int, batches_mode: str, order, seed: int, epoch: int):
    """The mini-batches of one epoch and the batch order carried to the next: a fresh
    permutation of the samples (``'shuffled'``), or the published code's fixed batches (the
    training split cut in order, the remainder dropped) in the order of
    :func:`~deeplimits.data.batching.copying_shuffle` started afresh (``'published'``), or in the
    state that shuffle reaches (``'collapsed'``): position 0 is never written, so every batch
    becomes the first; the published code shuffles its one training set in place across the
    depths, so from its third depth on each epoch is the first batch, ``n // batch_size`` times."""
    from ...data.batching import batches, copying_shuffle

    if batches_mode == "shuffled":
        return list(batches((x, y), batch_size, seed=epoch_seed(seed, epoch))), order
    if batches_mode == "collapsed":
        return [(x[:batch_size], y[:batch_size])] * (x.shape[0] // batch_size), order
    if order is None:
        order = torch.arange(x.shape[0] // batch_size)
    order = copying_shuffle(order, torch.Generator().manual_seed(epoch_seed(seed, epoch)))
    return [(x[k * batch_size:(k + 1) * batch_size], y[k * batch_size:(k + 1) * batch_size])
            for k in order.tolist()], order


def train_to_threshold(net, data, *, optimizer: str, lrs, loss: str, stop_loss: float, max_epochs: int,
                       batch_size: int, seed: int, batches: str = "shuffled", stop_rule: str = "evaluated") -> dict:
    """Train every configuration of ``net`` until its training loss is at most ``stop_loss``
    (then it is frozen) or ``max_epochs``: ``{'epochs', 'reached', 'train_loss', 'finite'}``
    per configuration, and ``'history'``, the loss each epoch's stopping rule read.

    ``stop_rule``: ``'evaluated'``, the loss of the whole training split after every epoch; or
    ``'running'``, the published code's: the mean of the epoch's mini-batch losses as they were
    trained, and a configuration also stops after :data:`PATIENCE` epochs without a 1%
    improvement (``reached`` is then whether that rule's loss was below ``stop_loss``).
    ``batches``: ``'shuffled'``, ``'published'`` or ``'collapsed'`` (:func:`_epoch_batches`). ``train_loss`` is
    the whole training split's loss at the end, whatever the rule."""
    from ...training import BatchedAdam, BatchedSGD
    from ...training.losses import _config_losses, _evaluate

    C = net.configs
    opt = (BatchedAdam if optimizer == "adam" else BatchedSGD)(net, lr=list(lrs))
    epochs, reached = [0] * C, torch.zeros(C, dtype=torch.bool)
    done, bad, best = torch.zeros(C, dtype=torch.bool), torch.zeros(C), torch.full((C,), float("inf"))
    history, x, y, order = [], data.x_train, data.y_train, None
    for e in range(max_epochs):
        pairs, order = _epoch_batches(x, y, batch_size, batches, order, seed, e)
        running = 0.0
        for xb, yb in pairs:
            opt.zero_grad(set_to_none=True)
            per = _config_losses(net(xb), yb, loss)
            per.sum().backward()
            opt.observe(per.detach())
            opt.step()
            running = running + per.detach().double()
        tl = (running / len(pairs)).cpu() if stop_rule == "running" else _evaluate(net, x, y, loss)[0].cpu()
        history.append(tl.tolist())
        live = opt.finite.cpu() & torch.isfinite(tl)
        for c in range(C):
            epochs[c] += int(not done[c])
        better = tl < IMPROVEMENT * best
        best, bad = torch.where(better, tl, best), torch.where(better, 0.0, bad + 1)
        hit = (tl <= stop_loss) & ~done
        reached |= hit
        done |= hit | ~live | ((bad >= PATIENCE) if stop_rule == "running" else False)
        opt.finite &= ~done.to(opt.finite.device)  # a configuration done is left alone from now on
        if bool(done.all()):
            break
    final = _evaluate(net, x, y, loss)[0].cpu()
    if stop_rule == "evaluated":
        reached = final <= stop_loss
    return {"epochs": epochs, "reached": reached.tolist(), "train_loss": final.tolist(),
            "finite": torch.isfinite(final).tolist(), "history": history}


def effective_weights(W: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    """``|delta_k| W_k`` ``(L, C, d, d)``: with ReLU, ``delta_k relu(W_k h + b_k) = sign(delta_k)
    relu(|delta_k| W_k h + |delta_k| b_k)``, so only this product is identified (Cohen et al.,
    Remark 2.2)."""
    scale = delta.abs() if delta.dim() == 2 else delta.abs().expand(W.shape[0], -1)
    return W * scale.view(W.shape[0], W.shape[1], 1, 1)


def _pair_distance(net, x) -> torch.Tensor:
    """:func:`~deeplimits.diagnostics.own_ode_error` of every configuration; when its
    adaptive solver gives up (a step size underflowing to 0: weights trained into an ODE too
    stiff to solve, e.g. a learning rate that blew up, a result of the training, not a failure
    of the task), each configuration alone, NaN for those that still fail."""
    from ...diagnostics import own_ode_error

    def distance(module):
        try:
            return own_ode_error(module, x)
        except AssertionError as e:  # torchdiffeq: "underflow in dt"
            if "underflow" not in str(e):
                raise
            return None

    found = distance(net)
    if found is not None:
        return found
    if net.configs == 1:
        return torch.full((1,), float("nan"))
    return torch.cat([_pair_distance(net.config(c), x).cpu() for c in range(net.configs)])


@register_task("scaling-depth")
def scaling_task(params: dict, seed: int) -> dict:
    """Sweep task: one depth and seed, its learning rates trained at once until the threshold."""
    from ...diagnostics import trend_loss, weight_diagnostics

    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    lrs, loss = params["lr"], params.get("loss", "squared")
    lrs = [lrs] if isinstance(lrs, (int, float)) else lrs  # a spec written before the learning rates were a list
    data = _data(params, dtype, device)
    net = _network(params, data, len(lrs), seed, dtype, device)
    t0 = time.perf_counter()
    with _threads_for(len(lrs) * params["batch_size"] * params["width"], device):
        res = train_to_threshold(net, data, optimizer=params["optimizer"], lrs=lrs, loss=loss,
                                 stop_loss=params["stop_loss"], max_epochs=params["max_epochs"],
                                 batch_size=params["batch_size"], seed=params["seed"] + params.get("seed_index", 0),
                                 batches=params.get("batches", "shuffled"),
                                 stop_rule=params.get("stop_rule", "evaluated"))
    seconds = time.perf_counter() - t0
    with _threads_for(len(lrs) * 256 * params["width"], device):  # the trained pair's ODE runs on 256 inputs
        ratio = trend_loss(net, data.x_train, data.y_train, loss=loss)["ratio"]
        ode = _pair_distance(net, data.x_train[:256])  # the trained pair on (up to) 256 training inputs
    W, b, dlt = matrix(net).detach().cpu(), net.b.detach().cpu(), net.delta.detach().cpu()
    per_layer = dlt.dim() == 2
    eff = effective_weights(W, dlt) if per_layer else None
    eff_b = effective_weights(b.unsqueeze(-1), dlt).squeeze(-1) if per_layer else None  # |delta_k| b_k
    records = []
    for c, lr in enumerate(lrs):
        rec = {"depth": params["depth"], "seed": params.get("seed_index", 0), "lr": lr, "epochs": res["epochs"][c],
               "reached": res["reached"][c], "train_loss": res["train_loss"][c], "finite": res["finite"][c],
               "delta": float(dlt[:, c].abs().max()) if per_layer else float(dlt[c]),
               "W": weight_diagnostics(W[:, c], name="W").to_dict(), "b": weight_diagnostics(b[:, c], name="b").to_dict(),
               "trend_ratio": float(ratio[c]),
               "ode_distance": float(ode[c]), "seconds": seconds}
        if per_layer:
            d = dlt[:, c]
            rec["effective"] = weight_diagnostics(eff[:, c], name="|delta| W").to_dict()
            rec["effective_b"] = weight_diagnostics(eff_b[:, c], name="|delta| b").to_dict()
            rec["delta_sign_changes"] = float((torch.sign(d[1:]) != torch.sign(d[:-1])).double().mean())
        records.append(rec)
    paths = {"delta": dlt[:, 0].tolist() if per_layer else None,
             "W": [W[:, 0, i, j].tolist() for i, j in COORDINATES], "history": res["history"]}
    return {"records": records, "paths": paths}
