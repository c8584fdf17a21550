"""deeplimits.training.train: the training loop of batched configurations (issue 12, part 3)."""

import json
import math

import pytest
import torch

import deeplimits as dl
from deeplimits.data import load_dataset
from deeplimits.training import ResidualNetwork, init_from_driver, train

F64 = torch.float64


def toy(n=96, seed=0, dtype=F64):
    """A small separable 3-class problem (fast, deterministic)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2 * n, 6, generator=g, dtype=dtype)
    y = (x[:, 0] > 0.5).long() + (x[:, 1] > 0.5).long()

    class D:
        x_train, y_train, x_test, y_test = x[:n], y[:n], x[n:], y[n:]
        task = "classification"
    return D


def net(configs=1, dtype=F64, seed=0, **kw):
    m = ResidualNetwork("res-1", 8, 10, 6, 3, configs=configs, bias=True, beta=0.5, dtype=dtype, **kw)
    m.reset_parameters(torch.Generator().manual_seed(seed))
    return m


@pytest.mark.slow
def test_batched_training_equals_each_configuration_alone():
    """Two learning rates trained at once give the losses each reaches trained alone (same
    initial weights, same batches): float64, equal to rounding (1e-9 relative)."""
    data = toy()
    both = net(configs=2)
    alone = [both.config(c) for c in range(2)]
    res = train(both, data, lr=[1e-3, 3e-2], epochs=3, batch_size=32)
    for c, lr in enumerate([1e-3, 3e-2]):
        one = train(alone[c], data, lr=lr, epochs=3, batch_size=32)
        for k in ("train_loss", "test_loss", "test_accuracy"):
            assert res.records[c][k] == pytest.approx(one.records[0][k], rel=1e-9)


@pytest.mark.slow
def test_learning_rate_halfway_and_early_stopping():
    data = toy()
    res = train(net(), data, lr=1e-2, epochs=4, batch_size=32)
    assert [s[0] for s in res.lr_schedule] == pytest.approx([1e-2, 1e-2, 1e-3, 1e-3])
    stopped = train(net(), data, lr=1e-2, epochs=10, batch_size=32, stop_loss=1e9)
    assert stopped.epochs == 1


@pytest.mark.slow
def test_a_diverging_configuration_is_reported_not_a_crash():
    """res-3 at beta = 0 with one configuration's weights 30x larger: its forward overflows
    float32 (loss NaN). It is frozen and reported (finite False, no accuracy, strict JSON null),
    and the other configuration trains exactly as it would alone."""
    data = toy(dtype=torch.float32)
    m = ResidualNetwork("res-3", 64, 10, 6, 3, configs=2, beta=0.0, dtype=torch.float32)
    m.reset_parameters(torch.Generator().manual_seed(0))
    with torch.no_grad():
        m.V[:, 1] *= 30
        m.W[:, 1] *= 30
    alone = train(m.config(0), data, lr=1e-3, epochs=2, batch_size=32)
    res = train(m, data, lr=1e-3, epochs=2, batch_size=32)
    assert res.records[0]["finite"] and res.records[0]["train_loss"] == pytest.approx(alone.records[0]["train_loss"],
                                                                                      rel=1e-3)
    # float32, batched against single products: agreement to rounding accumulated over 6 Adam
    # steps (1e-3 leaves room for another CPU's kernels; a contaminated configuration is NaN)
    bad = res.records[1]
    assert not bad["finite"] and bad["test_accuracy"] is None
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["records"][1]["train_loss"] is None


@pytest.mark.slow
def test_digits_small_network_learns():
    """scikit-learn's digits, res-1 with bias, depth 16, width 30, fractional initial weights
    (H = 0.7, beta = H), Adam 5 epochs: test accuracy above 0.85 (chance is 0.1)."""
    data = load_dataset("digits", seed=0)
    m = ResidualNetwork("res-1", 16, 30, data.input_dim, data.output_dim, bias=True, beta=0.7)
    m.reset_parameters(torch.Generator().manual_seed(0))
    init_from_driver(m, dl.make_driver("fractional", hurst=0.7), generator=torch.Generator().manual_seed(1))
    res = train(m, data, lr=1e-2, epochs=5, batch_size=64)
    assert res.records[0]["finite"] and res.records[0]["test_accuracy"] > 0.85


@pytest.mark.parametrize("kwargs,match", [
    (dict(optimizer="lbfgs"), "optimizer must be one of"),
    (dict(epochs=0), "epochs"),
    (dict(batch_size=0), "batch_size"),
    (dict(loss="hinge"), "loss must be one of"),
    (dict(stop_loss=-1.0), "stop_loss"),
])
def test_bad_arguments_are_one_line_errors(kwargs, match):
    with pytest.raises(ValueError, match=match) as e:
        train(net(), toy(), **kwargs)
    assert "\n" not in str(e.value)


@pytest.mark.slow
def test_squared_loss_for_regression():
    data = load_dataset("synthetic", seed=0, n=256)
    m = ResidualNetwork("res-2", 8, 16, data.input_dim, data.output_dim, beta=0.5)
    before = train(m, data, lr=1e-3, epochs=1, batch_size=64).records[0]["train_loss"]
    after = train(m, data, lr=1e-3, epochs=5, batch_size=64).records[0]
    assert after["test_accuracy"] is None and math.isfinite(after["train_loss"]) and after["train_loss"] < before
