"""``deeplimits transfer``: which residual scaling lets a learning rate transfer across depth
(docs/transfer.md): the optimal base rate per depth, its exponent, the verdicts and the
coordinate check."""

from __future__ import annotations

from .. import _names as N_
from ..studies.transfer import presets as C_
from .errors import plan, usage
from .execution import run_study, study_options
from .user import typed_flags
from .values import DTYPE_HELP, fmt, int_list, integer, parse_list

__all__ = ["add_parser", "run_transfer_cmd", "OPTIONS"]

#: flags passed to :func:`deeplimits.studies.transfer.study.plan_transfer` when given
OPTIONS = ("depths", "betas", "optimizers", "lrs", "seeds", "width", "epochs", "batch_size", "samples", "seed",
           "limit", "arch", "model", "data")
#: the flags of the MLP presets only: the convolutional ones train Cohen et al.'s block on their own data
MLP_ONLY = ("limit", "arch", "model", "data")
#: the flags of the convolutional presets (:func:`deeplimits.studies.transfer.conv.plan_conv_transfer`):
#: those of the MLPs but :data:`MLP_ONLY`, and ``--root``, ``--chunk``
CONV_OPTIONS = tuple(o for o in OPTIONS if o not in MLP_ONLY) + ("root", "chunk")


def _preset_help() -> str:
    presets = {**C_.PRESETS, **C_.CONV_PRESETS}
    return "; ".join(f"{n}: " + ", ".join(f"{k} {fmt(v)}" for k, v in p.items() if v is not None)
                     for n, p in presets.items())


def add_parser(sub, run_flags):
    """The subcommand; ``run_flags`` adds the flags every simulating command shares."""
    d, name = C_.DEFAULTS, C_.DEFAULT_PRESET
    c = sub.add_parser(
        "transfer", help="which residual scaling L^-beta lets a learning rate transfer across depth (SGD, Adam)",
        description="res-1 tanh residual MLPs on digits at several depths, each trained over a grid of base learning "
                    "rates (powers of 2) and seeds in one batched network; the residual blocks train at base x L^p, "
                    "p the predicted exponent (SGD 2 beta - 1, Adam beta - 1) or 0 (not rescaled). Reported per "
                    "(beta, optimizer): the optimal base rate per depth (a parabola in log2 rate, bootstrap over "
                    "seeds), its exponent against L with an interval, the loss at the transferred rate, a verdict "
                    "(transfers, does not transfer, insufficient evidence; docs/transfer.md) and the coordinate "
                    f"check (how much a few steps move the hidden state, against L). Presets conv-quick, conv and "
                    "published train convolutional ResNets instead (Cohen et al.'s block with the branch multiplied "
                    "by L^-beta; digits as 8 x 8 images, or CIFAR-10 from --root: Bordelon et al.'s Fig. 1 setting, "
                    f"its time estimate printed first). Default: --preset {name}.")
    c.add_argument("--preset", choices=[*C_.PRESETS, *C_.CONV_PRESETS], default=name,
                   help=_preset_help() + " (default %(default)s)")
    c.add_argument("--betas", type=parse_list, help=f"branch scalings L^-beta, each in [0, 2] (default "
                                                    f"{fmt(d['betas'])})")
    c.add_argument("--optimizer", choices=list(C_.OPTIMIZERS),
                   help=f"train with this optimizer only (default: {fmt(d['optimizers'])})")
    c.add_argument("--seed", type=integer, help=f"base seed (default {d['seed']})")
    c.add_argument("--dtype", choices=N_.DTYPES, help=f"{DTYPE_HELP} (default {d['dtype']})")
    c.add_argument("--depths", type=int_list, help="at least three depths; the conv presets: residual blocks, "
                                                   "multiples of the stages (default: the preset's)")
    c.add_argument("--lrs", type=int_list, metavar="LOW,HIGH", help="the base rates 2^LOW, ..., 2^HIGH (default: the "
                                                                    "preset's)")
    c.add_argument("--seeds", type=integer, help="initialisations per depth, at least 2 (default: the preset's)")
    c.add_argument("--width", type=integer, help="width d of the residual stream; the conv presets: the first stage's "
                                                  "channels (default: the preset's)")
    c.add_argument("--block", metavar="MODULE:NAME", help=f"the MLPs' residual block: one of your own (default "
                                                          f"{d['arch']} {d['activation']})")
    _own_flags(c)
    c.add_argument("--epochs", type=integer, help="passes over the training samples (default: the preset's)")
    c.add_argument("--samples", type=integer, help="training samples, at most the data set's (digits: 1437; "
                                                   "published: all of them; default: the preset's)")
    c.add_argument("--root", metavar="DIR", help="the convolutional presets on cifar10: the directory of the CIFAR-10 "
                                                 "files (nothing is downloaded)")
    c.add_argument("--chunk", type=integer, help="the convolutional presets: seeds trained in one task, from 1 to "
                                                 "--seeds; without a preset's, as many as fit in memory (default: the preset's)")
    c.add_argument("--batch-size", type=integer, help=f"mini-batch size (default {d['batch_size']})")
    c.add_argument("--limit", type=integer, metavar="REFERENCE",
                   help="after the grid, train the depth family of each rescaled beta = 1/2 and 1 setting at its "
                        "transferred rate from weights read off one path (smooth at beta = 1, Brownian at 1/2) and "
                        "measure its distances to this reference depth, a multiple of every depth (a power of two "
                        "with beta = 1/2): the trained-limit verdict beside the transfer (run only when given)")
    run_flags(c, "transfer", "(beta, optimizer, depth) grids")
    c.set_defaults(func=run_transfer_cmd)
    return c


