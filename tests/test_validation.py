"""Bad input: a ValueError naming the parameter and its allowed range, before any work."""

import math

import pytest
import torch

import deeplimits as dl
from deeplimits.studies import theory


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("hurst", [0.0, 1.0, -0.2, 1.5, math.nan, math.inf, "0.5", True])
def test_fgn_hurst_outside_unit_interval(hurst):
    with pytest.raises(ValueError, match=r"hurst .*\(0\.0, 1\.0\)"):
        dl.fgn(8, hurst)


@pytest.mark.parametrize("n", [0, -3, 2.5])
def test_fgn_length(n):
    with pytest.raises(ValueError, match=r"n must be an integer >= 1"):
        dl.fgn(n, 0.7)


def test_fgn_dtype_and_size():
    with pytest.raises(ValueError, match="dtype must be torch.float32 or torch.float64"):
        dl.fgn(8, 0.7, dtype=torch.int64)
    with pytest.raises(ValueError, match="size must be"):
        dl.fgn(8, 0.7, (3, 0))
    with pytest.raises(ValueError, match="generator must be a torch.Generator"):
        dl.fgn(8, 0.7, generator=3)


@pytest.mark.parametrize("hurst", [0.5, 0.3, 0.05])
def test_fbm_pair_refuses_hurst_at_or_below_one_half(hurst):
    with pytest.raises(ValueError, match=r"hurst must lie in \(0\.5, 1\).*no strong limit"):
        dl.pair("fbm", width=4, hurst=hurst)
    with pytest.raises(ValueError, match=r"hurst must lie in \(0\.5, 1\)"):
        dl.YoungLimit(hurst=hurst)


def test_fbm_pair_hurst_range_and_presence():
    with pytest.raises(ValueError, match=r"hurst .*\(0\.5, 1\.0\)"):
        dl.pair("fbm", width=4, hurst=1.0)
    with pytest.raises(ValueError, match="hurst must be given for regime 'fbm'"):
        dl.pair("fbm", width=4)
    with pytest.raises(ValueError, match="hurst applies only to regimes 'fbm' and 'rough'"):
        dl.pair("sde", width=4, hurst=0.7)
    with pytest.raises(ValueError, match=r"hurst .*\(0\.0, 1\.0\)"):
        dl.FractionalDriver(1.2)


@pytest.mark.parametrize("width", [0, -1, 2.0, None])
def test_width(width):
    with pytest.raises(ValueError, match=r"width must be (an integer >= 1|given: the hidden width d, an integer >= 1)"):
        dl.pair("sde", width=width)


def test_depth():
    p = dl.pair("sde", width=2)
    s = p.sample(2, resolution=16, generator=gen())
    with pytest.raises(ValueError, match=r"depth must be an integer >= 1"):
        p.solve(s, 0)
    with pytest.raises(ValueError, match=r"depth must divide the sample's resolution 16"):
        p.solve(s, 3)
    with pytest.raises(ValueError, match=r"depth must divide"):
        s.weights["V"].weights(32)
    with pytest.raises(ValueError, match=r"resolution must be a power of two"):
        p.sample(2, resolution=12)


@pytest.mark.parametrize("beta", [-0.1, -1, math.nan, math.inf])
def test_beta(beta):
    with pytest.raises(ValueError, match=r"beta must .*\[0\.0, inf\]"):
        dl.ResNet("res-1", beta=beta)


def test_regime_arch_activation_names():
    with pytest.raises(ValueError, match="regime must be one of 'sde', 'ode', 'fbm'"):
        dl.pair("sdee", width=2)
    with pytest.raises(ValueError, match="arch must be one of"):
        dl.ResNet("res-4")
    with pytest.raises(ValueError, match="arch must be 'res-1' for regime 'sde'"):
        dl.pair("sde", width=2, arch="res-2")
    with pytest.raises(ValueError, match="activation must be one of"):
        dl.ResNet("res-1", activation="swishy")
    with pytest.raises(ValueError, match="activation must be 'relu'"):
        dl.ResNet("res-3", activation="tanh")
    with pytest.raises(ValueError, match=r"slope in \[0, 1\]"):
        dl.activation("leaky_relu:2")
    with pytest.raises(ValueError, match="law must be one of 'gaussian', 'uniform', 'rademacher'"):
        dl.IIDDriver("cauchy")
    with pytest.raises(ValueError, match=r"length_scale must lie in \[0\.05, 100\.0\]"):
        dl.SmoothDriver(0.0)


def test_shape_mismatch():
    net = dl.ResNet("res-1")
    V = torch.zeros(4, 3, 5, 5, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"V must have shape \(\*, 3, 4, 4\), got \(4, 3, 5, 5\)"):
        net.forward(torch.zeros(3, 4, dtype=torch.float64), V)
    with pytest.raises(ValueError, match=r"h0 must have shape \(draws, width\) or \(draws, inputs, width\)"):
        net.forward(torch.zeros(3, dtype=torch.float64), V)
    with pytest.raises(ValueError, match=r"W is required for arch 'res-2'"):
        dl.ResNet("res-2").forward(torch.zeros(3, 5, dtype=torch.float64), V)
    with pytest.raises(ValueError, match=r"W is not used by arch 'res-1'"):
        net.forward(torch.zeros(3, 5, dtype=torch.float64), V, W=V)
    with pytest.raises(ValueError, match=r"W must have 4 layers \(depth\), got 2"):
        dl.ResNet("res-2").forward(torch.zeros(3, 5, dtype=torch.float64), V, W=V[:2])


