"""One task of the shapes study: every cell ``(M, D)`` of one depth ``L`` for a chunk of runs,
trained in batches (:mod:`.network`) and measured against the exact limit (linear activation) or
the reference network (the largest network of the same runs), registered as ``shapes-depth``.

Seeds: run ``r`` of a study seeded ``s`` draws its embeddings from ``SeedSequence([s, r])`` (one
``(D_max, d_in + d_out)`` draw, a width-``D`` network taking its first ``D`` rows; the unshared case
draws ``SeedSequence([s, r, D, 1])`` for each ``D``) and the ``U``, ``V`` of cell ``(L, M, D)`` from
``SeedSequence([s, r, L, M, D])``: the same numbers whatever the chunks, the batches or the task order.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from ...runs import register_task

__all__ = ["run_seed", "embedding_rows", "batches", "depth_task", "DIVERGED", "SMALL_BATCH", "GPU_SMALL_BATCH",
           "BATCH_CAP", "GPU_BATCH_CAP"]

DIVERGED = 1e3
"""A run whose hidden-state error is not finite or above this at some step blew up (the authors'
threshold); it is left out of the means and counted."""

SMALL_BATCH = 1 << 16
"""Padded entries of a batch (``L x slots x D x M``) below which slots are merged whatever the padding
on the CPU (such a batch costs its few operations' overhead per layer, not its arithmetic)."""

GPU_SMALL_BATCH = 1 << 24
"""The same on a GPU, where a layer's operations cost their launches up to far larger batches."""

BATCH_CAP = 1 << 26
"""Padded entries of one batch at most on the CPU (512 MiB per weight matrix in float64; a larger
network is a batch of its own)."""

GPU_BATCH_CAP = 1 << 30
"""The same on a GPU (8 GiB per weight matrix in float64): a layer's operations then span enough
networks to cost their arithmetic, not their launches."""


def run_seed(*key: int) -> int:
    """A 63-bit seed of the integers ``key`` (``SeedSequence(key)``)."""
    return int(np.random.SeedSequence([int(k) for k in key]).generate_state(1, np.uint64)[0] >> 1)


def embedding_rows(seed: int, run: int, D: int, n: int, shared: bool) -> np.ndarray:
    """``(D, n)`` float64: the embedding rows ``W_e``, ``W_u`` of a width-``D`` network of run ``run``:
    the first ``D`` rows of the run's one draw (``shared``), or a draw of its own."""
    key = (seed, run) if shared else (seed, run, D, 1)
    return np.random.default_rng(run_seed(*key)).standard_normal((D, n))


def batches(widths, dims, runs: int, depth: int, cap: int, small: int = SMALL_BATCH) -> list[list[tuple]]:
    """The slots ``(M, D, run)`` of one depth (every cell, runs ``0 .. runs - 1``) in batches: in order
    of ``(M, D, run)``, a slot joins the batch before it while the padded batch (``depth x slots x
    max D x max M`` entries) holds at most ``cap`` entries and at most 1.5 times its slots' own, or at
    most ``small`` (a slot larger than ``cap`` is a batch of its own)."""
    out: list[list[tuple[int, int, int]]] = []
    own = 0
    for slot in sorted((int(M), int(D), j) for M in widths for D in dims for j in range(runs)):
        if out:
            group = out[-1] + [slot]
            padded = depth * len(group) * max(m for m, _, _ in group) * max(d for _, d, _ in group)
            mine = own + depth * slot[0] * slot[1]
            if padded <= cap and (padded <= small or padded <= 1.5 * mine):
                out[-1], own = group, mine
                continue
        out.append([slot])
        own = depth * slot[0] * slot[1]
    return out


def _rows(params: dict, n: int, slots, shared: bool, dtype, device) -> torch.Tensor:
    """``(slots, max D, n)``: each slot's embedding rows, zero below its ``D``."""
    Dx = max(D for _, D, _ in slots)
    out = np.zeros((len(slots), Dx, n))
    for i, (_, D, j) in enumerate(slots):
        out[i, :D] = embedding_rows(params["seed"], params["first_run"] + j, D, n, shared)
    return torch.as_tensor(out, dtype=dtype, device=device)


def _reference(params: dict, protocol, case: dict, dtype, device) -> dict:
    """The reference network of every run of the chunk (tanh): its states and outputs."""
    from .network import train_shapes

    L, M, D = params["reference"]
    slots = [(M, D, j) for j in range(params["runs"])]
    emb = _rows(params, len(protocol.x) + len(protocol.y), slots, True, dtype, device)
    seeds = [run_seed(params["seed"], params["first_run"] + j, L, M, D) for j in range(params["runs"])]
    out = train_shapes(L, [M] * len(seeds), [D] * len(seeds), emb, seeds, protocol=protocol,
                       activation=case["activation"], residual=case["residual"], keep_states=True)
    return {"states": out["states"], "outputs": out["outputs"]}


def _train_batch(params, protocol, case, slots, limit, reference, dtype, device) -> dict:
    """One batch of slots: ``{(M, D, run): (hidden (K,), outputs (K, d_out))}``."""
    from .network import exact_targets, reference_targets, train_shapes

    L, n = params["depth"], len(protocol.x) + len(protocol.y)
    emb = _rows(params, n, slots, case["embeddings"] == "shared", dtype, device)
    seeds = [run_seed(params["seed"], params["first_run"] + j, L, M, D) for M, D, j in slots]
    if reference is not None:
        targets = reference_targets(reference["states"], [j for *_, j in slots], [D for _, D, _ in slots], L)
    else:  # the limit's coordinates are the shared rows (the unshared networks are measured against them too)
        shared = emb if case["embeddings"] == "shared" else _rows(params, n, slots, True, dtype, device)
        targets = exact_targets(limit, L, shared)
    out = train_shapes(L, [M for M, _, _ in slots], [D for _, D, _ in slots], emb, seeds, protocol=protocol,
                       activation=case["activation"], residual=case["residual"], targets=targets)
    return {slot: (out["hidden"][:, i], out["outputs"][:, i]) for i, slot in enumerate(slots)}


def _cell_record(M: int, D: int, hidden: torch.Tensor, outputs: torch.Tensor, target: torch.Tensor, y) -> dict:
    """A cell's record from its runs' ``hidden`` ``(K, runs)`` and ``outputs`` ``(K, runs, d_out)``: per
    run the hidden and output errors at every step; over the finite runs the sums of the outputs, of
    their squares and of the losses at every step."""
    h = hidden.double().cpu().numpy()
    o = outputs.double().cpu().numpy()
    err = np.sqrt(((o - target.double().cpu().numpy()) ** 2).mean(axis=-1))  # (K, runs)
    ok = np.all(np.isfinite(h) & (h <= DIVERGED), axis=0) & np.all(np.isfinite(o), axis=(0, 2))
    loss = 0.5 * ((o - np.asarray(y)) ** 2).sum(axis=-1)
    return {"M": M, "D": D, "finite": ok.tolist(),
            "hidden": [[float(f"{v:.6g}") for v in row] for row in h.T],
            "output_error": [[float(f"{v:.6g}") for v in row] for row in err.T],
            "outputs_sum": o[:, ok].sum(axis=1).tolist(), "outputs_sq": (o[:, ok] ** 2).sum(axis=1).tolist(),
            "loss_sum": loss[:, ok].sum(axis=1).tolist()}


def _measure(params: dict, protocol, case: dict, dtype, device, progress=None) -> tuple[list, object]:
    """Every slot of the task trained and measured: the cell records and the reference (or ``None``);
    ``progress`` (or ``None``) is called with the slots of each batch as it finishes."""
    from .limit import linear_limit

    limit = reference = None
    if case["limit"] == "exact":
        limit = linear_limit(protocol.x, protocol.y, steps=protocol.steps, lr=protocol.lr, alpha=protocol.alpha)
        target = torch.as_tensor(limit.outputs)[:, None, :].expand(-1, params["runs"], -1)
    else:
        reference = _reference(params, protocol, case, dtype, device)
        target = reference["outputs"]
    done: dict = {}
    for batch in batches(params["widths"], params["dims"], params["runs"], params["depth"], params["cap"],
                         params.get("small", SMALL_BATCH)):
        done.update(_train_batch(params, protocol, case, batch, limit, reference, dtype, device))
        if progress is not None:
            progress(len(batch))
    cells = []
    for M in sorted(params["widths"]):
        for D in sorted(params["dims"]):
            h = torch.stack([done[(M, D, j)][0] for j in range(params["runs"])], dim=1)
            o = torch.stack([done[(M, D, j)][1] for j in range(params["runs"])], dim=1)
            cells.append(_cell_record(M, D, h, o, target, protocol.y))
    return cells, reference


@register_task("shapes-depth", reports_progress=True)
def depth_task(params: dict, seed: int, progress=None) -> dict:
    """Sweep task: every cell ``(M, D)`` of depth ``params['depth']`` for the runs ``first_run ..
    first_run + runs - 1``, in batches of at most ``params['cap']`` padded entries (:func:`batches`).
    Returns ``cells`` (one :func:`_cell_record` each), ``reference_outputs`` (tanh: ``(runs, K,
    d_out)``) and ``seconds``. ``seed`` is unused: every number is a function of ``params['seed']``
    and the run. ``progress`` (or ``None``) is called with the networks of each batch as it finishes."""
    from ..._random import single_threaded_torch
    from .presets import CASES, Protocol

    t0 = time.perf_counter()
    case, protocol = CASES[params["case"]], Protocol(**params["protocol"])
    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    with torch.no_grad(), single_threaded_torch(device.type == "cpu" and params.get("single_thread", False)):
        cells, reference = _measure(params, protocol, case, dtype, device, progress)
    ref = None if reference is None else reference["outputs"].double().cpu().permute(1, 0, 2).tolist()
    return {"cells": cells, "reference_outputs": ref, "seconds": time.perf_counter() - t0}
