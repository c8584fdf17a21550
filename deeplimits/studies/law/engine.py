"""The simulation of the law study (docs/law.md): the network ``h_{k+1} = h_k + L^-1/2 g(h_k,
w_{k+1})`` of a block linear in its weights (res-1 tanh by default: ``V tanh(h)``) with i.i.d.
weights of a given law at every depth, and its Itô limit ``dH = g(H, dX)`` by Euler-Maruyama on
three fine grids, batched over draws (states ``(draws, d)``).

Coupled (the default, the study's variance reduction): one Brownian path per draw drives
everything. Its standard normal increments on the finest grid ``F`` are summed dyadically into the
standardised increments ``G`` of every coarser grid (``G = sum / sqrt(count)``, exactly N(0, 1));
the SDE grids step with ``dX = G / sqrt(d n)``; the network at depth ``L`` takes the weights
``V = (mean + sqrt(variance) q(G)) / sqrt(d)``, with ``q`` the quantile transform of the law
applied to the uniform ``Phi(G)``, the law's :meth:`~deeplimits.paths.Driver.from_normal`: ``q(G) =
G`` (Gaussian), ``sqrt(3) (2 Phi(G) - 1)`` (uniform on ``[-sqrt 3, sqrt 3]``), ``sign(G)``
(Rademacher), or a law of your own's. Each network's weights have exactly the law
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
from .phis import DEFAULT_PHIS, phi_gradients, phi_values  # noqa: F401 - phi_values: beside the simulation

__all__ = ["simulate", "law_weights", "sde_grids", "Layout", "law_driver"]


def sde_grids(fine: int) -> tuple[int, int, int]:
    """The three Euler-Maruyama grids of the reference: ``fine / 4``, ``fine / 2``, ``fine``."""
    return fine // 4, fine // 2, fine


def law_driver(law):
    """The driver of ``law``: a registered name or a :class:`~deeplimits.paths.Driver`."""
    from ...paths import Driver, make_driver

    return law if isinstance(law, Driver) else make_driver(law)


def law_weights(g: torch.Tensor, law, mean: float = 0.0, variance: float = 1.0) -> torch.Tensor:
    """``sqrt(d) V`` from standard normals ``g``: ``mean + sqrt(variance) q(g)``, ``q`` the law's
    :meth:`~deeplimits.paths.Driver.from_normal` (``law``: a name or a driver; module docstring)."""
    q = law_driver(law).from_normal(g)
    if variance != 1.0:
        q = q * math.sqrt(variance)
    return q + mean if mean else q


class Layout:
    """The weights of one layer of ``block`` at ``width`` as one flat vector of standard normals per
    draw: ``(name, shape)`` of each weight, its slice of the vector, and its entry scale relative to
    the first weight's (a matrix ``1/sqrt(fan-in)``, a vector 1; :attr:`scale` is the first one's)."""

    def __init__(self, block, width: int):
        self.block = block
        """The residual map (a :class:`~deeplimits.blocks.Block` linear in its weights)."""
        shapes = [(name, block.shape(name, width)) for name in block.weights]
        entry = [s[-1] ** -0.5 if len(s) >= 2 else 1.0 for _, s in shapes]
        self.scale = entry[0]
        """The entry scale of the first weight (the others are relative to it)."""
        self.parts, start = [], 0
        for (name, shape), e in zip(shapes, entry):
            size = math.prod(shape)
            self.parts.append((name, shape, slice(start, start + size), e / entry[0]))
            start += size
        self.entries = start
        """The numbers of one layer's weights (all of them)."""

    def residual(self, h: torch.Tensor, flat: torch.Tensor) -> torch.Tensor:
        """``g(h, w) / scale`` for states ``h`` ``(n, d)`` and the flat weights ``(n, entries)`` of
        unit-variance entries (the residual is linear in them: the scale factors out)."""
        n = h.shape[0]
        w = {name: (flat[:, sl].reshape(n, *shape) if rel == 1.0 else flat[:, sl].reshape(n, *shape) * rel)
             for name, shape, sl, rel in self.parts}
        return self.block.residual(h.unsqueeze(1), **w).squeeze(1)


def _levels(z: torch.Tensor, wanted: set) -> dict:
    """The standardised increments of every coarsening of the fine increments ``z`` ``(S, n, E)``
    whose fine steps per increment are in ``wanted``: ``{r: (S / r, n, E)}`` (dyadic pair sums)."""
    out, cur, r = {}, z, 1
    while True:
        if r in wanted:
            out[r] = cur
        if 2 * r > max(wanted):
            return out
        cur = (cur[0::2] + cur[1::2]).mul_(1 / math.sqrt(2.0))
        r *= 2


