"""``deeplimits convergence``: the strong error of networks against their limits.

The regime options and their flags are the registry's declarations (``Regime.options``, one
flag per option name, :func:`option_flags`); the options a regime requires are filled in from
:data:`deeplimits.studies.convergence.presets.STUDY_OPTIONS`.
"""

from __future__ import annotations

from ..regimes import declarations, get_regime, takes
from ..studies.convergence.presets import DEFAULT_STUDY, STUDY_OPTIONS, study_options
from . import dry_run, outputs
from .errors import UsageError, plan, say
from .execution import Run, default_out, executor, progress
from .user import typed_flags
from .values import fmt, integer, real

__all__ = ["run_convergence", "study", "option_flags", "add_option_flags"]

#: the command's parameters of plan_convergence that are not regime options (errors name them as flags)
PARAMS = ("regime", "width", "activation", "arch", "driver", "depths", "draws", "inputs", "reference", "seed", "chunk",
          "dtype", "device", "margin", "budget")


def option_flags() -> dict[str, str]:
    """Every declared regime option -> its flag (``--hurst``, ``--no-ito-correction``)."""
    return {name: next(iter(by.values())).flag for name, by in declarations().items()}


def add_option_flags(parser) -> None:
    """One flag per declared regime option (:func:`deeplimits.regimes.declarations`): its type,
    and a help line per group of regimes with the same declaration (help, range, default; the
    command's default from :data:`~deeplimits.studies.convergence.presets.STUDY_OPTIONS` in place of
    "required"); a boolean's help says what giving its flag does (:meth:`Option.flag_help`)."""
    for name, by in declarations().items():
        first = next(iter(by.values()))
        if first.type is bool:
            kw = dict(action="store_const", const=not first.default)
        else:
            kw = dict(type={float: real, int: integer}.get(first.type, str), metavar=name.upper())
        parser.add_argument(first.flag, dest=name, help=_option_help(name, by), **kw)


def _option_help(name: str, by: dict) -> str:
    """What option ``name`` means for each regime that takes it (``{regime: Option}``)."""
    texts: dict[str, list[str]] = {}
    for regime, o in by.items():
        texts.setdefault(_regime_text(regime, o), []).append(regime)
    return "; ".join(f"{', '.join(names)}: {text}" for text, names in texts.items()).replace("%", "%%")


def _regime_text(regime: str, o) -> str:
    """Option ``o`` of ``regime`` in ``--help``: a boolean's flag says what it does; an option the
    command fills in (:data:`STUDY_OPTIONS`) shows that default, not "required"."""
    if o.type is bool:
        return o.flag_help()
    group, defaults = STUDY_OPTIONS.get(regime, ((), {}))
    if o.name not in defaults:
        return o.describe()
    others = [option_flags()[n] for n in group if n != o.name]
    default = f"default {fmt(defaults[o.name])}" + (f" unless {' or '.join(others)} is given" if others else "")
    return f"{o.help} ({'; '.join(t for t in (o.range_text(), default) if t)})"


def _where(option: str) -> str:
    return " or ".join(takes(option))


def study(args) -> list[tuple[str, dict]]:
    """The (regime, options) pairs to run: the default study, or ``--regime`` with the options
    given (each checked to apply to it) and the ones it requires filled in."""
    flags = option_flags()
    given = {name: getattr(args, name) for name in flags if getattr(args, name, None) is not None}
    if args.regime is None:
        for name in given:
            raise UsageError(f"deeplimits convergence: {flags[name]} needs --regime {_where(name)}")
        for flag in ("arch", "driver"):
            if getattr(args, flag, None) is not None:
                typed = typed_flags(args, (flag,))[flag] or f"--{flag}"  # --block: the user's own block
                raise UsageError(f"deeplimits convergence: {typed} needs --regime")
        return [(regime, dict(kw)) for regime, kw in DEFAULT_STUDY]
    regime = get_regime(args.regime)
    own = driver_params(args)  # the options the driver takes (its parameters), not the regime
    for name in given:
        if name not in own and regime.option(name) is None:
            raise UsageError(f"deeplimits convergence: {flags[name]} applies only to --regime {_where(name)}")
    given = {k: v for k, v in given.items() if k not in own}
    options = given if getattr(args, "driver", None) is not None else study_options(args.regime, given)
    return [(args.regime, {**options, "arch": args.arch})]