def _own_flags(c) -> None:
    """``--model`` and ``--data``: a network and a data set of one's own (:mod:`.user`)."""
    c.add_argument("--model", metavar="MODULE:MAKE",
                   help="a network of your own in place of the MLPs: MAKE(depth, beta), a factory in MODULE of a "
                        "torch module whose residual branches are multiplied by depth^-beta, its blocks' parameters "
                        "named blocks..., mapping inputs (n, d_in) to class scores (MLP presets)")
    c.add_argument("--data", metavar="MODULE:DATA",
                   help="a classification data set of your own in place of digits: DATA in MODULE, tensors (x, y) "
                        "or (x_train, y_train, x_test, y_test), a Dataset of (x, y) pairs, or a function returning "
                        "one (MLP presets)")


def run_transfer_cmd(args) -> int:
    from ..studies.timing import duration
    from ..studies.transfer.limit import limit_settings
    from ..studies.transfer.study import plan_transfer

    if args.preset in C_.CONV_PRESETS:
        return _run_conv(args)
    given = [n for n in ("root", "chunk") if getattr(args, n, None) is not None]
    if given:
        raise usage("transfer", ValueError(f"--{given[0]} applies only to the convolutional presets "
                                           f"({', '.join(C_.CONV_PRESETS)})"))
    kw = study_options(args, "transfer", C_.PRESETS[args.preset], C_.DEFAULTS["dtype"], OPTIONS)
    if args.optimizer is not None:
        kw["optimizers"] = [args.optimizer]
    spec = plan("transfer", typed_flags(args, OPTIONS + ("dtype", "device")), plan_transfer, **kw)
    estimate = f"plan: {spec.estimate()}; about {duration(spec.seconds())} in one process on 2 CPU cores"
    total = len(spec.tasks()) + len(limit_settings(spec))  # the limit tasks follow the grids
    return run_study(args, "transfer", spec, unit="grid", total=total, estimate=estimate)


def conv_estimate(spec) -> str:
    """The estimate of a convolutional plan, printed before any work: tasks, memory, operations
    and the time on 2 CPU cores and on one GPU (at an assumed rate)."""
    from ..studies.timing import duration
    from ..studies.transfer.conv import GPU_FLOPS_PER_SECOND

    return (f"plan: {spec.estimate()}; {spec.flops():.3g} floating-point operations: about "
            f"{duration(spec.seconds())} in one process on 2 CPU cores, about "
            f"{duration(spec.flops() / GPU_FLOPS_PER_SECOND)} on one GPU at an assumed "
            f"{GPU_FLOPS_PER_SECOND:.0e} operations/s (--device cuda; --workers or --scheduler divide it)")


def _run_conv(args) -> int:
    from ..studies.transfer.conv import plan_conv_transfer

    for name in MLP_ONLY:
        if getattr(args, name, None) is not None:
            flag = "--block" if name == "arch" else f"--{name}"
            raise usage("transfer", ValueError(f"{flag} applies only to the MLP presets ({', '.join(C_.PRESETS)})"))
    kw = study_options(args, "transfer", C_.CONV_PRESETS[args.preset], C_.DEFAULTS["dtype"], CONV_OPTIONS)
    if args.optimizer is not None:
        kw["optimizers"] = [args.optimizer]
    spec = plan("transfer", CONV_OPTIONS + ("dtype", "device"), plan_conv_transfer, **kw)
    estimate = conv_estimate(spec)
    if args.dry_run and args.json != "-":  # the estimate first (a JSON answer stays JSON)
        print(estimate, flush=True)
    return run_study(args, "transfer", spec, unit="grid", total=len(spec.tasks()), estimate=estimate,
                     seconds=spec.seconds(), tag="transfer-conv")
