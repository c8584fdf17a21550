"""``deeplimits shapes``: residual networks of every shape ``(L, M, D)`` trained as Chaintron, Chizat &
Maass (2026) train them, their hidden-state and output errors against the exact limit of the training
dynamics (linear activation) or the largest network (tanh), the fitted law ``sqrt(a D/(M L) + b/D +
c/L^2)`` and the verdicts on its two structural claims (docs/shapes.md)."""

from __future__ import annotations

from .. import _names as N_
from ..studies.shapes import presets as C_
from .errors import plan
from .execution import run_study, study_options
from .values import DTYPE_HELP, fmt, int_list, integer, real

__all__ = ["add_parser", "run_shapes_cmd", "OPTIONS", "estimate_line"]

#: flags passed to :func:`deeplimits.studies.shapes.study.plan_shapes` when given
OPTIONS = ("case", "depths", "widths", "dims", "seeds", "chunk", "steps", "lr", "step", "fit_min")


def _preset_help() -> str:
    def value(v):
        return fmt(v) if not isinstance(v, list) or len(v) <= 6 else f"{v[0]},...,{v[-1]} ({len(v)})"

    return "; ".join(f"{n}: " + ", ".join(f"{k} {value(v)}" for k, v in p.items()) for n, p in C_.PRESETS.items())


def add_parser(sub, run_flags):
    """The subcommand; ``run_flags`` adds the flags every simulating command shares."""
    d, name, pub = C_.DEFAULTS, C_.DEFAULT_PRESET, C_.PUBLISHED
    c = sub.add_parser(
        "shapes", help="train residual networks of every depth L, width M and embedding size D against their "
                       "common limit: the law sqrt(a D/(M L) + b/D + c/L^2) and its verdicts",
        description="h + alpha/(L M) V sigma(U^T h / D) with frozen embeddings coupled across D (the first D rows of "
                    "one draw per run), U and V trained by full-batch gradient descent on one sample (Chaintron, "
                    "Chizat & Maass 2026: 15 recorded steps at rate 0.1 with multipliers D). Reported per cell "
                    "(L, M, D): the hidden-state error max_l mean_d |h - H| and the output error against the exact "
                    "limit of the training dynamics (linear activation) or the largest network of the same runs "
                    "(tanh), the law fitted with intervals (their fit: a = "
                    f"{pub['a']}, b = {pub['b']}), and two calibrated verdicts: swapping L and M leaves the error "
                    "unchanged; at fixed M L the error in D is U-shaped with its minimum near sqrt(b/a) sqrt(M L) "
                    f"(docs/shapes.md). Default: --preset {name}.")
    c.add_argument("--preset", choices=list(C_.PRESETS), default=name, help=_preset_help() + " (default %(default)s)")
    c.add_argument("--case", choices=list(C_.CASES), help="; ".join(f"{n}: {v['label']}" for n, v in C_.CASES.items())
                   + f" (default {d['case']})")
    c.add_argument("--depths", type=int_list, help="the depths L (default: the preset's)")
    c.add_argument("--widths", type=int_list, help="the hidden widths M (default: the preset's)")
    c.add_argument("--dims", type=int_list, help="the embedding sizes D (default: the preset's)")
    c.add_argument("--seeds", type=integer, help="runs per cell, each its own embeddings (default: the preset's)")
    c.add_argument("--chunk", type=integer, help=f"runs per task, from 1 to --seeds (default: up to {d['chunk']}, "
                                                 "bounded by memory)")
    c.add_argument("--steps", type=integer, help=f"recorded gradient steps K (default {d['steps']})")
    c.add_argument("--lr", type=real, help=f"the base rate eta_0 (default {fmt(d['lr'])})")
    c.add_argument("--step", type=integer, help=f"the step the law is fitted and the verdicts read at (default "
                                                f"{d['step']})")
    c.add_argument("--fit-min", type=int_list, metavar="L,M,D", help="fit the law, and read the verdicts, on the "
                                                                      "cells above these sizes (default: the preset's)")
    c.add_argument("--seed", type=integer, help=f"base seed (default {d['seed']})")
    c.add_argument("--dtype", choices=N_.DTYPES, help=f"{DTYPE_HELP} (default {d['dtype']})")
    run_flags(c, "shapes", "(depth, chunk of runs) tasks")
    c.set_defaults(func=run_shapes_cmd)
    return c


def estimate_line(spec) -> str:
    """The plan's cost, printed before any work: tasks, memory, networks, and the time on 2 CPU cores
    and on one GPU (estimated)."""
    from ..studies.shapes.memory import GPU_BYTES_PER_SECOND
    from ..studies.timing import duration

    return (f"plan: {spec.estimate()}; about {duration(spec.seconds())} of CPU on one core (--workers 2: half on 2 "
            f"cores), about {duration(spec.gpu_seconds())} on one GPU at an assumed {GPU_BYTES_PER_SECOND:.1e} bytes/s "
            "(--device cuda)")


def run_shapes_cmd(args) -> int:
    from ..studies.shapes.study import plan_shapes

    kw = study_options(args, "shapes", C_.PRESETS[args.preset], C_.DEFAULTS["dtype"], OPTIONS)
    spec = plan("shapes", OPTIONS + ("seed", "dtype", "device"), plan_shapes, **kw)
    estimate = estimate_line(spec)
    if args.dry_run and args.json != "-":  # the estimate first (a JSON answer stays JSON)
        print(estimate, flush=True)
    return run_study(args, "shapes", spec, unit="run", total=spec.seeds * len(spec.depths) * len(spec.widths)
                     * len(spec.dims), estimate=estimate, seconds=spec.seconds())
