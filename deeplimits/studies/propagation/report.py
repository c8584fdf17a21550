"""The text reports of the signal-propagation studies: a stability study's table of medians and
regimes with the theory at the largest depth and the fitted laws (:class:`~.result.StabilityResult`),
and a phase diagram's estimates of beta* per H (:class:`~.result.PhaseResult`)."""

from __future__ import annotations

from .stability_theory import fit_lines, theory_lines

__all__ = ["stability_report", "phase_report", "boundary_report"]


def stability_report(result) -> str:
    """The report of a stability study, as text."""
    lines = [result.label, f"{'beta':>6} {'depth':>6} {'median r_h':>11} {'median r_p':>11} {'E r_h^2':>10} "
                         f"{'E r_p^2':>10} {'bounds on E r^2':>21} {'exploded':>8}  regime"]
    for r in result.records:
        b = (f"[{r['theory_lower']:.3g}, {r['theory_upper']:.3g}]" if r["theory_lower"] is not None
             else "-")
        lines.append(f"{r['beta']:6.3g} {r['depth']:6d} {r['r_h']['median']:11.4g} {r['r_p']['median']:11.4g} "
                     f"{r['r_h']['mean_sq']:10.3g} {r['r_p']['mean_sq']:10.3g} {b:>21} {r['exploded']:8d}  "
                     f"{r['regime']}")
    top = max(r["depth"] for r in result.records)
    for r in (r for r in result.records if r["depth"] == top):
        lines += theory_lines(r, result.delta)
    for s in result.samples:
        rec = next(r for r in result.records if r["beta"] == s["beta"] and r["depth"] == s["depth"])
        for key, what in (("lognormal_h", "||h_L||/||h_0||"), ("lognormal_p", "||p_0||/||p_L||")):
            f = rec[key]
            if f is not None:
                lines.append(f"beta {s['beta']:g}, L={s['depth']}: log {what} ~ N({f['mu']:.3f}, "
                             f"{f['sigma']:.3f}^2); normality test p = {f['pvalue']:.3g} (n = {f['n']})")
    lines += [line for f in result.fits for line in fit_lines(f)]
    return "\n".join(lines)


def phase_report(result) -> str:
    """The report of a phase diagram, as text."""
    arch = result.arch + ("" if result.bias is None else " with bias" if result.bias else " without bias")
    lines = [f"phase diagram: {arch}, {result.activation}, d={result.width}, L={result.depth}, "
             f"{len(result.hurst)} H x {len(result.beta)} beta, {result.draws} draws x {result.inputs} inputs",
             f"{'H':>6} {'beta* (log10 r_h = 0)':>22} {'beta* (scaling)':>16} {'beta* (r_p)':>12} "
             f"{'max(H,1/2)':>10} {'slope - predicted':>18}"]
    n = len(result.hurst)
    scaling = result.beta_star_scaling or [None] * n
    gaps = result.slope_gaps()
    fmt = lambda b: "-" if b is None else f"{b:.3f}"  # noqa: E731
    for h, b, bs, bp, p, g in zip(result.hurst, result.beta_star, scaling, result.beta_star_p or [None] * n,
                                  result.predicted, gaps):
        lines.append(f"{h:6.3f} {fmt(b):>22} {fmt(bs):>16} {fmt(bp):>12} {p:10.3f} {fmt(g):>18}")
    if result.slope_h is not None:
        lines.append(f"slope - predicted: mean over the cells with beta > max(H, 1/2) of the log-log slope of r_h "
                     f"between L = {result.short_depth} and {result.depth}, minus max(H, 1/2) - beta")
    if result.log10_rh_corrected is not None:
        lines += _corrected_lines(result, fmt)
    return "\n".join(lines)


def _corrected_lines(result, fmt) -> list[str]:
    """The corrected network beside the plain one: its beta* and the largest change of the mean
    ``log10 r_h`` over the betas, per H."""
    n = len(result.hurst)
    lines = ["corrected network (+ (L^-2beta / 2d) sigma' sigma per layer), same weights:",
             f"{'H':>6} {'beta* (log10 r_h = 0)':>22} {'beta* (scaling)':>16} {'max |corrected - plain|':>24}"]
    for h, b, bs, new, old in zip(result.hurst, result.beta_star_corrected,
                                  result.beta_star_scaling_corrected or [None] * n, result.log10_rh_corrected,
                                  result.log10_rh):
        gap = max(abs(a - c) for a, c in zip(new, old))
        lines.append(f"{h:6.3f} {fmt(b):>22} {fmt(bs):>16} {gap:24.3f}")
    return lines


def boundary_report(result) -> str:
    """The report of a phase boundary across depths (:class:`~.boundary.BoundaryResult`): per Hurst
    index and depth, the crossings of ``r_p`` and ``r_h`` with their intervals, the band the published
    colour scale shows, the depth-flat beta and the extrapolated crossing."""
    fmt = lambda b: "-" if b is None else f"{b:.3f}"  # noqa: E731
    ci = lambda c: f"[{fmt(c[0])}, {fmt(c[1])}]"  # noqa: E731
    lines = [f"phase boundary across depths: {result.arch}, {result.activation}, d={result.width}, fractional V and W, "
             f"{len(result.log10_rp[0]) if result.log10_rp else 0} draws x {result.inputs} inputs per H, "
             f"depths {', '.join(map(str, result.depths))} (prefixes of the same weights)"]
    for rec in result.summary():
        lines.append(f"H = {rec['hurst']:.3f} (max(H, 1/2) = {rec['predicted']:.3f}):")
        for l, L in enumerate(result.depths):
            lines.append(f"  L = {L:>6}: r_p crosses 0 at {fmt(rec['crossing_p'][l])} {ci(rec['crossing_p_ci'][l])}, "
                         f"|log10 r_p| < 1 for beta in ({fmt(rec['band_p'][l][0])}, {fmt(rec['band_p'][l][1])}); "
                         f"r_h crosses 0 at {fmt(rec['crossing_h'][l])} {ci(rec['crossing_h_ci'][l])}")
        for l in range(len(result.depths) - 1):
            lines.append(f"  r_p flat between L = {result.depths[l]} and {result.depths[l + 1]} at beta "
                         f"{fmt(rec['flat_p'][l])} {ci(rec['flat_p_ci'][l])}")
        lines.append(f"  r_p crossing extrapolated in 1/log10(L) to L = infinity: {fmt(rec['limit_p'])} "
                     f"{ci(rec['limit_p_ci'])}")
    return "\n".join(lines)
