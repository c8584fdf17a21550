"""``deeplimits scaling``: train the inside model at a family of depths and analyse how its
trained weights scale (docs/weights.md, "The scaling experiment")."""

from __future__ import annotations

import os

from ..studies.presets import SCALING_PRESETS
from . import outputs
from .errors import plan
from .execution import Run, default_out, executor, preset_options, progress

__all__ = ["run_scaling_cmd", "OPTIONS", "estimate_line"]

OPTIONS = ("dataset", "activation", "delta", "depths", "width", "seeds", "optimizer", "lr", "batch_size", "loss",
           "stop_loss", "max_epochs", "init_scale", "delta_init", "samples", "seed")


def run_scaling_cmd(args) -> int:
    from ..studies import scaling

    executor_kw = executor(args, "scaling")
    kw = preset_options(args, SCALING_PRESETS[args.preset], OPTIONS)
    spec = plan("scaling", OPTIONS + ("dtype", "device"), scaling.plan_scaling, **kw)
    if args.ablation:
        return _run_ablation(args, kw, spec, executor_kw)
    out = default_out(args, "scaling", spec.to_dict())
    outputs.check_outputs(args, "scaling", out)
    report = outputs.report_stream(args.json)
    print(estimate_line(spec), file=report, flush=True)
    result, store_path = _run(args, spec, out, executor_kw)
    print(result.report(), file=report)
    os.makedirs(out, exist_ok=True)
    figure = os.path.join(out, "scaling.png")
    result.plot(figure)
    written = [figure] + outputs.dump_json(result.to_dict(), out, args.json)
    print(f"run store {store_path}; wrote " + ", ".join(written), file=report)
    return 0


def _run(args, spec, out, executor_kw, desc="scaling"):
    """The run of ``spec`` in the store under ``out``, with progress: the result and the store's path."""
    with Run(out, spec.to_dict()) as store:
        with progress(args, total=len(spec.depths), unit="depth", desc=desc, initial=spec.stored_units(store),
                      bar_format="{desc} {bar} {n_fmt}/{total_fmt} depths [{elapsed}<{remaining}]") as bar:
            return spec.run(bar.update, store=store, **executor_kw), store.path


def _run_ablation(args, kw, spec, executor_kw) -> int:
    """``--ablation``: the protocol and one knob changed at a time
    (:mod:`deeplimits.studies.scaling_ablation`), each a run of its own under ``OUT/<variant>``
    (resumable), then the table of alpha, beta, alpha + beta and the verdicts."""
    from ..studies.scaling_ablation import ablation_plans, ablation_row, ablation_rows, ablation_table

    base = {k: v for k, v in kw.items() if k in OPTIONS + ("dtype", "device")}
    variants = plan("scaling", OPTIONS + ("dtype", "device"), ablation_plans, **base)
    out = default_out(args, "scaling-ablation", {"ablation": spec.to_dict()})
    outputs.check_outputs(args, "scaling", out)
    report = outputs.report_stream(args.json)
    print(f"ablation: {len(variants)} runs, one knob changed at a time, each like this one:", file=report)
    print(estimate_line(spec), file=report, flush=True)
    rows = []
    for slug, knob, variant, p in variants:
        result, _ = _run(args, p, os.path.join(out, slug), executor_kw, desc=slug)
        new = [ablation_row(knob, variant, result)]
        if not rows:  # the estimator row: the protocol's run read with the max norm (of W, or |delta_k| W_k)
            new.append(ablation_row(*ablation_rows(spec.delta)[1][:2], result, "beta_max"))
        for r in new:
            print(f"{r['knob']}: {r['variant']}: alpha {r['alpha']:.3f}, beta {r['beta']:.3f}, {r['verdict']}",
                  file=report, flush=True)
        rows += new
    print(ablation_table(rows), file=report)
    written = outputs.dump_json({"rows": rows, "protocol": spec.to_dict()}, out, args.json)
    print("wrote " + ", ".join(written), file=report)
    return 0


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def estimate_line(spec) -> str:
    """What the plan will take, printed before it starts: its tasks and memory, and its time in
    one process (:meth:`~deeplimits.studies.ScalingPlan.seconds`)."""
    budget, typical = spec.seconds()
    return (f"plan: {len(spec.depths)} depths x {spec.seeds} seed{'s' * (spec.seeds != 1)}, one task each; "
            f"{spec.estimate()}; time in one process on 2 CPU cores: about {_duration(typical)} if every network "
            f"reaches the threshold within 100 epochs, at most {_duration(budget)} ({spec.max_epochs} epochs each; "
            f"--workers or --scheduler divide it)")