def test_dtype_mismatch():
    V = torch.zeros(4, 3, 5, 5, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"V must have dtype torch.float32 to match"):
        dl.ResNet("res-1").forward(torch.zeros(3, 5, dtype=torch.float32), V)
    with pytest.raises(ValueError, match=r"h0 must have dtype torch.float32 or torch.float64, got torch.int64"):
        dl.ResNet("res-1").forward(torch.zeros(3, 5, dtype=torch.int64), V)
    with pytest.raises(ValueError, match="dtype must be torch.float32 or torch.float64"):
        dl.pair("sde", width=2).sample(2, dtype=torch.float16)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_inputs(bad):
    V = torch.zeros(4, 3, 5, 5, dtype=torch.float64)
    h0 = torch.zeros(3, 5, dtype=torch.float64)
    with pytest.raises(ValueError, match="h0 must contain only finite values"):
        dl.ResNet("res-1").forward(h0.index_fill(1, torch.tensor([2]), bad), V)
    with pytest.raises(ValueError, match="V must contain only finite values"):
        dl.ResNet("res-1").forward(h0, V.index_fill(0, torch.tensor([1]), bad))
    with pytest.raises(ValueError, match=r"scale must be a finite real number"):
        dl.IIDDriver().sample((2, 2), resolution=4, scale=bad)


def test_errors_are_raised_before_any_work():
    # a bad argument leaves the generator untouched: nothing was drawn
    g = gen(5)
    state = g.get_state()
    with pytest.raises(ValueError, match="draws must be an integer >= 1"):
        dl.pair("fbm", width=3, hurst=0.7).sample(0, generator=g)
    with pytest.raises(ValueError, match="resolution must be given"):
        dl.FractionalDriver(0.7).sample((2, 2), draws=2, generator=g)
    with pytest.raises(ValueError, match="hurst"):
        dl.fgn(16, 1.0, (4,), generator=g)
    assert g.get_state().tolist() == state.tolist()  # a byte state: integers, untouched by refused calls


def test_limits_and_drivers_reject_what_does_not_apply():
    g = gen(1)
    frac = dl.FractionalDriver(0.7).sample((2, 2), draws=2, resolution=8, generator=g)
    h0 = torch.zeros(2, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="V must be a BrownianSample"):
        dl.SDELimit().solve(h0, frac, 4)
    smooth = dl.SmoothDriver().sample((2, 2), draws=2, generator=g)
    with pytest.raises(ValueError, match="V is required for arch 'res-1'"):
        dl.ODELimit("res-1").solve(h0, None, 4)
    with pytest.raises(ValueError, match="W is not used by arch 'res-1'"):
        dl.ODELimit("res-1").solve(h0, smooth, 4, W=smooth)
    with pytest.raises(ValueError, match=r"V must have shape \(3, 2, 2\)"):
        dl.ODELimit("res-1").solve(torch.zeros(3, 2, dtype=torch.float64), smooth, 4)
    with pytest.raises(ValueError, match="nodes must be an integer >= 2"):
        dl.ODELimit("res-1").picard(h0, smooth, 4, nodes=1)
    with pytest.raises(ValueError, match="resolution applies only to path drivers"):
        dl.SmoothDriver().sample((2, 2), draws=2, resolution=8)
    with pytest.raises(ValueError, match=r"target must have shape \(2, 1, 1\)"):
        dl.ResNet("res-1").forward(h0, torch.zeros(3, 2, 2, 2, dtype=torch.float64),
                                   readout=torch.ones(1, 2, dtype=torch.float64), target=torch.zeros(2, 2, dtype=torch.float64))
    # the smallest admitted length scale is represented to kernel precision
    assert dl.SmoothDriver(0.05).sample((1,), draws=1, generator=g).kernel_error < 1e-10
    # iterate checks its arguments when called, not when the first state is asked for
    with pytest.raises(ValueError, match="V is required"):
        dl.ResNet("res-1").iterate(h0)


