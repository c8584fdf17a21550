"""The layers of a propagation pass drawn as the forward pass reaches them
(deeplimits/studies/_streamed.py): the same numbers as drawing them all first, in any order of
access, and torch on one thread inside the pass without changing the drawn numbers."""

import pytest
import torch

import deeplimits as dl
from deeplimits import _random
from deeplimits.studies.propagation import core as P


@pytest.mark.parametrize("law,names", [("uniform", ("V", "W")), ("rademacher", ("V", "W")), ("uniform", ("W", "b")),
                                       ("gaussian", ("V", "W"))])
@pytest.mark.slow
def test_streamed_layers_are_the_drawn_weights(law, names):
    """Blocks of 4M elements (here several layers each, and a different count for W and b) are
    drawn one ahead; every layer equals the one of the sample's whole iter_weights (the same
    generator, seeds and block shapes; compared to one float32 ulp, as the scaling of a block
    may be vectorised differently on another CPU)."""
    drv = dl.make_driver(law)
    g = torch.Generator().manual_seed(3)
    layout = [(nm, (40,) if nm == "b" else (40, 40)) for nm in names]
    samples, *_, top = P._draw(layout, drv, 40, 4, [300], 20, 1, g, torch.float32)
    whole = {nm: torch.cat(list(s.iter_weights(top))) for nm, s in samples.items()}
    layers = P._layers(samples, top, 300)
    assert len(layers) == 300 and len(layers[10:13]) == 3
    for k in (0, 1, 140, 299, 150):  # forward, then out of order (the backward pass reads in reverse)
        assert list(layers[k]) == list(names)
        for nm, w in layers[k].items():
            torch.testing.assert_close(w, whole[nm][k], rtol=1.2e-7, atol=0)
    with pytest.raises(IndexError):
        layers[300]


def test_single_threaded_torch_restores_threads_and_keeps_numbers():
    before = torch.get_num_threads()
    ref = _random.uniform((3, 1 << 18), 7, torch.float32, -1.0, 1.0)
    with _random.single_threaded_torch():
        assert torch.get_num_threads() == 1
        inside = _random.uniform((3, 1 << 18), 7, torch.float32, -1.0, 1.0)
    assert torch.get_num_threads() == before
    torch.testing.assert_close(inside, ref, rtol=1e-6, atol=1e-7)  # the same draws, however many threads
    with _random.single_threaded_torch(False):
        assert torch.get_num_threads() == before


@pytest.mark.parametrize("law", ["normal", "lognormal", "uniform", "constant-ish"])
def test_normaltest_is_scipys(law):
    """The NumPy D'Agostino–Pearson test of the stability summary against scipy.stats.normaltest
    on the same data (the same formulas, two code paths: rtol 1e-9)."""
    from scipy import stats

    from deeplimits.studies._normality import normaltest

    rng = __import__("numpy").random.default_rng(5)
    x = {"normal": rng.standard_normal(500), "lognormal": rng.lognormal(0, 1, 300), "uniform": rng.random(40),
         "constant-ish": 1 + 1e-3 * rng.standard_normal(25)}[law]
    ref = stats.normaltest(x)
    assert normaltest(x) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-9, abs=1e-300)
    with pytest.raises(ValueError, match="at least 20"):
        normaltest(x[:19])
