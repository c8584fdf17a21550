"""``deeplimits train``: residual networks initialised from a driver, trained on a data set.

Without ``--preset``: one configuration (or the grid the flags give) with the defaults of
:data:`deeplimits.studies.presets.DEFAULTS`; a preset (:data:`~deeplimits.studies.presets.TRAIN_PRESETS`)
gives a heat-map grid, and the flags given override it."""

from __future__ import annotations

from ..studies.presets import DEFAULTS, TRAIN_PRESETS
from . import outputs
from .errors import plan
from .execution import Run, default_out, executor, preset_options, progress

__all__ = ["run_train_cmd", "OPTIONS"]

#: flags passed to :func:`deeplimits.studies.training.plan_training` when given
OPTIONS = ("dataset", "driver", "hursts", "betas", "lrs", "seeds", "arch", "activation", "bias", "depth", "width",
           "epochs", "batch_size", "optimizer", "lr_decay_halfway", "stop_loss", "length_scale", "seed", "chunk",
           "save_weights", "root", "device")


def run_train_cmd(args) -> int:
    from ..studies import training

    executor_kw = executor(args, "train")
    kw = preset_options(args, TRAIN_PRESETS[args.preset] if args.preset else {}, OPTIONS)
    if args.hursts is None and kw.get("driver", DEFAULTS["train"]["driver"]) != "fractional":
        kw.pop("hursts", None)  # a preset's H axis means nothing for another --driver
    spec = plan("train", OPTIONS + ("dtype",), training.plan_training, **kw)
    out = default_out(args, "train", spec.to_dict())
    outputs.check_outputs(args, "train", out)
    total = spec.n_configs * spec.epochs
    with Run(out, spec.to_dict()) as store:
        with progress(args, total=total, unit="epoch", desc="train", initial=spec.stored_units(store),
                      bar_format="{desc} {bar} {n_fmt}/{total_fmt} configuration-epochs "
                                 "[{elapsed}<{remaining}]") as bar:
            result = spec.run(bar.update, store=store, **executor_kw)
    report = outputs.report_stream(args.json)
    print(result.report(), file=report)
    written = outputs.write_training(result, spec, out, args.json)
    print(f"run store {store.path}; wrote " + ", ".join(written), file=report)
    return 0
