"""The third verdict, sparse (issue 32; Cohen, Cont, Rossier & Xu, ICML 2021, §3.2): a few layers
of constant order carry the weight. Built here: families of known structure on which it must be
said (a few O(1) layers among small ones, in a small rough or smooth background), families on
which it must not (a function of depth of constant order, large layers whose number grows with
depth, large layers that shrink with depth, large layers in a rough background of their weight),
and the count of layers holding 90% of the squared norm on exact values."""

import math
import re

import pytest
import torch

from deeplimits.diagnostics import hypothesis, scaling_exponents, weigh_evidence, weight_diagnostics
from deeplimits.diagnostics.measures import layers_holding
from deeplimits.diagnostics.scaling import evidence_lines

G = lambda s: torch.Generator().manual_seed(s)  # noqa: E731
DEPTHS = (16, 32, 64, 128, 256)
_D = (8, 8)
_M = torch.randn(3, *_D, generator=G(0), dtype=torch.float64)  # the three large layers' weights


def _family(make, depths=DEPTHS):
    return scaling_exponents([weight_diagnostics(make(L), name="A") for L in depths])


def _spikes(L, sizes=(1.0, 1.0, 1.0)):
    """Three layers at depth fractions 0.2, 0.5 and 0.8 holding the fixed matrices _M times ``sizes``."""
    A = torch.zeros(L, *_D, dtype=torch.float64)
    for j, (f, c) in enumerate(zip((0.2, 0.5, 0.8), sizes)):
        A[int(f * L)] = c * _M[j]
    return A


def _noise(L, size):
    """i.i.d. Gaussian weights whose root sum of squares is about ``size`` times the spikes' at every depth."""
    return size * _M.norm() / math.sqrt(L * math.prod(_D)) * torch.randn(L, *_D, generator=G(L), dtype=torch.float64)


def _smooth(L, beta):
    t = (torch.arange(L, dtype=torch.float64) + 0.5) / L
    return (torch.cos(3 * t)[:, None, None] * _M[0] + torch.sin(2 * t + 1)[:, None, None] * _M[1]) * L ** -beta


def test_layers_holding_exact_values():
    assert layers_holding(torch.tensor([0.0, 9.0, 0.5, 0.5])) == 1  # 9 of 10 is 90%
    assert layers_holding(torch.tensor([0.0, 8.0, 1.5, 0.5])) == 2  # 8 < 9 <= 9.5
    assert layers_holding(torch.ones(10, dtype=torch.float64)) == 9
    assert layers_holding(torch.ones(7)) == 7  # 6 of 7 is 85.7%
    assert math.isnan(layers_holding(torch.zeros(5)))
    d = weight_diagnostics(_spikes(50) + 1e-6)
    assert d.layers_90 == 3 and "     3" in d.report_line()  # the largest two of the three hold 72% of it


def test_a_few_layers_of_constant_order_among_small_ones_are_sparse():
    """Three O(1) layers among i.i.d. ones whose squared norms sum to 1e-4 of theirs: every
    exponent of the evidence is exact up to the background (the max norm, the root sum of squares
    and the count are constant; the scaled increments L^beta L^0 with beta = 1, the cumulative sum
    being bounded)."""
    fam = _family(lambda L: _spikes(L) + _noise(L, 0.01))
    e = fam.exponents
    assert fam.hypothesis == "sparse", fam.report()
    assert abs(e["max_norm"]["value"]) < 0.01 and abs(e["rss"]["value"]) < 0.01 and e["layers_90"]["value"] == 0
    assert abs(e["beta_max"]["value"]) < 0.01 and abs(e["beta"]["value"] - 1) < 0.02
    s3 = {i["step"]: i for i in fam.evidence}
    assert all(s3[k]["agrees_H3"] for k in (2, 3, 5, 6)) and s3[6]["agrees"] == "neither"
    assert "Hypothesis 3, sparse" in fam.reason and re.search(r"beta from the max norm -?0\.00", fam.reason)
    assert "agrees with Hypothesis 3 (sparse): step 2 max norm, step 3 scaled increments" in fam.reason
    table = "\n".join(evidence_lines(fam.evidence))
    assert "H3 (sparse)" in table and "layers holding 90%" in table


