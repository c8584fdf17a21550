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
from .propagation import DRIVERS, PHASE_PRESETS, STABILITY_PRESETS, make_driver

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
    c.add_argument("--regime", choices=["sde", "ode", "fbm", "inside-sde", "inside-ode"],
                   help="sde: Brownian weights, beta=1/2; ode: smooth weights, beta=1; fbm: fractional "
                        "weights, beta=H; inside-sde: h + sigma(A h + b) with Brownian A, b (Itô-corrected "
                        "SDE limit); inside-ode: h + L^-alpha sigma(L^-beta (A h + b)) with smooth A, b, "
                        "alpha + beta = 1 (linear ODE limit) (default: run sde, ode and fbm)")
    c.add_argument("--hurst", type=float, help="Hurst index in (0.5, 1) for --regime fbm (default 0.75)")
    c.add_argument("--width", type=int, help="hidden width d (default: 16 for sde/ode, 8 for fbm)")
    c.add_argument("--activation", help="identity, tanh, relu, leaky_relu[:SLOPE], sin, sigmoid, softplus0 "
                                        "(default tanh; softplus0 for the inside regimes, which need sigma(0)=0, "
                                        "sigma'(0)=1 and C^3)")
    c.add_argument("--arch", choices=["res-1", "res-2", "res-3"], help="residual map (ode only; default res-1)")
    c.add_argument("--corrected", action="store_true",
                   help="fbm only: the modified-Euler network (rate min(1, 2H - 1/2))")
    c.add_argument("--alpha", type=float, help="inside-ode: the outer exponent, alpha = 1 - beta in (0, 1)")
    c.add_argument("--beta", type=float,
                   help="inside-ode: the inner exponent in (0, 1) (default 0.5); inside-sde: the exponent >= 1 "
                        "of a smooth drift part L^-beta A(k/L) of the weights (default: none)")
    c.add_argument("--sa", type=float, help="inside regimes: entry scale of A (> 0, default 0.25)")
    c.add_argument("--sb", type=float, help="inside regimes: entry scale of b (>= 0, default 1)")
    c.add_argument("--no-ito-correction", dest="ito_correction", action="store_false",
                   help="inside-sde only (ablation): drop the Itô correction from the limit; the error then "
                        "stops decreasing")
    c.add_argument("--depths", type=_int_list, help="powers of two, e.g. 8,16,32 (default 8..512)")
    c.add_argument("--draws", "--paths", dest="paths", type=int,
                   help="independent draws (default: 256 for sde/fbm, 64 for ode)")
    c.add_argument("--inputs", type=int, default=1, help="inputs per draw (default 1)")
    c.add_argument("--reference", type=int,
                   help="finest grid of the reference for sde/fbm, a power of two (default 16 * max depth)")
    c.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    c.add_argument("--chunk", type=int, help="draws per task (default: up to 64, bounded by memory)")
    c.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    _run_flags(c, "convergence", "chunks of draws")
    c.set_defaults(func=run_convergence)

    s = _study_parser(
        sub, "stability", STABILITY_PRESETS, "iid",
        help="signal propagation at initialisation: r_h, r_p over depths and betas, criticality histograms",
        description="Ratios r_h = |h_L - h_0|/|h_0| and r_p = |p_0 - p_L|/|p_L| of residual networks at "
                    "initialisation over depths and scalings beta (Marion et al., JMLR 2025): statistics over "
                    "draws, theory bounds on E r^2, the regime per (beta, depth) (identity / non-trivial / "
                    "explosion; overflow counts as explosion), and log-normal fits of |h_L|/|h_0| and "
                    "|p_0|/|p_L| with a normality test. Presets reproduce the published protocols; flags "
                    "given with a preset override it. Default: --preset iid.",
        preset_help="iid / smooth: res-3, d=40, depths 10..1000, 50 draws, uniform i.i.d. (beta 0.25,0.5,1) or "
                        "smooth (beta 0.5,1,2) weights; iid-inside / smooth-inside: the same for the inside model; "
                    "criticality[-inside]: histograms at beta=1/2, L=1000, d=100, 10^4 draws")
    s.add_argument("--driver", choices=list(DRIVERS), help="law of the weights")
    s.add_argument("--hurst", type=float, help="Hurst index in (0, 1) for --driver fractional")
    s.add_argument("--length-scale", type=float, help="RBF length scale for --driver smooth (default 0.1)")
    s.add_argument("--depths", type=_int_list, help="depths, e.g. 10,100,1000 or 10:1000:10")
    s.add_argument("--betas", type=parse_list, help="scalings beta, e.g. 0.25,0.5,1 or 0:1.3:27")
    s.add_argument("--draws", type=int, help="independent draws of (weights, A, B, x)")
    s.add_argument("--inputs", type=int, help="inputs per draw (default 1)")
    s.add_argument("--histograms", action=argparse.BooleanOptionalAction, default=None,
                   help="draw the histograms of the norm ratios at the largest depth (default: only the "
                        "criticality presets)")
    s.add_argument("--chunk", type=int, help="draws per task (default: as many as fit in 1 GiB)")
    _study_flags(s, "stability")
    s.set_defaults(func=run_stability_cmd)

    ph = _study_parser(
        sub, "phase", PHASE_PRESETS, "full",
        help="the (H, beta) phase diagram with fractional weights and the critical scaling beta*(H)",
        description="Mean log10 r_h and log10 r_p over a grid of Hurst indices H and scalings beta for res-3 "
                    "with fractional V and W (weights drawn once per H, reused for every beta), heat maps, and "
                    "beta*(H) where the mean log10 r_h crosses 0, against the prediction max(H, 1/2). "
                    "Default: --preset full (51 H in [0.05, 0.97], 70 beta in [0, 1.3], d=40, L=1000, "
                    "5 draws x 10 inputs per H; about 100 s on 2 cores).",
        preset_help="full: the published grid")
    ph.add_argument("--hursts", type=parse_list, help="Hurst indices in (0, 1), e.g. 0.05:0.97:51")
    ph.add_argument("--betas", type=parse_list, help="scalings beta >= 0, e.g. 0:1.3:70")
    ph.add_argument("--depth", type=int, help="depth L")
    ph.add_argument("--draws", type=int, help="weight draws per H")
    ph.add_argument("--inputs", type=int, help="inputs per weight draw")
    _study_flags(ph, "phase")
    ph.set_defaults(func=run_phase_cmd)

    r = sub.add_parser("runs", help="list, show, export and redraw stored runs",
                       description="Stored runs: 'list [ROOT]' (default ROOT runs), 'show DIR', "
                                   "'export DIR --csv PATH --json PATH', 'plot DIR' (redraw the figure and "
                                   "result.json from the store, without recomputing).")
    r.add_argument("action", choices=["list", "show", "export", "plot"])
    r.add_argument("target", nargs="?", help="the run directory (for list: the root to search)")
    r.add_argument("--csv", metavar="PATH", help="export: write the records as CSV")
    r.add_argument("--json", metavar="PATH", help="export: write the records as JSON; plot: also write the result")
    r.set_defaults(func=run_runs)
    return parser


