"""``deeplimits stability`` and ``deeplimits phase``: signal propagation at initialisation.

A preset (:mod:`deeplimits.studies.propagation.presets`) gives every value; the flags given override it."""

from __future__ import annotations

from ..studies.propagation.presets import PHASE_PRESETS, STABILITY_PRESETS
from . import dry_run, outputs
from .errors import plan
from .execution import Run, default_out, executor, preset_options, progress
from .user import typed_flags

__all__ = ["run_stability_cmd", "run_phase_cmd"]

STABILITY = ("arch", "activation", "width", "n_in", "bias", "depths", "betas", "draws", "inputs", "histograms", "chunk",
             "delta")
PHASE = ("hursts", "betas", "arch", "activation", "width", "n_in", "bias", "depth", "draws", "inputs", "corrected")


def _run_study(args, cmd, spec, run, total, unit, executor_kw):
    """Open the store, run with a progress bar, print the report, write figures and JSON."""
    from .user import run_key

    stored = spec.to_dict()
    out = default_out(args, cmd, run_key(args, stored))
    outputs.check_outputs(args, cmd, out)
    if args.dry_run:
        return dry_run.show(args, cmd, [spec], out)
    with Run(out, stored, cmd) as store:
        with progress(args, total=total, unit=unit, desc=cmd, initial=spec.stored_units(store),
                      bar_format="{desc} {bar} {n_fmt}/{total_fmt} " + unit + "s [{elapsed}<{remaining}]") as bar:
            result = run(spec, bar.update, store=store, **executor_kw)
    report = outputs.report_stream(args.json)
    print(result.report(), file=report, flush=True)
    written = outputs.write_study(result, out, args.json, figures=bool(args.figures))
    print(f"run store {store.path}; wrote " + ", ".join(written)
          + ("" if args.figures else f"; figures: --figures, or deeplimits runs plot {out}"), file=report)
    return 0


def run_stability_cmd(args) -> int:
    from ..options import DRIVER_OPTIONS
    from ..paths import make_driver
    from ..studies.propagation import study as stability

    executor_kw = executor(args, "stability")
    kw = preset_options(args, STABILITY_PRESETS[args.preset], STABILITY)
    driver = kw.pop("driver") if args.driver is None else args.driver  # ('' is a bad name, not "not given")
    kw.pop("driver", None)
    declared = tuple(o.name for opts in DRIVER_OPTIONS.values() for o in opts)  # the flags of _driver_flags
    params = typed_flags(args, STABILITY + ("driver", *declared, "seed", "dtype", "device"))
    driver = plan("stability", params, make_driver, driver, **{n: getattr(args, n) for n in declared})
    spec = plan("stability", params, stability.plan_stability, driver=driver, **kw)
    return _run_study(args, "stability", spec, stability.run_stability, spec.draws, "draw", executor_kw)


def run_phase_cmd(args) -> int:
    from ..studies.propagation import study as phase

    executor_kw = executor(args, "phase")
    kw = preset_options(args, PHASE_PRESETS[args.preset], PHASE)
    spec = plan("phase", typed_flags(args, PHASE + ("seed", "dtype", "device")), phase.plan_phase, **kw)
    return _run_study(args, "phase", spec, phase.run_phase, len(spec.hursts), "H", executor_kw)
