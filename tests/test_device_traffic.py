"""No host-device traffic per step in any hot loop (issue 57), counted on the CPU.

The ``meta`` device stands for a GPU: tensors with shapes and no data, so that a copy between the
host and the device is an operation one can see. A dispatch mode counts, inside a hot loop run on
``meta``, every operation whose inputs and outputs sit on different devices (a host tensor moved
to the device, or the device's numbers read back) and every read of a device number into Python
(``.item()``, ``bool()``, ``.tolist()``: a synchronisation on a GPU; here answered with a dummy
value). Each loop is run at two sizes, the second with twice the steps: the counts must be the
same (nothing per step), and for the sweeps and passes nothing at all. The library refuses
``meta`` at its public boundary (it holds no numbers), so the tests let it through the device
check, the device's random generator (``torch.randn`` on ``meta`` takes none) and the data check.
"""

import types

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import deeplimits._devices as D_
import deeplimits._random as R_
import deeplimits._validate as V_

META = torch.device("meta")


@pytest.fixture
def meta(monkeypatch):
    device, generator, has_data = D_._device, R_._device_generator, V_.has_data
    monkeypatch.setattr(D_, "_device", lambda name, value: META if str(value) == "meta" else device(name, value))
    monkeypatch.setattr(R_, "_device_generator",
                        lambda seed, dev: None if torch.device(dev).type == "meta" else generator(seed, dev))
    monkeypatch.setattr(V_, "has_data", lambda name, t: t if t.device.type == "meta" else has_data(name, t))
    return META


class Traffic(TorchDispatchMode):
    """Counts the copies between devices and the reads of device numbers into Python."""

    def __init__(self):
        super().__init__()
        self.copies, self.reads = 0, 0

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        on_meta = bool(tensors) and tensors[0].device.type == "meta"
        if func is torch.ops.aten._local_scalar_dense.default and on_meta:  # .item(), bool(), float()
            self.reads += 1
            return True if tensors[0].dtype == torch.bool else 1.0 if tensors[0].dtype.is_floating_point else 1
        if func is torch.ops.aten._to_copy.default and on_meta and torch.device(kwargs.get("device") or "meta").type == "cpu":
            self.copies += 1  # .cpu(), .tolist(): the device's numbers read back (dummy ones here)
            return torch.ones(tensors[0].shape, dtype=kwargs.get("dtype") or tensors[0].dtype)
        out = func(*args, **kwargs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]
        if tensors and outs and {t.device.type for t in tensors} != {o.device.type for o in outs}:
            self.copies += 1
        return out


def traffic(fn) -> tuple[int, int]:
    """``(copies, reads)`` while ``fn()`` runs."""
    t = Traffic()
    with t:
        fn()
    return t.copies, t.reads


def _sweep(pair_of, reference):
    """A sweep of :func:`~deeplimits.studies.strong_error.sweep_errors` on ``meta``: the sample is
    drawn outside the count (once per chunk), the per-step loop inside."""
    from deeplimits.studies.strong_error import sweep_errors

    p, sample = pair_of(reference)
    return lambda: sweep_errors(p, sample, [4, 8], reference)


def _regime(name, **options):
    from deeplimits.regimes import pair

    def pair_of(reference):
        p = pair(name, **options)
        s = p.sample(3, inputs=2, resolution=reference if p.rough else None, generator=torch.Generator().manual_seed(0),
                     dtype=torch.float64, device=META)
        return p, s
    return pair_of


def _scheme(problem, **kw):
    from deeplimits.pairs import PairSample
    from deeplimits.schemes.problems import scheme_on
    from deeplimits.studies.scheme_order.study import _driver, _SchemePair

    def pair_of(reference):
        s, p = scheme_on("euler-maruyama", problem, **kw)
        w = _driver(None).sample((p.m,), draws=4, resolution=reference, generator=torch.Generator().manual_seed(0),
                                 dtype=torch.float64, scale=1.0, device=META)
        return _SchemePair(s, s, p.exact), PairSample({"W": w}, torch.ones(4, 1, p.d, dtype=torch.float64, device=META))
    return pair_of


