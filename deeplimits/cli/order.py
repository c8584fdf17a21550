"""``deeplimits order``: the strong order of a shipped scheme on a test equation, on the coupled
driver path (:func:`deeplimits.strong_order`; docs/schemes.md).

Like the other commands it writes into ``--out DIR`` (default ``runs/order-<hash of the
options>``): ``result.json`` and, after it, the figure ``order.png`` (``--calibrate``:
``calibration.png``; ``--no-figures``: none).
Nothing is stored to resume: a run is one pass of seconds to minutes.
"""

from __future__ import annotations

import os

from . import dry_run, outputs
from .errors import UsageError, plan
from .execution import default_out

__all__ = ["run_order", "add_parser"]

#: the command's parameters (errors name them as flags)
PARAMS = ("scheme", "problem", "width", "hurst", "noise", "depths", "draws", "reference", "seed", "dtype", "device",
          "x0", "exact", "order", "chunk", "margin", "budget")

#: the flags that make a run: its directory's hash (``runs/order-<hash>``)
RUN_OPTIONS = ("scheme", "problem", "width", "hurst", "noise_kind", "depths", "draws", "reference", "seed", "dtype",
               "device", "margin", "budget")


#: the flags of --calibrate only
_CALIBRATION = ("cases", "tables", "pool_factor", "budget_tables")


#: the flags of one run only (refused beside --calibrate, whose cases fix their own)
_ONE_RUN = ("scheme", "problem", "width", "hurst", "noise_kind", "depths", "draws", "reference", "dtype", "device",
            "margin")


def run_order(args) -> int:
    if args.calibrate:
        given = [n for n in _ONE_RUN if getattr(args, n) is not None]
        if given:
            raise UsageError(f"deeplimits order: --{given[0].replace('_', '-')} applies to one run, not with "
                             "--calibrate (each case runs at the size of its usual run)")
        if args.budget_tables is not None and args.budget is None:
            raise UsageError("deeplimits order: --budget-tables applies only with --budget (the runs sized to decide)")
        return _calibrate(args)
    given = [n for n in _CALIBRATION if getattr(args, n) is not None]
    if given:
        raise UsageError(f"deeplimits order: --{given[0].replace('_', '-')} applies only with --calibrate")
    for name in ("scheme", "problem"):
        if getattr(args, name) is None:
            raise UsageError(f"deeplimits order: --{name} is required (or --calibrate)")
    from ..studies.scheme_order.presets import DEFAULTS

    for name in ("depths", "draws", "dtype"):
        if getattr(args, name) is None:
            setattr(args, name, DEFAULTS[name])
    import torch

    from ..schemes.problems import scheme_and_problem
    from ..studies.scheme_order.study import plan_strong_order, strong_order
    params = {p: None for p in PARAMS}
    scheme, p = plan("order", params, scheme_and_problem, args.scheme, args.problem, width=args.width,
                     hurst=args.hurst, noise=args.noise_kind)
    out = default_out(args, "order", {**_options(args, RUN_OPTIONS), "user_code": getattr(args, "user_code", [])})
    outputs.check_outputs(args, "order", out)
    kw = dict(noise=p.m, depths=args.depths, draws=args.draws, reference=args.reference, exact=p.exact,
              seed=args.seed, dtype=getattr(torch, args.dtype), device=args.device, budget=args.budget,
              **({} if args.margin is None else {"margin": args.margin}))
    x0 = [1.0] * p.d
    op = plan("order", params, plan_strong_order, scheme, x0, **kw)
    if args.dry_run:
        return _dry_run(args, p, op)
    result = plan("order", params, strong_order, scheme, x0, **kw)
    report = outputs.report_stream(args.json)
    print(result.report(), file=report)
    os.makedirs(out, exist_ok=True)
    written = outputs.dump_json(result.to_dict(), out, args.json)
    figures = outputs.draw_figures(_drawn(result, "order.png"), out, outputs.figure_mode(args))
    written = outputs.listed(figures, written)
    print("wrote " + ", ".join(written), file=report)
    return 0


