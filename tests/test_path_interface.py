"""One path interface for every driver sample (issue 11): pairs, limits, the convergence engine and
the propagation studies read samples through what DriverSample declares (kind, rough, resolution,
hurst, device, weights, increments, at, parts), never by switching on the sample's type; the
weights of a network are those its block declares."""

import pathlib
import re

import pytest
import torch

import deeplimits as dl
from deeplimits.blocks import block_class
from deeplimits.networks import ARCHITECTURES, ResNet, weight_shape
from deeplimits.studies.propagation.memory import weight_layout
from deeplimits.studies.propagation import core as P

PKG = pathlib.Path(dl.__file__).parent


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


SAMPLES = {
    "brownian": lambda: dl.IIDDriver("gaussian").sample((2, 2), draws=2, resolution=8, generator=gen()),
    "fractional": lambda: dl.FractionalDriver(0.7).sample((2, 2), draws=2, resolution=8, generator=gen()),
    "iid": lambda: dl.IIDDriver("uniform").sample((2, 2), draws=2, generator=gen()),
    "smooth": lambda: dl.SmoothDriver(0.2).sample((2, 2), draws=2, generator=gen()),
}


@pytest.mark.parametrize("kind", SAMPLES)
def test_every_sample_declares_the_interface(kind):
    s = SAMPLES[kind]()
    assert s.kind == kind and kind in dl.paths.KINDS
    assert s.rough == (kind in ("brownian", "fractional"))
    assert (s.resolution == 8) if s.rough else s.resolution is None
    assert s.hurst == {"brownian": 0.5, "fractional": 0.7}.get(kind)
    assert s.device == torch.device("cpu")
    assert s.weights(4).shape == (4, 2, 2, 2)
    # parts: the raw increment of a rough path, the weights of the others (the same numbers)
    expected = s.increments(4) if s.rough else s.weights(4)
    torch.testing.assert_close(s.parts(4), expected)  # the same numbers, within rounding on any CPU
    if kind != "smooth":
        with pytest.raises(ValueError, match=f"a {kind} sample cannot be read at any time t; only smooth"):
            s.at(0.5)
    else:
        assert s.at(0.5).shape == (2, 2, 2)
    if not s.rough:
        with pytest.raises(ValueError, match=f"a {kind} sample has no path increments"):
            s.increments(4)


@pytest.mark.parametrize("right,solve,needs", [
    ("brownian", lambda s, h0: dl.SDELimit().solve(h0, s, 4), "V must be a BrownianSample (IIDDriver('gaussian')"),
    ("fractional", lambda s, h0: dl.YoungLimit(hurst=0.7).solve(h0, s, 4),
     "V must be a FractionalSample (FractionalDriver(hurst)"),
    ("smooth", lambda s, h0: dl.ODELimit().solve(h0, s, 4), "V must be a SmoothSample (SmoothDriver(length_scale)"),
    ("brownian", lambda s, h0: dl.InsideSDELimit(sb=0.0).solve(h0, 4, W=s), "W must be a BrownianSample"),
])
def test_a_limit_given_the_wrong_path_says_in_one_line_what_it_needs(right, solve, needs):
    h0 = torch.zeros(2, 2, dtype=torch.float64)
    for kind, make in SAMPLES.items():
        if kind == right:
            continue
        with pytest.raises(ValueError) as e:
            solve(make(), h0)
        assert str(e.value).startswith(needs) and "\n" not in str(e.value), (kind, str(e.value))


def test_no_consumer_switches_on_sample_types():
    pattern = re.compile(r"isinstance\([^)]*(?<!Pair)Sample\b")  # driver samples (a PairSample is not one)
    hits = [f"{p.relative_to(PKG)}:{i}" for p in PKG.rglob("*.py") if p.parent.name != "paths"
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits, f"type switches on samples outside deeplimits/paths: {hits}"


def test_networks_declare_their_weights_and_propagation_draws_them():
    assert not hasattr(P, "_WEIGHTS")  # the propagation studies have no table of their own
    for arch in ARCHITECTURES:
        net = ResNet(arch, "tanh" if arch != "res-3" else None, beta=0.0)
        block = block_class(arch)
        assert net.weight_names == block.weights and set(net.block.required) <= set(block.weights)
        samples, h0, B, top = P._draw(weight_layout(net.block, 5), dl.make_driver("gaussian"), 5, 3, [4], 2, 1, gen(),
                                      torch.float64)
        assert list(samples) == list(block.weights)
        for name, s in samples.items():
            assert s.shape == weight_shape(name, 5)
    assert weight_shape("b", 5) == (5,) and weight_shape("W_drift", 5) == (5, 5)
    p = dl.pair("inside-sde", width=5, beta=1.0)
    assert {k: p._weight_layout(k)[0] for k in p.drivers} == {k: weight_shape(k, 5) for k in p.drivers}


def test_the_blocks_alone_declare_their_weights():
    """The weight names live in the blocks alone: deeplimits._names lists names for the command line
    and no weight table; the trained networks and the propagation studies read the block, and no
    module but the built-in blocks' writes a tuple of weight names of its own."""
    from deeplimits import _names, networks
    from deeplimits.training import ResidualNetwork

    for gone in ("WEIGHTS", "OPTIONAL_WEIGHTS", "LAYER_WEIGHTS", "weight_names"):
        assert not hasattr(_names, gone) and not hasattr(networks, gone) and not hasattr(P, gone)
    for arch in ARCHITECTURES:
        for bias in (False, True):
            net = ResidualNetwork(arch, 2, 3, 2, 2, configs=1, bias=bias, dtype=torch.float64)
            # the matrices of the block, then the bias when the network has one (any architecture)
            assert net.residual_names() == block_class(arch)(None).required + (("b",) if bias else ())
            assert set(net.residual_weights()) == set(net.residual_names())
    assert not hasattr(_names, "REQUIRED")
    literal = re.compile(r"""\(\s*["']V["']\s*,\s*(\)|["']W["'])""")  # ("V",) or ("V", "W"...
    hits = [f"{p.relative_to(PKG)}:{i}" for p in PKG.rglob("*.py") if p.name not in ("_names.py", "residual.py")
            for i, line in enumerate(p.read_text().splitlines(), 1) if literal.search(line)]
    assert not hits, f"tables of weight names outside the built-in blocks: {hits}"