SWEEPS = {
    "order sde-regime (its identity made on the device once)": _scheme("sde-regime", width=2),
    "order linear-sde (exact solution)": _scheme("linear-sde"),
    "sde": _regime("sde", width=3),
    "fbm": _regime("fbm", width=3, hurst=0.75),
    "inside-sde": _regime("inside-sde", width=3),
    "rough": _regime("rough", width=1, hurst=0.4),
}


@pytest.mark.parametrize("name", list(SWEEPS))
@pytest.mark.slow
def test_the_strong_error_sweep_moves_nothing_between_host_and_device(meta, name):
    assert traffic(_sweep(SWEEPS[name], 32)) == (0, 0)
    assert traffic(_sweep(SWEEPS[name], 64)) == (0, 0)


def test_the_identity_of_the_sde_regime_problem_is_made_where_the_states_are(meta):
    from deeplimits.schemes.problems import regime_noise

    p = regime_noise(3)
    x = torch.ones(5, 3, dtype=torch.float64, device=meta)
    assert traffic(lambda: (p.diffusion(0.0, x), p.derivative(0.0, x))) == (0, 0)  # made on the device: no copy
    assert traffic(lambda: [(p.diffusion(0.0, x), p.derivative(0.0, x)) for _ in range(4)]) == (0, 0)


def test_the_law_simulation_reads_the_device_once_whatever_its_steps(meta):
    from deeplimits.studies.law.engine import simulate

    def run(fine):
        return lambda: simulate("uniform", torch.ones(3, device=meta), [4, 8], fine, 16, 0, controls=True)
    # one read: whether every weight was finite, after the loop (never per layer)
    assert traffic(run(32)) == traffic(run(64)) == (0, 1)


def test_the_propagation_pass_moves_nothing(meta):
    from deeplimits.paths import make_driver
    from deeplimits.studies.propagation.core import _draw, _layers, _network, _propagate
    from deeplimits.studies.propagation.memory import weight_layout

    net = _network("res-3", "relu")

    def run(depth):
        samples, h0, B, top = _draw(weight_layout(net.block, 4, True), make_driver("uniform"), 4, 3, [depth // 2, depth],
                                    2, 2, torch.Generator().manual_seed(0), torch.float32, meta)
        return lambda: _propagate(net, h0, B, _layers(samples, top, depth), [depth // 2, depth], [0.5, 1.0])
    assert traffic(run(8)) == traffic(run(16)) == (0, 0)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.slow
def test_training_reads_the_device_per_epoch_not_per_step(meta, optimizer):
    from deeplimits.training import ResidualNetwork, train

    def run(batch_size):
        net = ResidualNetwork("res-1", 4, 5, 3, 2, configs=2, beta=0.5, activation="tanh", device=meta)
        x, y = torch.randn(64, 3, device=meta), torch.zeros(64, dtype=torch.int64, device=meta)
        data = types.SimpleNamespace(x_train=x, y_train=y, x_test=x, y_test=y)
        return lambda: train(net, data, epochs=2, batch_size=batch_size, lr=[0.1, 0.2], optimizer=optimizer,
                             loss="cross_entropy")
    assert traffic(run(16)) == traffic(run(4))  # 4 or 16 steps an epoch: the same traffic


def test_the_counter_sees_a_copy_per_step():
    """The counter itself: a loop that makes a host tensor and moves it to the device every step."""
    def run(steps):
        def f():
            h = torch.zeros(3, device=META)
            for _ in range(steps):
                h = h + torch.eye(3).to(META)[0]
            bool(h.sum() > 0)
        return f
    assert traffic(run(2)) == (2, 1) and traffic(run(4)) == (4, 1)