def _network_layer(h, g, law, shift, scale, cv, layout, phis, finite):
    """One layer of a network from the standard normals ``g`` ``(n, E)``; with ``cv`` (``(n,
    len(phis))``), adds the control variates' increments ``grad phi(h) . g(h, q(g) - g) * scale``
    (mean zero: the increment is independent of ``h`` and centred; the residual is linear in the weights).
    ``finite`` (a boolean scalar on the device) is cleared when a weight is not finite: read once by
    :func:`simulate` at its end, never per layer (no read from the device in the loop)."""
    mean, variance = shift
    q = law.from_normal(g)
    torch.logical_and(finite, torch.isfinite(q).all(), out=finite)
    w = q if mean == 0.0 and variance == 1.0 else q * math.sqrt(variance) + mean
    if cv is not None:
        dt = layout.residual(h, q - g).mul_(scale)
        cv += (phi_gradients(h, phis) * dt.unsqueeze(1)).sum(dim=-1)
    return h + scale * layout.residual(h, w)


def simulate(law, h0: torch.Tensor, depths, fine: int, draws: int, seed: int, *, coupled: bool = True,
             mean: float = 0.0, variance=1.0, controls: bool = False, block=None, phis=DEFAULT_PHIS):
    """The outputs of every network of ``depths`` and of the SDE on :func:`sde_grids` ``(fine)``,
    ``(draws, len(depths) + 3, d)`` (module docstring), for one chunk seeded ``seed``, and with
    ``controls`` the control variates ``(draws, len(depths), len(phis))`` (else ``None``): for each
    network and test function the martingale ``sum_k grad phi(h_k) . g(h_k, q(G_k) - G_k) / sqrt(L)``,
    exactly centred, which follows the part of ``phi(h_L) - phi(H)`` that the law's departure from
    the Gaussian weights causes to first order. ``law``: a driver with
    :meth:`~deeplimits.paths.Driver.from_normal` (or its name); ``block``: the residual map, linear
    in its weights (default res-1 tanh); ``phis``: names of test functions (:mod:`.phis`);
    ``variance``: one for every network, or one per depth (a variance decaying with depth). ``h0``
    (``d`` numbers) fixes the dtype and the device."""
    from ...blocks import make_block

    law = law_driver(law)
    d, dtype, device = h0.numel(), h0.dtype, h0.device
    layout = Layout(make_block("res-1", "tanh") if block is None else block, d)
    grids = list(depths) + list(sde_grids(fine))
    seg = fine // min(depths)  # fine steps per segment: one layer of the shallowest network
    h = [h0.expand(draws, d).clone() for _ in grids]
    cv = torch.zeros(draws, len(depths), len(phis), dtype=dtype, device=device) if controls else None
    finite = torch.ones((), dtype=torch.bool, device=device)  # every network weight finite (read at the end)
    variances = [float(variance)] * len(depths) if isinstance(variance, (int, float)) else [float(v) for v in variance]
    for s in range(min(depths)):
        z = R_.normal((seg, draws, layout.entries), R_.mix_seed(seed, s), dtype, device)
        wanted = {fine // n for n in grids[len(depths):]} | ({fine // n for n in depths} if coupled else set())
        lv = _levels(z, wanted)
        for i, n in enumerate(grids):
            r, network = fine // n, i < len(depths)
            if network and not coupled:  # plain Monte Carlo: the network's own weights
                g = R_.normal((seg // r, draws, layout.entries), R_.mix_seed(seed, (i + 1) * min(depths) + s), dtype,
                              device)
            else:
                g = lv[r]
            scale = layout.scale / math.sqrt(n)
            for k in range(seg // r):
                if network:
                    h[i] = _network_layer(h[i], g[k], law, (mean, variances[i]), scale,
                                          None if cv is None else cv[:, i], layout, phis, finite)
                else:
                    h[i] = h[i] + scale * layout.residual(h[i], g[k])
    if not bool(finite):  # a law of one's own beyond its tails: refused, not summed
        from ...errors import ParameterError

        raise ParameterError("law", f"law {law.name!r}: from_normal gave non-finite weights on standard normals in "
                                    f"{dtype} (its far tails)")
    return torch.stack(h, dim=1), cv