def test_propagation_arguments():
    import deeplimits as dl
    from deeplimits import make_driver
    from deeplimits.studies.propagation import study as PH
    from deeplimits.studies.propagation import study as S

    with pytest.raises(ValueError, match="beta must lie in"):
        theory.theory_bounds(-0.5, 10)
    with pytest.raises(ValueError, match="depth must be"):
        theory.theory_bounds(0.5, 0)
    with pytest.raises(ValueError, match="betas must be increasing"):
        theory.critical_beta([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="driver must be one of"):
        S.plan_stability(driver="cauchy")
    with pytest.raises(ValueError, match="activation must be given by name"):
        S.plan_stability("res-1", activation=torch.tanh)
    with pytest.raises(ValueError, match="depths must be a non-empty list"):
        S.plan_stability(depths=[])
    with pytest.raises(ValueError, match="histograms must be True or False"):
        S.plan_stability(histograms="yes")
    with pytest.raises(ValueError, match="length_scale must lie in"):
        S.plan_stability(driver=make_driver("smooth", length_scale=0.0))
    with pytest.raises(ValueError, match="hursts must be a non-empty list"):
        PH.plan_phase([])
    with pytest.raises(ValueError, match="arch must be one of"):
        PH.plan_phase([0.5], arch="res-9")


@pytest.mark.parametrize("regime,kw,needle", [
    ("inside-ode", {}, r"beta must be given for regime 'inside-ode' \(in \(0, 1\); or alpha = 1 - beta\)"),
    ("inside-ode", {"beta": 1.2}, r"beta must lie in \(0, 1\) for regime 'inside-ode', got 1.2"),
    ("inside-ode", {"beta": 0}, r"beta must lie in \(0, 1\) for regime 'inside-ode', got 0.0"),
    ("inside-ode", {"alpha": 1.0}, r"alpha must lie in \(0, 1\) for regime 'inside-ode', got 1.0"),
    ("inside-ode", {"alpha": 0.3, "beta": 0.3}, r"alpha \+ beta must equal 1 for regime 'inside-ode', got alpha = 0.3, beta = 0.3"),
    ("inside-sde", {"beta": 0.5}, r"beta must lie in \[1.0, inf\] for regime 'inside-sde' \(the exponent of the smooth drift part\), got 0.5"),
    ("inside-sde", {"alpha": 0.0}, r"alpha applies only to regime 'inside-ode', not 'inside-sde' \(inside-sde has alpha = 0\)"),
    ("sde", {"beta": 0.5}, r"beta applies only to regimes 'inside-sde' and 'inside-ode', not 'sde'"),
    ("ode", {"sa": 1.0}, r"sa applies only to regimes 'inside-sde' and 'inside-ode', not 'ode'"),
    ("inside-ode", {"beta": 0.5, "ito_correction": False}, r"ito_correction applies only to regime 'inside-sde', not 'inside-ode'"),
    ("inside-sde", {"ito_correction": "no"}, r"ito_correction must be True or False, got 'no'"),
    ("inside-sde", {"sa": 0.0}, r"sa must lie in \(0.0, inf\] for regime 'inside-sde', got 0.0"),
    ("inside-sde", {"sb": -1}, r"sb must lie in \[0.0, inf\] for regime 'inside-sde', got -1.0"),
    ("inside-sde", {"sa": math.nan}, r"sa must be a finite real number"),
    ("inside-sde", {"arch": "res-1"}, r"arch must be 'inside' for regime 'inside-sde', got 'res-1'"),
    ("inside-sde", {"length_scale": 0.2}, r"length_scale applies only to smooth weights .* not to 'inside-sde' without beta"),
    ("inside-ode", {"beta": 0.5, "hurst": 0.7}, r"hurst applies only to regimes 'fbm' and 'rough', not 'inside-ode'"),
])
def test_inside_pair_arguments(regime, kw, needle):
    with pytest.raises(ValueError, match=needle):
        dl.pair(regime, width=2, **kw)


def test_inside_limits_and_plans_reject_what_does_not_apply():
    with pytest.raises(ValueError, match="reference applies only to the regimes with Brownian or fractional weights"):
        dl.plan_convergence("inside-ode", beta=0.5, reference=64)
    g = gen(2)
    h0 = torch.zeros(2, 3, dtype=torch.float64)
    W = dl.IIDDriver().sample((3, 3), draws=2, resolution=8, generator=g, scale=0.5)
    b = dl.IIDDriver().sample((3,), draws=2, resolution=8, generator=g)
    with pytest.raises(ValueError, match="W has scale 0.5, the limit expects sa = 0.25"):
        dl.InsideSDELimit().solve(h0, 4, W=W, b=b)
    with pytest.raises(ValueError, match=r"b is required when sb = 1.0 > 0"):
        dl.InsideSDELimit(sa=0.5).solve(h0, 4, W=W)
    smooth = dl.SmoothDriver().sample((3, 3), draws=2, generator=g)
    with pytest.raises(ValueError, match="W_drift and b_drift are not used: this limit has no drift part"):
        dl.InsideSDELimit(sa=0.5).solve(h0, 4, W=W, b=b, W_drift=smooth)
    with pytest.raises(ValueError, match="b_drift must be a SmoothSample"):
        dl.InsideSDELimit(sa=0.5, drift=True).solve(h0, 4, W=W, b=b, W_drift=smooth)
    with pytest.raises(ValueError, match="V is not used by arch 'inside'; pass only W"):
        dl.InsideODELimit()._solve(h0, {"V": smooth, "W": smooth}, 4)
    with pytest.raises(ValueError, match=r"b must have shape \(2, 3\)"):
        dl.InsideODELimit().solve(h0, smooth, 4, b=smooth)
