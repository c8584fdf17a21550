"""``deeplimits scaling``: train the inside model at a family of depths and analyse how its
trained weights scale (docs/weights.md, "The scaling experiment"); ``--arch conv``: the
convolutional networks (:mod:`.scaling_conv`)."""

from __future__ import annotations

import os

from .. import _names as N_
from ..studies.scaling import presets as SP_
from ..studies.scaling.presets import DEFAULTS, INIT_METHODS, SCALING_PRESETS
from . import dry_run, outputs
from .errors import UsageError, plan
from .execution import Run, default_out, executor, preset_options, progress
from .scaling_conv import _duration, conv_flags, run_conv_scaling
from .user import typed_flags
from .values import DTYPE_HELP, fmt, int_list, integer, parse_list, real

__all__ = ["add_parser", "run_scaling_cmd", "OPTIONS", "estimate_line", "run_and_report"]

OPTIONS = ("dataset", "arch", "activation", "delta", "depths", "width", "seeds", "optimizer", "lr", "batch_size",
           "loss", "stop_loss", "max_epochs", "init_scale", "init_method", "delta_init", "bias_init", "inputs",
           "angle_start", "batches", "stop_rule", "samples", "seed")


def run_scaling_cmd(args) -> int:
    from ..studies.scaling.study import plan_scaling

    if args.arch == "conv":
        return run_conv_scaling(args, run_and_report)
    for name in ("root", "epochs"):  # the flags of --arch conv (the inside model reads no files, has --max-epochs)
        if getattr(args, name) is not None:
            raise UsageError(f"deeplimits scaling: --{name} applies only to --arch conv")

    executor_kw = executor(args, "scaling")
    kw = preset_options(args, SCALING_PRESETS[args.preset], OPTIONS)
    spec = plan("scaling", typed_flags(args, OPTIONS + ("dtype", "device")), plan_scaling, **kw)
    if args.ablation:
        return _run_ablation(args, kw, spec, executor_kw)
    return run_and_report(args, spec, estimate_line(spec), executor_kw)


def run_and_report(args, spec, estimate: str, executor_kw) -> int:
    """Print ``estimate``, run ``spec`` in its store (dense or conv), print the report and write
    the figure and the JSON (:func:`~deeplimits.cli.outputs.write_study`)."""
    out = default_out(args, "scaling", spec.to_dict())
    outputs.check_outputs(args, "scaling", out)
    if args.dry_run:
        return dry_run.show(args, "scaling", [spec], out, note=_note(spec))
    report = outputs.report_stream(args.json)
    print(estimate, file=report, flush=True)
    result, store_path = _run(args, spec, out, executor_kw)
    print(result.report(), file=report)
    written = outputs.write_study(result, out, args.json, figures=outputs.figure_mode(args))
    print(f"run store {store_path}; wrote " + ", ".join(written), file=report)
    return 0


def _note(spec) -> str:
    """What a dense scaling study's time assumes (a convolutional one trains a fixed number of epochs)."""
    from ..studies.timing import duration

    if spec.study != "scaling":
        return ""
    return f" if every network stops by 100 epochs, at most {duration(spec.seconds()[0])}"


def _run(args, spec, out, executor_kw, desc="scaling"):
    """The run of ``spec`` in the store under ``out``, with progress: the result and the store's path."""
    with Run(out, spec.to_dict(), "scaling") as store:
        with progress(args, total=len(spec.depths), unit="depth", desc=desc, initial=spec.stored_units(store),
                      bar_format="{desc} {bar} {n_fmt}/{total_fmt} depths [{elapsed}<{remaining}]") as bar:
            return spec.run(bar.update, store=store, **executor_kw), store.path


