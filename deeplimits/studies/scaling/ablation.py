"""The ablation of the scaling experiment (docs/weights.md, "What moves alpha and beta"): the
published protocol (the defaults of :func:`~deeplimits.studies.scaling.study.plan_scaling`), then one
knob changed at a time, each variant a labelled run of its own, and one row per variant: alpha,
beta (from the cumulative-sum norm, Cohen et al.'s step 2), alpha + beta and the verdict.

The estimator row needs no training: it is the protocol's run read with another estimator
(beta as minus the slope of the max norm of ``W``; with one ``delta_k`` per layer, alpha + beta
as minus the slope of the max norm of ``|delta_k| W_k``, what the published code's ReLU figure
fits). With one ``delta_k`` per layer (ReLU, Cohen et al.'s second setup) the rows are
:data:`PER_LAYER_ABLATION`: the knobs that move alpha + beta there, the released code's ReLU
settings among them; from those settings themselves (``--preset released-relu``) the rows are
:data:`RELEASED_ABLATION`, one of their knobs changed at a time.
"""

from __future__ import annotations

import math

from .presets import CPU_DEPTHS, RELEASED_RELU

__all__ = ["ABLATION", "PER_LAYER_ABLATION", "RELEASED_ABLATION", "ablation_rows", "ablation_plans", "ablation_row", "ablation_table"]

#: the published code's choices the two tables share: its stopping rule, its batches (with its
#: stopping rule: its batches collapse to one, whose loss is the only one that falls), started
#: afresh or collapsed as it trains its later depths, its task's angles, and all of its choices at
#: once (1024 training and 256 test samples, its biases, its inputs on the sphere, its angles,
#: its loop with the collapsed batches)
_ALL_OF_THE_CODE = {"stop_rule": "running", "batches": "collapsed", "samples": 1280, "bias_init": "normal",
                    "inputs": "sphere", "angle_start": 0}
_PUBLISHED_CODE = (
    ("stopping rule", "the epoch's running mean of the mini-batch losses, patience 5 (the published code's)",
     {"stop_rule": "running"}),
    ("batches", "fixed batches in a shuffle that copies them (the published code's), with its stopping rule",
     {"stop_rule": "running", "batches": "published"}),
    ("batches", "the first batch, every batch of the epoch (where that shuffle ends: the published code's from its "
                "third depth on), with its stopping rule", {"stop_rule": "running", "batches": "collapsed"}),
    ("task angles", "5 (k - 1) pi / K (the published code's)", {"angle_start": 0}),
    ("published code", "all of the published code's choices (its loop, 1024 + 256 samples, biases, inputs, angles)",
     _ALL_OF_THE_CODE),
)

#: (knob, variant, the options it changes); the first row is the protocol itself
ABLATION = (
    ("protocol", "the published code's: Adam 1e-2, MSE < 1e-3, batch 32, init 0.01", {}),
    ("estimator", "beta from the max norm of W (not the paper's)", None),
    ("loss convention", "half the squared error summed over outputs < 1e-3 (= MSE < 2e-4)", {"loss": "squared"}),
    ("threshold", "MSE < 5e-3", {"stop_loss": 5e-3}),
    ("training budget", "at most 3 epochs (the protocol takes 2 to 8)", {"max_epochs": 3}),
    ("training budget", "30 epochs whatever the loss (threshold 1e-9)", {"max_epochs": 30, "stop_loss": 1e-9}),
    ("optimiser", "SGD at a constant rate 0.1, float64 (the paper's text; preset cpu-sgd)",
     {"optimizer": "sgd", "lr": 0.1, "dtype": "float64"}),
    ("learning rate", "Adam 3e-3", {"lr": 3e-3}),
    ("initial scale", "init 0.1", {"init_scale": 0.1}),
    ("batch size", "batches of 128", {"batch_size": 128}),
    *_PUBLISHED_CODE,
)

#: the same with one delta_k per layer (the estimator row: alpha + beta from the max norm of |delta_k| W_k)
PER_LAYER_ABLATION = (
    ("protocol", "the published code's: Adam 1e-2, MSE < 1e-3, batch 32, init 0.01, delta_k ~ N(0, 1/L^2)", {}),
    ("estimator", "alpha + beta from the max norm of |delta_k| W_k (the published code's figure)", None),
    ("delta init", "delta_k = 1/L (not the published code's)", {"delta_init": "constant"}),
    ("initial scale", "init 30", {"init_scale": 30.0}),
    ("learning rate", "Adam 3e-3", {"lr": 3e-3}),
    ("learning rate", "Adam 1e-3", {"lr": 1e-3}),
    ("threshold", "MSE < 1e-4", {"stop_loss": 1e-4}),
    ("training budget", "30 epochs whatever the loss (threshold 1e-9)", {"max_epochs": 30, "stop_loss": 1e-9}),
    ("optimiser", "SGD at a constant rate 0.1, float64 (the paper's text)",
     {"optimizer": "sgd", "lr": 0.1, "dtype": "float64"}),
    ("depth range", "10 to 850 layers (CPU_DEPTHS)", {"depths": CPU_DEPTHS}),
    ("bias init", "b_k ~ N(0, (init / (L sqrt d))^2) (the published code's)", {"bias_init": "normal"}),
    ("inputs", "x / ||x|| after the targets (the published code's)", {"inputs": "sphere"}),
    *(_PUBLISHED_CODE + (("published code", "all of the published code's choices, Adam 1e-3",
                          {**_ALL_OF_THE_CODE, "lr": 1e-3}),)),
    ("released code", "run_experiment's defaults (preset released-relu): SGD 5e-3, batches of 50, MSE < 1e-2, at "
                      "most 200 epochs, W_k ~ N(0, (1e-4/d)^2), its loop and task", RELEASED_RELU),
    ("released code", "the same, its loop replaced: a fresh permutation every epoch, the whole split's loss "
                      "evaluated", {**RELEASED_RELU, "batches": "shuffled", "stop_rule": "evaluated"}),
)

