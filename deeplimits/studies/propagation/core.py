"""Signal propagation at initialisation, docs/mathematics.md, "Signal propagation" (Marion, Fermanian, Biau, Vert, JMLR 2025).

For a residual network ``h_0 = A x``, ``h_{k+1} = h_k + L^-beta V_{k+1} g(h_k, W_{k+1})`` with a
scalar readout ``B`` and squared loss, the ratios

    r_h = ||h_L - h_0|| / ||h_0||,        r_p = ||p_0 - p_L|| / ||p_L||,   p_k = dl/dh_k,

tell identity (ratios -> 0), explosion (ratios -> infinity) and non-trivial (order one)
behaviour. Three studies are built on one shared pass (:func:`_propagate`):

* :func:`stability`: ratio statistics over depths x betas, theory bounds, regimes, and the
  log-normal fits of ``||h_L||/||h_0||`` and ``||p_0||/||p_L||`` (criticality histograms);
* :func:`phase_diagram`: mean ``log10 r_h`` and ``log10 r_p`` over (H, beta) with fractional
  weights, and the critical scaling ``beta*(H)``.

Weights do not depend on beta, so every beta runs on the same weights at once (beta is a
batch column). For nested drivers (i.i.d. and fractional: the depth-L weights have the law of
the first L layers of a deeper network's) every depth runs on prefixes of ONE deepest
sample, in one forward and one backward pass. ``p_k`` comes from the backward recursion
``p_k = p_{k+1} + alpha J_k^T p_{k+1}``, which needs no autograd graph; the forward pass keeps
each layer's preactivation ``W_k h_k`` for it, so a layer costs three products with its weights,
not four.

Overflow: a ratio that is non-finite or above :data:`CAP` counts as exploded and is
reported as ``CAP`` (``log10`` = 30), never as a NaN.
"""


from __future__ import annotations

import math

import numpy as np
import torch

from ... import _random
from ... import _resources as R_
from ... import _validate as V_
from ...errors import ParameterError
from ...paths import Driver, driver_from_spec, make_driver
from ...blocks import make_block, recorded_block
from ...networks import ResNet
from .memory import _pow2_ceil, propagation_bytes, weight_layout
from .presets import TASK_BYTES

CAP = 1e30  # a ratio above CAP (or non-finite) counts as exploded and is reported as CAP
BUDGET = TASK_BYTES  # bytes of weights and stored states per task; draws are chunked to fit
#: multiply-adds of one layer's product below which the pass runs torch on one thread (on the CPU)
SMALL_PRODUCT = 1 << 24



# ----------------------------------------------------------------------------------------
# the shared pass
# ----------------------------------------------------------------------------------------