def _run_ablation(args, kw, spec, executor_kw) -> int:
    """``--ablation``: the protocol and one knob changed at a time
    (:mod:`deeplimits.studies.scaling.ablation`), each a run of its own under ``OUT/<variant>``
    (resumable), then the table of alpha, beta, alpha + beta and the verdicts."""
    from ..studies.scaling.ablation import ablation_plans, ablation_row, ablation_rows, ablation_table

    base = {k: v for k, v in kw.items() if k in OPTIONS + ("dtype", "device")}
    variants = plan("scaling", typed_flags(args, OPTIONS + ("dtype", "device")), ablation_plans, **base)
    out = default_out(args, "scaling-ablation", {"ablation": spec.to_dict()})
    outputs.check_outputs(args, "scaling", out)
    if args.dry_run:
        return dry_run.show(args, "scaling --ablation", [p for *_, p in variants], out)
    report = outputs.report_stream(args.json)
    print(f"ablation: {len(variants)} runs, one knob changed at a time, each like this one:", file=report)
    print(estimate_line(spec), file=report, flush=True)
    rows = []
    for slug, knob, variant, p in variants:
        result, _ = _run(args, p, os.path.join(out, slug), executor_kw, desc=slug)
        new = [ablation_row(knob, variant, result)]
        if not rows:  # the estimator row: the protocol's run read with the max norm (of W, or |delta_k| W_k)
            new.append(ablation_row(*ablation_rows(spec)[1][:2], result, "beta_max"))
        for r in new:
            code = (f", the released code's statistics: alpha + beta {r['alpha+beta_max']:.3f} (max norm), increments "
                    f"x L^f: L^{r['released_increments']:.2f}" if "alpha+beta_max" in r else "")
            print(f"{r['knob']}: {r['variant']}: alpha {r['alpha']:.3f}, beta {r['beta']:.3f}, alpha + beta "
                  f"{r['alpha+beta']:.3f}, {r['verdict']}{code}", file=report, flush=True)
        rows += new
    print(ablation_table(rows), file=report)
    written = outputs.dump_json({"rows": rows, "protocol": spec.to_dict()}, out, args.json)
    print("wrote " + ", ".join(written), file=report)
    return 0


def estimate_line(spec) -> str:
    """What the plan will take, printed before it starts: its tasks and memory, and its time in
    one process (:meth:`~deeplimits.studies.ScalingPlan.seconds`)."""
    budget, typical = spec.seconds()
    return (f"plan: {len(spec.depths)} depths x {spec.seeds} seed{'s' * (spec.seeds != 1)}, one task each; "
            f"{spec.estimate()}; time in one process on 2 CPU cores: about {_duration(typical)} if every network "
            f"reaches the threshold within 100 epochs, at most {_duration(budget)} ({spec.max_epochs} epochs each; "
            f"--workers or --scheduler divide it)")


def add_parser(sub, run_flags):
    """The subcommand; ``run_flags`` adds the flags every simulating command shares."""
    d, name = DEFAULTS, SP_.DEFAULT_PRESET
    c = sub.add_parser(
        "scaling", help="train the inside model at a family of depths and fit how its trained weights scale",
        description=f"The inside model h + delta_k sigma(W_k h + b_k) (d = {d['width']}, h_0 = x, output h_L) trained "
                    "on the synthetic task of Cohen et al. (ICML 2021) at each depth until its training loss is "
                    f"below --stop-loss ({d['loss']} loss, {d['optimizer']}, batch {d['batch_size']}), then their "
                    "steps: alpha (delta ~ L^-alpha), beta (the cumulative-sum norm of W ~ L^(1 - beta)), the "
                    "beta-scaled increments (~ L^-nu), the noise part, the root sum of squares and the loss kept by "
                    "the trend, each against what each hypothesis predicts, and the verdict (smooth, rough, sparse, "
                    "neither, or insufficient evidence: too few depths or too wide intervals) next to the published "
                    "values (tanh: alpha 0.7, beta 0.3). Default: --preset "
                    f"{name} (depths {fmt(SCALING_PRESETS[name]['depths'])}, minutes).")
    c.add_argument("--preset", choices=list(SCALING_PRESETS), default=name, metavar="NAME",
                   help="; ".join(f"{n}: " + ", ".join(f"{k} {fmt(v)}" for k, v in p.items())
                                  for n, p in SCALING_PRESETS.items()) + " (default %(default)s)")
    c.add_argument("--dataset", choices=["synthetic", "digits", "cifar10"],
                   help=f"the synthetic task, or digits through a fixed random embedding (default {d['dataset']}); "
                        "--arch conv: digits as 8 x 8 images or cifar10 (the files under --root)")
    c.add_argument("--block", metavar="MODULE:NAME",
                   help="a residual block of your own in place of the inside model: NAME, a deeplimits Block subclass "
                        "in MODULE declaring a trained scale (trained_scale), one (d, d) matrix among its weights and "
                        "an optional bias b, registered and run as --arch its name")
    c.add_argument("--activation", choices=["tanh", "relu"], help=f"activation of the inside model (default {d['activation']})")
    c.add_argument("--delta", choices=["shared", "per-layer"],
                   help="one trainable scale, or one per layer (default: shared for tanh, per-layer for relu)")
    c.add_argument("--depths", type=int_list, help="the family of depths (default: the preset's)")
    c.add_argument("--width", type=integer, help=f"width d (default {d['width']})")
    c.add_argument("--seeds", type=integer, help=f"networks per depth, one task each (default {d['seeds']})")
    _training_flags(c, d)
    c.add_argument("--inputs", choices=["cube", "sphere"], help="the synthetic task's inputs: uniform on the cube, or "
                   "normalised to the unit sphere after the targets are computed (the published code's) (default "
                   f"{d['inputs']})")
    c.add_argument("--angle-start", type=int, choices=[0, 1], help="the synthetic task's angles: step k of its "
                   "recursion at 5 (k - 1 + START) pi / K; 1 is Cohen et al.'s formula, 0 the published code's "
                   f"(default {d['angle_start']})")
    c.add_argument("--samples", type=integer, help=f"samples of the synthetic task (default {d['samples']}, 80%% "
                                                   "for training)")
    c.add_argument("--seed", type=integer, help=f"base seed (default {d['seed']})")
    c.add_argument("--dtype", choices=N_.DTYPES, help=f"{DTYPE_HELP} (default {d['dtype']})")
    c.add_argument("--ablation", action="store_true", help="run the protocol of the other flags, then one knob "
                   "changed at a time (tanh: estimator, loss convention, threshold, training budget, optimiser, learning rate, "
                   "initial scale, batch size; per-layer delta: estimator, delta init, initial scale, learning rates, "
                   "threshold, training budget, optimiser, depth range, bias init, inputs, the released code's settings; both: "
                   "the published code's stopping rule, batches, task angles and all of its choices; from the released "
                   "code's ReLU settings, --preset released-relu: its stopping rule, batches, learning rate, initial "
                   "scale, optimiser), each a run under OUT/<variant>; prints alpha, beta, alpha + beta and the verdict "
                   "of each (per-layer delta: and the released code's statistics)")
    conv_flags(c)
    run_flags(c, "scaling", "depths")
    c.set_defaults(func=run_scaling_cmd)


