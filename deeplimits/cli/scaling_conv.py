"""``deeplimits scaling --arch conv``: the convolutional residual networks of Cohen, Cont, Rossier
& Xu (ICML 2021, §3.2) trained at a family of depths, alpha and beta of their kernels' spectral
norms and the verdict (:mod:`deeplimits.studies.scaling_conv`; docs/weights.md, "Convolutional
networks"). Presets :data:`~deeplimits.studies.scaling_conv.presets.CONV_SCALING_PRESETS`."""

from __future__ import annotations

from ..studies.scaling_conv.presets import CONV_SCALING_PRESETS
from .errors import plan, usage
from .execution import executor, preset_options
from .values import integer

__all__ = ["conv_flags", "run_conv_scaling", "conv_estimate_line", "CONV_OPTIONS"]

#: the flags passed to :func:`~deeplimits.studies.scaling_conv.study.plan_conv_scaling` when given
CONV_OPTIONS = ("dataset", "depths", "width", "seeds", "lr", "epochs", "batch_size", "seed", "root", "augment")
#: the flags of the inside model that --arch conv does not take
_DENSE_ONLY = ("activation", "delta", "optimizer", "loss", "stop_loss", "max_epochs", "init_scale", "bias_init", "inputs",
               "angle_start", "batches", "stop_rule", "samples")


def conv_flags(c) -> None:
    """The flags of ``--arch conv`` (the others are shared with the inside model)."""
    c.add_argument("--arch", choices=["inside", "conv"],
                   help="the inside model (without the flag) or conv: convolutional residual networks h + delta_k * "
                        "ReLU(A_k * h) (Cohen et al., ICML 2021, §3.2) trained with SGD (momentum 0.9, weight decay "
                        "5e-4, cosine schedule) and random crops and flips; alpha from max_k ||delta_k||, beta from "
                        "max_k ||A_k|| (spectral norms; the cumulative-sum beta beside it), and the verdict (smooth, "
                        "rough, sparse, neither, or insufficient evidence); "
                        "presets " + "; ".join(f"{n}: {p['dataset']}, width {p['width']}, {p['stages']} stage(s), "
                                               f"depths {p['depths'][0]} to {p['depths'][-1]}, lr {p['lr']:g}, "
                                               f"{p['epochs']} epochs, "
                                               + ("crops and flips" if p.get("augment", True) else "no crops or flips")
                                               for n, p in CONV_SCALING_PRESETS.items()))
    c.add_argument("--root", metavar="DIR", help="--arch conv: the directory of the cifar10 files (nothing is "
                                                 "downloaded)")
    c.add_argument("--epochs", type=integer, help="--arch conv: epochs of training (default: the preset's)")


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def conv_estimate_line(spec) -> str:
    """What the plan will take, printed before it starts: tasks, memory, operations and time."""
    return (f"plan: {len(spec.depths)} depths x {spec.seeds} seed{'s' * (spec.seeds != 1)}, one task each; "
            f"{spec.estimate()}; {spec.flops():.3g} floating-point operations: about {_duration(spec.seconds())} in "
            f"one process on 2 CPU cores (--workers, --scheduler or --device cuda divide it)")


def run_conv_scaling(args, run_and_report) -> int:
    """The command with ``--arch conv``; ``run_and_report(args, spec, estimate, executor_kw)``: the
    store's run, its report and its files (:func:`deeplimits.cli.scaling.run_and_report`)."""
    from ..studies.scaling_conv.study import plan_conv_scaling

    executor_kw = executor(args, "scaling")
    if args.preset not in CONV_SCALING_PRESETS:
        raise usage("scaling", ValueError(f"--preset {args.preset} has no --arch conv variant (choose "
                                          f"{', '.join(CONV_SCALING_PRESETS)})"))
    given = [n for n in _DENSE_ONLY if getattr(args, n, None) is not None] + (["ablation"] if args.ablation else [])
    if given:
        raise usage("scaling", ValueError(f"--{given[0].replace('_', '-')} applies only to --arch inside"))
    kw = preset_options(args, CONV_SCALING_PRESETS[args.preset], CONV_OPTIONS)
    if isinstance(kw.get("lr"), list):
        if len(kw["lr"]) != 1:
            raise usage("scaling", ValueError(f"--lr takes one rate with --arch conv, got {kw['lr']}"))
        kw["lr"] = kw["lr"][0]
    spec = plan("scaling", CONV_OPTIONS + ("dtype", "device"), plan_conv_scaling, **kw)
    return run_and_report(args, spec, conv_estimate_line(spec), executor_kw)
