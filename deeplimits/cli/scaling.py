"""``deeplimits scaling``: train the inside model at a family of depths and analyse how its
trained weights scale (docs/weights.md, "The scaling experiment")."""

from __future__ import annotations

import os

from ..studies.presets import SCALING_PRESETS
from . import outputs
from .errors import plan
from .execution import Run, default_out, executor, preset_options, progress

__all__ = ["run_scaling_cmd", "OPTIONS"]

OPTIONS = ("dataset", "activation", "delta", "depths", "width", "seeds", "optimizer", "lr", "batch_size", "stop_loss", "max_epochs",
           "init_scale", "samples", "seed")


def run_scaling_cmd(args) -> int:
    from ..studies import scaling

    executor_kw = executor(args, "scaling")
    kw = preset_options(args, SCALING_PRESETS[args.preset], OPTIONS)
    spec = plan("scaling", OPTIONS + ("dtype", "device"), scaling.plan_scaling, **kw)
    out = default_out(args, "scaling", spec.to_dict())
    outputs.check_outputs(args, "scaling", out)
    with Run(out, spec.to_dict()) as store:
        with progress(args, total=len(spec.depths), unit="depth", desc="scaling", initial=spec.stored_units(store),
                      bar_format="{desc} {bar} {n_fmt}/{total_fmt} depths [{elapsed}<{remaining}]") as bar:
            result = spec.run(bar.update, store=store, **executor_kw)
    report = outputs.report_stream(args.json)
    print(result.report(), file=report)
    os.makedirs(out, exist_ok=True)
    figure = os.path.join(out, "scaling.png")
    from ..plots import plot_scaling

    plot_scaling(result, path=figure)
    written = [figure] + outputs.dump_json(result.to_dict(), out, args.json)
    print(f"run store {store.path}; wrote " + ", ".join(written), file=report)
    return 0
