"""``deeplimits order``: the strong order of a shipped scheme on a test equation, on the coupled
driver path (:func:`deeplimits.strong_order`; docs/schemes.md).

Like the other commands it writes into ``--out DIR`` (default ``runs/order-<hash of the
options>``): the figure ``order.png`` and ``result.json`` (``--calibrate``: ``result.json``).
Nothing is stored to resume: a run is one pass of seconds to minutes.
"""

from __future__ import annotations

import os

from . import dry_run, outputs
from .errors import UsageError, plan
from .execution import default_out

__all__ = ["run_order"]

#: the command's parameters (errors name them as flags)
PARAMS = ("scheme", "problem", "width", "hurst", "noise", "depths", "draws", "reference", "seed", "dtype", "device",
          "x0", "exact", "order", "chunk", "margin", "budget")

#: the flags that make a run: its directory's hash (``runs/order-<hash>``)
RUN_OPTIONS = ("scheme", "problem", "width", "hurst", "noise_kind", "depths", "draws", "reference", "seed", "dtype",
               "device", "margin", "budget")


#: the flags of --calibrate only
_CALIBRATION = ("cases", "tables", "pool_factor")


#: the flags of one run only (refused beside --calibrate, whose cases fix their own)
_ONE_RUN = ("scheme", "problem", "width", "hurst", "noise_kind", "depths", "draws", "reference", "dtype", "device",
            "margin")


def run_order(args) -> int:
    if args.calibrate:
        given = [n for n in _ONE_RUN if getattr(args, n) is not None]
        if given:
            raise UsageError(f"deeplimits order: --{given[0].replace('_', '-')} applies to one run, not with "
                             "--calibrate (each case runs at the size of its usual run)")
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

    def draw(into):  # after the JSON, from the result
        result.plot(os.path.join(into, "order.png"))
        return [os.path.join(into, "order.png")]
    written = outputs.listed(outputs.draw_figures(draw, out, outputs.figure_mode(args)), written)
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
    out = default_out(args, "order", _options(args, ("calibrate", "cases", "tables", "pool_factor", "seed", "budget")))
    outputs.check_outputs(args, "order", out)
    flags = {"cases": "--cases", "tables": "--tables", "pool_factor": "--pool-factor", "seed": None,
             "budget": "--budget"}
    kw = dict(tables=dflt["tables"] if args.tables is None else args.tables,
              pool_factor=dflt["pool_factor"] if args.pool_factor is None else args.pool_factor, seed=args.seed,
              budget=args.budget)
    chosen = plan("order", flags, plan_calibration, args.cases, **kw)
    if args.dry_run:
        return dry_run.show_calibration(args, chosen, kw["tables"], kw["pool_factor"] or kw["tables"], kw["budget"])
    report = outputs.report_stream(args.json)
    result = plan("order", flags, calibrate, args.cases, **kw,
                  progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(result.table(), file=report)
    os.makedirs(out, exist_ok=True)
    written = [os.path.join(out, "calibration.png")]
    result.plot(written[0])
    print("wrote " + ", ".join(written + outputs.dump_json(result.to_dict(), out, args.json)), file=report)
    return 0
