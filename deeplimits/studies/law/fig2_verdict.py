"""The verdict of Marion et al.'s Fig. 2 at its own size (docs/law.md, "Marion et al., Fig. 2"):
does the res-3 network's ``|h_L|/|h_0|`` have the limit's quartiles?

The limit's law is known exactly (log-normal, :func:`~.fig2.limit_quartiles`), so each quartile
is an exact test: with ``n`` draws at depth ``L`` and ``k`` of them below the limit's quantile
``q_p`` (``p`` = 1/4, 1/2, 3/4), ``k ~ Binomial(n, p)`` when the network's law has the limit's
``p``-quantile. At each depth:

* **differs**: a two-sided binomial test rejects at the level
  :data:`~deeplimits.studies.expansion_fit.LEVEL` (0.01) split over
  the three quartiles (Bonferroni);
* **agrees**: an equivalence test (:class:`~deeplimits.studies.equivalence.Equivalence`) of each
  fraction ``k / n`` within :data:`~.presets.FIG2_MARGIN` of ``p`` (the limit's quartile lies between
  the network's ``p - 0.05`` and ``p + 0.05`` quantiles): each 90% Clopper-Pearson interval inside
  the margin;
* **insufficient evidence**: neither; the note gives the test's power at this size and the
  draws that would decide.

The study's verdict is the deepest depth's reading, except that a deepest depth that still
differs reads ``pre-asymptotic`` when it differs less than the shallowest (the quartiles approach
the limit's) and ``disagrees`` otherwise.
"""

from __future__ import annotations

__all__ = ["depth_reading", "fig2_verdict"]

_PROBABILITIES = (0.25, 0.5, 0.75)


def depth_reading(below, n: int) -> dict:
    """One depth: ``below`` the counts of draws under the limit's three quartiles, ``n`` the draws.
    ``{'reading', 'pvalue', 'fractions', 'intervals', 'power', 'draws_to_decide'}``."""
    from scipy.stats import binomtest

    from ..equivalence import EQUIVALENCE_LEVEL, Equivalence
    from ..expansion_fit import LEVEL
    from .presets import FIG2_MARGIN

    tests = [binomtest(int(k), n, p) for k, p in zip(below, _PROBABILITIES)]
    pvalue = min(1.0, len(tests) * min(t.pvalue for t in tests))
    cis = [tuple(t.proportion_ci(1 - 2 * EQUIVALENCE_LEVEL, method="exact")) for t in tests]
    eqs = [Equivalence(p, FIG2_MARGIN, EQUIVALENCE_LEVEL, k / n, ci) for k, p, ci in zip(below, _PROBABILITIES, cis)]
    reading = "differs" if pvalue < LEVEL else "agrees" if all(e.within for e in eqs) else "insufficient evidence"
    need = [e.draws_to_decide(n) for e in eqs]
    return {"reading": reading, "pvalue": pvalue, "fractions": [k / n for k in below], "intervals": [list(c) for c in cis],
            "power": min(e.power for e in eqs), "draws_to_decide": max((x for x in need if x), default=None)}


def fig2_verdict(depths, readings: list) -> tuple[str, str]:
    """``(verdict, note)`` of the per-depth ``readings`` (:func:`depth_reading`, in the order of ``depths``)."""
    from .presets import FIG2_MARGIN

    def worst(r):
        return max(abs(f - p) for f, p in zip(r["fractions"], _PROBABILITIES))

    L, last = depths[-1], readings[-1]
    differ = [d for d, r in zip(depths, readings) if r["reading"] == "differs"]
    where = f"; the quartiles differ from the limit's at L = {', '.join(map(str, differ))}" if differ else ""
    if last["reading"] == "agrees":
        return "agrees", (f"at L = {L} each quartile of the limit lies within {FIG2_MARGIN:g} of the network's "
                          f"(power {last['power']:.2f} at this size){where}")
    if last["reading"] == "differs":
        verdict = "pre-asymptotic" if len(depths) > 1 and worst(last) < worst(readings[0]) else "disagrees"
        closer = " and by less than at L = " + str(depths[0]) if verdict == "pre-asymptotic" else ""
        return verdict, f"at L = {L} the network's quartiles still differ from the limit's (p = {last['pvalue']:.2g}){closer}"
    need = last["draws_to_decide"]
    more = f"; about {need} draws a depth would decide it" if need else ""
    return "insufficient evidence", (f"at L = {L} the quartiles are consistent with the limit's (p = {last['pvalue']:.2g}) "
                                     f"but not shown within {FIG2_MARGIN:g} (power {last['power']:.2f} at this size)"
                                     f"{more}{where}")
