"""The text report of a trained-limit study (:class:`~.result.TrainedLimitResult`): the protocol,
the rule of the verdicts, then per case the distances per depth before and after training, their
rates with intervals, the verdicts and the state rate along training."""

from __future__ import annotations

import math

__all__ = ["report", "case_lines"]


def report(result) -> str:
    """The report of ``result``, as text."""
    from ...diagnostics.trained_pair import LEVEL, MIN_RATE

    lines = [f"trained networks across depths: {result.method}",
             f"verdicts: tests at level {LEVEL:g} against the rate {MIN_RATE:g} (docs/trained-limit.md); rates "
             f"with {100 * (1 - 2 * LEVEL):g}% intervals (jackknife over seeds, Student t)"]
    for c in result.cases:
        lines += case_lines(c)
    lines.append(f"{result.seconds:.1f} s")
    return "\n".join(lines)


def case_lines(c: dict) -> list[str]:
    """The report's lines of one case (:func:`~.result.summarise_case`): its label, the distances per
    depth before and after training, their rates, the verdicts and the state rate along
    training."""
    w, s = c["weight_distance"], c["state_distance"]
    out = [f"{c['case']}: {c['label']}",
           f"{'L':>6} {'|A - A_ref| init':>17} {'trained':>10} {'|h - h_ref| init':>17} {'trained':>10} "
           f"{'train loss':>11}"]
    for j, L in enumerate(c["depths"]):
        out.append(f"{L:6d} {w['mean'][0][j]:17.4g} {w['mean'][-1][j]:10.4g} {s['mean'][0][j]:17.4g} "
                   f"{s['mean'][-1][j]:10.4g} {c['train_loss'][j]:11.4g}")
    pred = "" if c["predicted_slope"] is None else \
        f"; rate {c['theory']:g} against this reference shows as {c['predicted_slope']:.3f}"
    along = ", ".join(f"{t:g}: {r:.2f}" for t, r in zip(c["times"], s["rate"]) if r is not None and math.isfinite(r))
    out += [f"  weights at init: {_rate_text(w, 0)}; trained: {_rate_text(w, -1)}",
            f"  states at init:  {_rate_text(s, 0)}; trained: {_rate_text(s, -1)}{pred}",
            f"  finite seeds {c['finite_seeds']}/{c['seeds']}; verdict at init: {c['verdict_before']}; "
            f"trained: {c['verdict']}" + (f" ({c['missing']})" if c.get("missing") else "")]
    if along:
        out.append(f"  state rate along training (time lr x steps: rate): {along}")
    return out


def _rate_text(q: dict, i: int) -> str:
    """One distance's reading at epoch index ``i``: its rate and interval (and over the deepest
    depths where the verdict reads them apart), its verdict and what is missing; a result stored
    before the verdict was a test (no ``deep_rate``, ``missing``) reads as it was."""
    rate, (lo, hi), verdict = q["rate"][i], q["ci"][i], q["verdict"][i]
    missing = q.get("missing", [""] * len(q["verdict"]))[i]
    if verdict == "zero":
        return "zero at every depth (one path)"
    if rate is None or not math.isfinite(rate):
        return f"no rate: {verdict}" + (f" ({missing})" if missing else "")
    ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and math.isfinite(lo) else ""
    deep, dd = q.get("deep_rate", [None] * len(q["verdict"]))[i], q.get("deep_depths", [])
    if deep is not None and math.isfinite(deep) and len(dd) < len(q["mean"][i]):
        dlo, dhi = q["deep_ci"][i]
        ci += f", deepest {len(dd)} {deep:.2f} [{dlo:.2f}, {dhi:.2f}]"
    from ...diagnostics.trained_pair import MIN_RATE, POWER_RATE

    power = q.get("power", [None] * len(q["verdict"]))[i]
    margin = "" if power is None else (f" (falls: the rate's lower bounds above {MIN_RATE:g}; power {power:.2f} at this "
                                       f"size against a rate of {POWER_RATE:g})")
    return f"rate {rate:.2f}{ci}: {verdict}{margin}"
