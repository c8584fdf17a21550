"""The text report of a strong-error study (:class:`~.result.ConvergenceResult`): the table of
errors per depth, the fitted rate beside the declared order, the test of the declared expansion
with its verdict first among what the reader acts on, the error constant, and the warnings."""

from __future__ import annotations

import math

from ..verdict_power import seen_from

__all__ = ["report", "theory_text"]


def report(r) -> str:
    """The table, the fitted rate against theory, and the verdict of the result ``r``, as text."""
    alpha = f", alpha={r.alpha:g}" if r.alpha else ""
    ito = ", limit without the Itô correction" if r.ito_correction is False else ""
    ref = r.reference_method or f"reference grid 1/{r.reference}"
    lines = [f"{r.label}: {r.draws} draws, reference: {ref}{alpha}{ito}",
             f"{'depth':>7}  {'E max_k |H-h|':>14}  {'± se':>9}  {'ratio':>6}  {'E |H_1-h_L|':>12}"]
    for depth, error, stderr, q, terminal in zip(r.depths, r.error, r.stderr, r.ratios(),
                                                  r.terminal_error):  # no pandas: the base install
        ratio = "" if math.isnan(q) else f"{q:6.2f}"
        lines.append(f"{depth:7d}  {_num(error, '14.5g')}  {_num(stderr, '9.2g')}  {ratio:>6}  "
                     f"{_num(terminal, '12.5g')}")
    lo, hi = r.rate_ci
    lines.append(f"rate {_num(r.rate, '.3f')}  95% CI [{_num(lo, '.3f')}, {_num(hi, '.3f')}]   "
                 f"theory {theory_text(r)}   (one power law over all depths)")
    fit = r.fit
    if fit is not None:
        lines += fit.lines()
    c = r.normalised_terminal()
    if c is not None:
        z = (c["value"] - c["theory"]) / c["stderr"] if c["stderr"] else math.nan
        lines.append(f"error constant: {r.terms[0].text.replace('L^-', 'L^')} E|H_1-h_L| at depth {c['depth']} = "
                     f"{c['value']:.4f} ± {c['stderr']:.2g}, theory {c['theory']:.4f} (limit {c['constant']:.4f}"
                     f"{', next terms' if r.constant_next else ''}"
                     f"{', nested reference' if r.nested and r.terms[0].kind != 'unshared' else ''}; "
                     f"{z:+.1f} se): {r.constant_source}")
    if r.stages:  # a run sized to decide
        lines.append("sized to decide: " + "; ".join(f"{s['draws']} draws {s['verdict']} ({s['seconds']:.0f} s)"
                                                     for s in r.stages))
    lines.append(f"-> {fit.verdict}: {_note(fit)}" if fit is not None and fit.verdict != "insufficient evidence"
                 else f"-> insufficient evidence: {r.verdict_note}")
    if fit is not None and fit.verdict not in ("agrees", "insufficient evidence"):  # theirs print it in the note
        lines.append(f"   {r.power.text()}")
    lines.append(f"note: {r.rate_note}")
    if r.nonfinite == r.draws:
        lines.append(f"warning: all {r.draws} draws blew up (non-finite states): no error estimate")
    elif r.nonfinite:
        lines.append(f"warning: {r.nonfinite} draws blew up (non-finite states) and are excluded")
    return "\n".join(lines)


def _note(fit) -> str:
    """The verdict's note; where a ``pre-asymptotic`` verdict needed the next terms, with from which
    depth, fitted with them, the declared leading term dominates
    (:func:`~deeplimits.studies.verdict_power.seen_from`)."""
    where = seen_from(fit) if fit.verdict == "pre-asymptotic" else None
    if where is None:
        return fit.note
    head, sep, tail = fit.note.partition("; see ")
    return f"{head}; fitted with {fit.next_text}, {fit.terms[0].text} dominates {where}{sep}{tail}"


def theory_text(r) -> str:
    """The declared order of ``r`` in words (its logarithmic factor and slope over the depths)."""
    if not r.theory_log_power:
        return f"{r.theory_rate:.3f}"
    log = "sqrt(log L)" if r.theory_log_power == 0.5 else f"(log L)^{r.theory_log_power:g}"
    return f"{r.theory_rate:.3f} x {log} (slope {r.theory_slope:.3f} over these depths)"


def _num(x, fmt: str) -> str:
    """``x`` formatted, or ``'-'`` (right-aligned to the same width) when missing or not finite."""
    if x is None or not math.isfinite(x):
        return format("-", ">" + fmt.split(".")[0]) if fmt[0].isdigit() else "-"
    return format(x, fmt)
