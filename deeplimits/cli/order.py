"""``deeplimits order``: the strong order of a shipped scheme on a test equation, on the coupled
driver path (:func:`deeplimits.strong_order`; docs/schemes.md)."""

from __future__ import annotations

from . import outputs
from .errors import UsageError, plan

__all__ = ["run_order"]

#: the command's parameters (errors name them as flags)
PARAMS = ("scheme", "problem", "width", "hurst", "noise", "depths", "draws", "reference", "seed", "dtype", "device",
          "x0", "exact", "order", "chunk")


#: the flags of --calibrate only
_CALIBRATION = ("cases", "tables", "pool_factor")


def run_order(args) -> int:
    if args.calibrate:
        return _calibrate(args)
    given = [n for n in _CALIBRATION if getattr(args, n) is not None]
    if given:
        raise UsageError(f"deeplimits order: --{given[0].replace('_', '-')} applies only with --calibrate")
    for name in ("scheme", "problem"):
        if getattr(args, name) is None:
            raise UsageError(f"deeplimits order: --{name} is required (or --calibrate)")
    import torch

    from ..schemes.problems import scheme_on
    from ..studies.scheme_order import strong_order
    params = {p: None for p in PARAMS}
    scheme, p = plan("order", params, scheme_on, args.scheme, args.problem, width=args.width, hurst=args.hurst,
                     noise=args.noise_kind)
    outputs.check_file("order", "--json", args.json)
    outputs.check_figure("order", "--figure", args.figure)
    x0 = [1.0] * p.d
    result = plan("order", params, strong_order, scheme, x0, noise=p.m, depths=args.depths, draws=args.draws,
                  reference=args.reference, exact=p.exact, seed=args.seed, dtype=getattr(torch, args.dtype),
                  device=args.device)
    report = outputs.report_stream(args.json)
    print(result.report(), file=report)
    written = []
    if args.figure:
        result.plot(args.figure)
        written.append(args.figure)
    if args.json:
        written.append(outputs.write_json(result.to_dict(), args.json))
    if written:
        print("wrote " + ", ".join(written), file=report)
    return 0


def _calibrate(args) -> int:
    """``--calibrate``: the size and power of the verdict over the suite (docs/schemes.md)."""
    import sys

    from ..studies.calibration import calibrate
    from ..studies.presets import DEFAULTS

    dflt = DEFAULTS["order"]
    outputs.check_file("order", "--json", args.json)
    report = outputs.report_stream(args.json)
    result = plan("order", {"cases": "--cases", "tables": "--tables", "pool_factor": "--pool-factor", "seed": None},
                  calibrate, args.cases, tables=dflt["tables"] if args.tables is None else args.tables,
                  pool_factor=dflt["pool_factor"] if args.pool_factor is None else args.pool_factor, seed=args.seed,
                  progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(result.table(), file=report)
    if args.json:
        print("wrote " + outputs.write_json(result.to_dict(), args.json), file=report)
    return 0