def _run_flags(p, name, tasks="tasks"):
    """Where a run is stored, where it runs, what it writes: shared by every simulating command."""
    p.add_argument("--out", metavar="DIR",
                   help=f"run directory: the run store (run.sqlite), the figures and result.json; running the "
                        f"same command again resumes it (default runs/{name}-<hash of the options>)")
    p.add_argument("--workers", type=int, help=f"run the {tasks} on a local Dask cluster of N processes")
    p.add_argument("--scheduler", metavar="ADDRESS", help=f"run the {tasks} on the Dask cluster at ADDRESS")
    p.add_argument("--json", metavar="PATH", help="also write the JSON result to PATH")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _study_parser(sub, name, presets, default, *, help, description, preset_help):
    """A signal-propagation command: its presets and the network flags they share."""
    p = sub.add_parser(name, help=help, description=description)
    p.add_argument("--preset", choices=sorted(presets), default=default, help=preset_help)
    p.add_argument("--arch", choices=["res-1", "res-2", "res-3", "inside"], help="residual map")
    p.add_argument("--activation", help="activation name (default tanh; relu for res-3)")
    p.add_argument("--width", type=int, help="hidden width d")
    p.add_argument("--n-in", type=int, help="input dimension")
    return p


def _study_flags(p, name):
    p.add_argument("--seed", type=int, help="base seed (default 0)")
    p.add_argument("--dtype", choices=["float32", "float64"], help="default float32")
    _run_flags(p, name)


