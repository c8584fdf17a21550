"""The simulation of the law study (docs/law.md): the res-1 network
``h_{k+1} = h_k + L^-1/2 V_{k+1} tanh(h_k)`` with i.i.d. weights of a given law at every depth, and
its Itô limit ``dH = dX tanh(H)`` by Euler-Maruyama on three fine grids, batched over draws
(states ``(draws, d)``).

Coupled (the default, the study's variance reduction): one Brownian path per draw drives
everything. Its standard normal increments on the finest grid ``F`` are summed dyadically into the
standardised increments ``G`` of every coarser grid (``G = sum / sqrt(count)``, exactly N(0, 1));
the SDE grids step with ``dX = G / sqrt(d n)``; the network at depth ``L`` takes the weights
``V = (mean + sqrt(variance) q(G)) / sqrt(d)``, with ``q`` the quantile transform of the law
applied to the uniform ``Phi(G)``: ``q(G) = G`` (Gaussian), ``sqrt(3) (2 Phi(G) - 1)`` (uniform on
``[-sqrt 3, sqrt 3]``), ``sign(G)`` (Rademacher). Each network's weights have exactly the law
asked for; only their joint law with the SDE's path is chosen, so that the differences
``phi(h_L) - phi(H)`` vary much less than ``phi(h_L)`` itself.

Plain (``coupled=False``): every network draws its own i.i.d. weights, independent of the SDE's
path (the ordinary Monte Carlo the coupling is measured against).

The path is drawn one segment at a time: a segment is one layer of the shallowest network
(``F / min(depths)`` fine steps), so at most a segment's increments are ever held.
"""

from __future__ import annotations

import math

import torch

from ... import _random as R_

__all__ = ["PHIS", "simulate", "law_weights", "sde_grids", "phi_values", "phi_gradients"]

PHIS = {
    "coord2": "mean_i h_i^2 (the second moment of a coordinate: they are exchangeable)",
    "coord4": "mean_i h_i^4 (the fourth moment of a coordinate)",
    "tanh-cos": "mean_i tanh(h_i)^2 + cos(h_i) / 2",
    "log-norm": "log(|h_L| / |h_0|)",
}
"""The test functions ``phi`` of the output: name -> what it is."""


def sde_grids(fine: int) -> tuple[int, int, int]:
    """The three Euler-Maruyama grids of the reference: ``fine / 4``, ``fine / 2``, ``fine``."""
    return fine // 4, fine // 2, fine


def law_weights(g: torch.Tensor, law: str, mean: float = 0.0, variance: float = 1.0) -> torch.Tensor:
    """``sqrt(d) V`` from standard normals ``g``: ``mean + sqrt(variance) q(g)``, ``q`` the quantile
    transform of ``law`` (module docstring) applied to ``Phi(g)``."""
    if law == "uniform":
        q = torch.erf(g * (1 / math.sqrt(2.0))).mul_(math.sqrt(3.0))
    elif law == "rademacher":
        q = torch.sign(g)
    else:
        q = g
    if variance != 1.0:
        q = q * math.sqrt(variance)
    return q + mean if mean else q


