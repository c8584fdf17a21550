"""Convolution kernels along depth (issue 32): Table 1's quantities on spectral norms, within a
stage and across stages, exact on kernels whose norms are known by hand, batched equal to one
layer at a time, and the verdicts (sparse, smooth, rough) on conv kernel families built here."""

import math

import pytest
import torch

from deeplimits.diagnostics import (ConvKernels, conv_layer_norms, conv_spectral_norms, conv_weight_diagnostics,
                                    scaling_exponents)
from deeplimits.diagnostics.conv_depth import ConvLayerNorms
from deeplimits.errors import ParameterError

G = lambda s: torch.Generator().manual_seed(s)  # noqa: E731


def _shifts(a, c=1):
    """Layers ``a_k`` times a shift kernel (a 3x3 kernel with one non-zero tap, on c channels as
    the identity): the convolution is a_k times a permutation, spectral norm |a_k|, and sums and
    differences of such layers are the same shift times the sums and differences of the a_k."""
    K = torch.zeros(len(a), c, c, 3, 3, dtype=torch.float64)
    K[:, torch.arange(c), torch.arange(c), 0, 2] = torch.as_tensor(a, dtype=torch.float64)[:, None]
    return K


def test_exact_values_on_shift_kernels():
    a = [3.0, -1.0, 0.5, 2.0, 0.0]
    d = conv_weight_diagnostics(_shifts(a, c=2), 6, beta=0.5)
    inc = [4.0, 1.5, 1.5, 2.0]
    assert d.depth == 5 and d.shape == [2, 2, 3, 3] and d.input_size == [[6, 6]] and d.stage_layers == [5]
    assert d.max_norm == pytest.approx(3.0)
    assert d.increment_norm == pytest.approx(5 ** 0.5 * 4.0)
    assert d.cumsum_norm == pytest.approx(4.5)  # partial sums 3, 2, 2.5, 4.5, 4.5
    assert d.rss == pytest.approx(math.sqrt(9 + 1 + 0.25 + 4))
    assert d.quadratic_variation == pytest.approx(sum(x * x for x in inc))
    assert d.layers_90 == 2  # 9 + 4 of 14.25 is 91%
    n = conv_layer_norms(_shifts(a), 4)
    assert n.norms == [pytest.approx([3.0, 1.0, 0.5, 2.0, 0.0])]
    assert n.increments == [pytest.approx(inc)] and n.cumsum == [pytest.approx([3.0, 2.0, 2.5, 4.5, 4.5])]


def test_batched_equals_one_layer_at_a_time_within_and_across_stages():
    """Two stages of different channels and grids: each layer's norm, each increment's and each
    partial sum's is conv_spectral_norms of that one kernel (the same arithmetic in another batch:
    rel 1e-10); the increments do not cross the stages."""
    s0 = torch.randn(4, 3, 3, 3, 3, generator=G(1), dtype=torch.float64)
    s1 = 10 * torch.randn(3, 5, 3, 3, 3, generator=G(2), dtype=torch.float64)
    n = conv_layer_norms([s0, s1], [8, (4, 6)])
    for K, grid, norms, inc, cum in zip((s0, s1), ((8, 8), (4, 6)), n.norms, n.increments, n.cumsum):
        one = lambda k: float(conv_spectral_norms(k, grid))  # noqa: E731
        assert norms == pytest.approx([one(k) for k in K], rel=1e-10)
        assert inc == pytest.approx([one(K[i + 1] - K[i]) for i in range(len(K) - 1)], rel=1e-10)
        assert cum == pytest.approx([one(K[:i + 1].sum(0)) for i in range(len(K))], rel=1e-10)
    d = conv_weight_diagnostics([s0, s1], [8, (4, 6)])
    assert d.depth == 7 and d.stage_layers == [4, 3] and d.shape == [[3, 3, 3, 3], [5, 3, 3, 3]]
    assert d.max_norm == pytest.approx(max(max(x) for x in n.norms), rel=1e-12)
    assert d.increment_norm == pytest.approx(max(max(x) for x in n.increments), rel=1e-12)
    assert d.rss == pytest.approx(math.sqrt(sum(v * v for x in n.norms for v in x)), rel=1e-12)
    assert ConvLayerNorms.from_dict(n.to_dict()) == n
    assert d.norms == [pytest.approx(x, rel=1e-12) for x in n.norms] and len(d.increments[1]) == 2