def _options(args, preset: dict, names) -> dict:
    """The preset's values overridden by the flags given."""
    import torch

    kw = dict(preset)
    for n in names:
        v = getattr(args, n, None)
        if v is not None:
            kw[n] = v
    if args.dtype is not None:
        kw["dtype"] = getattr(torch, args.dtype)
    if args.seed is not None:
        kw["seed"] = args.seed
    return kw


def _check_executor(args, cmd):
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"deeplimits {cmd}: --workers must be an integer >= 1, got {args.workers}")
    if args.workers is not None and args.scheduler is not None:
        raise UsageError(f"deeplimits {cmd}: give --workers (a local cluster) or --scheduler, not both")


def _run_study(args, cmd, spec, run, total, unit):
    """Open the store, run with a progress bar, print the report, write figures and JSON."""
    from tqdm import tqdm

    from .sweeps import SweepError

    out = args.out or os.path.join("runs", f"{cmd}-" + _digest(spec))
    store = _open_store(out, spec)
    with tqdm(total=total, unit=unit, disable=args.quiet, file=sys.stderr, desc=cmd,
              bar_format="{desc} {bar} {n_fmt}/{total_fmt} " + unit + "s [{elapsed}<{remaining}]") as bar:
        try:
            result = run(spec, bar.update, store=store, workers=args.workers, scheduler=args.scheduler)
        except SweepError as e:
            print(f"deeplimits {cmd}: {e}", file=sys.stderr)
            return 1
    print(result.report())
    written = _write_study(result, out, args.json)
    print(f"run store {store.path}; wrote " + ", ".join(written))
    return 0


def _write_study(result, out, json_path) -> list[str]:
    """The figures and the JSON of a stability or phase result."""
    from .propagation import PhaseResult

    os.makedirs(out, exist_ok=True)
    if isinstance(result, PhaseResult):
        figs = [os.path.join(out, "phase.png")]
        result.plot(figs[0])
    else:
        figs = [os.path.join(out, "stability.png")]
        result.plot(figs[0])
        if result.samples:
            figs.append(os.path.join(out, "histograms.png"))
            result.plot_histograms(figs[-1])
    return figs + _dump_json(result.to_dict(), out, json_path)


def run_stability_cmd(args) -> int:
    from .propagation import plan_stability, run_stability

    kw = _options(args, STABILITY_PRESETS[args.preset],
                  ("arch", "activation", "width", "n_in", "depths", "betas", "draws", "inputs", "histograms", "chunk"))
    driver = args.driver or kw.pop("driver")
    kw.pop("driver", None)
    _check_executor(args, "stability")
    try:
        spec = plan_stability(driver=make_driver(driver, args.hurst, args.length_scale), **kw)
    except ValueError as e:
        raise UsageError(f"deeplimits stability: {e}") from None
    return _run_study(args, "stability", spec, run_stability, spec["draws"], "draw")


def run_phase_cmd(args) -> int:
    from .propagation import plan_phase, run_phase

    kw = _options(args, PHASE_PRESETS[args.preset],
                  ("hursts", "betas", "arch", "activation", "width", "n_in", "depth", "draws", "inputs"))
    _check_executor(args, "phase")
    try:
        spec = plan_phase(**kw)
    except ValueError as e:
        raise UsageError(f"deeplimits phase: {e}") from None
    return _run_study(args, "phase", spec, run_phase, len(spec["hursts"]), "H")


