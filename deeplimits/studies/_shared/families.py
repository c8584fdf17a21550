"""The depth families shared by the trained-limit study and the limit beside the transfer study
(docs/trained-limit.md): a family of depths trained from ONE driver sample and measured against a
reference depth (:func:`train_depth_family`), its arguments checked (:func:`family_args`), the
epochs measured along training (:func:`checkpoints`) and a plan's device field (:func:`device_field`)."""

from __future__ import annotations

from typing import Mapping, Sequence

import torch

from ... import _validate as V_
from ...errors import ParameterError
from ..settings import REQUIRED, Training, grouped
from ..trained_limit.presets import CASES

__all__ = ["FAMILY_KEYS", "train_depth_family", "family_args", "family", "family_driver", "checkpoints",
           "device_field"]

FAMILY_KEYS = ("arch", "activation", "driver", "beta", "coupled")
"""The keys of a family (a case of :data:`CASES`, or one given to :func:`train_depth_family`)."""

def family_driver(driver, length_scale):
    """The driver of a family: a registered name, or a spec ``{'driver': name, param: value}`` (a
    registered law of your own with parameters); ``length_scale`` where none is given."""
    from ...paths import driver_from_spec

    spec = {"driver": driver} if isinstance(driver, str) else dict(driver)
    if spec.get("length_scale") is None:
        spec["length_scale"] = length_scale
    return driver_from_spec(spec)  # read by the drivers that take it