def test_conv_kernels_carry_their_grids_and_a_float32_computation():
    s = [torch.randn(3, 2, 2, 3, 3, generator=G(3)), torch.randn(2, 4, 2, 1, 1, generator=G(4))]
    d = conv_weight_diagnostics(ConvKernels(s, [(8, 8), (4, 4)]))
    assert d.input_size == [[8, 8], [4, 4]]
    d32 = conv_weight_diagnostics(s, [8, 4], dtype=torch.float32)
    assert d32.max_norm == pytest.approx(d.max_norm, rel=1e-5)  # float32 rounding of the FFT
    assert math.isnan(conv_weight_diagnostics([s[0][:1], s[0][1:2], s[0][2:]], 8).increment_norm)  # 1 layer a stage


def _family(make, depths=(16, 32, 64, 128, 256)):
    return scaling_exponents([conv_weight_diagnostics(make(L), 8, name="A") for L in depths])


_K = torch.randn(3, 4, 4, 3, 3, generator=G(0), dtype=torch.float64)


@pytest.mark.slow
def test_a_few_large_kernels_are_sparse():
    """Three O(1) kernels at depth fractions 0.2, 0.5, 0.8 among i.i.d. kernels of 1% of their weight."""
    def make(L):
        A = 0.01 * _K.norm() / math.sqrt(L * 144) * torch.randn(L, 4, 4, 3, 3, generator=G(L), dtype=torch.float64)
        for j, f in enumerate((0.2, 0.5, 0.8)):
            A[int(f * L)] += _K[j]
        return A
    fam = _family(make)
    assert fam.hypothesis == "sparse", fam.report()
    assert fam.exponents["layers_90"]["value"] == 0 and abs(fam.exponents["max_norm"]["value"]) < 0.01


@pytest.mark.slow
def test_smooth_and_rough_conv_families_keep_their_verdicts():
    """L^-0.3 f(k/L) kernels for a smooth path f of kernels (smooth, beta 0.3 from the cumulative
    sum) and i.i.d. kernels of size L^-1/2 (rough, beta 1)."""
    def smooth(L):
        t = (torch.arange(L, dtype=torch.float64) + 0.5) / L
        return (torch.cos(3 * t)[:, None, None, None, None] * _K[0] + torch.sin(2 * t + 1)[:, None, None, None, None]
                * _K[1]) * L ** -0.3

    def iid(L):
        return torch.randn(L, 4, 4, 3, 3, generator=G(L), dtype=torch.float64) * L ** -0.5
    s, r = _family(smooth), _family(iid)
    assert s.hypothesis == "smooth" and abs(s.exponents["beta"]["value"] - 0.3) < 0.05, s.report()
    assert r.hypothesis == "rough" and r.exponents["layers_90"]["value"] > 0.7, r.report()


@pytest.mark.parametrize("stages,input_size,param,match", [
    (torch.zeros(4, 2, 2, 3), 8, "stages", r"shape \(L, c_out, c_in, kh, kw\)"),
    ([], 8, "stages", "non-empty list"),
    ("kernels", 8, "stages", "non-empty list"),
    (torch.zeros(2, 2, 2, 3, 3), 8, "stages", "L >= 3"),
    (torch.full((4, 2, 2, 3, 3), math.nan), 8, "stages", "finite"),
    (torch.zeros(4, 2, 2, 3, 3), 2, "input_size", "at least its kernels' size"),
    ([torch.zeros(4, 2, 2, 3, 3)] * 2, [8], "input_size", "one per stage"),
    (torch.zeros(4, 2, 2, 3, 3), None, "input_size", "integers >= 1"),
])
def test_bad_inputs_name_the_parameter(stages, input_size, param, match):
    with pytest.raises(ParameterError, match=match) as e:
        conv_weight_diagnostics(stages, input_size)
    assert e.value.param == param


def test_a_stage_too_large_for_memory_is_refused_before_any_copy():
    from deeplimits.errors import ResourceError

    huge = torch.zeros(1, 1, 1, 1, 1).expand(10 ** 6, 512, 512, 3, 3)  # one number, 2.4e12 as copies
    with pytest.raises(ResourceError, match="stages"):
        conv_weight_diagnostics(huge, 8)


def test_bad_beta_and_dtype():
    with pytest.raises(ParameterError, match="beta") as e:
        conv_weight_diagnostics(torch.zeros(4, 1, 1, 3, 3), 4, beta=1e6)
    assert e.value.param == "beta"
    with pytest.raises(ParameterError, match="dtype"):
        conv_layer_norms(torch.zeros(4, 1, 1, 3, 3), 4, dtype=torch.int64)