def run_convergence(args) -> int:
    import torch
    from tqdm import tqdm

    from .convergence import plan_convergence, run_plan
    from .sweeps import SweepError

    inside = {"alpha": ("inside-ode",), "beta": ("inside-sde", "inside-ode"), "sa": ("inside-sde", "inside-ode"),
              "sb": ("inside-sde", "inside-ode")}
    if args.regime is None:
        for flag in ("hurst", "arch", *inside):
            if getattr(args, flag) is not None:
                raise UsageError(f"deeplimits convergence: --{flag} needs --regime")
        if args.corrected:
            raise UsageError("deeplimits convergence: --corrected needs --regime fbm")
        if not args.ito_correction:
            raise UsageError("deeplimits convergence: --no-ito-correction needs --regime inside-sde")
        study = DEFAULT_STUDY
    else:
        kw = {}
        if args.regime == "fbm":
            kw["hurst"] = 0.75 if args.hurst is None else args.hurst
        elif args.hurst is not None:
            raise UsageError("deeplimits convergence: --hurst applies only to --regime fbm")
        for flag, regimes in inside.items():
            if getattr(args, flag) is not None:
                if args.regime not in regimes:
                    raise UsageError(f"deeplimits convergence: --{flag} applies only to --regime "
                                     f"{' or '.join(regimes)}")
                kw[flag] = getattr(args, flag)
        if args.regime == "inside-ode" and args.alpha is None and args.beta is None:
            kw["beta"] = 0.5
        if not args.ito_correction:
            if args.regime != "inside-sde":
                raise UsageError("deeplimits convergence: --no-ito-correction applies only to --regime inside-sde")
            kw["ito_correction"] = False
        study = [(args.regime, kw)]
    common = dict(width=args.width, activation=args.activation, depths=args.depths, paths=args.paths,
                  inputs=args.inputs, reference=args.reference, seed=args.seed,
                  dtype=getattr(torch, args.dtype), chunk=args.chunk)
    plans = []
    for regime, kw in study:
        extra = dict(kw)
        if regime == args.regime:
            extra.update(arch=args.arch, corrected=args.corrected)
        try:  # every argument is checked before any work starts
            plans.append(plan_convergence(regime, **common, **extra))
        except ValueError as e:
            raise UsageError(f"deeplimits convergence: {e}") from None
    _check_executor(args, "convergence")
    spec = [p.to_spec() for p in plans]
    out = args.out or os.path.join("runs", "convergence-" + _digest(spec))
    store = _open_store(out, spec if args.regime is None else spec[0])
    results = []
    n_tasks = sum(len(p.chunk_sizes) for p in plans)
    tasks_done = [0]

    def advance(draws):
        tasks_done[0] += 1
        bar.set_postfix_str(f"tasks {tasks_done[0]}/{n_tasks}", refresh=False)
        bar.update(draws)

    with tqdm(total=sum(p.paths for p in plans), unit="draw", disable=args.quiet, file=sys.stderr,
              bar_format="{desc} {bar} {n_fmt}/{total_fmt} draws{postfix} [{elapsed}<{remaining}]") as bar:
        bar.set_postfix_str(f"tasks 0/{n_tasks}", refresh=False)
        failed = []
        for plan in plans:
            bar.set_description(plan.name)
            try:
                results.append(run_plan(plan, progress=advance, store=store, workers=args.workers,
                                        scheduler=args.scheduler))
            except SweepError as e:  # the other regimes still run; the finished tasks are stored
                failed.append(f"{plan.name}: {e}")
    if failed:
        print("deeplimits convergence: " + "; ".join(failed), file=sys.stderr)
        return 1
    for r in results:
        print(r.report())
        print()
    written = _write_outputs(results, out, args.json, as_list=args.regime is None)
    print(f"run store {store.path}; wrote " + ", ".join(written))
    return 0


def _digest(spec) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]


