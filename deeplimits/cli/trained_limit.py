"""``deeplimits trained-limit``: a family of depths trained from one driver sample against a
reference depth, its weight and hidden-state distances and their rates (docs/trained-limit.md)."""

from __future__ import annotations


from .. import _names as N_
from ..studies.trained_limit import presets as C_
from .errors import plan
from .execution import run_study, study_options
from .values import DTYPE_HELP, fmt, int_list, integer, real

__all__ = ["add_parser", "run_trained_limit_cmd", "OPTIONS"]

#: flags passed to :func:`deeplimits.studies.trained_limit.study.plan_trained_limit` when given
OPTIONS = ("cases", "depths", "reference", "width", "samples", "seeds", "chunk", "epochs", "lr", "optimizer",
           "batch_size", "checkpoints", "length_scale", "seed")


def _cases(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def add_parser(sub, run_flags):
    """The subcommand; ``run_flags`` adds the flags every simulating command shares."""
    d, name = C_.DEFAULTS, C_.DEFAULT_PRESET
    p0 = C_.PRESETS[name]
    c = sub.add_parser(
        "trained-limit", help="train a family of depths from one driver sample and measure its distance to a "
                              "reference depth (does the trained family have a common limit?)",
        description="Every depth and the reference read their residual weights off one driver sample, start from "
                    "h_0 = x, output h_L, and are trained on the same synthetic regression data for the same number "
                    "of steps (full-batch gradient descent, lr scaled as lr L^(2 beta - 1): the same training time). "
                    "Reported: max_k |A^(L)_k - A^(ref)(k/L)| and sup_k |h^(L)_k - h^(ref)_(k/L)| before, along "
                    "and after training, their rates with intervals over seeds, and a verdict, a calibrated test "
                    "(docs/trained-limit.md), that can say 'no common limit' and, with too few depths, seeds or too "
                    f"wide intervals, 'insufficient evidence'. Default: --preset {name} (cases {fmt(p0['cases'])}, depths "
                    f"{fmt(p0['depths'])}, reference {p0['reference']}).")
    c.add_argument("--preset", choices=list(C_.PRESETS), default=name,
                   help="; ".join(f"{n}: " + ", ".join(f"{k} {fmt(v)}" for k, v in p.items())
                                  for n, p in C_.PRESETS.items()) + " (default %(default)s)")
    c.add_argument("--cases", type=_cases, help="comma-separated cases: " + "; ".join(
        f"{n}: {v['label']}" for n, v in C_.CASES.items()) + " (default: the preset's)")
    c.add_argument("--case", action="append", metavar="MODULE:FAMILY",
                   help="a case of your own (repeat the flag): FAMILY in MODULE, a mapping with a name and arch, "
                        "activation, driver (a registered name, or a Block / Driver subclass of your own), beta, "
                        "coupled, and theory, label when given; run alone, or beside the cases of --cases when given")
    c.add_argument("--depths", type=int_list, help="the family of depths, each dividing --reference (default: the "
                                                    "preset's)")
    c.add_argument("--reference", type=integer, help="the reference depth (default: the preset's)")
    c.add_argument("--width", type=integer, help=f"width d of the networks and the data (default {d['width']})")
    c.add_argument("--samples", type=integer, help=f"samples of the synthetic task, 80%% for training "
                                                   f"(default {d['samples']})")
    c.add_argument("--seeds", type=integer, help=f"driver samples (default {d['seeds']})")
    c.add_argument("--chunk", type=integer, help="seeds per task (default: all in one task per case)")
    c.add_argument("--epochs", type=integer, help=f"training epochs (default {d['epochs']})")
    c.add_argument("--lr", type=real, help=f"learning rate before the depth scaling (default {fmt(d['lr'])})")
    c.add_argument("--optimizer", choices=["sgd", "adam"], help=f"sgd: gradient descent; adam: a labelled variant "
                                                                f"(default {d['optimizer']})")
    c.add_argument("--batch-size", type=integer, help="mini-batch SGD, a labelled variant (default: the full batch)")
    c.add_argument("--checkpoints", type=integer, help=f"measurements along training besides epoch 0 "
                                                       f"(default {d['checkpoints']})")
    c.add_argument("--length-scale", type=real, help="RBF length scale of the smooth driver (default: the driver's)")
    c.add_argument("--seed", type=integer, help=f"base seed (default {d['seed']})")
    c.add_argument("--dtype", choices=N_.DTYPES, help=f"{DTYPE_HELP} (default {d['dtype']})")
    run_flags(c, "trained-limit", "cases x seed chunks")
    c.set_defaults(func=run_trained_limit_cmd)
    return c


def run_trained_limit_cmd(args) -> int:
    from ..studies.trained_limit.study import plan_trained_limit

    kw = study_options(args, "trained-limit", C_.PRESETS[args.preset], C_.DEFAULTS["dtype"], OPTIONS)
    if getattr(args, "case", None):  # families of one's own (cli.user): alone, or beside --cases
        kw["cases"] = [*(args.cases or ()), *args.case]
    params = {**{n: None for n in OPTIONS + ("dtype", "device")}, "case": "--case"}
    spec = plan("trained-limit", params, plan_trained_limit, **kw)
    return run_study(args, "trained-limit", spec, unit="seed", total=spec.seeds * len(spec.cases))
