"""The text report of a law study (:meth:`~.result.LawResult.report`)."""

from __future__ import annotations

import math

__all__ = ["report_lines", "fit_line", "verdict_lines", "short_name", "WHY_ALONE"]


def _rate(f: dict) -> str:
    """A fit's rate with the one interval the verdict reads (the equivalence test's, with its margin
    and power)."""
    eq = f.get("equivalence")
    if f["rate"] is None or not math.isfinite(f["rate"]):  # a stored result writes nan as null
        return "no rate"
    if eq is None:  # a result stored before the equivalence test
        tlo, thi = f["rate_ci_test"]
        return f"rate {f['rate']:.2f}, {100 * (1 - f['level'] / 2):g}% [{tlo:.2f}, {thi:.2f}]"
    lo, hi = eq["interval"]
    return (f"rate {f['rate']:.2f}, {100 * (1 - 2 * eq['level']):g}% [{lo:.2f}, {hi:.2f}]"
            f"{'' if eq.get('closed', True) else ' (open)'} {'inside' if eq['within'] else 'not inside'} "
            f"1 +- {eq['margin']:g} (power {eq['power']:.2f})")


def fit_line(f: dict) -> str:
    """A fit of :func:`~.fit.fit_weak` in one line: its rate with the one interval the verdict reads
    (the equivalence test's, with its margin and power), the test and the verdict."""
    nxt = "" if f.get("next_rate_pvalue") is None else f", p(order 1, next term) = {f['next_rate_pvalue']:.3g}"
    return f"{_rate(f)}; {f['terms']} terms, p(fit) = {f['pvalue']:.3g}{nxt}: {f['verdict']} ({f['note']})"


def short_name(text: str) -> str:
    """A test function's formula without its gloss: ``'mean_i h_i^2'`` of ``'mean_i h_i^2 (the second ...)'``."""
    return text.split(" (", 1)[0]


WHY_ALONE = ("each test function alone, below: with a share of the joint fit's numbers and its own noise its "
             "interval is wider, so alone it may stay undecided, or its leading term undetected, where the joint "
             "fit, one rate for all of them, decides")
"""Why a test function alone may read otherwise than the joint fit, in one sentence."""


def verdict_lines(result) -> list[str]:
    """The verdict first, then each test function's own reading under it (:data:`WHY_ALONE`)."""
    from .phis import phi_text

    j = result.joint
    out = [f"verdict: {result.verdict} (every test function, one rate: {j['note']})",
           f"  {WHY_ALONE}:"]
    width = max(len(short_name(phi_text(q["phi"]))) for q in result.phis)
    out += [f"    {short_name(phi_text(q['phi'])):<{width}}  {q['fit']['verdict']}, {_rate(q['fit'])}"
            for q in result.phis]
    return out


def _phi_lines(q: dict, depths, text: str) -> list[str]:
    (a, b), (sa, sb) = q["fit"]["coefficients"][0][:2], q["fit"]["coefficient_se"][0][:2]
    out = [f"phi = {text}",
           f"{'L':>6} {'E phi(h_L) - E phi(H_1)':>24} {'se':>10} {'var/draw':>10} {'plain':>10} {'Richardson':>11} "
           f"{'se':>9}"]
    for j, L in enumerate(depths):
        r = (f"{q['richardson']['error'][j]:11.3e} {q['richardson']['se'][j]:9.2e}" if j < len(depths) - 1 else "")
        out.append(f"{L:6d} {q['error'][j]:24.4e} {q['se'][j]:10.2e} {q['variance'][j]:10.3g} "
                   f"{q['plain_variance'][j]:10.3g} {r}")
    rich = q["richardson"]
    more = "".join(f", {'cdefgh'[i]} = {c:.4g}" for i, c in enumerate(q["fit"]["coefficients"][0][2:]))
    out += [f"  a/L + b/L^2{' + ...' if more else ''}: a = {a:.4g} +- {sa:.2g}, b = {b:.4g} +- {sb:.2g}{more}",
            f"  alone: {fit_line(q['fit'])}",
            f"  Richardson 2 e(2L) - e(L): order {rich['rate']:.2f} [{rich['rate_ci'][0]:.2f}, {rich['rate_ci'][1]:.2f}]",
            f"  reference E phi(H_1) = {q['reference']:.6g} +- {q['reference_se']:.2g}; its error (R(F/4,F/2) - "
            f"R(F/2,F))/3 = {q['reference_error']:.2e} +- {q['reference_error_se']:.2e}"]
    return out


def report_lines(result) -> list[str]:
    """The lines of the report."""
    from .presets import DEFAULTS, LAWS
    from .engine import sde_grids
    from .phis import phi_text

    s, depths = result.spec, result.spec["depths"]
    own = "".join(f", {k} = {v}" for k, v in (s.get("law_options") or {}).items())
    c, p = s.get("variance_decay") or (0, 0)
    var = f"({s['variance']:g} + {c:g} L^-{p:g})" if c else f"{s['variance']:g}"
    law = LAWS.get(s["law"], f"{s['law']}{own}") + ("" if s["mean"] == 0 and var == "1" else
                                                    f", shifted: mean {s['mean']:g}/sqrt(d), variance {var}/d")
    net = f"{s.get('arch') or DEFAULTS['arch']} {s.get('activation') or DEFAULTS['activation']}"
    limit = "dH = dX tanh(H)" if not s.get("arch") else "dH = g(H, dX)"
    how = ("coupled through one Brownian path per draw (quantile transforms)" + (", martingale control variates"
                                                                                  if s["controls"] else "")
           if s["coupled"] else "plain Monte Carlo (independent draws)")
    lines = verdict_lines(result) + [f"convergence in law: {net}, d = {s['width']}, h_0 = 1, weights {law} -> {limit}",
             f"{result.draws} draws, {how}; E phi(H_1) by Euler-Maruyama on {', '.join(map(str, sde_grids(s['fine'])))} "
             f"steps, Richardson on the two finest"]
    for q in result.phis:
        lines += _phi_lines(q, depths, phi_text(q["phi"]))
    lines.append(f"joint (every phi, one rate): {fit_line(result.joint)}")
    d = result.distances
    lines.append(f"distances between the laws of |h_L|/|h_0| and the SDE's ({d['draws']} draws a side; floor: the SDE "
                 f"against itself, W1 {d['floor_w1']:.2e}, KS {d['floor_ks']:.3f}):")
    for j, L in enumerate(d["depths"]):
        lines.append(f"{L:6d}  W1 {d['w1'][j]:.3e} [{d['w1_ci'][j][0]:.2e}, {d['w1_ci'][j][1]:.2e}]  KS "
                     f"{d['ks'][j]:.4f} [{d['ks_ci'][j][0]:.4f}, {d['ks_ci'][j][1]:.4f}]")
    lines.append(f"{result.draws / max(result.seconds, 1e-9):.0f} draws/s, {result.seconds:.1f} s")
    return lines
