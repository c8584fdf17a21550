"""The text report of :class:`~deeplimits.studies.scaling.result.ScalingResult`: the protocol,
one line per trained network, and per learning rate the exponents next to the published
values, the evidence of each step and the verdict."""

from __future__ import annotations

import math

__all__ = ["report", "protocol_line"]

#: the exponents of the report, with what each is read from
_ROWS = (("alpha", "max norm of delta (step 1)"), ("beta", "cumulative-sum norm of W (step 2)"),
         ("beta_max", "max norm of W (= beta for a pure trend)"), ("alpha+beta", None),
         ("alpha+beta_max", "max norm of |delta_k| W_k (the released code's ReLU figure)"),
         ("released_increments", "max increment of |delta_k| W_k times L^{factor:g} before the fit (the released "
                                 "code's ReLU figure; slope)"),
         ("released_rss", "root sum of squares of |delta_k| W_k (the released code's ReLU figure; slope)"),
         ("nu", "beta-scaled increments decay as L^-nu (step 3)"), ("ode_rate", "own-ODE error, per depth"))


#: the initialisation of delta in words (a protocol written before the option: constant)
_DELTA_INIT = {"constant": "delta_0 = 1/L", "normal": "delta_k ~ N(0, 1/L^2)"}


def protocol_line(p: dict) -> str:
    """The training protocol in words (``p``: :attr:`ScalingResult.protocol`)."""
    if not p:
        return ""
    lrs = ", ".join(f"{lr:g}" for lr in p["lr"])
    label = {"adam": "the published code's optimiser", "sgd": "the paper's text: SGD, a constant rate"}
    delta = _DELTA_INIT[p.get("delta_init", "constant")]
    xavier = p.get("init_method", "xavier-depth") == "xavier"  # a protocol before the option: with 1/L
    if p.get("bias_init", "zero") == "normal":
        delta += f", b_0 ~ {p['init_scale']:g}/{'sqrt d' if xavier else '(L sqrt d)'} N(0, 1)"
    if p.get("inputs", "cube") == "sphere":
        delta += ", inputs x/||x|| (targets of x)"
    if p.get("angle_start", 1) == 0:
        delta += ", task angles 5(k-1)pi/K"
    batches = {"published": "fixed batches of {} in the published code's copying shuffle",
               "collapsed": "the first batch of {}, every batch of the epoch (the published code's collapsed "
                            "shuffle)"}.get(p.get("batches"), "batches of {}")
    until = ("the epoch's running mean of the mini-batch losses, patience 5, "
             if p.get("stop_rule") == "running" else "")
    return (f"protocol: {p['optimizer']} at lr {lrs} ({label[p['optimizer']]}), {batches.format(p['batch_size'])}, "
            f"W_0 ~ {p['init_scale']:g}/{'d' if xavier else '(L d)'} N(0, 1), {delta}, {p['dtype']}, at most "
            f"{p['max_epochs']} epochs; loss {p['loss']} ({p['loss_name']}), trained until {until}<= {p['stop_loss']:g} "
            f"(= {p['stop_loss_other']:g} as {p['other']})")


def _record_lines(res) -> list[str]:
    per_layer = res.delta_mode == "per-layer"
    lines = [f"{'L':>6} {'seed':>4} {'lr':>7} {'epochs':>6} {'reached':>7} {'train loss':>11} {'delta':>9} "
             f"{'cumsum W':>9} {'max |W_k|':>10} {'hurst':>6} {'noise H':>7} {'trend loss/loss':>16} "
             f"{'own-ODE error':>14}" + ("  sign changes of delta_k" if per_layer else "")]
    for r in res.records:
        r = _nan(r)
        w = _nan(r["W"])
        lines.append(f"{r['depth']:6d} {r['seed']:4d} {r['lr']:7.2g} {r['epochs']:6d} {str(r['reached']):>7} "
                     f"{r['train_loss']:11.3g} {r['delta']:9.4g} {w['cumsum_norm']:9.4g} {w['max_norm']:10.4g} "
                     f"{w['hurst']:6.2f} {w['noise_hurst']:7.2f} {r['trend_ratio']:16.3g} {r['ode_distance']:14.4g}"
                     + (f"  {r['delta_sign_changes']:.2f}" if per_layer else ""))
    return lines