#: the released code's ReLU settings (:data:`~.presets.RELEASED_RELU`, ``--preset released-relu``),
#: then one of their knobs changed at a time
RELEASED_ABLATION = (
    ("protocol", "the released code's run_experiment defaults with ReLU, delta_k ~ N(0, 1/L^2) (preset "
                 "released-relu)", {}),
    ("estimator", "alpha + beta from the max norm of |delta_k| W_k (the released code's figure)", None),
    ("stopping rule", "the whole training split's loss after every epoch, no patience", {"stop_rule": "evaluated"}),
    ("batches", "a fresh permutation of the samples every epoch", {"batches": "shuffled"}),
    ("batches", "fixed batches in the copying shuffle, started afresh at each depth", {"batches": "published"}),
    ("training loop", "both: shuffled batches, the whole split's loss, no patience",
     {"batches": "shuffled", "stop_rule": "evaluated"}),
    ("learning rate", "SGD 0.1", {"lr": 0.1}),
    ("initial scale", "W_k ~ N(0, (0.01/(L d))^2), the released run file's xavier-depth at 0.01",
     {"init_method": "xavier-depth", "init_scale": 0.01}),
    ("optimiser", "Adam 1e-2 (the released run file's)", {"optimizer": "adam", "lr": 1e-2}),
)


def ablation_rows(plan) -> tuple:
    """The rows of the ablation of ``plan`` (a :class:`~.scaling.ScalingPlan`):
    :data:`RELEASED_ABLATION` when it holds the released code's ReLU settings (its sizes,
    ``samples`` and ``max_epochs``, aside), else :data:`PER_LAYER_ABLATION` with one ``delta_k``
    per layer, else :data:`ABLATION`."""
    from .study import plan_scaling

    if plan.delta == "shared":
        return ABLATION
    base = {k: v for k, v in plan.to_dict().items() if k != "study"}
    settings = {k: v for k, v in RELEASED_RELU.items() if k not in ("samples", "max_epochs")}
    return RELEASED_ABLATION if plan_scaling(**{**base, **settings}) == plan else PER_LAYER_ABLATION


def ablation_plans(**base) -> list[tuple[str, str, str, object]]:
    """``(slug, knob, variant, plan)`` for every row of :func:`ablation_rows` that trains (the
    estimator row reads the protocol's run): ``base`` the options every variant shares (the
    depths, the activation, ...), each variant's own on top (validated by ``plan_scaling``)."""
    from .study import plan_scaling

    out = []
    for i, (knob, variant, change) in enumerate(ablation_rows(plan_scaling(**base))):
        if change is None:
            continue
        slug = f"{i:02d}-" + knob.replace(" ", "-")
        out.append((slug, knob, variant, plan_scaling(**{**base, **change})))
    return out


def ablation_row(knob: str, variant: str, result, estimator: str = "beta") -> dict:
    """One row: alpha, beta (``estimator``: ``'beta'``, the cumulative sum, or ``'beta_max'``, the
    max norm), alpha + beta (with one ``delta_k`` per layer read from ``|delta_k| W_k``, Remark
    2.2: its cumulative-sum norm, or its max norm), the verdict, and the epochs and networks
    that reached the threshold; with one ``delta_k`` per layer also the released code's
    statistics, ``alpha+beta_max`` and ``released_increments`` (the slope of its increments
    times ``L^0.5``)."""
    e = result.exponents
    value = lambda key: e.get(key, {}).get("value", math.nan)  # noqa: E731
    alpha, beta = value("alpha"), value(estimator)
    if result.delta_mode == "per-layer":
        both = value("alpha+beta" if estimator == "beta" else "alpha+beta_max")
    else:
        both = alpha + beta
    epochs = [r["epochs"] for r in result.records]
    row = {"knob": knob, "variant": variant, "alpha": alpha, "beta": beta, "alpha+beta": both,
           "verdict": result.hypothesis if estimator == "beta" else "(not weighed)",
           "epochs": [min(epochs), max(epochs)] if epochs else [],
           "reached": f"{sum(bool(r['reached']) for r in result.records)}/{len(result.records)}"}
    if result.delta_mode == "per-layer":  # the released code's statistics beside the paper's
        row["alpha+beta_max"], row["released_increments"] = value("alpha+beta_max"), value("released_increments")
    return row


def ablation_table(rows: list[dict]) -> str:
    """The rows as a markdown table (the one in docs/weights.md); with one ``delta_k`` per layer,
    two more columns: the released code's statistics."""
    code = any("alpha+beta_max" in r for r in rows)  # one delta_k per layer: the released code's statistics
    head = ["knob", "variant", "alpha", "beta", "alpha + beta", "verdict", "epochs", "reached"]
    head += ["alpha + beta (max norm)", "increments x L^f (slope)"] if code else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ep = "-".join(str(x) for x in r["epochs"])
        extra = (f" {r.get('alpha+beta_max', math.nan):.3f} | {r.get('released_increments', math.nan):.3f} |"
                 if code else "")
        lines.append(f"| {r['knob']} | {r['variant']} | {r['alpha']:.3f} | {r['beta']:.3f} | {r['alpha+beta']:.3f} | "
                     f"{r['verdict']} | {ep} | {r['reached']} |" + extra)
    return "\n".join(lines)
