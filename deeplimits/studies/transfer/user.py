"""A user's network and data in the transfer study (docs/transfer.md, "Bring your own").

* :class:`TransferNetwork`: a module factory ``make(depth, beta) -> torch.nn.Module`` whose residual
  branches are multiplied by ``depth^-beta`` (its branch multiplier), mapping inputs ``(n, d_in)`` to
  class scores ``(n, classes)``; the parameters whose names start with ``blocks`` (:attr:`~TransferNetwork.trained`)
  are the residual blocks, trained at ``base x L^p``; the others (an embedding, a readout) stay at
  their initial values, as in the study's own networks;
* :class:`TransferData`: a classification data set given as tensors (``x``, integer ``y``, and a
  test split when given) or as a ``torch.utils.data.Dataset`` of ``(x, y)`` pairs, with the
  SHA-256 of its numbers (:attr:`~TransferData.sha256`): a plan records the name and the digest,
  so a resumed run on changed data is refused, not mixed.

:func:`plan_transfer <deeplimits.studies.transfer.study.plan_transfer>` registers both under their
names for its tasks (:func:`registered_network`, :func:`registered_data`); each is checked before any
work (:func:`check_network`: the factory builds modules of the depth's parameters, which
``torch.func.vmap`` runs, with finite scores of the data's classes).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Callable

import torch

from ... import _validate as V_
from ...errors import ParameterError

__all__ = ["TransferNetwork", "TransferData", "transfer_data", "registered_network", "registered_data",
           "register_network", "check_network", "own_objects", "module_sizes", "MAX_SAMPLES"]

MAX_SAMPLES = 1 << 22
"""The most samples of a user's data set (its numbers are held in memory, batched over configurations)."""


@dataclasses.dataclass(frozen=True)
class TransferNetwork:
    """A user's residual network for the transfer study: ``make(depth, beta)`` builds it (module docstring)."""

    name: str
    """The name a plan records (the tasks look the factory up by it)."""
    make: Callable
    """``make(depth, beta) -> torch.nn.Module``: blocks multiplied by ``depth^-beta``, scores ``(n, classes)``."""
    trained: str = "blocks"
    """The prefix of the names of the parameters trained at ``base x L^p`` (the residual blocks); the
    others stay at their initial values."""

    def build(self, depth: int, beta: float, seed: int) -> torch.nn.Module:
        """The module of ``depth`` and ``beta``, its initial values drawn with the global generator
        seeded ``seed`` (the caller's random state is restored after)."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = self.make(depth, beta)
        if not isinstance(module, torch.nn.Module):
            raise ParameterError("model", f"model {self.name!r}: make(depth, beta) must return a torch.nn.Module, got "
                                          f"{type(module).__name__}")
        return module


@dataclasses.dataclass(frozen=True)
class TransferData:
    """A classification data set: ``x_train`` ``(n, d_in)`` floats, ``y_train`` ``(n,)`` class indices,
    and a test split; ``sha256`` digests them (module docstring)."""

    name: str
    """The name a plan records."""
    x_train: torch.Tensor
    """The training inputs."""
    y_train: torch.Tensor
    """The training labels (``int64`` class indices from 0)."""
    x_test: torch.Tensor
    """The test inputs (the training ones when no test split is given)."""
    y_test: torch.Tensor
    """The test labels."""
    sha256: str
    """The SHA-256 of every tensor's numbers (float64 inputs, int64 labels), in order."""
    task: str = "classification"
    """What the study trains on (a classification, with the cross-entropy)."""

    @property
    def classes(self) -> int:
        """The number of classes (the largest label + 1)."""
        return int(self.y_train.max()) + 1


def _tensor(name: str, x, dtype) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise ParameterError("data", f"data: {name} must be a tensor, got {type(x).__name__}")
    return x.detach().to("cpu", dtype)


