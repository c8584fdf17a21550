"""PyTorch habits that must work (issue 28): ``torch.save(model)`` / ``torch.load(weights_only=False)``
of a module and ``pickle`` of a pair and of activations round-trip to the same outputs."""

import io
import pickle

import pytest
import torch

import deeplimits as dl
from deeplimits.training import ResidualNetwork

F64 = torch.float64


@pytest.mark.parametrize("name", ["tanh", "relu", "identity", "sin", "sigmoid", "softplus0", "leaky_relu",
                                  "leaky_relu:0.8", "torch:sin"])
def test_activations_pickle_by_name(name):
    act = dl.activation(name)
    back = pickle.loads(pickle.dumps(act))
    x = torch.linspace(-2, 2, 11, dtype=F64)
    torch.testing.assert_close(back(x), act(x), rtol=0, atol=0)  # the same function, the same code
    torch.testing.assert_close(back.derivative(x), act.derivative(x), rtol=0, atol=0)
    assert back.name == act.name


def test_a_lambda_activation_is_refused_by_pickle_itself():
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(dl.activation(lambda x: x * 2))


@pytest.mark.parametrize("arch, kw", [("res-1", {"activation": "tanh"}), ("res-3", {}),
                                      ("inside", {"activation": "softplus0", "bias": True, "delta": "per-layer"})])
def test_torch_save_of_a_module_round_trips(arch, kw):
    torch.manual_seed(0)
    net = ResidualNetwork(arch, 6, 4, 3, 2, configs=2, dtype=F64, **kw)
    buf = io.BytesIO()
    torch.save(net, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=False)
    x = torch.randn(5, 3, dtype=F64)
    torch.testing.assert_close(back(x), net(x), rtol=1e-15, atol=0)  # same weights, same code path
    assert back.get_config() == net.get_config()


@pytest.mark.parametrize("regime, kw", [("sde", {}), ("ode", {"arch": "res-2"}), ("fbm", {"hurst": 0.7}),
                                        ("inside-sde", {}), ("inside-ode", {"beta": 0.5})])
@pytest.mark.slow
def test_pickle_of_a_pair_round_trips(regime, kw):
    p = dl.pair(regime, width=3, **kw)
    back = pickle.loads(pickle.dumps(p))
    rough = regime in ("sde", "fbm", "inside-sde")
    sample = p.sample(2, resolution=64 if rough else None, generator=torch.Generator().manual_seed(1))
    a, b = p.solve(sample, 8), back.solve(sample, 8)
    torch.testing.assert_close(b.network, a.network, rtol=1e-15, atol=0)
    torch.testing.assert_close(b.limit, a.limit, rtol=1e-12, atol=1e-12)
    assert back.theory_rate == p.theory_rate