def _propagate(net: ResNet, h0, B, layers, depths, betas, deviation: bool = True):
    """One forward and one backward pass shared by several depths and betas.

    Args:
        h0: ``(draws, inputs, width)``; B: readout ``(draws, 1, width)``.
        layers: per-layer weights ``{name: tensor}`` of the deepest network (the block's names);
            the network of depth ``L`` is its first ``L`` layers, scaled by ``L^-beta``.
    Columns ``(depth, beta, input)`` ride along the inputs axis, sorted by decreasing depth so
    that the columns still running at layer ``k`` are a prefix; in the backward pass a depth's
    columns enter at its last layer (``p`` is linear in ``p_L``).

    Returns:
        ``h_L, p_0, p_L``, each ``(draws, len(depths), len(betas), inputs, width)``, with the
        gradients scaled so that ``||p_L|| = 1`` (the loss ``(B h_L)^2 / 2`` times a constant),
        and ``max_{k < L} ||h_k - h_0||`` over the layers of each depth, ``(draws, depths, betas,
        inputs)`` (with ``||h_L - h_0||`` it is the largest deviation, see :func:`_ratios`), or
        ``None`` when not ``deviation``.
    """
    n, m, d = h0.shape
    order = sorted(range(len(depths)), key=lambda j: -depths[j])
    Ls = [depths[j] for j in order]
    block = len(betas) * m
    alpha = torch.tensor([[float(L) ** -b for b in betas] for L in Ls], dtype=h0.dtype, device=h0.device)
    alpha = alpha.repeat_interleave(m, dim=1).view(1, -1, 1)
    h = start = h0.repeat(1, len(Ls) * len(betas), 1)
    states, pres, ends = [], [], []
    g = net.block
    with torch.no_grad():
        for k in range(Ls[0]):
            c = block * sum(L > k for L in Ls)
            h = h[:, :c]
            states.append(h)
            w = layers[k]
            pres.append(g.preactivation(h, **w))  # kept: the backward pass does not multiply by W again
            h = net.step(h, alpha[:, :c], Ls[0], pre=pres[-1], **w)  # the network's step: a corrected one too
            ends += [h[:, i * block:(i + 1) * block] for i, L in enumerate(Ls) if L == k + 1]
        far = _deviation(states, start) if deviation else None
        hL = torch.stack(ends[::-1], 1)  # (n, depths, block, d), in the order of Ls (ends came shallowest first)
        pL = (hL @ B.unsqueeze(1).transpose(-1, -2)) @ B.unsqueeze(1)  # l = (B h_L)^2 / 2: p_L = B^T B h_L
        # p is linear in p_L and the ratios are scale-free: start from the unit vector, so that
        # p_0 overflows only when ||p_0|| / ||p_L|| does, not when ||h_L|| is merely large
        pL = pL / pL.norm(dim=-1, keepdim=True)
        p = h0.new_zeros(n, 0, d)
        for k in range(Ls[0] - 1, -1, -1):
            new = [pL[:, i] for i, L in enumerate(Ls) if L == k + 1]
            if new:
                p = torch.cat([p, *new], 1)
            p = net.step_vjp(states[k], p, alpha[:, :p.shape[1]], Ls[0], pre=pres[k], **layers[k])
            pres[k] = None
        p0 = p.view(n, len(Ls), block, d)
    back = [order.index(j) for j in range(len(depths))]
    if far is not None:
        far = far.view(n, len(Ls), block)[:, back].reshape(n, len(depths), len(betas), m)
    return (*(x[:, back].reshape(n, len(depths), len(betas), m, d) for x in (hL, p0, pL)), far)


