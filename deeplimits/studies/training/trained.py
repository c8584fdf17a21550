"""The trained networks of a training grid (docs/training.md, "Grids, runs and the heat map"):
the sweep task that trains one chunk of configurations, the initial weights of each
configuration, where the trained weights are stored and how to read them back.

The initial weights of configuration ``(H_i, seed_j)`` are drawn with the generator seeded
``chunk_seed(seed, i * seeds + j)`` (its input and output layers with ``io_seed(seed, i * seeds
+ j)``, :mod:`deeplimits._random`): the same for every ``beta`` and learning rate.

Integrity: the SHA-256 of each stored weights file is recorded in its task's result, which the
run store checksums; a file that is missing, truncated, replaced or garbled no longer matches,
so the same command trains its chunk again (:func:`weights_damage`) and ``runs plot`` leaves it
out with one line naming it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import warnings

import torch

from ..._names import ACTIVATIONS
from ..._user_code import reading_stored
from ..._random import chunk_seed, io_seed
from ...errors import DamagedFileError
from ...runs import DamagedFileWarning, register_task

__all__ = ["train_task", "init_weights", "load_trained", "weights_path", "weight_paths", "weights_damage",
           "file_sha256", "WEIGHTS_DIR"]

WEIGHTS_DIR = "weights"
"""The folder of a run directory that holds the trained weights."""


def weights_path(directory: str, key: str) -> str:
    """Where the trained weights of task ``key`` live in the run directory ``directory``."""
    return os.path.join(directory, WEIGHTS_DIR, key.replace("/", "_") + ".pt")


def file_sha256(path: str) -> str:
    """The SHA-256 of the file ``path`` (read in blocks of 1 MiB)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_weights(state: dict, path: str) -> str:
    """Write ``state`` to ``path`` atomically (a partial file, then a rename); its SHA-256."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".partial"
    torch.save(state, tmp)
    digest = file_sha256(tmp)
    os.replace(tmp, path)
    return digest


def weights_damage(directory: str, result: dict) -> str | None:
    """Why the weights file that a stored chunk ``result`` names is unusable (missing, or its
    SHA-256 is not the one recorded), or ``None`` when it is intact or the chunk stored none.
    A chunk stored before checksums were recorded is checked by reading it."""
    name = result.get("weights")
    if not name:
        return None
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
        return f"the trained weights {path} are missing"
    expected = result.get("weights_sha256")
    try:
        if expected is None:
            read_chunk(path)
            return None
        if file_sha256(path) != expected:
            return f"the trained weights {path} are damaged (their SHA-256 is not the one recorded)"
    except (OSError, ValueError) as e:
        return f"the trained weights {path} are unreadable ({' '.join(str(e).split())})"
    return None


@register_task("train-chunk", reports_progress=True)
def train_task(params: dict, seed: int, progress=None) -> dict:
    """Sweep task: train one chunk of configurations (one ``beta``) as one batched module;
    the records and the trained state (``state``, kept by ``TrainPlan.keep``). ``progress``
    is called with the configuration-epochs of every epoch."""
    from ...data import load_dataset
    from ...training import ResidualNetwork, train

    dtype = getattr(torch, params["dtype"])
    device = torch.device(params.get("device") or "cpu")
    data = load_dataset(params["dataset"], root=params.get("root"), seed=seed, dtype=dtype, device=device)
    configs = params["configs"]
    net = ResidualNetwork(params["arch"], params["depth"], params["width"], data.input_dim, data.output_dim,
                          configs=len(configs), beta=params["beta"], activation=params["activation"],
                          bias=params["bias"], dtype=dtype, device=device)
    init_weights(net, params, configs, seed)
    t0 = time.perf_counter()
    res = train(net, data, optimizer=params["optimizer"], lr=torch.tensor([c["lr"] for c in configs]),
                epochs=params["epochs"], batch_size=params["batch_size"], lr_decay_halfway=params["lr_decay_halfway"],
                stop_loss=params.get("stop_loss"), seed=seed,
                progress=None if progress is None else (lambda n: progress(n * len(configs))))
    return chunk_output(params, configs, res, time.perf_counter() - t0, net)


def chunk_output(params: dict, configs: list, res, seconds: float, net) -> dict:
    """A trained chunk's task result: one record per configuration (its grid point, the training
    records of ``res``, the epochs and an equal share of ``seconds``) and the trained ``state``
    (the module's config, the configurations, the state_dict on the CPU)."""
    each = seconds / len(configs)
    records = [{"driver": params["driver"], **{k: c[k] for k in ("hurst", "beta", "lr", "seed")}, **r,
                "epochs": res.epochs, "seconds": each} for c, r in zip(configs, res.records)]
    state = {"module": net.get_config(), "configs": configs,
             "state_dict": {k: v.detach().cpu() for k, v in net.state_dict().items()}}
    return {"records": records, "state": state}


@torch.no_grad()
def init_weights(net, params: dict, configs: list[dict], seed: int):
    """The initial weights of every configuration of a chunk: configuration ``c`` reads its
    residual weights off its driver with the generator seeded ``chunk_seed(seed, init)``, and
    its input and output layers from :func:`~deeplimits._random.io_seed` ``(seed, init)`` (so one
    initialisation is the same network for every ``beta`` and learning rate)."""
    from ...paths import driver_from_spec
    from ...training import init_from_driver

    for c, cfg in enumerate(configs):
        g = torch.Generator().manual_seed(chunk_seed(seed, cfg["init"]))
        driver = driver_from_spec({**params, "hurst": cfg["hurst"]})
        init_from_driver(net, driver, generator=g, config=c)
        g_io = torch.Generator().manual_seed(io_seed(seed, cfg["init"]))
        for name in ("A", "B"):
            p = getattr(net, name)
            p[c].copy_(torch.randn(p.shape[1:], generator=g_io, dtype=p.dtype) * p.shape[1] ** -0.5)


def read_chunk(path: str, *, map_location="cpu", sha256: str | None = None) -> dict:
    """The stored state of one chunk as numbers and plain data: ``{'module': config, 'configs':
    [...], 'state_dict': {name: tensor}}``, read with ``torch.load(weights_only=True)`` (tensors and
    plain containers, never code) after the bounds of :func:`deeplimits.diagnostics.sources.check_pt`;
    nothing it names is resolved or imported. ``sha256``: the digest recorded for it (checked first).
    A file that does not match, cannot be read, or is not a training chunk raises a one-line
    ``ValueError`` naming it."""
    from ...diagnostics.pt_files import read_pt

    path = os.fspath(path)
    if sha256 is not None and file_sha256(path) != sha256:
        raise DamagedFileError(path, f"{path} is damaged: its SHA-256 is not the one recorded for it")
    with reading_stored(path):
        state = read_pt(path, map_location=map_location, what="a stored training chunk")
    if not (isinstance(state, dict) and isinstance(state.get("module"), dict) and isinstance(state.get("state_dict"),
                                                                                               dict)
            and isinstance(state.get("configs"), list) and state["state_dict"]
            and all(isinstance(v, torch.Tensor) for v in state["state_dict"].values())):
        raise DamagedFileError(path, f"{path} is not a stored training chunk (a dict of 'module', 'configs' and a "
                                     "'state_dict' of tensors)")
    return state


def load_trained(path: str, *, map_location="cpu", sha256: str | None = None, activation=None):
    """The trained module of one stored chunk (``<run>/weights/<task>.pt``) and its
    configurations: ``(ResidualNetwork, [ {hurst, beta, lr, seed, init}, ...])`` (a
    :class:`~deeplimits.training.ConvResidualNetwork` for a chunk of ``train --arch conv``).

    The file is data (:func:`read_chunk`): nothing it names is imported. A chunk trained with a
    user's activation (``'module:function'``) records only that name: give the function itself,
    ``activation=fn`` (or its name, typed by you), or the load is refused in one line. A built-in
    activation's name is resolved as usual. ``sha256``: the digest recorded for it (checked first).
    A file that does not match, cannot be read, or is not a training chunk raises a one-line
    ``ValueError`` naming it."""
    from ..._user_code import is_user_code
    from ...errors import ParameterError
    from ...training import ConvResidualNetwork, ResidualNetwork

    path = os.fspath(path)
    state = read_chunk(path, map_location=map_location, sha256=sha256)
    config = dict(state["module"])
    named = config.get("activation")
    if activation is not None:
        config["activation"] = activation
    elif is_user_code(named) and named.partition(":")[0] not in ACTIVATIONS:
        raise ParameterError("activation", f"{path} was trained with the activation {named!r}, user code that a stored "
                                           "file only names and never imports: give it, "
                                           "load_trained(path, activation=<the function>)")
    try:
        sd = state["state_dict"]
        # the weights' dtype (a chunk stored before get_config() existed has no dtype in its config)
        kind = ConvResidualNetwork if "image_shape" in config else ResidualNetwork
        with reading_stored(path) if activation is None else contextlib.nullcontext():
            net = kind.from_config({**config, "dtype": next(iter(sd.values())).dtype})
        net.load_state_dict(sd)
        configs = list(state["configs"])
    except ParameterError as e:
        if activation is not None and getattr(e, "param", None) == "activation":
            raise
        raise DamagedFileError(path, f"{path} is not a stored training chunk ({' '.join(str(e).split())[:200]})") \
            from None
    except Exception as e:  # noqa: BLE001 - any unreadable or foreign file is one line naming it
        raise DamagedFileError(path, f"{path} is not a stored training chunk ({type(e).__name__}: "
                                     f"{' '.join(str(e).split())[:200]})") from None
    return net, configs


def weight_paths(plan, directory: str, result, *, entry=(0, 0),
                 most: int = 4) -> list[dict]:
    """Panels for :func:`~deeplimits.studies.training.plots.plot_weight_paths`: the coordinate ``entry`` of ``V``
    (``W`` for ``inside``) against the layer, at initialisation and after training, for up to
    ``most`` values of ``beta`` (first H, its best learning rate), read from the trained weights
    stored in ``directory`` (the initial weights are drawn again from their seeds)."""
    from ...training import ResidualNetwork

    best = {(b["hurst"], b["beta"]): b for b in result.best}
    stored = getattr(result, "weights", None) or {}
    from ...blocks import make_block

    name = make_block(plan.arch).required[0]  # the first weight matrix: V, or W of inside
    betas = list(plan.betas)
    if len(betas) > most:
        betas = [betas[round(i * (len(betas) - 1) / (most - 1))] for i in range(most)]
    panels = []
    for task in plan.tasks():
        beta, configs = task.params["beta"], task.params["configs"]
        path = weights_path(directory, task.key)
        recorded = task.key in stored  # a run that stored weights names each file with its SHA-256
        if beta not in betas or not (recorded or os.path.exists(path)):
            continue
        top = best.get((plan.hursts[0], beta))
        lr = top["lr"] if top and top["lr"] is not None else plan.lrs[0]
        hit = [c for c, cfg in enumerate(configs)
               if cfg["hurst"] == plan.hursts[0] and cfg["seed"] == 0 and cfg["lr"] == lr]
        if not hit:
            continue
        why = weights_damage(directory, stored.get(task.key, {"weights": os.path.relpath(path, directory)}))
        if why is not None:
            warnings.warn(f"{why}; left out of the figure (run the same train command to recompute it)",
                          DamagedFileWarning, stacklevel=2)
            continue
        chunk = read_chunk(path)  # numbers: the activation its config names is never resolved
        trained, io = chunk["state_dict"][name], (chunk["module"]["in_features"], chunk["module"]["out_features"])
        cfg = configs[hit[0]]
        # the initial weights are drawn again from their seeds; they do not depend on the activation,
        # so the module that holds them is built with the identity, never with the name the spec holds
        start = ResidualNetwork(plan.arch, plan.depth, plan.width, *io,
                                beta=beta, activation="identity", bias=plan.bias, dtype=trained.dtype)
        init_weights(start, task.params, [cfg], task.seed)
        i, j = entry
        drv = plan.driver + ("" if cfg["hurst"] is None else f" H={cfg['hurst']:.3g}")
        panels.append({"label": f"{drv}, beta={beta:.3g}, lr={lr:g}",
                       "init": getattr(start, name).detach()[:, 0, i, j].tolist(),
                       "trained": trained[:, hit[0], i, j].tolist()})
        betas.remove(beta)
    return panels