def test_sparse_with_a_small_smooth_background_and_unequal_layers():
    """The large layers of sizes 2, 1 and 0.5, over a smooth trend L^-1 f(k/L) of 1% of them:
    the two largest hold 90% at every depth (4 + 1 of 5.25 times a common size, the _M being alike)."""
    fam = _family(lambda L: _spikes(L, (2.0, 1.0, 0.5)) + 0.01 * _smooth(L, 1.0))
    assert fam.hypothesis == "sparse", fam.report()
    assert {weight_diagnostics(_spikes(L, (2.0, 1.0, 0.5)) + 0.01 * _smooth(L, 1.0)).layers_90 for L in DEPTHS} == {2.0}


@pytest.mark.parametrize("case", ["smooth beta 0", "smooth beta 0.3", "iid", "spikes every 8 layers",
                                  "shrinking spikes", "spikes in rough noise of their weight"])
def test_sparse_is_not_said_where_the_weight_is_spread_or_shrinks(case):
    """A function of depth of constant order (beta = 0) has the max norm of the sparse regime but
    spreads its squared norm over a fixed fraction of the layers (the count and the root sum of
    squares grow like L and L^1/2); large layers at every 8th layer grow in number; large layers
    of size L^-1/2 shrink; large layers in i.i.d. noise of the same total weight share it with a
    fixed fraction of the layers. The smooth and rough families keep their verdicts."""
    make = {"smooth beta 0": lambda L: _smooth(L, 0.0),
            "smooth beta 0.3": lambda L: _smooth(L, 0.3),
            "iid": lambda L: _noise(L, 1.0),
            "spikes every 8 layers": lambda L: torch.zeros(L, *_D, dtype=torch.float64).index_add_(
                0, torch.arange(0, L, 8), _M[0].expand(L // 8, *_D).clone()) + _noise(L, 0.01),
            "shrinking spikes": lambda L: _spikes(L) * L ** -0.5 + _noise(L, 0.01) * L ** -0.5,
            "spikes in rough noise of their weight": lambda L: _spikes(L) + _noise(L, 1.0)}[case]
    fam = _family(make)
    assert fam.hypothesis != "sparse", fam.report()
    expected = {"smooth beta 0.3": "smooth", "iid": "rough"}.get(case)
    if expected:
        assert fam.hypothesis == expected, fam.report()
    if case != "shrinking spikes":  # the count grows like L where the weight is spread
        assert fam.exponents["layers_90"]["value"] > 0.7, fam.report()
        assert {i["step"]: i["agrees"] for i in fam.evidence}[6] == "both"
    else:
        assert fam.exponents["max_norm"]["value"] < -0.4


def _exponents(**values):
    """Exponents with intervals 0.1 wide."""
    return {k: {"value": v, "ci": [v - 0.05, v + 0.05]} for k, v in values.items()}


def test_hypothesis_on_exponents_needs_all_four_pieces_of_evidence():
    sparse = dict(beta=0.0, increment_norm=0.0, rss=0.0, max_norm=0.05, layers_90=0.1)
    depths = list(DEPTHS)
    assert hypothesis(_exponents(**sparse), depths=depths)[0] == "sparse"
    for key, value in (("max_norm", -0.3), ("rss", 0.3), ("increment_norm", -0.3), ("layers_90", 0.5)):
        verdict, reason = hypothesis(_exponents(**{**sparse, key: value}), depths=depths)
        assert verdict != "sparse", (key, reason)
    no_count = {k: v for k, v in sparse.items() if k != "layers_90"}  # a record written before the count
    assert hypothesis(_exponents(**no_count), depths=depths)[0] != "sparse"
    assert all(i["step"] != 6 for i in weigh_evidence(_exponents(**no_count)))


def test_evidence_weighed_before_the_third_hypothesis_still_prints():
    old = [{"step": 2, "name": "max norm", "quantity": "max_k ||A_k||", "measured": "L^-0.30", "H1": "L^-0.30",
            "H2": "L^-0.30", "agrees": "both"}]
    lines = evidence_lines(old)
    assert len(lines) == 2 and lines[1].rstrip().endswith("both")