def _open_store(directory, spec=None, create=True):
    from .sweeps import RunStore, RunStoreError

    try:
        return RunStore(directory, spec, create=create)
    except RunStoreError as e:
        raise UsageError(f"deeplimits: {e}") from None


def _write_outputs(results, out, json_path, *, as_list) -> list[str]:
    """The figure and the JSON of convergence results (also used to redraw a stored run)."""
    from .plots import plot_convergence

    payload = [r.to_dict() for r in results] if as_list else results[0].to_dict()
    os.makedirs(out, exist_ok=True)
    png = os.path.join(out, "convergence.png")
    plot_convergence(results, path=png)
    return [png] + _dump_json(payload, out, json_path)


def _dump_json(payload, out, json_path) -> list[str]:
    """``payload`` as ``out/result.json`` and, when given, at ``json_path``; the paths written."""
    paths = [os.path.join(out, "result.json")] + ([json_path] if json_path else [])
    for path in paths:
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(payload, f, indent=2)
    return paths


def _study(store):
    spec = store.spec
    return spec.get("study") if isinstance(spec, dict) else None


def _stored_results(store) -> list:
    """The results of a stored run of any command, rebuilt from its finished tasks."""
    from . import convergence, propagation

    if _study(store) is None:
        return convergence.results_from_store(store)
    r = propagation.results_from_store(store)
    return [] if r is None else [r]


def run_runs(args) -> int:
    from .sweeps import find_runs

    if args.action == "list":
        runs = find_runs(args.target or "runs")
        if not runs:
            print(f"no runs under {args.target or 'runs'}")
        for d in runs:
            try:
                store = _open_store(d, create=False)
                counts = store.counts()
                spec = store.spec
                names = ", ".join(str(s.get("regime", s.get("study", "?"))) if isinstance(s, dict) else "?"
                                  for s in (spec if isinstance(spec, list) else [spec]))
            except UsageError as e:
                print(f"{d}  unreadable: {e}")
                continue
            print(f"{d}  [{names}]  {counts.get('done', 0)} tasks done, {counts.get('failed', 0)} failed")
        return 0
    if not args.target:
        raise UsageError(f"deeplimits runs {args.action}: give the run directory")
    store = _open_store(args.target, create=False)
    if args.action == "show":
        meta = store.meta()
        counts = store.counts()
        print(f"run {args.target}: {counts.get('done', 0)} tasks done, {counts.get('failed', 0)} failed; "
              f"versions {meta['versions']}")
        for r in _stored_results(store):
            print(r.report())
            print()
    elif args.action == "export":
        import pandas as pd

        records = store.records()
        if not (args.csv or args.json):
            raise UsageError("deeplimits runs export: give --csv PATH and/or --json PATH")
        for path in (args.csv, args.json):
            if path and os.path.dirname(path):
                os.makedirs(os.path.dirname(path), exist_ok=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(records, f, indent=2)
        if args.csv:
            flat = [{**{k: v for k, v in r.items() if k not in ("params", "result", "versions")},
                     **{f"param_{k}": json.dumps(v) if isinstance(v, list) else v for k, v in r["params"].items()},
                     "result": json.dumps(r["result"]), "versions": json.dumps(r["versions"])} for r in records]
            pd.DataFrame(flat).to_csv(args.csv, index=False)
        print(f"exported {len(records)} records")
    else:  # plot
        results = _stored_results(store)
        if not results:
            raise UsageError(f"deeplimits runs plot: {args.target} has no finished task yet")
        if _study(store) is None:
            written = _write_outputs(results, args.target, args.json, as_list=isinstance(store.spec, list))
        else:
            written = _write_study(results[0], args.target, args.json)
        print("wrote " + ", ".join(written))
    return 0


def main(argv=None) -> int:
    from .sweeps import RunStoreError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except RunStoreError as e:
        print(f"deeplimits: {e}", file=sys.stderr)
        return 2
    except UsageError as e:
        print(str(e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("deeplimits: interrupted; finished tasks are stored, run the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
