"""The ``deeplimits`` command: a thin shell over the library calls.

Conventions shared by every command: lists are comma-separated (``--depths 4,8,16``), evenly
spaced ranges are ``start:stop:count`` (``--betas 0:1.3:27``), ``--json PATH`` writes the
machine-readable result, ``--seed`` makes a run reproducible.

Every check runs before any work, file or run store: flags (finite numbers, integers below 2^63,
lists of at most 100000 values), the library's plans (ranges and the resource estimate), the
executor (``--workers``, ``--scheduler``, ``--timeout``) and the outputs (``--out``, ``--json``,
``--csv`` are probed: what a probe creates it removes). Exit status: 0 done; 2 usage (bad flags,
sizes refused at plan time with the flags to change, unwritable outputs, a run directory holding
something else); 1 runtime (failed tasks, an unreachable Dask scheduler, a store damaged at run
time, an error writing the outputs, an internal error); 130 Ctrl-C; 141 stdout closed by its
reader. Every error is one line on stderr (``DEEPLIMITS_DEBUG=1`` shows the traceback of an
internal error). A run that fails before its first task leaves no run directory behind.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys

import numpy as np

from ._version import __version__
from . import _validate as V
from .paths import DRIVERS, make_driver
from .studies.phase import PHASE_PRESETS
from .studies.stability import STABILITY_PRESETS

DEFAULT_STUDY = [("sde", {}), ("ode", {}), ("fbm", {"hurst": 0.75})]


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2, no usage dump
        raise UsageError(f"{self.prog}: {message}")


MAX_LIST = 100_000  # values in one list flag (and the count of start:stop:count)
MAX_INT = 2 ** 63 - 1  # integer flags (the run store keeps 64-bit integers)


def _number(token: str, kind, text: str, listed: bool = False):
    """One finite value of a list (or of a flag): ``kind`` is ``float`` or ``int``."""
    try:
        return _value(token, kind, text)
    except argparse.ArgumentTypeError as e:
        if listed:
            raise argparse.ArgumentTypeError(f"{e} (give a comma-separated list or start:stop:count)") from None
        raise


def _value(token: str, kind, text: str):
    token = token.strip()
    try:
        v = int(token) if kind is int and token.lstrip("+-").isdigit() else float(token)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, "
                                         f"got {text!r}") from None
    if isinstance(v, float) and not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected {'finite numbers' if token != text else 'a finite number'}, "
                                         f"got {text!r}")
    if kind is int:
        if isinstance(v, float):
            if v != int(v):
                raise argparse.ArgumentTypeError(f"expected integers, got {text!r}")
            v = int(v)
        if abs(v) > MAX_INT:
            raise argparse.ArgumentTypeError(f"integer out of range (at most 2^63 - 1), got {text!r}")
    return v


def parse_list(text: str, kind=float) -> list:
    """``'1,2,3'`` -> ``[1, 2, 3]``; ``'start:stop:count'`` -> ``count`` evenly spaced values.

    Values must be finite (integers for ``kind=int``, at most 2^63 - 1); a list holds at most
    :data:`MAX_LIST` values, and ``count`` is checked before any value is built."""
    bad = argparse.ArgumentTypeError(f"expected a comma-separated list or start:stop:count, got {text!r}")
    if not isinstance(text, str) or not text.strip():
        raise bad
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise bad
        start, stop = (_number(t, float, text, True) for t in parts[:2])
        try:
            n = int(parts[2].strip())
        except ValueError:
            raise bad from None
        if not 1 <= n <= MAX_LIST:
            raise argparse.ArgumentTypeError(f"the count of start:stop:count must lie in [1, {MAX_LIST}], "
                                             f"got {text!r}")
        vals = np.linspace(start, stop, n).tolist()
        if not all(math.isfinite(v) for v in vals):  # e.g. -1e308:1e308:3
            raise argparse.ArgumentTypeError(f"expected finite numbers, got {text!r}")
        if kind is int:
            if any(v != round(v) for v in vals):
                raise argparse.ArgumentTypeError(f"expected integers, got {text!r}")
            vals = [_number(repr(int(round(v))), int, text, True) for v in vals]
        return vals
    tokens = text.split(",")
    if len(tokens) > MAX_LIST:
        raise argparse.ArgumentTypeError(f"at most {MAX_LIST} values in a list, got {len(tokens)}")
    vals = [_number(t, kind, text, True) for t in tokens if t.strip()]
    if not vals:
        raise bad
    return [float(v) for v in vals] if kind is float else vals


def _int_list(text):
    return parse_list(text, int)


def _int(text):
    """An integer flag: digits (or an integral number like 1e4), at most 2^63 - 1 in size."""
    return _number(text, int, text)


def _real(text):
    """A real flag: a finite number."""
    return _number(text, float, text)


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
    c.add_argument("--hurst", type=_real, help="Hurst index in (0.5, 1) for --regime fbm (default 0.75)")
    c.add_argument("--width", type=_int, help="hidden width d (default: 16 for sde/ode, 8 for fbm)")
    c.add_argument("--activation", help="identity, tanh, relu, leaky_relu[:SLOPE], sin, sigmoid, softplus0 "
                                        "(default tanh; softplus0 for the inside regimes, which need sigma(0)=0, "
                                        "sigma'(0)=1 and C^3)")
    c.add_argument("--arch", choices=["res-1", "res-2", "res-3"], help="residual map (ode only; default res-1)")
    c.add_argument("--corrected", action="store_true",
                   help="fbm only: the modified-Euler network (rate min(1, 2H - 1/2))")
    c.add_argument("--alpha", type=_real, help="inside-ode: the outer exponent, alpha = 1 - beta in (0, 1)")
    c.add_argument("--beta", type=_real,
                   help="inside-ode: the inner exponent in (0, 1) (default 0.5); inside-sde: the exponent >= 1 "
                        "of a smooth drift part L^-beta A(k/L) of the weights (default: none)")
    c.add_argument("--sa", type=_real, help="inside regimes: entry scale of A (> 0, default 0.25)")
    c.add_argument("--sb", type=_real, help="inside regimes: entry scale of b (>= 0, default 1)")
    c.add_argument("--no-ito-correction", dest="ito_correction", action="store_false",
                   help="inside-sde only (ablation): drop the Itô correction from the limit; the error then "
                        "stops decreasing")
    c.add_argument("--depths", type=_int_list, help="powers of two, e.g. 8,16,32 (default 8..512)")
    c.add_argument("--draws", "--paths", dest="paths", type=_int,
                   help="independent draws (default: 256 for sde/fbm, 64 for ode)")
    c.add_argument("--inputs", type=_int, default=1, help="inputs per draw (default 1)")
    c.add_argument("--reference", type=_int,
                   help="finest grid of the reference for sde/fbm, a power of two (default 16 * max depth)")
    c.add_argument("--seed", type=_int, default=0, help="base seed (default 0)")
    c.add_argument("--chunk", type=_int, help="draws per task (default: up to 64, bounded by memory)")
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
    s.add_argument("--hurst", type=_real, help="Hurst index in (0, 1) for --driver fractional")
    s.add_argument("--length-scale", type=_real, help="RBF length scale for --driver smooth (default 0.1)")
    s.add_argument("--depths", type=_int_list, help="depths, e.g. 10,100,1000 or 10:1000:10")
    s.add_argument("--betas", type=parse_list, help="scalings beta, e.g. 0.25,0.5,1 or 0:1.3:27")
    s.add_argument("--draws", type=_int, help="independent draws of (weights, A, B, x)")
    s.add_argument("--inputs", type=_int, help="inputs per draw (default 1)")
    s.add_argument("--histograms", action=argparse.BooleanOptionalAction, default=None,
                   help="draw the histograms of the norm ratios at the largest depth (default: only the "
                        "criticality presets)")
    s.add_argument("--chunk", type=_int, help="draws per task (default: as many as fit in 1 GiB)")
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
    ph.add_argument("--depth", type=_int, help="depth L")
    ph.add_argument("--draws", type=_int, help="weight draws per H")
    ph.add_argument("--inputs", type=_int, help="inputs per weight draw")
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
    p.add_argument("--workers", type=_int, help=f"run the {tasks} on a local Dask cluster of N processes")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run the {tasks} on the Dask cluster at ADDRESS (tcp://HOST:PORT)")
    p.add_argument("--timeout", type=_real, metavar="SECONDS",
                   help="with --workers or --scheduler: give up (exit 1) when the Dask scheduler cannot be "
                        "reached or has no worker after SECONDS")
    p.add_argument("--json", metavar="PATH", help="also write the JSON result to PATH")
    p.add_argument("--quiet", action="store_true", help="no progress bar (it is drawn only on a terminal)")


def _study_parser(sub, name, presets, default, *, help, description, preset_help):
    """A signal-propagation command: its presets and the network flags they share."""
    p = sub.add_parser(name, help=help, description=description)
    p.add_argument("--preset", choices=sorted(presets), default=default, help=preset_help)
    p.add_argument("--arch", choices=["res-1", "res-2", "res-3", "inside"], help="residual map")
    p.add_argument("--activation", help="activation name (default tanh; relu for res-3)")
    p.add_argument("--width", type=_int, help="hidden width d")
    p.add_argument("--n-in", type=_int, help="input dimension")
    return p


def _study_flags(p, name):
    p.add_argument("--seed", type=_int, help="base seed (default 0)")
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


# -- errors: library parameter names shown as the flags that set them ------------------------------

_FLAG_OF = {"paths": "--draws", "n_in": "--n-in", "length_scale": "--length-scale", "ito_correction":
            "--no-ito-correction"}


def _flag(name: str) -> str:
    return _FLAG_OF.get(name, "--" + name.replace("_", "-"))


def _usage(cmd: str, e: ValueError, params=()) -> UsageError:
    """A library ValueError as a usage error: a leading parameter name is shown as its flag, and
    a :class:`~deeplimits._validate.ResourceError` names the flags to change."""
    msg = " ".join(str(e).split())
    head, _, rest = msg.partition(" ")
    if head in params:
        msg = f"{_flag(head)} {rest}"
    knobs = getattr(e, "knobs", ())
    if isinstance(e, V.ResourceError) and knobs:
        msg += f" (change {', '.join(_flag(k) for k in knobs)})"
    return UsageError(f"deeplimits {cmd}: {msg}")


def _plan(cmd, params, fn, *a, **kw):
    """Run a plan function; any ValueError (ranges, resource estimate) is a usage error."""
    try:
        return fn(*a, **kw)
    except ValueError as e:
        raise _usage(cmd, e, params) from None


def _executor(args, cmd) -> dict:
    """``--workers``, ``--scheduler``, ``--timeout`` checked (before any store is opened); the
    keyword arguments of the run functions."""
    try:
        workers, scheduler, timeout = V.executor(args.workers, args.scheduler, args.timeout)
    except ValueError as e:
        msg = str(e).replace("give workers (a local cluster) or scheduler", "give --workers (a local cluster) or "
                             "--scheduler")
        raise _usage(cmd, ValueError(msg), ("workers", "scheduler", "timeout")) from None
    if timeout is not None and workers is None and scheduler is None:
        raise UsageError(f"deeplimits {cmd}: --timeout applies only with --workers or --scheduler")
    kw = {"workers": workers, "scheduler": scheduler}
    if workers is not None or scheduler is not None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise UsageError(f"deeplimits {cmd}: --workers and --scheduler need the 'distributed' package "
                             f"(pip install distributed)") from None
        if not os.environ.get("DEEPLIMITS_DEBUG"):  # failures are reported in one line, not as Dask logs
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
    if timeout is not None:  # pass it only when given (run functions before the timeout parameter)
        kw["timeout"] = timeout
    return kw


def _outputs(args, cmd, out):
    """``--out`` and ``--json`` writable (probed: created and removed), before any work or store."""
    try:
        V.writable_dir("--out", out)
        if args.json is not None:
            V.writable_file("--json", args.json)
    except ValueError as e:
        raise UsageError(f"deeplimits {cmd}: {' '.join(str(e).split())}") from None


def _progress(args, **kw):
    """The progress bar on stderr: drawn only on a terminal (errors stay one line in logs)."""
    from tqdm import tqdm

    return tqdm(disable=args.quiet or not sys.stderr.isatty(), file=sys.stderr, **kw)


class _Run:
    """The run store of a command, opened once every check has passed. On failure before any
    task is stored, what this command created (the store, its directories) is removed."""

    def __init__(self, out, spec):
        from .runs import STORE_NAME

        self.created = V.missing_dirs(out)
        self.new_store = not os.path.exists(os.path.join(out, STORE_NAME))
        try:
            self.store = _open_store(out, spec)
        except BaseException:
            V.remove_empty_dirs(self.created)
            raise

    def __enter__(self):
        return self.store

    def __exit__(self, exc_type, exc, tb):
        try:
            keep = exc_type is None or not self.new_store or bool(self.store.counts())
        except Exception:  # noqa: BLE001 - leave it as it is
            keep = True
        try:
            self.store.close()
        except Exception:  # noqa: BLE001
            pass
        if keep:
            return False
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(self.store.path + suffix)
            except OSError:
                pass
        V.remove_empty_dirs(self.created)
        return False


def _run_study(args, cmd, spec, run, total, unit, executor):
    """Open the store, run with a progress bar, print the report, write figures and JSON."""
    out = args.out if args.out is not None else os.path.join("runs", f"{cmd}-" + _digest(spec.to_dict()))
    _outputs(args, cmd, out)
    with _Run(out, spec.to_dict()) as store:
        with _progress(args, total=total, unit=unit, desc=cmd,
                       bar_format="{desc} {bar} {n_fmt}/{total_fmt} " + unit + "s [{elapsed}<{remaining}]") as bar:
            result = run(spec, bar.update, store=store, **executor)
    print(result.report())
    written = _write_study(result, out, args.json)
    print(f"run store {store.path}; wrote " + ", ".join(written))
    return 0


def _write_study(result, out, json_path) -> list[str]:
    """The figures and the JSON of a stability or phase result."""
    from .studies.phase import PhaseResult

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


_STABILITY = ("arch", "activation", "width", "n_in", "depths", "betas", "draws", "inputs", "histograms", "chunk")
_PHASE = ("hursts", "betas", "arch", "activation", "width", "n_in", "depth", "draws", "inputs")


def run_stability_cmd(args) -> int:
    from .studies.stability import plan_stability, run_stability

    executor = _executor(args, "stability")
    kw = _options(args, STABILITY_PRESETS[args.preset], _STABILITY)
    driver = args.driver or kw.pop("driver")
    kw.pop("driver", None)
    params = _STABILITY + ("driver", "hurst", "length_scale", "seed", "dtype")
    driver = _plan("stability", params, make_driver, driver, args.hurst, args.length_scale)
    spec = _plan("stability", params, plan_stability, driver=driver, **kw)
    return _run_study(args, "stability", spec, run_stability, spec.draws, "draw", executor)


def run_phase_cmd(args) -> int:
    from .studies.phase import plan_phase, run_phase

    executor = _executor(args, "phase")
    kw = _options(args, PHASE_PRESETS[args.preset], _PHASE)
    spec = _plan("phase", _PHASE + ("seed", "dtype"), plan_phase, **kw)
    return _run_study(args, "phase", spec, run_phase, len(spec.hursts), "H", executor)


_CONVERGENCE = ("regime", "hurst", "width", "activation", "arch", "alpha", "beta", "sa", "sb", "depths", "paths",
                "inputs", "reference", "seed", "chunk", "dtype")


def run_convergence(args) -> int:
    import torch

    from .studies.convergence import plan_convergence, run_plan
    from .runs import SweepError

    executor = _executor(args, "convergence")
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
        # every argument is checked before any work starts
        plans.append(_plan("convergence", _CONVERGENCE, plan_convergence, regime, **common, **extra))
    spec = [p.to_dict() for p in plans]
    out = args.out if args.out is not None else os.path.join("runs", "convergence-" + _digest(spec))
    _outputs(args, "convergence", out)
    results = []
    n_tasks = sum(len(p.chunk_sizes) for p in plans)
    tasks_done = [0]

    def advance(draws):
        tasks_done[0] += 1
        bar.set_postfix_str(f"tasks {tasks_done[0]}/{n_tasks}", refresh=False)
        bar.update(draws)

    with _Run(out, spec if args.regime is None else spec[0]) as store, \
            _progress(args, total=sum(p.paths for p in plans), unit="draw",
                      bar_format="{desc} {bar} {n_fmt}/{total_fmt} draws{postfix} [{elapsed}<{remaining}]") as bar:
        bar.set_postfix_str(f"tasks 0/{n_tasks}", refresh=False)
        failed = []
        for plan in plans:
            bar.set_description(plan.name)
            try:
                results.append(run_plan(plan, progress=advance, store=store, **executor))
            except SweepError as e:  # the other regimes still run; the finished tasks are stored
                failed.append(f"{plan.name}: {e}")
    if failed:
        _say("deeplimits convergence: " + "; ".join(failed))
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
    from .runs import RunStoreError

    from .runs import RunStore

    try:
        return RunStore(directory, spec, create=create)
    except RunStoreError as e:
        raise UsageError(f"deeplimits: {' '.join(str(e).split())}") from None


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
    from .studies import results_from_store

    return results_from_store(store)


def _read(store, what, *a):
    """``what(store)``; a store whose content cannot be read is a RunStoreError (exit 1)."""
    from .runs import RunStoreError

    try:
        return what(store, *a)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        if isinstance(e, RunStoreError):
            raise
        raise RunStoreError(f"{store.path} is damaged ({type(e).__name__}: {' '.join(str(e).split())}); "
                            f"move it away or recompute the run") from None


_RUNS_FLAGS = {"list": (), "show": (), "export": ("csv", "json"), "plot": ("json",)}


def run_runs(args) -> int:
    from .runs import RunStoreError, find_runs

    cmd = f"runs {args.action}"
    for flag in ("csv", "json"):
        if getattr(args, flag) is not None and flag not in _RUNS_FLAGS[args.action]:
            uses = " and ".join(f"runs {a}" for a, f in _RUNS_FLAGS.items() if flag in f)
            raise UsageError(f"deeplimits {cmd}: --{flag} applies only to {uses}")
    if args.action == "list":
        root = args.target or "runs"
        runs = find_runs(root)
        if not runs:
            print(f"no runs under {root}")
        for d in runs:
            try:
                with _open_store(d, create=False) as store:
                    counts = store.counts()
                    spec = _read(store, lambda s: s.spec)
                    integrity = _read(store, lambda s: s.integrity_line())
                names = ", ".join(str(s.get("regime", s.get("study", "?"))) if isinstance(s, dict) else "?"
                                  for s in (spec if isinstance(spec, list) else [spec]))
            except (UsageError, RunStoreError, ValueError) as e:
                print(f"{d}  unreadable: {' '.join(str(e).split())}")
                continue
            print(f"{d}  [{names}]  {counts.get('done', 0)} tasks done, {counts.get('failed', 0)} failed"
                  + (f"; {integrity}" if integrity else ""))
        return 0
    if not args.target:
        raise UsageError(f"deeplimits {cmd}: give the run directory")
    try:  # outputs are checked before the store is read
        if args.action == "export":
            if not (args.csv or args.json):
                raise UsageError("deeplimits runs export: give --csv PATH and/or --json PATH")
            for flag in ("csv", "json"):
                if getattr(args, flag) is not None:
                    V.writable_file("--" + flag, getattr(args, flag))
        elif args.action == "plot":
            if os.path.isdir(args.target):
                V.writable_dir("the run directory", args.target)
            if args.json is not None:
                V.writable_file("--json", args.json)
    except ValueError as e:
        raise UsageError(f"deeplimits {cmd}: {' '.join(str(e).split())}") from None
    with _open_store(args.target, create=False) as store:
        return _runs_action(args, store)


def _runs_action(args, store) -> int:
    """``runs show``, ``runs export`` or ``runs plot`` on an open store."""
    if args.action == "show":
        meta = _read(store, lambda s: s.meta())
        counts = store.counts()
        print(f"run {args.target}: {counts.get('done', 0)} tasks done, {counts.get('failed', 0)} failed; "
              f"versions {meta.get('versions')}")
        integrity = _read(store, lambda s: s.integrity_line())
        if integrity:
            print(f"integrity: {integrity}")
        for r in _read(store, _stored_results):
            print(r.report())
            print()
    elif args.action == "export":
        import pandas as pd

        records = _read(store, lambda s: s.records())
        if args.json:
            with open(args.json, "w") as f:
                json.dump(records, f, indent=2)
        if args.csv:
            flat = _read(store, lambda s: [
                {**{k: v for k, v in r.items() if k not in ("params", "result", "versions")},
                 **{f"param_{k}": json.dumps(v) if isinstance(v, list) else v for k, v in r["params"].items()},
                 "result": json.dumps(r["result"]), "versions": json.dumps(r["versions"])} for r in records])
            pd.DataFrame(flat).to_csv(args.csv, index=False)
        print(f"exported {len(records)} records")
    else:  # plot
        results = _read(store, _stored_results)
        if not results:
            raise UsageError(f"deeplimits runs plot: {args.target} has no finished task yet")
        if _read(store, _study) is None:
            written = _write_outputs(results, args.target, args.json, as_list=isinstance(store.spec, list))
        else:
            written = _write_study(results[0], args.target, args.json)
        print("wrote " + ", ".join(written))
    return 0


def _say(message: str):
    """One line on stderr."""
    print(" ".join(str(message).split()), file=sys.stderr)


def _quiet_stdout():
    """After a broken pipe: point stdout at /dev/null so the final flush cannot fail again."""
    try:
        if sys.stdout is sys.__stdout__ and sys.stdout is not None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv=None) -> int:
    """The ``deeplimits`` command. Exit status: 0 done; 2 usage (bad flags, sizes refused at plan
    time, unwritable outputs, a run directory holding something else); 1 runtime (failed tasks,
    an unreachable Dask scheduler, a store damaged at run time, an error writing the outputs, an
    internal error); 130 Ctrl-C; 141 stdout closed early (``deeplimits runs show DIR | head -1``).
    Every error is one line on stderr."""
    from . import runs as sweeps

    executor_error = getattr(sweeps, "ExecutorError", None)
    runtime = tuple(t for t in (sweeps.SweepError, sweeps.RunStoreError, executor_error) if t is not None)
    cmd = "deeplimits"
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        cmd = f"deeplimits {args.command}"
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's final flush
        return status
    except UsageError as e:
        _say(e)
        return 2
    except runtime as e:
        _say(f"{cmd}: {e}")
        return 1
    except KeyboardInterrupt:
        _say("deeplimits: interrupted; finished tasks are stored, run the same command to resume")
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except MemoryError:
        _say(f"{cmd}: out of memory; make the run smaller (fewer --draws, a smaller --width or --chunk)")
        return 1
    except OSError as e:
        _say(f"{cmd}: {e}")
        return 1
    except Exception as e:  # noqa: BLE001 - the last resort: still one line
        if os.environ.get("DEEPLIMITS_DEBUG"):
            raise
        _say(f"deeplimits: internal error: {type(e).__name__}: {e} (run with DEEPLIMITS_DEBUG=1 for the traceback)")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
