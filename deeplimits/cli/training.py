"""``deeplimits train``: residual networks initialised from a driver, trained on a data set.

Without ``--preset``: one configuration (or the grid the flags give) with the defaults of
:data:`deeplimits.studies.training.presets.DEFAULTS`; a preset (:data:`~deeplimits.studies.training.presets.TRAIN_PRESETS`)
gives a heat-map grid, and the flags given override it. ``--arch conv``: the convolutional
networks of :mod:`deeplimits.studies.training.conv` (their defaults ``CONV_DEFAULTS``)."""

from __future__ import annotations

from ..studies.training.presets import TRAIN_PRESETS
from . import dry_run, outputs
from .errors import plan, usage
from .execution import Run, default_out, executor, preset_options, progress
from .user import typed_flags

__all__ = ["run_train_cmd", "OPTIONS", "CONV_OPTIONS"]

#: flags passed to :func:`deeplimits.studies.training.study.plan_training` when given
OPTIONS = ("dataset", "driver", "hursts", "betas", "lrs", "seeds", "arch", "activation", "bias", "depth", "width",
           "epochs", "batch_size", "optimizer", "lr_decay_halfway", "stop_loss", "length_scale", "seed", "chunk",
           "save_weights", "root", "device")
#: the flags of :func:`deeplimits.studies.training.conv.plan_conv_training` (``--arch conv``)
CONV_OPTIONS = ("dataset", "driver", "hursts", "betas", "lrs", "seeds", "depth", "width", "epochs", "batch_size",
                "length_scale", "seed", "chunk", "save_weights", "root", "device")


def _plan(args):
    """The plan of the flags given: a dense grid, or with ``--arch conv`` a convolutional one
    (whose protocol fixes the activation, the bias, the optimiser and the schedule)."""
    from ..studies.training import study as training

    preset = TRAIN_PRESETS[args.preset] if args.preset else {}
    kw = preset_options(args, preset, OPTIONS)
    if args.hursts is None and args.driver not in (None, preset.get("driver")):
        kw.pop("hursts", None)  # a preset's H axis belongs to its own driver, not to another --driver
    if kw.get("arch") != "conv":
        return plan("train", typed_flags(args, OPTIONS + ("dtype",)), training.plan_training, **kw)
    from ..studies.training.conv import plan_conv_training

    fixed = [n for n in ("preset", "activation", "bias", "optimizer", "lr_decay_halfway", "stop_loss")
             if getattr(args, n, None) is not None]
    if fixed:
        flag = "--" + fixed[0].replace("_", "-")
        raise usage("train", ValueError(f"{flag} does not apply to --arch conv (the published protocol: ReLU blocks "
                                        "without bias, SGD with momentum 0.9 and weight decay 5e-4, a cosine "
                                        "schedule)"), ())
    return plan("train", CONV_OPTIONS + ("dtype",), plan_conv_training,
                **{k: v for k, v in kw.items() if k in CONV_OPTIONS + ("dtype",)})


def run_train_cmd(args) -> int:
    from .user import run_key

    executor_kw = executor(args, "train")
    spec = _plan(args)
    stored = spec.to_dict()
    out = default_out(args, "train", run_key(args, stored))
    outputs.check_outputs(args, "train", out)
    if args.dry_run:
        return dry_run.show(args, "train", [spec], out)
    total = spec.n_configs * spec.epochs
    with Run(out, stored, "train") as store:
        with progress(args, total=total, unit="epoch", desc="train", initial=spec.stored_units(store),
                      bar_format="{desc} {bar} {n_fmt}/{total_fmt} configuration-epochs "
                                 "[{elapsed}<{remaining}]") as bar:
            result = spec.run(bar.update, store=store, **executor_kw)
    report = outputs.report_stream(args.json)
    print(result.report(), file=report)
    written = outputs.write_training(result, spec, out, args.json, figures=outputs.figure_mode(args))
    print(f"run store {store.path}; wrote " + ", ".join(written), file=report)
    return 0
