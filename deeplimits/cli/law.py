"""``deeplimits law``: convergence in law of the res-1 tanh network with i.i.d. weights of a given
law to its Itô limit, the weak error against depth with its fitted expansion, rate and verdict, and
the distances between laws (docs/law.md); ``--fig2``: Marion et al.'s Fig. 2, the quartiles of
``|h_L|/|h_0|`` of the res-3 network against the limit's."""

from __future__ import annotations

import argparse

from .. import _names as N_
from ..studies.law import presets as C_
from .errors import UsageError, plan
from .execution import executor, preset_options, run_study
from .values import DTYPE_HELP, fmt, int_list, integer, real

__all__ = ["add_parser", "run_law_cmd", "OPTIONS", "FIG2_OPTIONS"]

#: flags passed to :func:`deeplimits.studies.law.study.plan_law` when given
OPTIONS = ("law", "depths", "fine", "draws", "width", "chunk", "samples", "arch", "activation", "margin")
#: flags passed to :func:`deeplimits.studies.law.fig2.plan_fig2` when given
FIG2_OPTIONS = ("width", "depths", "draws", "chunk")
#: parameters -> the flags that set them (the others: the usual ``--name``)
_FLAGS = {"method": "--plain or --no-controls", "shift": "--mean or --variance", "variance_decay": "--variance-decay"}


def add_parser(sub, run_flags):
    """The subcommand; ``run_flags`` adds the flags every simulating command shares."""
    d, name, f2 = C_.DEFAULTS, C_.DEFAULT_PRESET, C_.FIG2
    p0 = C_.PRESETS[name]
    c = sub.add_parser(
        "law", help="convergence in law: the weak error of networks with i.i.d. non-Gaussian weights against their "
                    "SDE limit, its rate and a calibrated verdict",
        description="The res-1 network h + L^-1/2 V tanh(h), i.i.d. weights of a law of variance 1/d, against the "
                    "Itô SDE dH = dX tanh(H): E phi(h_L) - E phi(H_1) against L for four test functions, E phi(H_1) "
                    "by Euler-Maruyama on three fine grids with Richardson's extrapolation; the networks and the SDE "
                    "share one Brownian path per draw through quantile transforms, with martingale control variates "
                    "(--plain: independent draws). Reported: the fit a/L + b/L^2, the weak rate with its interval, "
                    "the Richardson errors, the 1-Wasserstein and Kolmogorov distances of |h_L|/|h_0| to the SDE's "
                    "and a verdict, a calibrated test (docs/law.md). --fig2: Marion et al.'s Fig. 2 instead. "
                    f"Default: --preset {name} (depths {fmt(p0['depths'])}, fine {p0['fine']}, draws {p0['draws']}).")
    c.add_argument("--preset", choices=list(C_.PRESETS), default=name,
                   help="; ".join(f"{n}: " + ", ".join(f"{k} {fmt(v)}" for k, v in p.items())
                                  for n, p in C_.PRESETS.items()) + " (default %(default)s)")
    c.add_argument("--law", metavar="NAME", help="; ".join(f"{k}: {v}" for k, v in C_.LAWS.items())
                   + f"; or MODULE:NAME, an i.i.d. law of your own (a Driver subclass with from_normal, e.g. an "
                     f"IIDLaw) (default {d['law']})")
    _own_flags(c, d)
    c.add_argument("--depths", type=int_list, help=f"network depths, powers of two (default: the preset's; "
                                                    f"with --fig2 {fmt(f2['depths'])})")
    c.add_argument("--fine", type=integer, help="the finest Euler-Maruyama grid of the SDE, a power of two at least "
                                                "4 * max depth (default: the preset's)")
    c.add_argument("--draws", type=integer, help=f"independent draws (default: the preset's; with --fig2 "
                                                 f"{f2['draws']} per depth)")
    c.add_argument("--width", type=integer, help=f"width d (default {d['width']}; with --fig2 {f2['width']})")
    c.add_argument("--chunk", type=integer, help=f"draws per task (default {d['chunk']}; with --fig2 {f2['chunk']}; "
                                                 "lowered to fit the memory)")
    c.add_argument("--samples", type=integer, help=f"draws whose |h_L|/|h_0| are kept for the distances between "
                                                   f"laws (default {d['samples']}, or every draw if fewer)")
    _shift_flags(c, d)
    c.add_argument("--plain", action="store_true", help="run plain Monte Carlo: every network draws its own weights, "
                                                        "independent of the SDE's path (what the coupling is measured "
                                                        "against)")
    c.add_argument("--controls", action=argparse.BooleanOptionalAction, default=None,
                   help="use martingale control variates (coupled, non-Gaussian laws; default: "
                        f"{'yes' if d['method'] == 'controls' else 'no'})")
    c.add_argument("--fig2", action="store_true", help="run Marion et al.'s Fig. 2 instead: quartiles of |h_L|/|h_0| "
                                                       "of the res-3 network, uniform weights, against the limit SDE's")
    c.add_argument("--margin", type=real, metavar="DELTA",
                   help=f"an agreement needs the weak rate within DELTA of 1, an equivalence test (default {C_.MARGIN:g})")
    c.add_argument("--seed", type=integer, help=f"base seed (default {d['seed']})")
    c.add_argument("--dtype", choices=N_.DTYPES, help=f"{DTYPE_HELP} (default {d['dtype']})")
    run_flags(c, "law", "chunks of draws")
    c.set_defaults(func=run_law_cmd)
    return c


