"""The ablation of the scaling experiment (docs/weights.md, "What moves alpha and beta"): the
published protocol (the defaults of :func:`~deeplimits.studies.scaling.plan_scaling`), then one
knob changed at a time, each variant a labelled run of its own, and one row per variant: alpha,
beta (from the cumulative-sum norm, Cohen et al.'s step 2), alpha + beta and the verdict.

The estimator row needs no training: it is the protocol's run read with the earlier estimator
(beta as minus the slope of the max norm of ``W``).
"""

from __future__ import annotations

import math

__all__ = ["ABLATION", "ablation_plans", "ablation_row", "ablation_table"]

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
)


def ablation_plans(**base) -> list[tuple[str, str, str, object]]:
    """``(slug, knob, variant, plan)`` for every row of :data:`ABLATION` that trains (the
    estimator row reads the protocol's run): ``base`` the options every variant shares (the
    depths, the activation, ...), each variant's own on top (validated by ``plan_scaling``)."""
    from .scaling import plan_scaling

    out = []
    for i, (knob, variant, change) in enumerate(ABLATION):
        if change is None:
            continue
        slug = f"{i:02d}-" + knob.replace(" ", "-")
        out.append((slug, knob, variant, plan_scaling(**{**base, **change})))
    return out


def ablation_row(knob: str, variant: str, result, estimator: str = "beta") -> dict:
    """One row: alpha, beta (``estimator``: ``'beta'``, the cumulative sum, or ``'beta_max'``),
    alpha + beta, the verdict, and the epochs and networks that reached the threshold."""
    e = result.exponents
    alpha = e.get("alpha", {}).get("value", math.nan)
    beta = e.get(estimator, {}).get("value", math.nan)
    epochs = [r["epochs"] for r in result.records]
    return {"knob": knob, "variant": variant, "alpha": alpha, "beta": beta, "alpha+beta": alpha + beta,
            "verdict": result.hypothesis if estimator == "beta" else "(not weighed)",
            "epochs": [min(epochs), max(epochs)] if epochs else [],
            "reached": f"{sum(bool(r['reached']) for r in result.records)}/{len(result.records)}"}


def ablation_table(rows: list[dict]) -> str:
    """The rows as a markdown table (the one in docs/weights.md)."""
    lines = ["| knob | variant | alpha | beta | alpha + beta | verdict | epochs | reached |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ep = "-".join(str(x) for x in r["epochs"])
        lines.append(f"| {r['knob']} | {r['variant']} | {r['alpha']:.3f} | {r['beta']:.3f} | {r['alpha+beta']:.3f} | "
                     f"{r['verdict']} | {ep} | {r['reached']} |")
    return "\n".join(lines)