def _training_flags(c, d) -> None:
    """The flags of the training protocol: optimiser, rate, batches, loss and threshold, budget, initialisation."""
    c.add_argument("--optimizer", choices=["adam", "sgd"], help=f"adam (the published code) or sgd (the paper's "
                                                                f"text, a constant rate) (default {d['optimizer']})")
    c.add_argument("--lr", type=parse_list, help=f"learning rate, or a list of them trained at once in every task "
                                                 f"(default {fmt(d['lr'])}; --arch conv: one initial rate, default: the "
                                                 "preset's)")
    c.add_argument("--batch-size", type=integer, help=f"mini-batch size (default {d['batch_size']})")
    c.add_argument("--loss", choices=["mse", "squared"],
                   help=f"the loss and the convention of --stop-loss: mse (torch.nn.MSELoss(), the mean over batch "
                        f"and outputs) or squared (half the squared error summed over the outputs) (default "
                        f"{d['loss']})")
    c.add_argument("--stop-loss", type=real, help=f"train until the training loss is below this (default "
                                                  f"{fmt(d['stop_loss'])})")
    c.add_argument("--max-epochs", type=integer, help=f"give up after this many epochs (default {d['max_epochs']})")
    c.add_argument("--init-scale", type=real, help=f"initial weights of order SCALE / (L d), or SCALE / d with "
                                                   f"--init-method xavier (default {fmt(d['init_scale'])})")
    c.add_argument("--init-method", choices=list(INIT_METHODS), help="the released code's names: xavier-depth, "
                   "W_k ~ N(0, (SCALE / (L d))^2) and, with --bias-init normal, b_k ~ N(0, (SCALE / (L sqrt d))^2); "
                   "or xavier, the same without the 1/L (the init of its run_experiment) "
                   f"(default {d['init_method']})")
    c.add_argument("--delta-init", choices=["constant", "normal"], help="delta = 1/L, or delta_k ~ N(0, 1/L^2) per "
                   "layer (the published code's) (default: constant with a shared delta, normal per layer)")
    c.add_argument("--bias-init", choices=["zero", "normal"], help="biases 0, or N(0, (SCALE / (L sqrt d))^2) (the "
                   f"published code's; SCALE / sqrt d with --init-method xavier) (default {d['bias_init']})")
    c.add_argument("--batches", choices=["shuffled", "published", "collapsed"], help="a fresh permutation of the "
                   "samples every epoch; the published code's fixed batches reordered by a shuffle that copies batches "
                   "over others, started afresh; or collapsed, the state that shuffle reaches and the published code "
                   f"trains its later depths on: the first batch, every batch of the epoch (default {d['batches']})")
    c.add_argument("--stop-rule", choices=["evaluated", "running"], help="stop on the whole training split's loss "
                   "after every epoch, or on the mean of the epoch's mini-batch losses with a patience of 5 epochs "
                   f"(the published code's) (default {d['stop_rule']})")