def _shift_flags(c, d) -> None:
    """The flags of the laws built to say no: a shifted mean or variance, a variance decaying with depth."""
    c.add_argument("--mean", type=real, help="the weights' mean in units of 1/sqrt(d), a law built to say no "
                                             f"(default {fmt(d['mean'])})")
    c.add_argument("--variance", type=real, help="the weights' variance in units of 1/d, a law built to say no "
                                                 f"(default {fmt(d['variance'])})")
    c.add_argument("--variance-decay", metavar="C[,P]",
                   help="the variance at depth L is variance + C L^-P in units of 1/d (P default "
                        f"{fmt(C_.DEFAULTS['decay_power'])}), "
                        "a law whose weak error falls like L^-P, built to say no (without it: one variance at every "
                        "depth)")


def _own_flags(c, d) -> None:
    """The flags of the user's own network and test functions."""
    c.add_argument("--block", metavar="MODULE:NAME", help="a residual block of your own, linear in its weights "
                                                          f"(default {d['arch']}, activation {d['activation']})")
    c.add_argument("--activation", help=f"the block's activation (default {d['activation']} for {d['arch']})")
    c.add_argument("--phi", action="append", metavar="MODULE:FUNCTION",
                   help="a test function of your own, phi(h) of the outputs (draws, d) -> (draws,), its gradient by "
                        "autograd; repeat the flag for several (default: the built-in ones)")


def _spec(args):
    """The plan of the command line (the weak study, or with ``--fig2`` Marion et al.'s Fig. 2)."""
    import torch

    if args.fig2:
        given = [n for n in ("law", "fine", "samples", "mean", "variance", "variance_decay", "controls", "block",
                             "phi")
                 if getattr(args, n, None) is not None]
        given += ["plain"] if args.plain else []
        if given:
            raise UsageError(f"deeplimits law: --{given[0].replace('_', '-')} applies only without --fig2")
        from ..studies.law.fig2 import plan_fig2

        kw = preset_options(args, {}, FIG2_OPTIONS)
        kw.setdefault("dtype", getattr(torch, C_.DEFAULTS["dtype"]))
        return plan("law", FIG2_OPTIONS + ("seed", "dtype", "device"), plan_fig2, **kw)
    if args.plain and args.controls is not None:
        raise UsageError(f"deeplimits law: --plain and --{'no-' * (not args.controls)}controls exclude each other "
                         "(plain Monte Carlo couples nothing, so it has no control variates)")
    from .. import _validate as V_
    from ..studies.law.study import plan_law

    kw = preset_options(args, C_.PRESETS[args.preset], OPTIONS)
    kw.setdefault("dtype", getattr(torch, C_.DEFAULTS["dtype"]))
    kw["method"] = "plain" if args.plain else "coupled" if args.controls is False else C_.DEFAULTS["method"]
    mean = C_.DEFAULTS["mean"] if args.mean is None else plan("law", ("mean",), V_.real, "mean", args.mean, low=-10.0,
                                                                high=10.0)
    variance = C_.DEFAULTS["variance"] if args.variance is None else plan(
        "law", ("variance",), V_.real, "variance", args.variance, low=0.0, high=100.0, low_open=True)
    kw["shift"] = (mean, variance)
    if args.variance_decay is not None:
        kw["variance_decay"] = _decay(args.variance_decay)
    if args.phi:
        kw["phis"] = args.phi
    flags = {**dict.fromkeys(OPTIONS + ("seed", "dtype", "device")), **_FLAGS, "phis": "--phi", "arch": "--block"}
    return plan("law", flags, plan_law, **kw)


def _decay(text: str) -> list:
    """``--variance-decay C[,P]``: ``[C, P]`` (``P`` ``DEFAULTS['decay_power']`` when not
    given); the values are checked by the plan."""
    parts = text.split(",")
    try:
        if len(parts) > 2:
            raise ValueError
        return [float(parts[0]), float(parts[1]) if len(parts) == 2 else C_.DEFAULTS["decay_power"]]
    except ValueError:
        raise UsageError(f"deeplimits law: --variance-decay must be C or C,P (two numbers), got {text!r:.40}") from None


def run_law_cmd(args) -> int:
    executor(args, "law")  # checked before the plan
    spec = _spec(args)
    return run_study(args, "law", spec, unit="draw", total=spec.draws * (len(spec.depths) if args.fig2 else 1),
                     seconds=spec.seconds(), tag="law-fig2" if args.fig2 else "law")
