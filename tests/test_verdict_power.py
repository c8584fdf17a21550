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
from deeplimits.studies.verdict_power import rejection_power, seen_from, verdict_power

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
    assert p.stderr == pytest.approx(eq["stderr"], rel=1e-9) and p.agrees == pytest.approx(eq["power"], rel=1e-9)
    assert p.equivalence_level == eq["level"] and p.level == fit.level / 2
    assert p.rejects == pytest.approx(rejection_power(eq["stderr"], 0.1, fit.level / 2), rel=1e-12)


@pytest.mark.parametrize("exponent, rel, verdict", [
    (0.5, 0.002, "agrees"),                  # correct, precise
    (0.8, 0.0002, "disagrees"),              # off by 0.3, precise: rejected
    (1.0, 0.003, "faster than declared"),   # no L^-1/2 term at all
])
def test_every_verdict_says_its_margin_and_power(exponent, rel, verdict):
    e = (0.1 if exponent < 1 else 0.0) * L ** -exponent + 0.3 * L ** -1 + 0.1 * L ** -1.5
    fit = _fit(e, rel)
    assert fit.verdict == verdict, fit.note
    p = verdict_power(fit, Term(2.0))
    text = p.text()
    assert text.startswith("margin 0.1;") and f"power {p.agrees:.2f}" in text and f"power {p.rejects:.2f}" in text
    assert p.rejects > 0.9  # these tables resolve a shift of 0.1


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
    assert out[i + 1].strip().startswith("margin 0.1: the declared expansion does not fit, whatever its exponent")


def test_faster_than_declared_prints_its_margin_and_power_on_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["order", "--scheme", "euler-maruyama", "--problem", "ou", "--noise-kind", "general",
                 "--margin", "0.05", "--no-figures"]) == 0
    out = capsys.readouterr().out.splitlines()
    i = next(i for i, line in enumerate(out) if line.startswith("-> faster than declared"))
    assert out[i + 1].strip().startswith("margin 0.05; the leading exponent's tests at this size")


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
    assert report(res).splitlines()[report(res).splitlines().index(line) + 1].strip().startswith("margin 0.1;")
