"""The scaling of trained weights with depth (Cohen, Cont, Rossier & Xu, ICML 2021; docs/weights.md,
"The scaling experiment"): the inside model ``h_{k+1} = h_k + delta_k sigma(W_k h_k + b_k)``
trained on the synthetic task (or on digits through a fixed random embedding, squared loss on
one-hot targets) at a geometric family of depths, each until its training loss
falls below a threshold, then the exponents of ``delta ~ L^-alpha`` and of the weights
``max_k ||W_k|| ~ L^-beta``, the limit they support and the loss kept by the trend of the weights.

Protocol (the published values in :data:`PUBLISHED`): d = 10, ``h_0 = x`` and ``F(x) = h_L``
(input and output layers fixed to the identity), weights initialised with entries of order
``init_scale / (L d)``, ``delta`` initialised at ``1/L``, squared loss, Adam, mini-batches of 32,
one task per depth (``seeds`` configurations batched), resumable like every study.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import ClassVar, Sequence

import torch

from .. import _resources as R_
from .. import _validate as V_
from .._plain import PlainData
from .._random import chunk_seed
from ..data.base import DEFAULT_TEST_FRACTION
from ..runs import Task, register_task
from .plan import Plan, register_plan

__all__ = ["ScalingPlan", "ScalingResult", "plan_scaling", "PUBLISHED", "PUBLISHED_EMBEDDED"]

#: the sizes the synthetic loader accepts (:func:`deeplimits.data.synthetic.synthetic`: ``n``, ``dim``)
MAX_SYNTHETIC_SAMPLES, MAX_SYNTHETIC_DIM = 10 ** 7, 10 ** 4

#: what Cohen et al. (2021) report for the synthetic task, to print next to the measured values
PUBLISHED = {"tanh": {"alpha": 0.7, "beta": 0.3, "alpha+beta": 1.0, "limit": "smooth"},
             "relu": {"limit": "rough (denoised loss about ten times higher)"}}
#: the same for the embedded-MNIST experiment, the nearest published values for embedded digits
PUBLISHED_EMBEDDED = {"tanh": {"alpha": 0.7, "beta": 0.2, "limit": "smooth (embedded MNIST)"},
                      "relu": {"limit": "rough (embedded MNIST)"}}


@dataclasses.dataclass
class ScalingResult(PlainData):
    """Per depth and configuration: ``records`` (``depth``, ``seed``, ``epochs``, ``train_loss``,
    ``delta``: the shared scale or the largest ``|delta_k|``, the diagnostics of ``W``,
    ``trend_ratio``: the training loss of the network rebuilt from the trend over the original's,
    ``ode_distance``: the trained pair's ``E max_k ||H(k/L) - h_k||``); ``exponents`` (``alpha``,
    ``beta``, ``alpha+beta``, ``ode_rate`` with 95% intervals and the slope of every weight
    diagnostic), ``hypothesis`` and ``reason``, and the ``published`` values."""

    activation: str
    delta_mode: str
    width: int
    dataset: str
    records: list[dict]
    exponents: dict
    hypothesis: str
    reason: str
    published: dict
    seconds: float

    def report(self) -> str:
        from ..diagnostics.scaling import interval

        lines = [f"inside model, {self.activation}, delta {self.delta_mode}, d={self.width}, {self.dataset}: "
                 f"{len(self.records)} trained networks",
                 f"{'L':>6} {'seed':>4} {'epochs':>6} {'train loss':>11} {'delta':>9} {'max |W_k|':>10} "
                 f"{'hurst':>6} {'trend loss / loss':>18} {'|H - h| (ODE)':>14}"]
        for r in self.records:
            lines.append(f"{r['depth']:6d} {r['seed']:4d} {r['epochs']:6d} {r['train_loss']:11.3g} {r['delta']:9.4g} "
                         f"{r['max_norm']:10.4g} {r['hurst']:6.2f} {r['trend_ratio']:18.3g} {r['ode_distance']:14.4g}")
        lines.append("exponents (log-log slope over depths, 95% CI)        published")
        for k in ("alpha", "beta", "alpha+beta", "ode_rate"):
            v = self.exponents.get(k)
            if v is None:
                continue
            ci = " " + interval(v["ci"])
            pub = self.published.get(k)
            lines.append(f"  {k:>12} {v['value']:7.3f}{ci:<22} {'' if pub is None else pub}")
        ode = self.exponents.get("ode_rate")
        if ode is not None:
            rate, lo = ode["value"], ode["ci"][0]
            sure = lo is not None and math.isfinite(lo) and lo > 0
            lines.append("the trained pair: " + (
                f"max_k |H(k/L) - h_k| decreases with depth, as L^-{rate:.2f}" if sure else
                f"max_k |H(k/L) - h_k| does not decrease clearly with depth (rate {rate:.2f}, its interval reaches 0 "
                "or below): the trained weights do not approach one ODE at these depths (their trend differs from "
                "depth to depth, or alpha + beta < 1)"))
        lines.append(f"supports: {self.hypothesis} ({self.reason}); published: {self.published.get('limit')}")
        return "\n".join(lines)


@register_plan
@dataclasses.dataclass(frozen=True)
class ScalingPlan(Plan):
    """A validated scaling experiment (from :func:`plan_scaling`); :meth:`to_dict` is its spec."""

    study: ClassVar[str] = "scaling"
    optional: ClassVar[tuple[str, ...]] = ("device",)

    activation: str
    delta: str
    depths: tuple[int, ...]
    width: int
    seeds: int
    optimizer: str
    lr: float
    batch_size: int
    stop_loss: float
    max_epochs: int
    init_scale: float
    samples: int
    seed: int
    dtype: str
    dataset: str = "synthetic"  # a default: specs written before the digits variant read back
    device: str | None = None  # None: the CPU

    def tasks(self) -> list:
        base = {k: v for k, v in self.to_dict().items() if k not in ("depths", "study")}
        return [Task(f"scaling/depth-{L:06d}", "scaling-depth", {**base, "depth": L}, chunk_seed(self.seed, i))
                for i, L in enumerate(self.depths)]

    def progress_units(self, task) -> int:
        return 1

    def data_sizes(self) -> tuple[int, int, int, int]:
        """``(n_train, n_test, input_dim, output_dim)`` of the task's data (the synthetic set of
        ``samples`` points of dimension ``width``, split 80/20; or digits), without loading it."""
        if self.dataset != "synthetic":
            from .sizes import data_sizes

            return data_sizes(self.dataset)
        n_test = int(round(DEFAULT_TEST_FRACTION * self.samples))
        return self.samples - n_test, n_test, self.width, self.width

    def steps(self) -> int:
        """Layer passes of the deepest task: ``max_epochs x ceil(n_train / batch_size) x depth``
        and the loss evaluated every epoch (:func:`~deeplimits.training.train.train_steps`)."""
        from ..training.train import train_steps

        return train_steps(self.data_sizes()[0], self.batch_size, self.max_epochs, max(self.depths), self.stop_loss)

    def estimate(self) -> R_.Estimate:
        """Peak memory of the deepest task (all ``seeds`` configurations), tasks, trained
        networks and layer passes of that task (no allocation)."""
        return R_.Estimate(self.task_bytes(max(self.depths)), len(self.depths), self.seeds * len(self.depths),
                           self.seeds, self.steps(), R_.available_memory(self.device), "configuration")

    def task_bytes(self, depth: int) -> int:
        """Peak bytes of :func:`scaling_task` at ``depth``, from the sizes alone: the data set
        (the synthetic points are drawn and their targets computed in float64, then split and
        converted: about six float64 copies) and the largest of its phases, each on top of the
        parameters (:func:`~deeplimits.training.modules.parameter_count`) and, after training,
        their gradients: training (:func:`~deeplimits.training.train.train_bytes`), the
        network rebuilt from the trend of its weights (a copy of the parameters and
        :func:`~deeplimits.diagnostics.trend_bytes` of ``W``, ``b``), the trained pair on up to
        256 inputs (:func:`~deeplimits.diagnostics.pair.ode_distance_bytes`) and the weight
        diagnostics of one configuration (:func:`~deeplimits.diagnostics.measures.diagnostics_bytes`);
        plus 64 MiB for the interpreter's and the allocator's own."""
        from ..diagnostics.measures import diagnostics_bytes
        from ..diagnostics.pair import ode_distance_bytes
        from ..diagnostics.trend import trend_bytes
        from ..training.modules import activation_count, parameter_count
        from ..training.train import train_bytes

        item = getattr(torch, self.dtype).itemsize
        n_train, n_test, d_in, d_out = self.data_sizes()
        L, d, C = depth, self.width, self.seeds
        params = parameter_count("inside", L, d, d_in, d_out, configs=C, bias=True, delta=self.delta)
        acts = activation_count("inside", False, L, d, min(self.batch_size, n_train), C)
        kept = 2 * item * params  # the trained parameters and their last gradient
        trend = sum(trend_bytes((L, C, *s), item) for s in ((d, d), (d,))) if L >= 3 else 0
        phases = (train_bytes(params, acts, item),
                  kept + item * params + trend,
                  kept + ode_distance_bytes(L, C, min(256, n_train), d, item),
                  kept + diagnostics_bytes((L, d, d)))
        data = (n_train + n_test) * (d_in + d_out) * (48 if self.dataset == "synthetic" else item + 16)
        return data + max(phases) + (64 << 20)

    def summarise(self, tasks: list, results: list, seconds: float = 0.0) -> ScalingResult:
        from ..diagnostics import WeightDiagnostics, scaling_exponents
        from ..diagnostics.scaling import _loglog_fit as loglog_fit  # NaN of a blown-up depth: a nan slope

        records = sorted((r for res in results for r in res["records"]), key=lambda r: (r["depth"], r["seed"]))
        first = [r for r in records if r["seed"] == 0]
        exponents, hyp, why = {}, "neither", "fewer than two depths trained"
        if len({r["depth"] for r in first}) >= 2:
            fields = {f.name for f in dataclasses.fields(WeightDiagnostics)}
            fam = scaling_exponents([WeightDiagnostics(**{k: r[k] for k in fields}) for r in first])
            exponents, hyp, why = dict(fam.exponents), fam.hypothesis, fam.reason
            slope, (lo, hi) = loglog_fit([r["depth"] for r in first], [abs(r["delta"]) for r in first])
            exponents["alpha"] = {"value": -slope, "ci": [-hi, -lo]}
            slope, (lo, hi) = loglog_fit([r["depth"] for r in first], [r["ode_distance"] for r in first])
            exponents["ode_rate"] = {"value": -slope, "ci": [-hi, -lo]}
            b = exponents["beta"]
            exponents["alpha+beta"] = {"value": exponents["alpha"]["value"] + b["value"],
                                       "ci": [math.nan, math.nan]}  # the two fits share their depths
        published = (PUBLISHED if self.dataset == "synthetic" else PUBLISHED_EMBEDDED).get(self.activation, {})
        return ScalingResult(self.activation, self.delta, self.width, self.dataset, records, exponents, hyp, why,
                             published, seconds)


def plan_scaling(*, dataset: str = "synthetic", activation: str = "tanh", delta: str | None = None, depths: Sequence[int] = (10, 15, 22, 33, 50, 75),
                 width: int = 10, seeds: int = 1, optimizer: str = "adam", lr: float = 1e-2, batch_size: int = 32, stop_loss: float = 1e-3,
                 max_epochs: int = 300, init_scale: float = 0.01, samples: int = 1024, seed: int = 0,
                 dtype: torch.dtype = torch.float32, device=None) -> ScalingPlan:
    """Validate a scaling experiment (every check, before any work). ``delta``: ``'shared'``
    (default for tanh) or ``'per-layer'`` (default for relu), as in Cohen et al. (2021);
    ``optimizer``: ``'adam'`` (default) or ``'sgd'`` (the exponents depend on it: Adam's
    normalised steps move every layer by the learning rate whatever its gradient's scale).
    ``depths``: a list of at least two distinct depths >= 1; ``lr``, ``stop_loss`` > 0;
    ``init_scale`` >= 0; ``seed`` in ``[0, seed_limit(max_epochs)]``
    (:func:`deeplimits.training.train.seed_limit`).

    Sizes are checked before any work (``ResourceError``, naming the parameters to change):
    ``seeds x len(depths)`` trained networks at most :data:`~deeplimits._resources.MAX_CONFIGS`;
    the deepest task's memory (:meth:`ScalingPlan.task_bytes`) within the machine's (or the
    device's); its layer passes (:meth:`ScalingPlan.steps`) at most
    :data:`~deeplimits._resources.MAX_TRAIN_STEPS`. The synthetic task takes ``samples`` in
    ``[3, 10^7]`` and ``width`` up to ``10^4``."""
    from ..training.modules import DELTA_MODES
    from ..training.train import require_train_steps, seed_limit

    activation = V_.choice("activation", activation, ("tanh", "relu"))
    if delta is None:
        delta = "shared" if activation == "tanh" else "per-layer"
    delta = V_.choice("delta", delta, DELTA_MODES)
    depths = tuple(V_.sequence("depths", depths, lambda L: V_.integer("depths", L), what="a list of depths >= 1"))
    if len(depths) < 2 or len(set(depths)) != len(depths):
        raise ValueError(f"depths must hold at least two distinct depths, got {list(depths)}")
    dataset = V_.choice("dataset", dataset, ("synthetic", "digits"))
    synthetic = dataset == "synthetic"
    max_epochs = V_.integer("max_epochs", max_epochs)
    plan = ScalingPlan(activation, delta, tuple(sorted(depths)), V_.integer("width", width), V_.integer("seeds", seeds),
                       V_.choice("optimizer", optimizer, ("adam", "sgd")), V_.real("lr", lr, low=0.0, low_open=True),
                       V_.integer("batch_size", batch_size), V_.real("stop_loss", stop_loss, low=0.0, low_open=True),
                       max_epochs, V_.real("init_scale", init_scale, low=0.0),
                       V_.integer("samples", samples, low=3), V_.integer("seed", seed, low=0, high=seed_limit(max_epochs)),
                       str(V_.dtype(dtype)).replace("torch.", ""), dataset, _device_name(device, dtype))
    R_.require_count(plan.seeds * len(plan.depths), R_.MAX_CONFIGS, f"seeds={plan.seeds} x {len(plan.depths)} depths "
                     f"make too many trained networks", ("seeds", "depths"))
    L = plan.depths[-1]
    R_.require_memory(plan.task_bytes(L), f"per task at depth={L}, width={plan.width}, seeds={plan.seeds}"
                      + (f", samples={plan.samples}" if synthetic else ""),
                      ("depths", "width", "seeds") + (("samples",) if synthetic else ()), device=plan.device)
    require_train_steps(plan.data_sizes()[0], plan.batch_size, plan.max_epochs, L, plan.stop_loss,
                        ("depths", "max_epochs") + (("samples",) if synthetic else ()), names=("max_epochs", "depth"))
    if synthetic:  # what the synthetic loader accepts, checked here rather than in a task
        V_.integer("samples", plan.samples, low=3, high=MAX_SYNTHETIC_SAMPLES)
        if plan.width > MAX_SYNTHETIC_DIM:
            raise ValueError(f"width must be at most {MAX_SYNTHETIC_DIM} for dataset 'synthetic' (the dimension of "
                             f"its points), got {plan.width}")
    return plan


def _device_name(device, dtype) -> str | None:
    where = V_.device("device", device, dtype)
    return None if where.type == "cpu" else str(where)


def _data(params: dict, dtype, device):
    """The synthetic task, or digits with one-hot targets for the squared loss."""
    from ..data import load_dataset

    if params.get("dataset", "synthetic") == "synthetic":
        return load_dataset("synthetic", seed=params["seed"], dtype=dtype, n=params["samples"], dim=params["width"],
                            device=device)
    ds = load_dataset("digits", seed=params["seed"], dtype=dtype, device=device)

    class OneHot:  # regression targets: squared loss against the one-hot labels
        x_train, x_test = ds.x_train, ds.x_test
        y_train = torch.nn.functional.one_hot(ds.y_train, 10).to(dtype)
        y_test = torch.nn.functional.one_hot(ds.y_test, 10).to(dtype)
        task = "regression"
    return OneHot


@register_task("scaling-depth")
def scaling_task(params: dict, seed: int) -> dict:
    """Sweep task: train the ``seeds`` configurations of one depth until the loss threshold."""
    from ..diagnostics import trained_ode_distance, trend_loss, weight_diagnostics
    from ..training import ResidualNetwork, train

    dtype, device = getattr(torch, params["dtype"]), torch.device(params.get("device") or "cpu")
    L, d, C = params["depth"], params["width"], params["seeds"]
    data = _data(params, dtype, device)
    net = ResidualNetwork("inside", L, d, data.x_train.shape[1], data.y_train.shape[1], configs=C,
                          activation=params["activation"], bias=True, delta=params["delta"], dtype=dtype, device=device)
    g = torch.Generator().manual_seed(seed)  # drawn on the CPU: the same networks on every device
    with torch.no_grad():
        net.W.copy_(torch.randn(net.W.shape, generator=g, dtype=dtype) * params["init_scale"] / (L * d))
        if params.get("dataset", "synthetic") == "synthetic":  # h_0 = x, F(x) = h_L
            for p in (net.A, net.B):
                p.copy_(torch.eye(d, dtype=dtype).expand_as(p))
        else:  # a fixed random embedding of the inputs, a fixed random read-out (Cohen et al.'s MNIST protocol)
            for p in (net.A, net.B):
                p.copy_(torch.randn(p.shape, generator=g, dtype=dtype) * p.shape[1] ** -0.5)
        net.A.requires_grad_(False)
        net.B.requires_grad_(False)
    t0 = time.perf_counter()
    res = train(net, data, optimizer=params["optimizer"], lr=params["lr"], epochs=params["max_epochs"], batch_size=params["batch_size"],
                loss="squared", lr_decay_halfway=False, stop_loss=params["stop_loss"], seed=params["seed"])
    ratio = trend_loss(net, data.x_train, data.y_train, loss="squared")["ratio"]
    ode = trained_ode_distance(net, data.x_train[:256])  # the trained pair on (up to) 256 training inputs
    records = []
    for c in range(C):
        w = net.W.detach()[:, c]
        dlt = net.delta.detach()
        scale = float(dlt[c]) if dlt.dim() == 1 else float(dlt[:, c].abs().max())
        diag = weight_diagnostics(w, name="W").to_dict()
        records.append({"depth": L, "seed": c, "epochs": res.epochs, "train_loss": res.records[c]["train_loss"],
                        "test_loss": res.records[c]["test_loss"], "finite": res.records[c]["finite"], "delta": scale,
                        **diag, "trend_ratio": float(ratio[c]), "ode_distance": float(ode[c]),
                        "seconds": time.perf_counter() - t0})
    return {"records": records, "delta_path": net.delta.detach().cpu().tolist()}