def _nan(d: dict) -> dict:
    """``d`` with ``None`` (a NaN stored as JSON) read back as NaN."""
    return {k: math.nan if v is None else v for k, v in d.items()}


def _family_lines(res, fam: dict) -> list[str]:
    from ...diagnostics.scaling import evidence_lines, interval, verdict_line

    e = fam["exponents"]
    ab = ("cumulative-sum norm of |delta_k| W_k (Remark 2.2)" if res.delta_mode == "per-layer"
          else "alpha + beta (no interval: the two fits share their depths)")
    lines = [f"lr {fam['lr']:g}: exponents (log-log slope over depths, 95% CI)" + " " * 24 + "published"]
    for key, what in _ROWS:
        v = e.get(key)
        if v is None:
            continue
        pub = res.published.get(key)
        ci = interval(v["ci"])
        what = (what or ab).format(factor=v.get("factor", 0.0))
        lines.append(f"  {key:>19} {v['value']:7.3f} {ci:<17} {'' if pub is None else pub!s:>10}   {what}")
    ode = e.get("ode_rate")
    if ode is not None:
        lo = ode["ci"][0]
        sure = lo is not None and math.isfinite(lo) and lo > 0
        lines.append("  own-ODE error (each network against the ODE of its own weights smoothed at bandwidth 0.05; "
                     "nothing is compared across depths, so this says nothing of a common limit of the trained "
                     "networks: deeplimits trained-limit measures that): " + (
                         f"falls with depth as L^-{ode['value']:.2f}" if sure else
                         f"does not fall clearly with depth (rate {ode['value']:.2f}, its interval reaches 0 or below)"))
    lines.append(f"  evidence of {fam['weights']} (each step against what each hypothesis predicts):")
    lines += ["  " + line for line in evidence_lines(fam["evidence"])]
    lines.append("  " + verdict_line(fam["hypothesis"], fam["reason"]))
    b = fam.get("biases")
    if b:  # Cohen et al.'s Appendix B: the biases of the same networks, read as the weights are
        e = b["exponents"]
        row = lambda k: f"{e[k]['value']:.3f} {interval(e[k]['ci'])}".rstrip() if k in e else "-"  # noqa: E731
        lines.append(f"  biases ({b['weights']}, the same networks; Cohen et al.'s Appendix B): beta {row('beta')} "
                     f"(cumulative-sum norm), alpha + beta {row('alpha+beta')}, nu {row('nu')}")
        lines.append("  " + verdict_line(b["hypothesis"], b["reason"]))
    return lines


def report(res) -> str:
    """The report of ``res`` (a :class:`~deeplimits.studies.scaling.result.ScalingResult`)."""
    model = f"block {res.protocol['arch']!r}" if res.protocol.get("arch") else "inside model"
    lines = [f"{model}, {res.activation}, delta {res.delta_mode}, d={res.width}, {res.dataset}: "
             f"{len(res.records)} trained networks"]
    if res.protocol:
        lines.append(protocol_line(res.protocol))
    lines += _record_lines(res)
    missed = [r for r in res.records if not r["reached"]]
    if missed:
        lines.append(f"{len(missed)} network(s) did not reach the threshold (depths "
                     f"{sorted({r['depth'] for r in missed})}): their exponents are those of a training stopped "
                     + ("by the epoch limit or the patience" if res.protocol.get("stop_rule") == "running"
                        else "by the epoch limit"))
    for fam in res.families:
        lines += _family_lines(res, fam)
    if not res.families:
        from ...diagnostics.verdict import verdict_line

        lines.append(verdict_line(res.hypothesis, res.reason))
    lines.append(f"published: {res.published.get('limit')}")
    return "\n".join(lines)