def transfer_data(data, name: str | None = None) -> TransferData:
    """``data`` as a :class:`TransferData`: one already, a ``(x, y)`` or ``(x_train, y_train, x_test,
    y_test)`` tuple of tensors, an object with those four attributes, or a ``Dataset`` of ``(x, y)``
    pairs; inputs finite, labels integers from 0 with at least two classes, at most
    :data:`MAX_SAMPLES` samples (a one-line error naming ``data`` otherwise)."""
    if isinstance(data, TransferData):
        return data
    if isinstance(data, torch.utils.data.Dataset) and not isinstance(data, torch.utils.data.TensorDataset):
        n = V_.integer("data", len(data), high=MAX_SAMPLES) if hasattr(data, "__len__") else None
        if n is None:
            raise ParameterError("data", "data: a Dataset must have a length (at most MAX_SAMPLES samples)")
        pairs = [data[i] for i in range(n)]
        data = (torch.stack([torch.as_tensor(p[0]) for p in pairs]), torch.as_tensor([int(p[1]) for p in pairs]))
    elif isinstance(data, torch.utils.data.TensorDataset):
        data = tuple(data.tensors[:2])
    if isinstance(data, (tuple, list)) and len(data) in (2, 4):
        parts = list(data) * (2 if len(data) == 2 else 1)
    elif all(hasattr(data, a) for a in ("x_train", "y_train")):
        parts = [data.x_train, data.y_train, getattr(data, "x_test", data.x_train), getattr(data, "y_test", data.y_train)]
    else:
        raise ParameterError("data", "data must be tensors (x, y) or (x_train, y_train, x_test, y_test), an object "
                                     f"with x_train, y_train, or a Dataset of (x, y) pairs, got {type(data).__name__}")
    x, y, xt, yt = (_tensor(n, v, torch.float64 if i % 2 == 0 else torch.int64)
                    for i, (n, v) in enumerate(zip(("x_train", "y_train", "x_test", "y_test"), parts)))
    _check_split("train", x, y)
    _check_split("test", xt, yt, x.shape[1])
    digest = hashlib.sha256()
    for t in (x, y, xt, yt):
        digest.update(str(tuple(t.shape)).encode())
        digest.update(t.contiguous().numpy().tobytes())
    sha = digest.hexdigest()
    return TransferData(name or f"data-{sha[:12]}", x, y, xt, yt, sha)


def _check_split(which: str, x, y, width: int | None = None) -> None:
    if x.dim() != 2 or y.dim() != 1 or len(x) != len(y) or len(x) < 2 or len(x) > MAX_SAMPLES:
        raise ParameterError("data", f"data: the {which} split must be inputs (n, d_in) and labels (n,) with 2 <= n <= "
                                     f"{MAX_SAMPLES}, got {tuple(x.shape)} and {tuple(y.shape)}")
    if width is not None and x.shape[1] != width:
        raise ParameterError("data", f"data: the test inputs must have the training inputs' {width} features, got "
                                     f"{x.shape[1]}")
    if not bool(torch.isfinite(x).all()) or int(y.min()) < 0 or (which == "train" and int(y.max()) < 1):
        raise ParameterError("data", f"data: the {which} inputs must be finite and the labels class indices from 0 "
                                     "(at least two classes)")


_NETWORKS: dict[str, TransferNetwork] = {}
_DATA: dict[str, TransferData] = {}


def register_network(net: TransferNetwork) -> TransferNetwork:
    """Enter ``net`` under its name (another factory under that name is refused in one line)."""
    known = _NETWORKS.get(net.name)
    if known is not None and known.make is not net.make:
        raise ParameterError("model", f"model {net.name!r} is already registered (another factory)")
    _NETWORKS[net.name] = net
    return net


def _register_data(data: TransferData) -> TransferData:
    known = _DATA.get(data.name)
    if known is not None and known.sha256 != data.sha256:
        raise ParameterError("data", f"data {data.name!r} is already registered with other numbers (SHA-256 "
                                     f"{known.sha256[:12]}...): give these another name")
    _DATA[data.name] = data
    return data


def registered_network(name: str) -> TransferNetwork:
    """The factory registered as ``name`` (by :func:`plan_transfer <.study.plan_transfer>` in this session)."""
    if name not in _NETWORKS:
        raise ParameterError("model", f"model {name!r} is not registered in this session: give the factory to "
                                      "plan_transfer (a stored run names no code to import)")
    return _NETWORKS[name]