def _dry_run(args, problem, op) -> int:
    """The plan of one run (with ``--budget``: its stages)."""
    spec = {"scheme": _named(args.scheme), "problem": _named(args.problem), "width": problem.d, "noise": op.noise, "hurst": op.hurst,
            "depths": list(op.depths), "draws": op.draws, "reference": op.reference, "chunk": op.chunk,
            "seed": op.seed, "dtype": args.dtype, "margin": op.margin}
    note = ""
    if op.stages:
        from ..studies.sequential import stages_text

        spec["stages"], note = list(op.stages), "; " + stages_text(op.stages, op.seconds())
    return dry_run.show(args, "order", [spec], seconds=op.seconds(), estimates=[op.estimate()], note=note)


def _named(value) -> str:
    """A flag's value as text: a built-in's name, or a user's object's name."""
    return value if isinstance(value, str) else getattr(value, "name", type(value).__name__)


def _options(args, names) -> dict:
    """The options that make a run (its directory's hash), as given on the command line."""
    def plain(v):
        return v if v is None or isinstance(v, (bool, int, float, str, list)) else str(v)

    return {"command": "order", **{n: plain(getattr(args, n, None)) for n in names}}


def _calibrate(args) -> int:
    """``--calibrate``: the size and power of the verdict over the suite (docs/schemes.md); the
    dry run checks what the run checks (:func:`~deeplimits.studies.scheme_order.calibration.plan_calibration`)."""
    import sys

    from ..studies.scheme_order.calibration import calibrate, plan_calibration
    from ..studies.scheme_order.presets import DEFAULTS

    dflt = DEFAULTS
    out = default_out(args, "order", _options(args, ("calibrate", "cases", "tables", "pool_factor", "seed", "budget",
                                                     "budget_tables")))
    outputs.check_outputs(args, "order", out)
    flags = {"cases": "--cases", "tables": "--tables", "pool_factor": "--pool-factor", "seed": None,
             "budget": "--budget", "budget_tables": "--budget-tables"}
    kw = dict(tables=dflt["tables"] if args.tables is None else args.tables,
              pool_factor=dflt["pool_factor"] if args.pool_factor is None else args.pool_factor, seed=args.seed,
              budget=args.budget, budget_tables=args.budget_tables)
    chosen = plan("order", flags, plan_calibration, args.cases, **kw)
    if args.dry_run:
        return dry_run.show_calibration(args, chosen, kw["tables"], kw["pool_factor"] or kw["tables"], kw["budget"],
                                        kw["budget_tables"] or kw["tables"])
    report = outputs.report_stream(args.json)
    result = plan("order", flags, calibrate, args.cases, **kw,
                  progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(result.table(), file=report)
    os.makedirs(out, exist_ok=True)
    written = outputs.dump_json(result.to_dict(), out, args.json)
    figures = outputs.draw_figures(_drawn(result, "calibration.png"), out, outputs.figure_mode(args))
    written = outputs.listed(figures, written)
    print("wrote " + ", ".join(written), file=report)
    return 0


def _drawn(result, name: str):
    """The figure ``name`` of ``result`` (``result.plot``), drawn into a directory: after the JSON, from the result."""
    def draw(into):
        result.plot(os.path.join(into, name))
        return [os.path.join(into, name)]
    return draw


def add_parser(sub, decision_flags) -> None:
    """The subcommand; ``decision_flags`` adds ``--margin`` and ``--budget`` (shared with convergence)."""
    from .. import _names as N_
    from .. import options as O_
    from ..studies.convergence.presets import REFERENCE_REFINEMENT
    from ..studies.scheme_order.presets import DEFAULTS as dflt
    from .execution import RUNS
    from .values import DTYPE_HELP, device, fmt, int_list, integer, real

    o = sub.add_parser(
        "order", help="the strong order of a scheme on a test equation, on the coupled driver path",
        description="Run a shipped one-step scheme at every depth on one Brownian (or fBm) path per draw, against "
                    "the exact solution (or the scheme on the finest grid), fit its declared error expansion, test "
                    "it and give the verdict (deeplimits.strong_order; docs/schemes.md).")
    o.add_argument("--scheme", metavar="NAME",
                   help=f"the scheme: {', '.join(N_.SCHEMES)}, or MODULE:OBJECT, a deeplimits Scheme of your own "
                        "(required unless --calibrate)")
    o.add_argument("--problem", metavar="NAME",
                   help="MODULE:OBJECT, a deeplimits Problem of your own, or linear-sde: dX = 0.1 X dt + 0.5 X dW (Itô, exact); linear-stratonovich: the same with o dW; "
                        "sde-regime: the sde regime's general noise in width --width (nested reference); "
                        "linear-young: dX = X dB^H (exact; --hurst); ou: dX = -X dt + 0.3 dW (additive noise, nested "
                        "reference); sin-cos: dX = sin X dt + 0.5 cos X dW (nested reference)")
    o.add_argument("--width", type=integer, help="width of the sde-regime problem (2 when omitted)")
    o.add_argument("--hurst", type=real, help=f"{O_.YOUNG_HURST.help} ({O_.YOUNG_HURST.range_text()}) for "
                                              "linear-young")
    o.add_argument("--noise-kind", choices=N_.NOISES,
                   help="the noise structure the scheme declares its order for (the problem's own when omitted)")
    o.add_argument("--depths", type=int_list, help=f"powers of two (default {fmt(dflt['depths'])})")
    o.add_argument("--draws", type=integer, help=f"independent draws (default {dflt['draws']})")
    o.add_argument("--reference", type=integer, help="finest grid, a power of two (default from the problem: 2 * max "
                   f"depth with an exact solution, read at the grid points; else {REFERENCE_REFINEMENT} * max depth)")
    o.add_argument("--seed", type=integer, default=dflt["seed"], help="base seed (default %(default)s)")
    decision_flags(o)
    o.add_argument("--dtype", choices=N_.DTYPES, help=f"{DTYPE_HELP} (default {dflt['dtype']})")
    o.add_argument("--device", type=device, metavar="DEVICE",
                   help="where it runs: cpu, cuda, cuda:N, mps (default: the library's, the CPU)")
    o.add_argument("--out", metavar="DIR",
                   help=f"output directory: the figure order.png (errors, fitted expansion) and result.json "
                        f"(default {RUNS}/order-<hash of the options>)")
    o.add_argument("--json", metavar="PATH", help="also write the JSON result to PATH ('-': standard output, the "
                                                  "report then goes to standard error)")
    outputs.figure_flag(o)
    _calibration_flags(o, dflt)
    o.set_defaults(func=run_order)


def _calibration_flags(o, dflt) -> None:
    """``--calibrate`` and the flags that apply only with it."""
    from .. import _names as N_
    from .values import integer, name_list

    o.add_argument("--calibrate", action="store_true",
                   help="measure how often the verdict is wrong, instead of one run: its size (disagrees on "
                        "correct cases), its agreement and power (exponents off by 0.05 and 0.1, each read at itself "
                        "as the margin) over --tables tables per case, each case at the size of its usual run, and "
                        "with --budget of runs sized to decide; prints a Markdown table (docs/schemes.md)")
    o.add_argument("--cases", type=name_list, metavar="NAMES",
                   help="with --calibrate: the cases, comma-separated; when omitted, all of "
                        f"{', '.join(N_.CALIBRATION_CASES)}")
    o.add_argument("--tables", type=integer,  # default None: given without --calibrate is refused
                   help=f"with --calibrate: tables per case and shift (default {dflt['tables']})")
    o.add_argument("--budget-tables", type=integer,
                   help="with --calibrate and --budget: runs sized to decide per case; when omitted, as many as "
                        "--tables")
    o.add_argument("--pool-factor", type=integer,
                   help="with --calibrate: the pool of draws the tables are taken from, in tables' worth (default: "
                        "--tables, every table an independent run; smaller: the tables share the pool's error, in a "
                        "shorter run)")
