"""The ``deeplimits`` command: a thin shell over the library calls.

Conventions shared by every command: lists are comma-separated (``--depths 4,8,16``), evenly
spaced ranges are ``start:stop:count`` (``--betas 0:1.3:27``), ``--json PATH`` writes the
machine-readable result, ``--seed`` makes a run reproducible, and a usage error exits with
status 2 and a one-line message.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from . import __version__

DEFAULT_STUDY = [("sde", {}), ("ode", {}), ("fbm", {"hurst": 0.75})]


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2, no usage dump
        raise UsageError(f"{self.prog}: {message}")


def parse_list(text: str, kind=float) -> list:
    """``'1,2,3'`` -> ``[1, 2, 3]``; ``'start:stop:count'`` -> ``count`` evenly spaced values."""
    try:
        if ":" in text:
            start, stop, count = text.split(":")
            n = int(count)
            if n < 1:
                raise ValueError
            vals = np.linspace(float(start), float(stop), n).tolist()
        else:
            vals = [float(v) for v in text.split(",") if v.strip()]
        if not vals:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated list or start:stop:count, got {text!r}") from None
    if kind is int:
        if any(v != round(v) for v in vals):
            raise argparse.ArgumentTypeError(f"expected integers, got {text!r}")
        vals = [int(round(v)) for v in vals]
    return vals


def _int_list(text):
    return parse_list(text, int)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="deeplimits", description="Deep residual networks and their continuous-time limits.")
    parser.add_argument("--version", action="version", version=f"deeplimits {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.required = True

    c = sub.add_parser(
        "convergence",
        help="strong error of networks against their limits, with the fitted rate",
        description="Estimate E max_k |H_{k/L} - h_k| against the depth L for a pair (network, limit) "
                    "driven by one random path per draw, fit the rate with a 95% bootstrap interval and "
                    "compare it with theory. Without --regime: the default study (sde, ode, fbm at H=0.75).")
    c.add_argument("--regime", choices=["sde", "ode", "fbm"],
                   help="sde: Brownian weights, beta=1/2; ode: smooth weights, beta=1; fbm: fractional "
                        "weights, beta=H (default: run all three)")
    c.add_argument("--hurst", type=float, help="Hurst index in (0.5, 1) for --regime fbm (default 0.75)")
    c.add_argument("--width", type=int, help="hidden width d (default: 16 for sde/ode, 8 for fbm)")
    c.add_argument("--activation", help="identity, tanh, relu, leaky_relu[:SLOPE], sin, sigmoid (default tanh)")
    c.add_argument("--arch", choices=["res-1", "res-2", "res-3"], help="residual map (ode only; default res-1)")
    c.add_argument("--corrected", action="store_true",
                   help="fbm only: the modified-Euler network (rate min(1, 2H - 1/2))")
    c.add_argument("--depths", type=_int_list, help="powers of two, e.g. 8,16,32 (default 8..512)")
    c.add_argument("--draws", "--paths", dest="paths", type=int,
                   help="independent draws (default: 256 for sde/fbm, 64 for ode)")
    c.add_argument("--inputs", type=int, default=1, help="inputs per draw (default 1)")
    c.add_argument("--reference", type=int,
                   help="finest grid of the reference for sde/fbm, a power of two (default 16 * max depth)")
    c.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    c.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    c.add_argument("--out", default="runs/convergence", metavar="DIR",
                   help="directory for the plot (convergence.png) and result.json (default runs/convergence)")
    c.add_argument("--json", metavar="PATH", help="also write the JSON result to PATH")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.set_defaults(func=run_convergence)
    return parser


def run_convergence(args) -> int:
    import torch
    from tqdm import tqdm

    from .convergence import plan_convergence, run_plan
    from .plots import plot_convergence

    if args.regime is None:
        for flag in ("hurst", "arch"):
            if getattr(args, flag) is not None:
                raise UsageError(f"deeplimits convergence: --{flag} needs --regime")
        if args.corrected:
            raise UsageError("deeplimits convergence: --corrected needs --regime fbm")
        study = DEFAULT_STUDY
    else:
        kw = {}
        if args.regime == "fbm":
            kw["hurst"] = 0.75 if args.hurst is None else args.hurst
        elif args.hurst is not None:
            raise UsageError("deeplimits convergence: --hurst applies only to --regime fbm")
        study = [(args.regime, kw)]
    common = dict(width=args.width, activation=args.activation, depths=args.depths, paths=args.paths,
                  inputs=args.inputs, reference=args.reference, seed=args.seed,
                  dtype=getattr(torch, args.dtype))
    plans = []
    for regime, kw in study:
        extra = dict(kw)
        if regime == args.regime:
            extra.update(arch=args.arch, corrected=args.corrected)
        try:  # every argument is checked before any work starts
            plans.append(plan_convergence(regime, **common, **extra))
        except ValueError as e:
            raise UsageError(f"deeplimits convergence: {e}") from None
    results = []
    with tqdm(total=sum(p.paths for p in plans), unit="draw", disable=args.quiet, file=sys.stderr,
              bar_format="{desc} {bar} {n_fmt}/{total_fmt} draws [{elapsed}<{remaining}]") as bar:
        for plan in plans:
            bar.set_description(plan.regime)
            results.append(run_plan(plan, progress=bar.update))
    for r in results:
        print(r.report())
        print()
    payload = [r.to_dict() for r in results] if args.regime is None else results[0].to_dict()
    os.makedirs(args.out, exist_ok=True)
    png = os.path.join(args.out, "convergence.png")
    plot_convergence(results, path=png)
    paths = [png, os.path.join(args.out, "result.json")]
    if args.json:
        paths.append(args.json)
    for path in paths[1:]:
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(payload, f, indent=2)
    print("wrote " + ", ".join(paths))
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except UsageError as e:
        print(str(e), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
