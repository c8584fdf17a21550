"""Drivers as values (issue 41): the ``@register_driver`` table behind ``make_driver``.

A law registered from this file (a centred Laplace i.i.d. law with a declared ``spread``, the
variance in units of ``scale^2``) goes through ``make_driver``, its spec, a network's weights and a
stability study (plan, memory estimate, run and resume from its stored spec) with no other file
touched; it is unregistered after each test.
"""

from __future__ import annotations

import math
import pickle

import pytest
import torch

import deeplimits as dl
from deeplimits import _names, _random
from deeplimits.errors import ParameterError
from deeplimits.options import Option
from deeplimits.paths import (DRIVERS, Driver, DriverSample, driver_from_spec, make_driver, register_driver,
                              registered_drivers, unregister_driver)
from deeplimits.studies.propagation import memory as PM
from deeplimits.studies.propagation.study import StabilityPlan, plan_stability
from deeplimits.training import ResidualNetwork, init_from_driver

SPREAD = Option("spread", float, default=1.0, help="variance in units of scale^2", low=0.0, low_open=True)


class LaplaceSample(DriverSample):
    """i.i.d. centred Laplace entries of standard deviation ``scale``, fresh for each depth."""

    regularity = 0.5
    kind = "iid"

    def __init__(self, shape, draws, dtype, scale, seed, device=None):
        super().__init__(shape, draws, dtype, scale, device)
        self.seed = seed

    def iter_weights(self, depth):
        g = torch.Generator().manual_seed(_random.mix_seed(self.seed, depth))
        size = (depth, self.draws, *self.shape)
        e1 = torch.empty(size, dtype=self.dtype).exponential_(generator=g)
        e2 = torch.empty(size, dtype=self.dtype).exponential_(generator=g)
        yield (e1 - e2) * (self.scale / math.sqrt(2.0))  # Laplace(0, b): variance 2 b^2 = scale^2


class LaplaceDriver(Driver):
    """Centred Laplace i.i.d. weights of variance ``spread * scale^2`` (registered by the fixture:
    ``register_driver(LaplaceDriver)`` is ``@register_driver`` on the class)."""

    name = "laplace"
    options = (SPREAD,)
    regularity = 0.5
    coupled = False

    def __init__(self, spread=1.0):  # make_driver checks it against SPREAD
        self.spread = spread

    def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
        return LaplaceSample(shape, draws, dtype, scale * math.sqrt(self.spread), _random.seed_from(generator), device)


def _register():
    return register_driver(LaplaceDriver)


@pytest.fixture
def laplace():
    cls = _register()
    yield cls
    unregister_driver("laplace")


def test_the_builtin_names_are_the_registered_ones():
    # the CLI reads the torch-free tuple; the library reads the table: they must agree, in order
    assert DRIVERS == _names.DRIVERS
    assert registered_drivers() == DRIVERS  # nothing registered by another test is left behind


def test_make_driver_reads_the_declarations(laplace):
    drv = make_driver("laplace", spread=2.0)
    assert isinstance(drv, laplace) and drv.spread == 2.0
    assert make_driver("laplace").spread == 1.0  # the declared default
    assert drv.spec() == {"driver": "laplace", "spread": 2.0}
    assert driver_from_spec(drv.spec()) == drv != make_driver("laplace")
    with pytest.raises(ParameterError, match=r"spread must lie in \(0\.0, inf\]") as e:
        make_driver("laplace", spread=-1.0)
    assert e.value.param == "spread"
    with pytest.raises(ParameterError, match="spread applies only to the laplace driver, not 'gaussian'"):
        make_driver("gaussian", spread=2.0)
    with pytest.raises(ParameterError, match="hurst applies only to the fractional driver, not 'laplace'"):
        make_driver("laplace", 0.7)  # the historical positional hurst
    # the built-in laws are unchanged
    assert make_driver("fractional", 0.7) == make_driver("fractional", hurst=0.7) == dl.FractionalDriver(0.7)


def test_unregistered_names_are_refused():
    _register()
    assert make_driver("laplace").name == "laplace"
    unregister_driver("laplace")
    with pytest.raises(ParameterError, match="driver must be one of 'uniform'"):
        make_driver("laplace")
    with pytest.raises(ParameterError, match="already registered"):
        register_driver(type("Other", (dl.IIDDriver,), {"names": ("gaussian",)}))


def test_network_weights_have_the_declared_law(laplace):
    # V of a res-1 network, d = 32: entries of variance spread / d; n = 16 x 8 x 32 x 32 = 131072.
    # Laplace: E X^4 = 6 sigma^4, so the sample variance has relative sd sqrt(5 / n) = 0.62%
    # (tolerance 5 sd = 3.1%) and the kurtosis sd sqrt((E X^8 / sigma^8 - 36) / n) = sqrt(2484 / n)
    # = 0.14 (tolerance 0.6, 4 sd; a Gaussian law, kurtosis 3, is 21 sd away).
    d, spread = 32, 2.0
    net = ResidualNetwork("res-1", 16, d, 3, 1, configs=8, dtype=torch.float64)
    init_from_driver(net, make_driver("laplace", spread=spread), generator=torch.Generator().manual_seed(7))
    v = net.V.detach().flatten()
    var = float(v.pow(2).mean())
    assert abs(float(v.mean())) < 5 * math.sqrt(spread / d / v.numel())
    assert var == pytest.approx(spread / d, rel=5 * math.sqrt(5 / v.numel()))
    assert float(v.pow(4).mean()) / var ** 2 == pytest.approx(6.0, abs=0.6)


def test_a_study_runs_on_it_and_resumes_from_its_spec(laplace):
    drv = make_driver("laplace", spread=2.0)
    kw = dict(width=6, n_in=4, depths=[4, 8], betas=[0.5, 1.0], draws=4, chunk=2, seed=3, dtype=torch.float64)
    plan = plan_stability("res-1", drv, **kw)
    spec = plan.to_dict()
    assert spec["driver"] == "laplace" and spec["spread"] == 2.0
    assert StabilityPlan.from_dict(spec) == plan
    assert plan.spread == 2.0 and plan.hurst is None  # the driver's parameters read by name
    assert pickle.loads(pickle.dumps(plan)) == plan
    # the memory model asks the driver (a streamed law: the base class's held_bytes)
    assert plan.estimate().peak_bytes == PM.propagation_bytes("res-1", drv, 6, 4, [4, 8], [0.5, 1.0], 1, 2, 8)
    result = plan.run()
    assert result.driver == {"driver": "laplace", "spread": 2.0}
    assert len(result.records) == 4 and all(math.isfinite(r["r_h"]["median"]) for r in result.records)
    # the weights' spread reaches the study: a larger spread, larger ratios at beta = 1/2
    small = plan_stability("res-1", make_driver("laplace", spread=0.01), **kw).run()
    big_rh = [r["r_h"]["median"] for r in result.records if r["beta"] == 0.5]
    small_rh = [r["r_h"]["median"] for r in small.records if r["beta"] == 0.5]
    assert all(b > 3 * s for b, s in zip(big_rh, small_rh))
