"""``deeplimits convergence``: the strong error of networks against their limits.

Which option applies to which regime is the registry's declaration (``Regime.options``); the
options a regime requires are filled in from :data:`deeplimits.studies.presets.STUDY_OPTIONS`.
"""

from __future__ import annotations

from ..regimes import REGISTRY, get_regime
from ..studies.presets import DEFAULT_STUDY, study_options
from . import outputs
from .errors import UsageError, flag, plan, say
from .execution import Run, default_out, executor, progress

__all__ = ["run_convergence", "study"]

#: the command's options as parameters of plan_convergence (errors name them as flags)
PARAMS = ("regime", "hurst", "width", "activation", "arch", "alpha", "beta", "sa", "sb", "depths", "paths",
          "inputs", "reference", "seed", "chunk", "dtype", "device")
#: the regime options the command has flags for (given: not None)
OPTIONS = ("hurst", "corrected", "alpha", "beta", "sa", "sb", "ito_correction")


def _where(option: str) -> str:
    return " or ".join(n for n, r in REGISTRY.items() if option in r.options)


def study(args) -> list[tuple[str, dict]]:
    """The (regime, options) pairs to run: the default study, or ``--regime`` with the options
    given (each checked to apply to it) and the ones it requires filled in."""
    given = {name: getattr(args, name) for name in OPTIONS if getattr(args, name) is not None}
    if args.regime is None:
        for name in given:
            raise UsageError(f"deeplimits convergence: {flag(name)} needs --regime {_where(name)}")
        if args.arch is not None:
            raise UsageError("deeplimits convergence: --arch needs --regime")
        return [(regime, dict(kw)) for regime, kw in DEFAULT_STUDY]
    regime = get_regime(args.regime)
    for name in given:
        if name not in regime.options:
            raise UsageError(f"deeplimits convergence: {flag(name)} applies only to --regime {_where(name)}")
    return [(args.regime, {**study_options(args.regime, given), "arch": args.arch})]


def _plans(args) -> list:
    import torch

    from ..studies.convergence import plan_convergence

    common = dict(width=args.width, activation=args.activation, depths=args.depths, paths=args.paths,
                  inputs=args.inputs, reference=args.reference, seed=args.seed,
                  dtype=getattr(torch, args.dtype), chunk=args.chunk)
    if args.device is not None:  # passed only when given
        common["device"] = args.device
    # every argument is checked before any work starts
    return [plan("convergence", PARAMS, plan_convergence, regime, **common, **kw) for regime, kw in study(args)]


def _run(args, plans, store, executor_kw) -> tuple[list, list]:
    """Run every plan with one progress bar; a failed regime does not stop the others."""
    from ..runs import SweepError
    from ..studies import convergence as conv

    results, failed = [], []
    n_tasks, done = sum(len(p.chunk_sizes) for p in plans), [0]
    with progress(args, total=sum(p.paths for p in plans), unit="draw",
                  bar_format="{desc} {bar} {n_fmt}/{total_fmt} draws{postfix} [{elapsed}<{remaining}]") as bar:
        def advance(draws):
            done[0] += 1
            bar.set_postfix_str(f"tasks {done[0]}/{n_tasks}", refresh=False)
            bar.update(draws)

        bar.set_postfix_str(f"tasks 0/{n_tasks}", refresh=False)
        for p in plans:
            bar.set_description(p.name)
            try:
                results.append(conv.run_plan(p, progress=advance, store=store, **executor_kw))
            except SweepError as e:  # the other regimes still run; the finished tasks are stored
                failed.append(f"{p.name}: {e}")
    return results, failed


def run_convergence(args) -> int:
    executor_kw = executor(args, "convergence")
    plans = _plans(args)
    spec = [p.to_dict() for p in plans]
    out = default_out(args, "convergence", spec)
    outputs.check_outputs(args, "convergence", out)
    with Run(out, spec if args.regime is None else spec[0]) as store:
        results, failed = _run(args, plans, store, executor_kw)
    if failed:
        say("deeplimits convergence: " + "; ".join(failed))
        return 1
    report = outputs.report_stream(args.json)
    for r in results:
        print(r.report(), file=report)
        print(file=report)
    written = outputs.write_convergence(results, out, args.json, as_list=args.regime is None)
    print(f"run store {store.path}; wrote " + ", ".join(written), file=report)
    return 0
