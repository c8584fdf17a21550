"""The text report of a transfer study (:class:`~.result.TransferResult`): what was trained, the
rule of the verdicts, then per setting the verdict first, the optimal base rate per depth, its
exponent beside the prediction, the loss gaps, the coordinate check and the limit beside it."""

from __future__ import annotations

from .presets import LEVEL, LOSS_MARGIN, SLOPE_MARGIN

__all__ = ["report", "setting_lines"]


def report(result) -> str:
    """The report of ``result``, as text."""
    s = result.spec
    where = f"data {s['data']!r} (SHA-256 {s['data_sha256'][:12]}...)" if s.get("data") else "digits"
    nets = (f"convolutional ResNets of {s['stages']} stage(s) from {s['width']} channels on {s['dataset']}"
            if "dataset" in s else f"the networks of model {s['model']!r} on {where}" if s.get("model")
            else f"{s.get('arch') or 'res-1'} {s.get('activation') or 'tanh'} MLPs of width {s['width']} on {where}")
    lines = [f"learning-rate transfer across depth: {nets} "
             f"({s['samples']} samples, {s['epochs']} epochs of mini-batches of {s['batch_size']}), depths "
             f"{s['depths']}, base rates 2^{s['lrs'][0]}..2^{s['lrs'][-1]}, {s['seeds']} seeds; blocks trained at "
             "base x L^p, the rest fixed",
             f"verdicts (docs/transfer.md): {100 * (1 - LEVEL):g}% intervals; transfers: the base optimum's "
             f"exponent within ±{SLOPE_MARGIN:g} and the transferred rate within {LOSS_MARGIN:.0%} of each "
             "depth's optimal loss"]
    for r in result.settings:
        lines += setting_lines(r)
    lines.append(f"{result.seconds:.1f} s")
    return "\n".join(lines)


def setting_lines(r: dict) -> list[str]:
    """The report's lines of one setting (:func:`~.result.summarise_setting`)."""
    out = [f"beta {r['beta']:g}, {r['optimizer']}, {r['variant']} (p = {r['exponent']:g}; predicted "
           f"{r['predicted']:g}): {r['verdict']} ({r['why']})"]
    if "optimum" in r:
        opt = ", ".join(f"L={L}: 2^{o:.2f}{'*' if e else ''} [{a:.1f}, {b:.1f}]"
                        for L, o, e, (a, b) in zip(r["depths"], r["optimum"], r["edge"], r["optimum_ci"]))
        gaps = ", ".join(f"{100 * g:.0f}%" for g in r["loss_gap"])
        lo, hi = r["slope_ci"]
        star = "; *: on the edge of the grid" if any(r["edge"]) else ""
        out += [f"  optimal base rate (log2, 90% bootstrap interval{star}): {opt}",
                f"  base optimum ~ L^{r['slope']:.2f} [{lo:.2f}, {hi:.2f}]; "
                f"optimal rate ~ L^{r['rate_exponent']:.2f} "
                f"[{lo + r['exponent']:.2f}, {hi + r['exponent']:.2f}] (predicted L^{r['predicted']:g}); "
                f"loss at the transferred rate over each optimum: {gaps}"]
        if len(r.get("horizons") or []) > 1:
            out.append("  the optimal rate's exponent by horizon (after epoch): " + "; ".join(
                f"{h['epoch']}: L^{h['rate_exponent']:.2f} [{h['slope_ci'][0] + r['exponent']:.2f}, "
                f"{h['slope_ci'][1] + r['exponent']:.2f}]" for h in r["horizons"]) + f" (predicted L^{r['predicted']:g})")
    if "roughness" in r and r["roughness"]["slope"] is not None:
        w = r["roughness"]
        out.append(f"  trained blocks at the transferred rate: mean_k |ΔV_(k+1) - ΔV_k| / mean_k |ΔV_k| ~ "
                   f"L^{w['slope']:.2f} {_ci(w['ci'])} (smooth in k/L: L^-1; independent layers: L^0)")
    c = r["coords"]
    out.append("  coordinate check: " + "; ".join(
        f"{k} ~ L^{c[k]['slope']:.2f} {_ci(c[k]['ci'])} ({c[k]['reading']})" if c[k]["slope"] is not None
        else f"{k}: unclear" for k in ("h_L", "block")))
    if "limit" in r:
        from .limit import limit_lines

        out += limit_lines(r["limit"])
    return out


def _ci(ci) -> str:
    return "[-, -]" if ci[0] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"
