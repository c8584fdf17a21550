"""The text of the scheme-order study's calibration (:class:`~.result.Calibration`): a Markdown
table of the size and agreement of the verdict per case with their intervals, and per shift the
refusals of ``agrees`` (a strong order's own report is its result's, :mod:`deeplimits.studies.convergence.report`)."""

from __future__ import annotations

from ..equivalence import MARGIN

__all__ = ["calibration_table"]


def calibration_table(cal) -> str:
    """The table of the :class:`~.result.Calibration` ``cal`` (see :meth:`~.result.Calibration.table`)."""
    rows = cal.row_objects()
    sized = any(r.budget_counts for r in rows)
    cols = ["disagrees (size) [95% CI]", f"agrees (margin {MARGIN:g})"] + [
        f"not agrees, off by {m:g} (margin {m:g})" for m in cal.shifts]
    head = ["case", "expansion", "depths, draws"] + cols + (
        [f"sized run: {c}" for c in cols] + ["sized run: mean draws (correct)"] if sized else [])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.case, r.expansion, f"{r.depths[0]}..{r.depths[-1]}, {r.draws}"] + r.cells(r.counts, cal.shifts)
        if sized:
            cells += (r.cells(r.budget_counts, cal.shifts) + [f"{r.budget_draws:.0f}"] if r.budget_counts
                      else ["-"] * (len(cols) + 1))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)
