"""The command line's grammar: commands, flags, choices and the defaults shown in ``--help``.

Choices and defaults are read from the library (the regime registry and the option declarations,
:mod:`deeplimits.options`, :mod:`deeplimits._names`, the studies' ``presets`` modules), never
copied here (tests/test_layout.py checks every default ``--help`` prints); nothing in this module
imports torch.
"""

from __future__ import annotations

import argparse

from .. import _names as N_
from .. import options as O_
from .._version import __version__
from ..regimes import REGISTRY, regime_names
from ..studies.convergence import presets as CP_
from ..studies.convergence.presets import DEFAULT_STUDY
from ..studies.propagation import presets as PP_
from ..studies.propagation.presets import PHASE_PRESETS, STABILITY_PRESETS
from ..studies.training import presets as TP_
from ..studies.training.presets import TRAIN_PRESETS
from . import convergence, dry_run, law, order, propagation, runs, scaling, shapes, trained_limit, training, transfer, \
    weights
from . import execution as E_
from . import outputs
from .errors import UsageError
from .values import (DTYPE_HELP, NEGATIVE, by_regime, device, fmt, int_list, integer, parse_list, preset_default,
                     real, with_hint, yes_no)

__all__ = ["build_parser"]


class _Parser(argparse.ArgumentParser):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._negative_number_matcher = NEGATIVE  # --lrs -6,4 as --lrs=-6,4

    def error(self, message):  # one line, exit status 2, no usage dump
        raise UsageError(f"{self.prog}: {with_hint(message)}")

    def parse_args(self, args=None, namespace=None):
        """argparse's, but arguments no command takes are said under the command they follow
        (``deeplimits convergence: unrecognized arguments: --preset nope``)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            prog = f"{self.prog} {command}" if command else self.prog
            raise UsageError(f"{prog}: unrecognized arguments: {' '.join(extras)}")
        return parsed


def _activation_help() -> str:
    """The activation flag of the propagation and training commands."""
    return (f"activation name or MODULE:FUNCTION (default {N_.DEFAULT_ACTIVATION}; {N_.RES3_ACTIVATION} for "
            "res-3)")


def _driver_flags(p) -> None:
    """One flag per declared parameter of the built-in drivers (:data:`deeplimits.options.DRIVER_OPTIONS`):
    its type, help line and range from the declaration (``--hurst``, ``--length-scale``)."""
    for driver, declared in O_.DRIVER_OPTIONS.items():
        for o in declared:
            text = "; ".join(t for t in (o.range_text(), "" if o.required else o.default_text()) if t)
            p.add_argument(o.flag, type={float: real, int: integer}.get(o.type, str), metavar=o.name.upper(),
                           help=f"{o.help} ({text}) for --driver {driver}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="deeplimits", description="Deep residual networks and their continuous-time limits.",
                     epilog="'python -m deeplimits' is the same command; '--json -' writes the JSON alone to "
                            "standard output (the report then goes to standard error).")
    parser.add_argument("--version", action="version", version=f"deeplimits {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND",
                                help="the command to run (each has its own --help)")
    sub.required = True
    _convergence_parser(sub)
    order.add_parser(sub, _decision_flags)
    _stability_parser(sub)
    _phase_parser(sub)
    _train_parser(sub)
    weights.add_parser(sub)
    scaling.add_parser(sub, _run_flags)
    trained_limit.add_parser(sub, _run_flags)
    transfer.add_parser(sub, _run_flags)
    law.add_parser(sub, _run_flags)
    shapes.add_parser(sub, _run_flags)
    runs.add_parser(sub)
    for command in sub.choices.values():  # every command can show its plan without running it
        dry_run.add_flag(command)
    return parser


def _convergence_parser(sub):
    dflt = CP_.DEFAULTS
    study = ", ".join(r + "".join(f" at {k}={v:g}" for k, v in kw.items()) for r, kw in DEFAULT_STUDY)
    c = sub.add_parser(
        "convergence", help="strong error of networks against their limits, with the fitted rate",
        description="Estimate E max_k |H_{k/L} - h_k| against the depth L for a pair (network, limit) "
                    "driven by one random path per draw, fit the declared error expansion and read its leading "
                    "exponent against theory: agrees within --margin (an equivalence test, its power "
                    "printed), pre-asymptotic, faster than declared, disagrees or insufficient evidence "
                    f"(with the draws that would decide). Without --regime: the default study ({study}).")
    c.add_argument("--regime", choices=regime_names(), metavar="NAME",
                   help="; ".join(f"{n}: {r.weights}, {r.scaling} -> {r.limit}" for n, r in REGISTRY.items())
                   + f" (default: run {study})")
    reg = {n: r.defaults for n, r in REGISTRY.items()}
    c.add_argument("--width", type=integer,
                   help=f"hidden width d (default {by_regime({n: d['width'] for n, d in reg.items()})})")
    c.add_argument("--activation", help=f"{', '.join(N_.ACTIVATIONS)} (leaky_relu:SLOPE), or MODULE:FUNCTION (an "
                   f"elementwise function of an importable module) (default {N_.DEFAULT_ACTIVATION}; "
                   f"{N_.INSIDE_ACTIVATION} for the inside regimes, which need sigma(0)=0, sigma'(0)=1 and C^3)")
    archs = {n: r.architectures for n, r in REGISTRY.items() if len(r.architectures) > 1}
    c.add_argument("--arch", choices=sorted({a for r in REGISTRY.values() for a in r.architectures}),
                   help="residual map (" + "; ".join(f"{n}: {', '.join(a)}, default {a[0]}" for n, a in archs.items())
                   + "; else the regime's own)")
    c.add_argument("--block", metavar="MODULE:NAME",
                   help="a residual block of your own: NAME, a deeplimits Block subclass in MODULE (importable, or a "
                        "file MODULE.py in the working directory), registered and run as --arch its name")
    c.add_argument("--driver", metavar="NAME",
                   help="the law of every weight in place of the regime's own, for the regimes whose limit it has "
                        "(sde: a Brownian path, ode: a smooth law, fbm: a fractional path, its Hurst index the "
                        f"regime's): {', '.join(N_.DRIVERS)}, or MODULE:NAME, a Driver subclass of your own; its "
                        "parameters from --hurst, --length-scale")
    convergence.add_option_flags(c)
    c.add_argument("--depths", type=int_list, help="powers of two, e.g. 8,16,32 (default "
                   + by_regime({n: d["depths"] for n, d in reg.items()}) + ")")
    c.add_argument("--draws", type=integer,
                   help=f"independent draws (default {by_regime({n: d['draws'] for n, d in reg.items()})})")
    c.add_argument("--inputs", type=integer, default=dflt["inputs"], help="inputs per draw (default %(default)s)")
    rough = [n for n, d in reg.items() if d.get("reference")]
    c.add_argument("--reference", type=integer, help=f"finest grid of the reference for {', '.join(rough)}, a "
                                                     f"power of two (default {CP_.REFERENCE_REFINEMENT} * max depth; "
                                                     "2 * max depth against an exact solution; more where the "
                                                     "regime's reference needs it, e.g. rough at width > 1)")
    c.add_argument("--seed", type=integer, default=dflt["seed"], help="base seed (default %(default)s)")
    _decision_flags(c)
    c.add_argument("--chunk", type=integer, help=f"draws per task (default: up to {CP_.MAX_CHUNK}, bounded by memory)")
    c.add_argument("--dtype", choices=N_.DTYPES, default=dflt["dtype"], help=f"{DTYPE_HELP} (default %(default)s)")
    _run_flags(c, "convergence", "chunks of draws")
    c.set_defaults(func=convergence.run_convergence)


def _decision_flags(p) -> None:
    """``--margin`` and ``--budget``: how a strong-order verdict is decided (docs/schemes.md)."""
    from ..studies.equivalence import MARGIN
    from ..studies.sequential import DEFAULT_BUDGET, GROWTH, MAX_LOOKS

    p.add_argument("--margin", type=real, metavar="DELTA",
                   help=f"an agreement needs the leading exponent within DELTA of the declared one, an equivalence "
                        f"test (default {MARGIN:g})")
    p.add_argument("--budget", type=real, nargs="?", const=DEFAULT_BUDGET, metavar="SECONDS",
                   help=f"grow the draws in stages ({GROWTH}x each, at most {MAX_LOOKS}, reusing every finished draw) "
                        f"until the verdict is decided or SECONDS are spent, the levels split over the looks (given "
                        f"alone: {DEFAULT_BUDGET:g} s; default: one run)")


def _stability_parser(sub):
    iid = PP_.DEFAULT_PRESET["stability"]
    s = _study_parser(
        sub, "stability", STABILITY_PRESETS, iid,
        help="signal propagation at initialisation: r_h, r_p over depths and betas, criticality histograms",
        description="Ratios r_h = |h_L - h_0|/|h_0| and r_p = |p_0 - p_L|/|p_L| of residual networks at "
                    "initialisation over depths and scalings beta (Marion et al., JMLR 2025): statistics over "
                    "draws, theory bounds on E r^2, the regime per (beta, depth) (identity / non-trivial / "
                    "explosion; overflow counts as explosion), and log-normal fits of |h_L|/|h_0| and "
                    "|p_0|/|p_L| with a normality test. Presets reproduce the published protocols; flags "
                    f"given with a preset override it. Default: --preset {iid}.",
        preset_help="; ".join(f"{n}: {p['arch']}, d={p['width']}, depths {fmt(p['depths'])}, betas "
                              f"{fmt(p['betas'])}, {p['draws']} draws, {p['driver']} weights"
                              + (", histograms" if p.get("histograms") else "") for n, p in STABILITY_PRESETS.items()))
    s.add_argument("--driver", metavar="NAME",
                   help=f"law of the weights: {', '.join(N_.DRIVERS)}, or MODULE:NAME, a Driver subclass of your own"
                        + preset_default(STABILITY_PRESETS, iid, "driver"))
    _driver_flags(s)
    s.add_argument("--depths", type=int_list, help="depths, e.g. 10,100,1000 or 10:1000:10"
                   + preset_default(STABILITY_PRESETS, iid, "depths"))
    s.add_argument("--betas", type=parse_list, help="scalings beta, e.g. 0.25,0.5,1 or 0:1.3:27"
                   + preset_default(STABILITY_PRESETS, iid, "betas"))
    s.add_argument("--draws", type=integer, help="independent draws of (weights, A, B, x)"
                   + preset_default(STABILITY_PRESETS, iid, "draws"))
    s.add_argument("--inputs", type=integer, help=f"inputs per draw (default {PP_.DEFAULTS['stability']['inputs']})")
    s.add_argument("--histograms", action=argparse.BooleanOptionalAction, default=None,
                   help="draw the histograms of the norm ratios at the largest depth (default: only the presets "
                        + ", ".join(n for n, p in STABILITY_PRESETS.items() if p.get("histograms")) + ")")
    s.add_argument("--chunk", type=integer, help=f"draws per task (default: as many as fit in "
                                                 f"{PP_.TASK_BYTES / 2 ** 30:g} GiB)")
    s.add_argument("--delta", type=real, help="the high-probability bounds on |h_L|/|h_0| hold each with probability "
                                              f"at least 1 - delta, delta in (0, 1) (default {PP_.DEFAULTS['stability']['delta']:g})")
    _study_flags(s, "stability")
    s.set_defaults(func=propagation.run_stability_cmd)


def _phase_parser(sub):
    name = PP_.DEFAULT_PRESET["phase"]
    full = PHASE_PRESETS[name]
    ph = _study_parser(
        sub, "phase", PHASE_PRESETS, name,
        help="the (H, beta) phase diagram with fractional weights and the critical scaling beta*(H)",
        description="Mean log10 r_h and log10 r_p over a grid of Hurst indices H and scalings beta for res-3 "
                    "with fractional V and W (weights drawn once per H, reused for every beta), heat maps, and "
                    "beta*(H) where the mean log10 r_h crosses 0, against the prediction max(H, 1/2). "
                    f"Default: --preset {name} ({len(full['hursts'])} H in [{full['hursts'][0]:g}, "
                    f"{full['hursts'][-1]:g}], {len(full['betas'])} beta in [{full['betas'][0]:g}, "
                    f"{full['betas'][-1]:g}], d={full['width']}, L={full['depth']}, {full['draws']} draws x "
                    f"{full['inputs']} inputs per H; about 100 s on 2 cores).",
        preset_help=f"{name}: the published protocol; the others are variants of it: "
                    + "; ".join(f"{n}: {p['arch']}, d={p['width']}" + (", corrected" if p.get("corrected") else "")
                                for n, p in PHASE_PRESETS.items() if n != name))
    ph.add_argument("--hursts", type=parse_list, help=f"Hurst indices {O_.HURST.range_text()}, e.g. 0.05:0.97:51"
                    + preset_default(PHASE_PRESETS, name, "hursts"))
    ph.add_argument("--betas", type=parse_list, help="scalings beta >= 0, e.g. 0:1.3:70"
                    + preset_default(PHASE_PRESETS, name, "betas"))
    ph.add_argument("--depth", type=integer, help="depth L" + preset_default(PHASE_PRESETS, name, "depth"))
    ph.add_argument("--draws", type=integer, help="weight draws per H" + preset_default(PHASE_PRESETS, name, "draws"))
    ph.add_argument("--inputs", type=integer, help="inputs per weight draw" + preset_default(PHASE_PRESETS, name,
                                                                                               "inputs"))
    ph.add_argument("--corrected", action="store_const", const=True, default=None,
                    help="run the corrected network (+ (L^-2beta / 2d) sigma' sigma per layer) on the same weights too, "
                         "drawn beside the plain one; res-1 only (default: only the presets that say so)")
    _study_flags(ph, "phase")
    ph.set_defaults(func=propagation.run_phase_cmd)


def _train_description(d: dict, dc: dict) -> str:
    """The description of ``train``: the dense networks (defaults ``d``) and ``--arch conv`` (``dc``)."""
    return ("Train res-1 networks (a zero-initialised bias per layer) whose residual weights start on a "
            f"random path in depth, with {d['optimizer']} (learning rate divided by 10 halfway), every configuration "
            "(H, beta, lr, seed) of one beta batched into one model. Reports train/test loss and accuracy "
            "per configuration and, for a grid, the best test accuracy over the learning rates per "
            "(H, beta) as a heat map with the line beta = max(H, 1/2) (Marion et al., JMLR 2025, §4.2); "
            "the trained weights are stored in the run directory and a stopped run resumes. A "
            "configuration that blows up is reported as failed. Without --preset: "
            f"--dataset {d['dataset']} --driver {d['driver']} --betas {fmt(d['betas'])} "
            f"--lrs {fmt(d['lrs'])} --depth {d['depth']} --width {d['width']} --epochs {d['epochs']}. --arch conv: "
            "the convolutional networks h_(k+1) = ReLU(h_k + delta_k * ReLU(A_k * h_k)) of Cohen et al. (ICML "
            "2021) on images (digits, mnist, cifar10), --depth residual blocks over four stages of --width, 2 "
            "--width, ... channels, SGD (momentum 0.9, weight decay 5e-4, cosine schedule), random crops and "
            f"flips; defaults --depth {dc['depth']} --width {dc['width']} --lrs {fmt(dc['lrs'])} --epochs "
            f"{dc['epochs']}.")


def _train_parser(sub):
    d = TP_.DEFAULTS
    t = sub.add_parser(
        "train", help="train residual networks initialised from a driver: one configuration or an (H, beta) grid",
        description=_train_description(d, TP_.CONV_DEFAULTS))
    t.add_argument("--preset", choices=list(TRAIN_PRESETS),
                   help="; ".join(f"{n}: {p['dataset']}, L={p['depth']}, d={p['width']}, {p['epochs']} epochs, "
                                  f"{len(p['hursts'])} H x {len(p['betas'])} beta x {len(p['lrs'])} lr"
                                  for n, p in TRAIN_PRESETS.items())
                   + " (quick: a few minutes on 2 cores; digits: under 20; published, published-cifar10: the "
                     "files under --root, for a GPU or a cluster)")
    t.add_argument("--dataset", help=f"digits, mnist1d, synthetic, mnist, cifar10 (default {d['dataset']})")
    t.add_argument("--root", metavar="DIR", help="the directory of the mnist / cifar10 files (nothing is downloaded)")
    t.add_argument("--driver", metavar="NAME",
                   help=f"law of the initial residual weights: {', '.join(N_.DRIVERS)}, or MODULE:NAME, a Driver "
                        f"subclass of your own (default {d['driver']})")
    t.add_argument("--hursts", type=parse_list, help=f"Hurst indices {O_.HURST.range_text()} for --driver fractional, "
                                                     "e.g. 0.1:0.9:10")
    t.add_argument("--length-scale", type=real, help=f"{O_.LENGTH_SCALE.describe()} for --driver smooth")
    t.add_argument("--betas", type=parse_list, help=f"scalings beta >= 0 (default {fmt(d['betas'])})")
    t.add_argument("--lrs", type=parse_list, help=f"learning rates > 0, e.g. 1e-4,1e-3,1e-2 (default {fmt(d['lrs'])})")
    t.add_argument("--seeds", type=integer, help=f"independent initialisations per point (default {d['seeds']})")
    t.add_argument("--arch", choices=N_.ARCHITECTURES + ("conv",), help=f"residual map (default {d['arch']}; conv: the "
                   "convolutional networks of Cohen et al., ICML 2021, see the description)")
    t.add_argument("--block", metavar="MODULE:NAME",
                   help="a residual block of your own: NAME, a deeplimits Block subclass in MODULE (importable, or a "
                        "file MODULE.py in the working directory), registered and run as --arch its name")
    t.add_argument("--activation", help=_activation_help())
    t.add_argument("--bias", action=argparse.BooleanOptionalAction, default=None,
                   help=f"give each layer a zero-initialised bias (default: {yes_no(d['bias'])})")
    t.add_argument("--depth", type=integer, help=f"depth L (default {d['depth']})")
    t.add_argument("--width", type=integer, help=f"hidden width d (default {d['width']})")
    t.add_argument("--epochs", type=integer, help=f"passes over the training set (default {d['epochs']})")
    t.add_argument("--batch-size", type=integer, help=f"mini-batch size (default {d['batch_size']})")
    t.add_argument("--optimizer", choices=["adam", "sgd"], help=f"the optimiser (default {d['optimizer']})")
    t.add_argument("--lr-decay-halfway", action=argparse.BooleanOptionalAction, default=None,
                   help=f"divide the learning rates by 10 halfway (default: {yes_no(d['lr_decay_halfway'])})")
    t.add_argument("--stop-loss", type=real, help="stop after the first epoch where every configuration's "
                                                  "training loss is at most this")
    t.add_argument("--chunk", type=integer, help="configurations per task (default: every configuration of a beta "
                                                 "that fits in memory)")
    t.add_argument("--save-weights", action=argparse.BooleanOptionalAction, default=None,
                   help=f"store the trained weights in the run directory (default: {yes_no(d['save_weights'])})")
    t.add_argument("--seed", type=integer, help=f"base seed: data split and order, initial weights "
                                                f"(default {d['seed']})")
    t.add_argument("--dtype", choices=N_.DTYPES, help=f"{DTYPE_HELP} (default {d['dtype']})")
    _run_flags(t, "train", "chunks of configurations")
    t.set_defaults(func=training.run_train_cmd)


def _run_flags(p, name, tasks="tasks", *, figures: bool = True):
    """Where a run is stored, where it runs, what it writes: shared by every simulating command
    (``figures``: with :func:`figure_flag`; the propagation commands declare their own)."""
    if figures:
        outputs.figure_flag(p)
    p.add_argument("--out", metavar="DIR",
                   help=f"run directory: the run store (run.sqlite), the figures and result.json; running the "
                        f"same command again resumes it (default {E_.RUNS}/{name}-<hash of the options>)")
    p.add_argument("--workers", type=integer, metavar="N", help=f"run the {tasks} on a local Dask cluster of N processes")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run the {tasks} on the Dask cluster at ADDRESS (tcp://HOST:PORT)")
    p.add_argument("--timeout", type=real, metavar="SECONDS",
                   help="with --workers or --scheduler: give up (exit 1) when the Dask scheduler cannot be "
                        "reached or has no worker after SECONDS")
    p.add_argument("--device", type=device, metavar="DEVICE",
                   help="where the tasks run: cpu, cuda, cuda:N, mps (default: the library's, the CPU)")
    p.add_argument("--json", metavar="PATH", help="also write the JSON result to PATH ('-': standard output, the "
                                                  "report then goes to standard error)")
    p.add_argument("--quiet", action="store_true", help="hide the progress bar (it is drawn only on a terminal)")


def _study_parser(sub, name, presets, default, *, help, description, preset_help):
    """A signal-propagation command: its presets and the network flags they share."""
    p = sub.add_parser(name, help=help, description=description)
    p.add_argument("--preset", choices=sorted(presets), default=default, metavar="NAME",
                   help=preset_help + " (default %(default)s)")
    p.add_argument("--arch", choices=N_.ARCHITECTURES, help="residual map" + preset_default(presets, default, "arch"))
    p.add_argument("--block", metavar="MODULE:NAME",
                   help="a residual block of your own: NAME, a deeplimits Block subclass in MODULE (importable, or a "
                        "file MODULE.py in the working directory), registered and run as --arch its name")
    p.add_argument("--activation", help=_activation_help())
    p.add_argument("--width", type=integer, help="hidden width d" + preset_default(presets, default, "width"))
    p.add_argument("--n-in", type=integer, help="input dimension" + preset_default(presets, default, "n_in"))
    p.add_argument("--bias", action=argparse.BooleanOptionalAction, default=None,
                   help="for --arch inside: put a bias inside the activation, h + alpha sigma(W h + b) (default "
                        "--no-bias: the published h + alpha sigma(W h))")
    return p


def _study_flags(p, name):
    dflt = PP_.DEFAULTS[name]
    figs = "stability.png, theory.png (histograms.png)" if name == "stability" else "phase.png"
    p.add_argument("--figures", action=argparse.BooleanOptionalAction, default=None,
                   help=f"draw the figures ({figs}) into the run directory; without the flag the command ends "
                        "with its JSON and report, and 'deeplimits runs plot DIR' draws them from the store")
    p.add_argument("--seed", type=integer, help=f"base seed (default {dflt['seed']})")
    p.add_argument("--dtype", choices=N_.DTYPES, help=f"{DTYPE_HELP} (default {dflt['dtype']})")
    _run_flags(p, name, figures=False)