def phi_values(h: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """The test functions of :data:`PHIS` at the outputs ``h`` ``(draws, d)``: ``(draws, len(PHIS))``."""
    x2, t = h * h, torch.tanh(h)
    lognorm = torch.log(h.norm(dim=1) / h0.norm())
    return torch.stack([x2.mean(dim=1), (x2 * x2).mean(dim=1), (t * t + torch.cos(h) / 2).mean(dim=1), lognorm], dim=1)


def phi_gradients(h: torch.Tensor) -> torch.Tensor:
    """The gradients of the test functions of :data:`PHIS` at the states ``h`` ``(draws, d)`` (the
    integrands of the control variates), ``(draws, len(PHIS), d)``."""
    d, t = h.shape[1], torch.tanh(h)
    return torch.stack([2 * h / d, 4 * h ** 3 / d, (2 * t * (1 - t * t) - torch.sin(h) / 2) / d,
                        h / (h * h).sum(dim=1, keepdim=True)], dim=1)


def _levels(z: torch.Tensor, wanted: set) -> dict:
    """The standardised increments of every coarsening of the fine increments ``z`` ``(S, n, d, d)``
    whose fine steps per increment are in ``wanted``: ``{r: (S / r, n, d, d)}`` (dyadic pair sums)."""
    out, cur, r = {}, z, 1
    while True:
        if r in wanted:
            out[r] = cur
        if 2 * r > max(wanted):
            return out
        cur = (cur[0::2] + cur[1::2]).mul_(1 / math.sqrt(2.0))
        r *= 2


def _product(w: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``w t`` for ``w`` ``(n, d, d)`` and ``t`` ``(n, d)``."""
    return torch.bmm(w, t.unsqueeze(-1)).squeeze(-1)


def _network_layer(h, g, law, mean, variance, scale, cv):
    """One layer of a network from the standard normals ``g``; with ``cv`` (``(n, len(PHIS))``), adds
    the control variates' increments ``grad phi(h) . (q(g) - g) tanh(h) * scale`` (mean zero: the
    increment is independent of ``h`` and centred)."""
    t = torch.tanh(h)
    q = law_weights(g, law)
    w = q if mean == 0.0 and variance == 1.0 else q * math.sqrt(variance) + mean
    if cv is not None:
        dt = _product(q - g, t).mul_(scale)
        cv += (phi_gradients(h) * dt.unsqueeze(1)).sum(dim=-1)
    return h + scale * _product(w, t)


def simulate(law: str, h0: torch.Tensor, depths, fine: int, draws: int, seed: int, *, coupled: bool = True,
             mean: float = 0.0, variance: float = 1.0, controls: bool = False):
    """The outputs of every network of ``depths`` and of the SDE on :func:`sde_grids` ``(fine)``,
    ``(draws, len(depths) + 3, d)`` (module docstring), for one chunk seeded ``seed``, and with
    ``controls`` the control variates ``(draws, len(depths), len(PHIS))`` (else ``None``): for each
    network and test function the martingale ``sum_k grad phi(h_k) . (q(G_k) - G_k) tanh(h_k) / sqrt(d L)``,
    exactly centred, which follows the part of ``phi(h_L) - phi(H)`` that the law's departure from
    the Gaussian weights causes to first order. ``h0`` (``d`` numbers) fixes the dtype and the device."""
    d, dtype, device = h0.numel(), h0.dtype, h0.device
    grids = list(depths) + list(sde_grids(fine))
    seg = fine // min(depths)  # fine steps per segment: one layer of the shallowest network
    h = [h0.expand(draws, d).clone() for _ in grids]
    cv = torch.zeros(draws, len(depths), len(PHIS), dtype=dtype, device=device) if controls else None
    for s in range(min(depths)):
        z = R_.normal((seg, draws, d, d), R_.mix_seed(seed, s), dtype, device)
        wanted = {fine // n for n in grids[len(depths):]} | ({fine // n for n in depths} if coupled else set())
        lv = _levels(z, wanted)
        for i, n in enumerate(grids):
            r, network = fine // n, i < len(depths)
            if network and not coupled:  # plain Monte Carlo: the network's own weights
                g = R_.normal((seg // r, draws, d, d), R_.mix_seed(seed, (i + 1) * min(depths) + s), dtype, device)
            else:
                g = lv[r]
            scale = 1 / math.sqrt(d * n)
            for k in range(seg // r):
                if network:
                    h[i] = _network_layer(h[i], g[k], law, mean, variance, scale, None if cv is None else cv[:, i])
                else:
                    h[i] = h[i] + scale * _product(g[k], torch.tanh(h[i]))
    return torch.stack(h, dim=1), cv