def registered_data(name: str, sha256: str) -> TransferData:
    """The data registered as ``name`` with the digest ``sha256`` (a one-line error otherwise)."""
    data = _DATA.get(name)
    if data is None or data.sha256 != sha256:
        raise ParameterError("data", f"data {name!r} with SHA-256 {sha256[:12]}... is not registered in this session: "
                                     "give the same data to plan_transfer")
    return data


def check_network(net: TransferNetwork, data: TransferData, depth: int, beta: float) -> None:
    """``net`` at ``depth``: a module with trained parameters (its ``blocks``), whose scores on two
    inputs, batched over two configurations by ``torch.func``, are finite ``(2, classes)``."""
    from .batched import Configs

    if not isinstance(net, TransferNetwork):
        raise ParameterError("model", f"model must be a TransferNetwork (make(depth, beta) and a name), got "
                                      f"{type(net).__name__}")
    try:
        cfg = Configs(net, depth, beta, [0, 1], data.x_train.dtype)
        out = cfg.scores(cfg.params, data.x_train[:2])
    except ParameterError:
        raise
    except Exception as e:
        raise ParameterError("model", f"model {net.name!r} at depth {depth}: torch.func could not run it batched over "
                                      f"configurations: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                             ) from None
    if tuple(out.shape) != (2, 2, data.classes) or not bool(torch.isfinite(out).all()):
        raise ParameterError("model", f"model {net.name!r}: its scores on 2 inputs must be finite of shape (2, "
                                      f"{data.classes}) (the data's classes), got {tuple(out.shape[1:])}")


def own_objects(model, data, network, width: int, depths, betas, limit) -> dict:
    """The optional fields of a transfer plan for the user's objects, checked and registered: a
    block of ``network`` other than res-1 tanh (``arch``, ``activation``), a :class:`TransferNetwork`
    (``model``; no ``limit`` beside it: its weights are no driver's), a data set (``data``,
    ``data_sha256``); and ``most_samples``, the training samples there are."""
    from ...blocks import recorded_block
    from .presets import DEFAULTS

    out = {"most_samples": 1437}
    if data is not None:
        d = _register_data(transfer_data(data))
        out.update(data=d.name, data_sha256=d.sha256, most_samples=len(d.x_train))
    if model is not None:
        if limit is not None:
            raise ParameterError("limit", "limit applies to the study's own networks and registered blocks, not to a "
                                          "model's factory (its weights are read off no driver)")
        if (network.arch, network.activation) != (DEFAULTS["arch"], DEFAULTS["activation"]):
            raise ParameterError("arch", f"arch {getattr(network.arch, 'name', network.arch)!r} and activation apply to "
                                         "the study's own MLPs, not to a model's factory (its blocks are its own)")
        if not isinstance(model, TransferNetwork):
            raise ParameterError("model", f"model must be a TransferNetwork (make(depth, beta) and a name), got "
                                          f"{type(model).__name__}")
        check = _DATA.get(out.get("data")) or _digits_probe()
        for beta in sorted(set(betas)):
            check_network(model, check, min(depths), beta)
        out["model"] = register_network(model).name
        return out
    block = recorded_block(network.arch, network.activation).check(width)
    if not (block.name == DEFAULTS["arch"] and block.activation.name == DEFAULTS["activation"]):
        out.update(arch=block.name, activation=block.activation.name)
    return out


def _digits_probe() -> TransferData:
    """Two digits as a data set (the shape the study's own data gives a user's network)."""
    from ...data import load_dataset

    d = load_dataset("digits", seed=0, dtype=torch.float64)
    return transfer_data((d.x_train[:16], d.y_train[:16]), name="digits-probe")


def module_sizes(plan, depth: int) -> tuple[int, int]:
    """``(parameters, per-layer width)`` of the user's module at ``depth`` (one built): its numbers,
    and ``sqrt`` of its trained numbers per layer (the width of a block of ``d x d`` weights)."""
    net = registered_network(plan.model)
    module = net.build(depth, plan.betas[0], 0)
    total = sum(p.numel() for p in module.parameters())
    trained = sum(p.numel() for n, p in module.named_parameters() if n.startswith(net.trained))
    return total, max(1, int(round((trained / depth) ** 0.5)))