def _deviation(states: list, start: torch.Tensor) -> torch.Tensor:
    """``max_k ||h_k - h_0||`` per column over the stored states ``h_k`` (``k < L`` of each
    column), ``(draws, columns)``: blocks of consecutive layers with the same running columns
    are stacked (a few kernels per block instead of per layer), each block at most an eighth
    of the stored states."""
    far = start.new_zeros(start.shape[:2], dtype=start.dtype if start.device.type == "mps" else torch.float64)
    size = max(1, min(64, len(states) // 8))
    k = 1
    while k < len(states):
        c = states[k].shape[1]
        end = k + 1
        while end < min(len(states), k + size) and states[end].shape[1] == c:
            end += 1
        # float64 norms (devices without it: scaled by the largest entry): no overflow of the squares in float32
        diff = torch.stack(states[k:end]).sub_(start[:, :c])
        if diff.device.type == "mps":
            top = diff.abs().amax(-1, keepdim=True).clamp_min(torch.finfo(diff.dtype).tiny)
            dev = ((diff / top).norm(dim=-1) * top.squeeze(-1)).amax(0)
        else:
            dev = torch.linalg.vector_norm(diff, dim=-1, dtype=torch.float64).amax(0)
        far[:, :c] = torch.maximum(far[:, :c], dev)
        k = end
    return far


def _capped(x: torch.Tensor) -> np.ndarray:
    x = x.numpy()
    return np.where(np.isfinite(x) & (x <= CAP), x, CAP)


def _ratios(h0, hL, p0, pL, far) -> dict[str, np.ndarray]:
    """``r_h, r_p``, ``r_h_max = max_k ||h_k - h_0|| / ||h_0||`` and the norm ratios
    ``||h_L||/||h_0||``, ``||p_0||/||p_L||``, capped, each ``(draws, depths, betas, inputs)``
    (norms in float64 on the CPU: no overflow of the squares, and devices without float64,
    such as MPS, are served too)."""
    h0 = h0.cpu().double()[:, None, None]
    hL, p0, pL = hL.cpu().double(), p0.cpu().double(), pL.cpu().double()
    nh0, npL = h0.norm(dim=-1), pL.norm(dim=-1)
    r_h = (hL - h0).norm(dim=-1) / nh0
    out = {"r_h": _capped(r_h), "r_p": _capped((p0 - pL).norm(dim=-1) / npL),
           "norm_h": _capped(hL.norm(dim=-1) / nh0), "norm_p": _capped(p0.norm(dim=-1) / npL)}
    if far is not None:
        out["r_h_max"] = _capped(torch.maximum(far.cpu().double() / nh0, r_h))
    return out


def _draw(layout, driver: Driver, width, n_in, depths, draws, inputs, generator, dtype, device=None):
    """Everything random of one chunk of draws, in a fixed order: the weight samples (one per
    ``(name, shape)`` of ``layout``, :func:`~.memory.weight_layout`), then ``A``, ``x`` and
    ``B``, all on ``device``. Returns ``(samples, h0,
    B, top)`` where ``top`` is the depth at which the samples are read (a power of two for path
    drivers)."""
    top = max(depths)
    res = _pow2_ceil(top) if driver.needs_resolution else None
    samples = {nm: driver.sample(shape, draws=draws, resolution=res, generator=generator, dtype=dtype, device=device)
               for nm, shape in layout}
    A = _random.randn((draws, width, n_in), generator, dtype, device) / math.sqrt(n_in)
    x = _random.randn((draws, inputs, n_in), generator, dtype, device)
    B = _random.randn((draws, 1, width), generator, dtype, device) / math.sqrt(width)
    return samples, x @ A.transpose(-1, -2), B, res or top


def _layers(samples, depth, n):
    """The first ``n`` layers of the depth-``depth`` weights as per-layer ``(V, W, b)``, drawn as
    the forward pass reaches them (:class:`~deeplimits.studies._streamed.StreamedLayers`)."""
    from .._streamed import StreamedLayers

    return StreamedLayers(samples, depth, n)


def _run(net, driver, params: dict, depths, seed, deviation: bool = True) -> dict[str, np.ndarray]:
    """The ratios of one chunk of draws at every (depth, beta) of a task's ``params`` (``width``,
    ``n_in``, ``betas``, ``draws``, ``inputs``, ``dtype`` by name, ``device``, ``bias``): nested
    drivers share one pass. ``bias``: whether a block with optional weights (``inside``'s bias) has
    them (default True); ``deviation``: whether to record ``r_h_max`` (the phase diagram does not use it)."""
    betas, draws, inputs, width = params["betas"], params["draws"], params["inputs"], params["width"]
    g = torch.Generator().manual_seed(seed)
    samples, h0, B, top = _draw(weight_layout(net.block, width, params.get("bias", True)), driver, width, params["n_in"],
                                depths, draws, inputs, g, getattr(torch, params["dtype"]), params.get("device"))
    small = h0.device.type == "cpu" and draws * len(depths) * len(betas) * inputs * width * width < SMALL_PRODUCT
    with _random.single_threaded_torch(small):
        if driver.nested:
            out = _propagate(net, h0, B, _layers(samples, top, max(depths)), depths, betas, deviation)
        else:  # the depth-L weights are read at k / L: one pass per depth, all betas at once
            parts = [_propagate(net, h0, B, _layers(samples, L, L), [L], betas, deviation) for L in depths]
            out = tuple(None if x[0] is None else torch.cat(x, 1) for x in zip(*parts))
        return _ratios(h0, *out)


# ----------------------------------------------------------------------------------------
# driver specs (plain JSON, for run stores and sweep tasks)
# ----------------------------------------------------------------------------------------

def _chunk(per_draw_bytes: int, draws: int) -> int:
    return int(max(1, min(draws, BUDGET // max(1, per_draw_bytes))))


# ----------------------------------------------------------------------------------------
# resource estimates (plan time, arithmetic only)
# ----------------------------------------------------------------------------------------

def _sizes(width, depths, betas, inputs, n_in=None) -> str:
    return (f"at width={width}" + ("" if n_in is None else f", n_in={n_in}")
            + f", depths up to {max(depths)}, {len(betas)} betas, inputs={inputs}")


def _check_steps(driver, depths) -> None:
    """A task runs ``max(depths)`` layers (nested drivers) or ``sum(depths)`` (one pass per depth)."""
    steps = max(depths) if driver.nested else sum(depths)
    R_.require_count(steps, R_.MAX_STEPS, f"depths up to {max(depths)} make too many layers per task", ("depths",))


def estimate_stability(spec: dict):
    """The resource :class:`~deeplimits._resources.Estimate` of a stability study (from
    :func:`plan_stability`): peak bytes of its largest task, tasks, networks."""
    driver = _spec_driver(spec)
    item = getattr(torch, spec["dtype"]).itemsize
    peak = propagation_bytes(make_block(spec["arch"]), driver, spec["width"], spec["n_in"], spec["depths"], spec["betas"],
                       spec["inputs"], min(spec["chunk"], spec["draws"]), item, spec.get("bias", True))
    return R_.Estimate(peak, R_.tasks_of(spec["draws"], spec["chunk"]),
                       spec["draws"] * len(spec["depths"]) * len(spec["betas"]), min(spec["chunk"], spec["draws"]),
                       max(spec["depths"]) if driver.nested else sum(spec["depths"]),
                       R_.available_memory(spec.get("device")))


def _phase_depths(depth: int) -> list[int]:
    """The depths of a phase task: ``depth`` and, for the scaling estimate, a tenth of it."""
    return [depth] + ([depth // 10] if depth >= 20 else [])


def estimate_phase(spec: dict):
    """The resource :class:`~deeplimits._resources.Estimate` of a phase study (from
    :func:`plan_phase`): one task per Hurst index with all its draws."""
    item = getattr(torch, spec["dtype"]).itemsize
    depths = sorted(_phase_depths(spec["depth"]))
    peak = propagation_bytes(make_block(spec["arch"]), make_driver("fractional", spec["hursts"][0]), spec["width"], spec["n_in"], depths,
                       spec["betas"], spec["inputs"], spec["draws"], item,
                       spec.get("bias", True))
    return R_.Estimate(peak, len(spec["hursts"]), len(spec["hursts"]) * len(spec["betas"]) * spec["draws"] * len(depths),
                       spec["draws"], spec["depth"], R_.available_memory(spec.get("device")))


def _grid(name: str, values, check) -> list:
    """A non-empty list of distinct values, each passed through ``check``, sorted."""
    values = V_.sequence(name, values, what="a non-empty list")  # not a mapping, a string or a number
    if not values:
        raise ParameterError(name, f"{name} must be a non-empty list, got {values!r}")
    out = [check(v) for v in values]
    if len(set(out)) != len(out):
        raise ParameterError(name, f"{name} must be distinct, got {out}")
    return sorted(out)


def bias_field(block, bias) -> dict:
    """``{'bias': bool}`` for the spec of a study of a block with optional weights (``inside``'s
    bias; default False: the published model ``h + alpha sigma(W h)`` has none), ``{}`` for a
    block without (res-1/2/3)."""
    if not block.optional:
        if not (bias is None or bias is False):  # (0 is no bias flag either)
            raise ParameterError("bias", f"bias applies only to a block with optional weights (inside: a bias inside "
                                         f"the activation), got bias={bias!r} with arch {block.name!r}")
        return {}
    return {"bias": False if bias is None else V_.flag("bias", bias)}


def _common(arch, activation, width, n_in, draws, inputs, seed, dtype):
    """Checks shared by both studies; returns the network (validates arch and activation, and
    the block's declarations at ``width``: :meth:`~deeplimits.blocks.Block.check`)."""
    net = _network(arch, activation)
    if activation is not None and not isinstance(activation, str):
        raise ParameterError("activation", "activation must be given by name (a string) for a propagation study "
                                           "(its tasks may run in other processes)")
    V_.integer("width", width), V_.integer("n_in", n_in), V_.integer("draws", draws)
    V_.integer("inputs", inputs), V_.integer("seed", seed, low=0), V_.dtype(dtype)
    recorded_block(net.block).check(width)
    return net


def _network(arch, activation) -> ResNet:
    """The network of a propagation study: the :class:`~deeplimits.networks.ResNet` of ``arch``
    (the one the pairs build), its scaling ``L^-beta`` applied per column by :func:`_propagate`."""
    return ResNet(arch, activation, beta=0.0)


# ----------------------------------------------------------------------------------------
# stability curves and criticality distributions
# ----------------------------------------------------------------------------------------


def _spec_driver(spec: dict) -> Driver:
    """The driver of a study's spec (its ``driver`` and the driver's parameters among its keys)."""
    return driver_from_spec(spec)
