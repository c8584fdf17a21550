"""Every verdict of a strong order prints its margin and the power of its tests at the run's size
(docs/mathematics.md, "Error expansions and the verdict"; deeplimits.studies.verdict_power):
``disagrees``, ``pre-asymptotic`` and ``faster than declared`` printed neither before, and a
``pre-asymptotic`` that needed the next term did not say from which depth the declared order is seen."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deeplimits.cli import main
from deeplimits.orders import Term
from deeplimits.studies.expansion_fit import fit_expansion
from deeplimits._stats import normal_cdf, normal_quantile
from deeplimits.studies._expansion_reading import levels, readings
from deeplimits.studies.verdict_power import reading_level, rejection_power, seen_from, verdict_power

L = np.array([8, 16, 32, 64, 128, 256, 512], dtype=float)
EM = (Term(0.5, kind="fluctuation"), Term(1.0, kind="mixed"), Term(1.5, kind="mixed"))
Z90, Z9975 = 1.2815515655446004, 2.807033768343811  # the 90% and 99.75% normal quantiles


def _fit(e, rel):
    return fit_expansion(L, e, EM, stderr=e * rel, draws=4096, remainder=Term(2.0))


def test_the_rejection_power_in_numbers():
    # two-sided at level 0.005: z = z_0.9975; at delta / s = z + z_0.9 the near tail is 0.9, the far one ~0
    s = 0.1 / (Z9975 + Z90)
    assert rejection_power(s, 0.1, 0.005) == pytest.approx(0.9, abs=1e-6)
    assert rejection_power(0.0, 0.1, 0.005) == 1.0 and rejection_power(math.inf, 0.1, 0.005) == 0.0
    assert rejection_power(1e3, 0.1, 0.005) == pytest.approx(0.005, rel=1e-3)  # no information: the level


def test_the_powers_are_read_from_the_interval_the_verdict_reads():
    e = 0.1 * L ** -0.5 + 0.05 * L ** -1
    fit = _fit(e, 0.002)
    assert fit.verdict == "agrees"
    p = verdict_power(fit, Term(2.0))
    eq = fit.equivalence
    assert p.kind == "tested" and p.stderr == pytest.approx(eq["stderr"], rel=1e-9)
    assert p.agrees == pytest.approx(eq["power"], rel=1e-9) and p.equivalence_level == eq["level"] == 0.025
    assert p.level == fit.level / 2 == 0.005
    assert p.rejects == pytest.approx(rejection_power(eq["stderr"], 0.1, 0.005), rel=1e-12)


def test_a_reading_with_the_next_terms_is_powered_at_its_share_of_the_level():
    # the declared expansion fits only with its next term: that reading's level is a share of the
    # other half of the equivalence level (six readings on 7 depths with 3 terms: 0.05 / 10 each)
    fit = _fit(0.01 * L ** -0.5 + 0.3 * L ** -1 - 0.5 * L ** -1.5 + 20 * L ** -2, 0.001)
    assert fit.remainder is not None, fit.note
    assert reading_level(fit, Term(2.0), 0.05) == levels(0.05, readings(L, 3, Term(2.0)))[1] == 0.005
    assert verdict_power(fit, Term(2.0)).equivalence_level == pytest.approx(0.005)
    # a sized run's look reads at a share of the levels, and so is its power read
    assert verdict_power(fit, Term(2.0), 0.05 / 4).equivalence_level == pytest.approx(0.005 / 4)
    # the declared expansion read on every depth takes half of it
    agree = _fit(0.1 * L ** -0.5 + 0.05 * L ** -1, 0.002)
    assert agree.remainder is None and reading_level(agree, Term(2.0), 0.05) == 0.025


@pytest.mark.parametrize("name, e, rel, verdict, kind", [
    ("correct, precise", 0.1 * L ** -0.5 + 0.3 * L ** -1 + 0.1 * L ** -1.5, 0.002, "agrees", "tested"),
    ("off by 0.3", 0.1 * L ** -0.8 + 0.3 * L ** -1 + 0.1 * L ** -1.5, 0.0002, "disagrees", "misfit"),
    # the errors alternate around the law: they fit no expansion, whatever its exponent (a finite interval)
    ("alternating", 0.1 * L ** -0.5 * (1 + 0.2 * (-1.0) ** np.arange(7)) + 0.1 * L ** -1, 0.01, "disagrees",
     "misfit"),
    ("no L^-1/2 term", 0.3 * L ** -1 + 0.1 * L ** -1.5, 0.003, "faster than declared", "faster"),
    # a large next term: with it the leading term would dominate only beyond the deepest depth
    ("next term", 0.01 * L ** -0.5 + 0.3 * L ** -1 - 0.5 * L ** -1.5 + 20 * L ** -2, 0.001, "pre-asymptotic",
     "untested"),
])
def test_every_verdict_says_its_margin_and_power(name, e, rel, verdict, kind):
    fit = _fit(e, rel)
    assert fit.verdict == verdict, fit.note
    p = verdict_power(fit, Term(2.0))
    assert p.kind == kind and p.text().startswith("margin 0.1"), p
    if kind == "tested":
        assert f"power {p.agrees:.2f}" in p.text() and f"power {p.rejects:.2f}" in p.text() and p.rejects > 0.9
    elif kind == "faster":  # an exponent 0.1 beyond 0.6 reads faster: Phi(0.1 / s - z) at the faster test's level
        assert p.agrees == pytest.approx(normal_cdf(0.1 / p.stderr - normal_quantile(1 - fit.faster["level"])))
        assert p.agrees > 0.9 and f"power {p.agrees:.2f}" in p.text()
    else:  # no number where the exponent's test did not run or cannot tell: the line says why
        assert "power" not in p.text().replace("has no power", "")
        assert ("whatever its exponent" if kind == "misfit" else "not tested") in p.text()


def test_a_pre_asymptotic_reading_says_from_which_depth_the_declared_order_is_seen():
    # a large next term L^-2: the declared expansion fits only with it; fitted with it, L^-1/2 dominates
    # from a depth beyond the deepest one (the former note said only "not asymptotic yet")
    e = 0.01 * L ** -0.5 + 0.3 * L ** -1 - 0.5 * L ** -1.5 + 20 * L ** -2
    fit = _fit(e, 0.001)
    assert fit.verdict == "pre-asymptotic" and "fits with its next term L^-2" in fit.note, fit.note
    where = seen_from(fit)
    depth = float(where.removeprefix("from depth "))
    assert 512 < depth < 1e15
    # the depth is where, in the fit with the next term, the leading term reaches the rest's net part
    a, b, c, d = _fit_with_next(fit)
    lead, rest = a * depth ** -0.5, abs(b / depth + c * depth ** -1.5 + d * depth ** -2)
    assert lead == pytest.approx(rest, rel=0.02)
    assert seen_from(_fit(0.1 * L ** -0.5 + 0.05 * L ** -1, 0.002)) is None  # another reading: nothing to add


def _fit_with_next(fit):
    from deeplimits.studies._expansion_core import _fit

    Lw, b, w, corr = fit.data
    ext = _fit(Lw, b / w, fit.read_terms, corr / np.outer(w, w), None, None, fit.level, None, fit.draws)
    return ext.coefficients


def test_a_misfit_says_its_rejection_does_not_depend_on_the_margin(tmp_path, monkeypatch, capsys):
    # Heun on the Ito linear SDE declared order 1: the expansion does not fit at all
    monkeypatch.chdir(tmp_path)
    assert main(["order", "--scheme", "heun", "--problem", "linear-sde", "--no-figures"]) == 0
    out = capsys.readouterr().out.splitlines()
    i = next(i for i, line in enumerate(out) if line.startswith("-> disagrees"))
    assert out[i + 1].strip() == ("margin 0.1: the declared expansion does not fit, whatever its exponent (a rejection "
                                  "that does not depend on the margin)")


def test_faster_than_declared_prints_its_margin_and_power_on_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["order", "--scheme", "euler-maruyama", "--problem", "ou", "--noise-kind", "general",
                 "--margin", "0.05", "--no-figures"]) == 0
    out = capsys.readouterr().out.splitlines()
    i = next(i for i, line in enumerate(out) if line.startswith("-> faster than declared"))
    assert out[i + 1].strip().startswith("margin 0.05; the faster order's test at this size: an exponent 0.05 beyond")


def test_the_report_of_a_pre_asymptotic_run_says_where_the_declared_order_is_seen():
    from deeplimits.orders import StrongOrder
    from deeplimits.studies.convergence.report import report
    from deeplimits.studies.scheme_order.cases import Case
    from deeplimits.studies.scheme_order.sized import table_result

    order = StrongOrder(0.5, "", "", kind="fluctuation", next_terms=EM[1:])  # next: L^-2
    mean = 0.01 * L ** -0.5 + 0.3 * L ** -1 - 0.5 * L ** -1.5 + 20 * L ** -2
    noise = 1 + 0.02 * np.random.default_rng(0).standard_normal((4096, 1))  # one factor a draw: tight
    case = Case("next term", tuple(int(x) for x in L), 4096, order, None, lambda n, s: None)
    res = table_result(case, mean * noise)
    assert res.verdict == "pre-asymptotic", res.fit.note
    line = next(x for x in report(res).splitlines() if x.startswith("-> pre-asymptotic"))
    assert f"; fitted with its next term L^-2, L^-1/2 dominates {seen_from(res.fit)}; see docs/schemes.md" in line
    after = report(res).splitlines()[report(res).splitlines().index(line) + 1].strip()
    assert after.startswith("margin 0.1: the leading exponent is not tested at these depths"), after