def driver_params(args) -> tuple[str, ...]:
    """The parameters the ``--driver`` declares (given by their flags, ``--hurst``, ``--length-scale``:
    the driver's, not the regime's); none without a registered driver."""
    from ..paths import driver_class, registered_drivers

    name = getattr(args, "driver", None)
    if not isinstance(name, str) or name not in registered_drivers():
        return ()
    return tuple(o.name for o in driver_class(name).options)


def _plans(args) -> list:
    import torch

    from ..studies.convergence.study import plan_convergence

    common = dict(width=args.width, activation=args.activation, depths=args.depths, draws=args.draws,
                  inputs=args.inputs, reference=args.reference, seed=args.seed,
                  dtype=getattr(torch, args.dtype), chunk=args.chunk)
    for name in ("device", "margin", "budget"):  # passed only when given
        if getattr(args, name) is not None:
            common[name] = getattr(args, name)
    # every argument is checked before any work starts
    params = typed_flags(args, {**{p: None for p in PARAMS}, **option_flags()})  # errors name the flags typed
    runs = study(args)
    if getattr(args, "driver", None) is not None:  # the law of the weights, with its parameters
        from ..paths import make_driver

        own = {n: getattr(args, n, None) for n in driver_params(args)}
        common["driver"] = plan("convergence", params, make_driver, args.driver, **own)
    return [plan("convergence", params, plan_convergence, regime, **common, **kw) for regime, kw in runs]


def _run(args, plans, store, executor_kw) -> tuple[list, list]:
    """Run every plan with one progress bar; a failed regime does not stop the others."""
    from ..runs import SweepError
    from ..studies.convergence import study as conv

    results, failed = [], []
    stored = set(store.results())  # a resumed run's progress starts at what is stored
    n_tasks = sum(len(p.chunk_sizes) for p in plans)
    done = [sum(t.key in stored for p in plans for t in p.tasks())]
    with progress(args, total=sum(p.draws for p in plans), unit="draw", initial=sum(p.stored_units(store) for p in plans),
                  bar_format="{desc} {bar} {n_fmt}/{total_fmt} draws{postfix} [{elapsed}<{remaining}]") as bar:
        def advance(draws):
            done[0] += 1
            bar.set_postfix_str(f"tasks {done[0]}/{n_tasks}", refresh=False)
            bar.update(draws)

        bar.set_postfix_str(f"tasks {done[0]}/{n_tasks}", refresh=False)
        for p in plans:
            bar.set_description(p.name)
            try:
                results.append(conv.run_plan(p, progress=advance, store=store, **executor_kw))
            except SweepError as e:  # the other regimes still run; the finished tasks are stored
                failed.append(f"{p.name}: {e}")
    return results, failed


def run_convergence(args) -> int:
    executor_kw = executor(args, "convergence")
    from .user import run_key

    plans = _plans(args)
    spec = [p.to_dict() for p in plans]
    out = default_out(args, "convergence", run_key(args, spec))
    outputs.check_outputs(args, "convergence", out)
    if args.dry_run:
        return dry_run.show(args, "convergence", plans, out)
    with Run(out, spec if args.regime is None else spec[0], "convergence") as store:
        results, failed = _run(args, plans, store, executor_kw)
    if failed:
        say("deeplimits convergence: " + "; ".join(failed))
        return 1
    report = outputs.report_stream(args.json)
    for r in results:
        print(r.report(), file=report)
        print(file=report)
    written = outputs.write_convergence(results, out, args.json, as_list=args.regime is None,
                                        figures=outputs.figure_mode(args))
    print(f"run store {store.path}; wrote " + ", ".join(written), file=report)
    return 0