@grouped
def train_depth_family(case, data, *, depths: Sequence[int], reference: int, seeds: int,
                       checkpoints: Sequence[int] = (), length_scale: float | None = None, seed: int = 0,
                       shuffle_seed: int = 0, first_seed: int = 0, progress=None,
                       training: Training = Training(epochs=REQUIRED, lr=REQUIRED, optimizer="sgd",
                                                     batch_size=None)) -> dict:
    """Train the family of ``case`` (``seeds`` configurations batched) and measure every depth
    against the reference at epoch 0, at each epoch of ``checkpoints`` and at ``epochs``; the
    data's dtype and device are the networks'. ``seed`` draws the driver sample, ``shuffle_seed``
    (at most :func:`~deeplimits.training.train.seed_limit` of ``epochs``) the mini-batches.
    ``case``: a name of :data:`CASES` or a family of its keys (:data:`FAMILY_KEYS`, and
    optionally ``lr_exponent``: the rate at depth ``L`` is ``lr L^lr_exponent`` in place of
    :data:`~deeplimits.training.family.LR_RULE`; ``width``: a width other than the inputs', with
    a fixed random embedding and readout, :func:`~deeplimits.training.family.family_head`);
    ``case``, ``depths`` and ``reference`` are checked as by :func:`plan_trained_limit`. A
    classification task (``data.task``) trains with the cross-entropy, any other with the
    squared loss. ``training`` (:class:`~deeplimits.studies.settings.Training`, or its fields
    as keywords): ``epochs`` and ``lr`` (both required), ``optimizer``, ``batch_size``
    (``None``: the full batch).

    Returns ``{'records': [...], 'reference_loss': [...]}``, one record per (depth, seed, epoch):
    ``weight_distance``, ``state_distance``, ``time`` (``lr`` x steps), ``steps``, ``train_loss``
    (after training), ``finite`` (whether the training of that depth and of the reference stayed
    finite: a blown-up configuration is frozen, not a crash), ``initial_loss`` (before training:
    full batch only, ``None`` with mini-batches) and ``scale`` (the largest reference weight norm)."""
    from ...training.family import depth_lr, effective_beta, family_member, family_sample, train_member

    epochs, lr, optimizer, batch_size = training.epochs, training.lr, training.optimizer, training.batch_size
    c, depths, reference = family_args(case, depths, reference)
    beta, dtype, device = effective_beta(c["arch"], c["beta"]), data.x_train.dtype, data.x_train.device
    driver, g = family_driver(c["driver"], length_scale), torch.Generator().manual_seed(seed)
    n, width = data.x_train.shape[0], c.get("width") or data.x_train.shape[1]
    batch = n if batch_size is None else min(batch_size, n)
    marks = sorted(set(checkpoints) | {epochs})
    shared = family_sample(c["arch"], width, driver, seeds, reference, g, dtype) if c["coupled"] else None
    head = _head(c, data, seeds, g)
    loss = "cross_entropy" if getattr(data, "task", None) == "classification" else "squared"

    def fit(L, stride):
        samples = shared or family_sample(c["arch"], width, driver, seeds, reference, g, dtype)
        net = family_member(c["arch"], L, width, samples, beta=c["beta"], activation=c["activation"], dtype=dtype,
                            device=device, head=head)
        return train_member(net, data, optimizer=optimizer, lr=depth_lr(lr, L, beta, optimizer, c.get("lr_exponent")),
                            epochs=epochs, batch_size=batch, seed=shuffle_seed, checkpoints=marks, stride=stride,
                            progress=progress, loss=loss)

    ref = fit(reference, reference // max(depths))
    records = []
    for L in sorted(depths):
        records += _depth_records(fit(L, 1), ref, L, max(depths), first_seed, lr, -(-n // batch))
    return {"records": records, "reference_loss": [r["train_loss"] for r in ref[1].records]}


def _head(c: dict, data, seeds: int, generator):
    """The fixed embedding and readout of a family of its own ``width`` (``None`` without one)."""
    from ...training.family import family_head

    if c.get("width") is None:
        return None
    x, y = data.x_train, data.y_train
    outputs = int(y.max()) + 1 if getattr(data, "task", None) == "classification" else y.shape[-1]
    return family_head(x.shape[1], c["width"], outputs, seeds, generator, x.dtype, x.device)


def _depth_records(member, ref, L: int, finest: int, first_seed: int, lr: float, per_epoch: int) -> list[dict]:
    """The records of depth ``L`` (``member``: its snapshots and training result; ``ref``: the
    reference's), one per seed and measured epoch (:func:`train_depth_family`; ``per_epoch``:
    steps per epoch)."""
    from ...diagnostics.trained_pair import on_grid, state_distance, weight_distance

    (snaps, result), (ref_snaps, ref_fit) = member, ref
    out = []
    for e in sorted(snaps):
        r = on_grid(ref_snaps[e], L, finest)
        wd, sd = weight_distance(snaps[e]["weights"], r["weights"]), state_distance(snaps[e]["states"], r["states"])
        scale = max(float(w.flatten(2).norm(dim=-1).max()) for w in r["weights"].values())
        for j in range(len(wd)):
            out.append({"depth": L, "seed": first_seed + j, "epoch": e, "steps": e * per_epoch,
                        "time": lr * e * per_epoch,
                        "weight_distance": float(wd[j]), "state_distance": float(sd[j]), "scale": scale,
                        "train_loss": result.records[j]["train_loss"],
                        "finite": result.records[j]["finite"] and ref_fit.records[j]["finite"],
                        "initial_loss": result.history[0]["train_loss"][j] if per_epoch == 1 else None})
    return out


def family_args(case, depths, reference) -> tuple[dict, tuple[int, ...], int]:
    """``case`` one of :data:`CASES` (its family returned) or a family (:data:`FAMILY_KEYS`); at
    least two distinct ``depths``, each dividing ``reference``, deeper than all of them (a power
    of two for a path driver)."""
    case = family(case)
    depths = tuple(sorted(V_.sequence("depths", depths, lambda L: V_.integer("depths", L), what="a list of depths")))
    if len(set(depths)) < 2 or len(set(depths)) != len(depths):
        raise ParameterError("depths", f"depths must hold at least two distinct depths, got {list(depths)}")
    reference = V_.integer("reference", reference, low=max(depths) + 1)
    if family_driver(case["driver"], None).needs_resolution:
        V_.power_of_two("reference", reference)
    if any(reference % L for L in depths):  # the reference's grid holds every depth's
        raise ParameterError("reference", f"reference must be a multiple of every depth ({', '.join(map(str, depths))}: "
                                          f"depths coupled to one sample divide its resolution), got {reference}")
    return case, depths, reference


def family(case) -> dict:
    """The family of ``case``: a name of :data:`CASES`, or a mapping holding :data:`FAMILY_KEYS`
    (an ``lr_exponent`` a real in [-4, 4], a ``width`` a positive integer, when given)."""
    from ...blocks import recorded_block
    from ...paths import Driver, driver_spec

    if isinstance(case, str):
        return CASES[V_.choice("case", case, tuple(CASES))]
    missing = [k for k in FAMILY_KEYS if k not in case] if isinstance(case, Mapping) else list(FAMILY_KEYS)
    if missing:
        raise ParameterError("case", f"case must be one of {', '.join(CASES)} or a family with the keys "
                                     f"{', '.join(FAMILY_KEYS)}, got {case!r:.120}")
    out = dict(case)
    block = recorded_block(out["arch"], out["activation"])  # a registered block: the spec records it by name
    out["arch"], out["activation"] = block.name, block.activation.name
    if isinstance(out["driver"], Driver):
        spec = driver_spec(out["driver"])
        out["driver"] = spec if len(spec) > 1 else spec["driver"]
    family_driver(out["driver"], None).check()  # a known driver, its samples verified
    out["beta"], out["coupled"] = V_.real("beta", out["beta"], low=0.0), V_.flag("coupled", out["coupled"])
    if out.get("theory") is not None:
        out["theory"] = V_.real("theory", out["theory"], low=0.0, high=8.0)
    if out.get("lr_exponent") is not None:
        out["lr_exponent"] = V_.real("lr_exponent", out["lr_exponent"], low=-4.0, high=4.0)
    if out.get("width") is not None:
        out["width"] = V_.integer("width", out["width"], high=10 ** 4)
    return out


def checkpoints(epochs: int, count: int) -> tuple[int, ...]:
    """``count`` epochs spread evenly over ``1..epochs`` (the training-time axis)."""
    return tuple(sorted({max(1, round(epochs * j / count)) for j in range(1, count + 1)}))


def device_field(device, dtype) -> str | None:
    """A plan's ``device`` field: ``None`` for the CPU (not recorded), else the device checked, as text."""
    where = V_.device("device", device, dtype)
    return None if where.type == "cpu" else str(where)
