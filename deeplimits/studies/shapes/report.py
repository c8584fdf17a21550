"""The text of a shapes study (docs/shapes.md): the verdicts first, with their power at this size, then
the fitted laws beside the published constants, the limit and the cells."""

from __future__ import annotations

import math

__all__ = ["report_lines", "law_line", "verdict_lines"]


def _ci(lo: float, hi: float) -> str:
    return f"[{lo:.3g}, {hi:.3g}]" if math.isfinite(lo) and math.isfinite(hi) else "[no interval]"


def law_line(law: dict) -> str:
    """The fitted law with its constants and 95% intervals."""
    names = "abc"[:len(law["params"])]
    consts = ", ".join(f"{n} = {p:.3g} {_ci(*ci)}" for n, p, ci in zip(names, law["params"], law["intervals"]))
    mask = law.get("mask", [0, 0, 0])
    return (f"{law['law']}: {consts} over {law['cells']} cells (L > {mask[0]}, M > {mask[1]}, D > {mask[2]}), "
            f"relative misfit {law['misfit']:.1%}")


def _power(t: dict, against: str) -> str:
    pa, pd = t.get("power_agree", math.nan), t.get("power_disagree", math.nan)
    return f"power at this size: to agree {pa:.2f}, to disagree {against} {pd:.2f}"


def verdict_lines(result) -> list[str]:
    """The two verdicts, each with its cells and its power at this run's size."""
    from .presets import LEVEL

    sw, us = result.swap, result.ushape
    out = [f"L <-> M swap (depth and width enter only through M L), tests at level {LEVEL:g}, margin "
           f"+-{sw['margin']:g} in log error: {sw['verdict']}" + (f" ({sw['why']})" if sw.get("why") else "")]
    for t in sw["tests"]:
        L, M, D = t["cell"]
        out.append(f"  e({L}, {M}, {D}) / e({M}, {L}, {D}) = {t['ratio']:.3f}, log interval {_ci(*t['interval'])}, "
                   f"{t['runs']} runs: {t['verdict']}; " + _power(t, f"a ratio e^{2 * sw['margin']:g}"))
    out.append(f"U in D at fixed M L (minimum within a factor {us['margin']:g} of sqrt(b/a) sqrt(M L), curvature "
               f"above {us['min_curvature']:g}): {us['verdict']}" + (f" ({us['why']})" if us.get("why") else ""))
    for t in us["tests"]:
        L, M = t["slice"]
        out.append(f"  L = {L}, M = {M}, D* = {t['d_star']:.3g}: " + _ushape_text(t))
    if us.get("pooled"):
        out.append(f"  the {len(us['tests'])} slices pooled (mean curvature and vertex): " + _ushape_text(us["pooled"]))
    return out


def _ushape_text(t: dict) -> str:
    shift = f"{math.exp(t['shift']):.3g}" if abs(t["shift"]) < 50 else "none (no minimum)"
    return (f"curvature {t['curvature']:.3f} {_ci(*t['curvature_interval'])}, vertex / D* = {shift} (log "
            f"{_ci(*t['shift_interval'])}): {t['verdict']}; " + _power(t, "a flat curve"))


def _limit_lines(result) -> list[str]:
    lim, K = result.limit, len(result.limit.get("outputs") or [])
    steps = [k for k in (0, result.spec["step"], K - 1) if 0 <= k < K]
    if lim["kind"] == "exact":
        head = (f"exact limit (linear activation), solved on {lim['nodes']} Chebyshev nodes, measured tolerance "
                f"{lim['tolerance']:.1e}:")
    else:
        head = f"reference network {tuple(lim['shape'])} (tanh: no exact limit; mean over its runs):"
    lines = [head]
    for k in dict.fromkeys(steps):
        f = ", ".join(f"{v:.6f}" for v in lim["outputs"][k])
        lines.append(f"  after {k} steps: outputs ({f}), loss {lim['loss'][k]:.6g}")
    return lines


def _cell_lines(result) -> list[str]:
    k = result.spec["step"]
    out = [f"cells at step {k}: mean hidden-state error +- standard error, output error, finite runs",
           f"{'L':>5} {'M':>5} {'D':>5} {'hidden':>10} {'+-':>8} {'output':>10} {'runs':>9}"]
    for c in result.cells:
        out.append(f"{c['L']:5d} {c['M']:5d} {c['D']:5d} {c['hidden'][k]:10.4g} {c['hidden_se'][k]:8.2g} "
                   f"{c['output'][k]:10.4g} {c['finite']:>4d}/{c['runs']:<4d}")
    return out


def report_lines(result) -> list[str]:
    """Every line of :meth:`~.result.ShapesResult.report`."""
    from .presets import CASES, PUBLISHED

    s = result.spec
    law, env = result.law, result.law.get("envelope", {})
    blown = sum(c["runs"] - c["finite"] for c in result.cells)
    lines = [f"shapes study, case {s['case']}: {CASES[s['case']]['label']}; {s['seeds']} runs per cell, "
             f"{len(s['depths'])} x {len(s['widths'])} x {len(s['dims'])} cells, {s['steps']} recorded steps at "
             f"lr {s['lr']:g}"]
    lines += verdict_lines(result)
    lines += [f"hidden-state error at step {s['step']}: " + law_line(law),
              f"  published (their grid, step {PUBLISHED['step']}, L > 50, M > 10, D > 10): a = {PUBLISHED['a']}, "
              f"b = {PUBLISHED['b']}, c about 0",
              f"  best shape at P = L M D parameters: D* = {env.get('kappa', math.nan):.3g} P^(1/3), error "
              f"{env.get('constant', math.nan):.3g} P^(-1/6)",
              f"output error at step {s['step']}: " + law_line(result.output_law)]
    lines += _limit_lines(result)
    lines += _cell_lines(result)
    lines.append(f"{blown} runs blew up (left out)" if blown else "no run blew up")
    lines.append(f"{result.seconds:.1f} s")
    return lines
