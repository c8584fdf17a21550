"""The depth coordinate check of the transfer study (docs/transfer.md): how much a few steps of
training move the hidden state, against depth.

After ``steps`` full-batch steps at the (rescaled) rate, on the same inputs before and after:
``h_L``, the mean entry of ``|h_L(after) - h_L(before)|`` (the features the readout sees), and
``block``, the mean over blocks ``k`` of the mean entry of ``|Δ(h_k - h_{k-1})|`` over that of
``|h_k - h_{k-1}|`` before the steps (each block's update of the hidden state relative to the
block's own output, which is of order ``L^-beta`` at initialisation). Under the scaling that
keeps one step of order one both are flat in ``L``; a rate too large for the depth makes them
grow, too small makes them shrink.
"""

from __future__ import annotations

import types

import torch

__all__ = ["coordinate_check", "tiled", "roughness", "QUANTITIES"]

QUANTITIES = {"h_L": "mean |Δh_L|", "block": "mean_k |Δ(h_k - h_(k-1))| / mean_k |h_k - h_(k-1)|"}
"""The two measured update sizes: key -> what it is."""


def tiled(net, copies: int):
    """A network holding ``copies`` copies of every configuration of ``net`` (config ``i`` of copy
    ``j`` is config ``j * C + i``), its embedding and readout frozen (not trained)."""
    from ...training import ResidualNetwork

    big = ResidualNetwork.from_config({**net.get_config(), "configs": net.configs * copies}, device=net.A.device)
    with torch.no_grad():
        for p, q in zip(big.parameters(), net.parameters()):
            p.copy_(torch.cat([q] * copies, dim=p.config_axis))
    big.A.requires_grad_(False)
    big.B.requires_grad_(False)
    return big


def _updates(before: torch.Tensor, after: torch.Tensor) -> dict:
    """Per configuration: the two update sizes of :data:`QUANTITIES` from states ``(L + 1, C, n, d)``."""
    d_last = (after[-1] - before[-1]).abs().mean(dim=(-2, -1))
    d_block = (after.diff(dim=0) - before.diff(dim=0)).abs().mean(dim=(0, -2, -1))
    return {"h_L": d_last, "block": d_block / before.diff(dim=0).abs().mean(dim=(0, -2, -1))}


def coordinate_check(net, data, *, optimizer: str, lr: float, steps: int, samples: int) -> dict:
    """Train a copy of ``net`` (its configurations: seeds) for ``steps`` full-batch steps on the
    first ``samples`` training samples of ``data`` at the rate ``lr`` of every block, and measure
    :data:`QUANTITIES` on those samples: ``{key: [one value per seed, None where training blew up]}``."""
    from ...training import train
    from ...training.family import snapshot

    x, y = data.x_train[:samples], data.y_train[:samples]
    sub = types.SimpleNamespace(x_train=x, y_train=y, x_test=x[:1], y_test=y[:1], task="classification")
    copy = tiled(net, 1)
    before = snapshot(copy, x)["states"]
    res = train(copy, sub, optimizer=optimizer, lr=[lr] * copy.configs, epochs=steps, batch_size=x.shape[0],
                loss="cross_entropy", lr_decay_halfway=False)
    after = snapshot(copy, x)["states"]
    ok = [r["finite"] for r in res.records]
    sizes = _updates(before, after)
    return {k: [float(v) if good and torch.isfinite(v) else None for v, good in zip(t, ok)] for k, t in sizes.items()}


@torch.no_grad()
def roughness(trained: torch.Tensor, initial: torch.Tensor) -> list[float]:
    """Per configuration, how rough the trained update ``ΔV_k = V_k - V_k(init)`` is across the
    layers: ``mean_k |ΔV_(k+1) - ΔV_k| / mean_k |ΔV_k|`` (Frobenius norms; ``trained`` ``(L, C, d,
    d)``, ``initial`` the same, or ``(L, S, d, d)`` tiled along the configurations). An update
    that is a smooth function of ``k/L`` gives about ``1/L``, independent layers about 1: the
    slope of this against ``L`` says whether the trained family can share a limit."""
    init = initial.repeat(1, trained.shape[1] // initial.shape[1], 1, 1)
    dv = (trained - init).flatten(2)
    ratio = dv.diff(dim=0).norm(dim=-1).mean(0) / dv.norm(dim=-1).mean(0)
    return [float(r) if torch.isfinite(r) else None for r in ratio]
