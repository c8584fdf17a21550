"""The training API a PyTorch user drives (issue 22): batched optimisers under torch's schedulers,
param groups and plain parameter lists, the finite mask without host reads, train() with an
optimiser, a scheduler, callbacks, a history and DataLoader batches, get_config / from_config,
and the training seeds of deeplimits._random.

Tolerances: float64 throughout; a batched configuration against the same configuration trained
alone with torch.optim.Adam/SGD differs by rounding only (batched products, another summation
order): rel 1e-9 (atol 1e-12 for entries near 0). The default train() against the numbers of the
code before this change (commit 1a8fd4e): the learning rates bitwise, the losses rel 1e-12.
"""

import copy
import io
import json
import math

import pytest
import torch
from test_train import toy  # the small 3-class problem of the loop's tests
from torch.optim import lr_scheduler as S

from deeplimits import _random as R
from deeplimits.data import batches
from deeplimits.training import BatchedAdam, BatchedSGD, ResidualNetwork, train
from deeplimits.training.optim import _Batched

F64 = torch.float64
RATES = [1e-3, 5e-2, 0.1]  # 0.05 * 0.1 != 0.05 / 10 in float64: the old decay was a division


def net(configs=3, arch="res-1", seed=0):
    m = ResidualNetwork(arch, 8, 10, 6, 3, configs=configs, bias=True, beta=0.5, dtype=F64)
    m.reset_parameters(torch.Generator().manual_seed(seed))
    return m


SCHEDULERS = {
    "StepLR": lambda opt: S.StepLR(opt, step_size=2, gamma=0.3),
    "CosineAnnealingLR": lambda opt: S.CosineAnnealingLR(opt, T_max=4),
    "LambdaLR": lambda opt: S.LambdaLR(opt, lambda e: 1.0 / (1 + e) ** 2),
}


def alone(single, data, make_opt, make_sched, epochs, seed=0, batch_size=32):
    """The plain PyTorch loop on a one-configuration network, the same mini-batches as train()."""
    opt = make_opt(single.parameters())
    sched = make_sched(opt)
    lrs = []
    for e in range(epochs):
        lrs.append(opt.param_groups[0]["lr"])
        for xb, yb in batches((data.x_train, data.y_train), batch_size, seed=R.epoch_seed(seed, e)):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(single(xb)[0], yb).backward()
            opt.step()
        sched.step()
    return lrs


def assert_same_configs(batched, singles):
    for c, single in enumerate(singles):
        for (name, p), (_, q) in zip(batched.config(c).named_parameters(), single.named_parameters()):
            torch.testing.assert_close(p, q, rtol=1e-9, atol=1e-12, msg=lambda s, c=c, n=name: f"config {c}, {n}: {s}")


# -- the batched optimisers under torch's schedulers -------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("plain_list", [False, True], ids=["module", "plain-list"])
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_batched_adam_under_a_scheduler_equals_each_configuration_alone(name, plain_list):
    """BatchedAdam with one rate per configuration under StepLR / CosineAnnealingLR / LambdaLR,
    stepped per epoch by train(): each configuration ends where torch.optim.Adam with its rate
    and the same scheduler takes it alone; the same from a plain list of the parameters."""
    data, m = toy(), net()
    singles = [m.config(c) for c in range(3)]
    rates = torch.tensor(RATES, dtype=F64)
    make = (lambda mod: BatchedAdam(list(mod.parameters()), lr=rates, betas=(0.8, 0.99))) if plain_list else \
        (lambda mod: BatchedAdam(mod, lr=rates, betas=(0.8, 0.99)))
    res = train(m, data, optimizer=make, scheduler=SCHEDULERS[name], epochs=4, batch_size=32)
    for c, single in enumerate(singles):
        lrs = alone(single, data, lambda ps, c=c: torch.optim.Adam(ps, lr=RATES[c], betas=(0.8, 0.99)),
                    SCHEDULERS[name], 4)
        assert [h["lr"][c] for h in res.history] == pytest.approx(lrs, rel=1e-12)
    assert_same_configs(m, singles)


@pytest.mark.slow
def test_batched_sgd_with_momentum_under_a_scheduler_equals_each_configuration_alone():
    data, m = toy(), net()
    singles = [m.config(c) for c in range(3)]
    kw = dict(momentum=0.9, dampening=0.1, weight_decay=1e-3)
    make_sched = lambda opt: S.ExponentialLR(opt, gamma=0.7)  # noqa: E731
    train(m, data, optimizer=lambda mod: BatchedSGD(mod, lr=RATES, **kw), scheduler=make_sched, epochs=4,
          batch_size=32)
    for c, single in enumerate(singles):
        alone(single, data, lambda ps, c=c: torch.optim.SGD(ps, lr=RATES[c], **kw), make_sched, 4)
    assert_same_configs(m, singles)


def test_one_rate_for_all_is_torchs_lr_under_an_absolute_schedule():
    """With one number ``lr`` the group's lr is that rate, as in torch: a schedule with a floor
    (CosineAnnealingLR's eta_min) gives every configuration torch's rates."""
    data, m = toy(), net()
    singles = [m.config(c) for c in range(3)]
    make_sched = lambda opt: S.CosineAnnealingLR(opt, T_max=3, eta_min=1e-3)  # noqa: E731
    opt = BatchedAdam(m, lr=0.02)
    assert opt.param_groups[0]["lr"] == 0.02 and opt.lr.tolist() == [0.02] * 3
    res = train(m, data, optimizer=opt, scheduler=make_sched(opt), epochs=3, batch_size=32)
    for single in singles:
        lrs = alone(single, data, lambda ps: torch.optim.Adam(ps, lr=0.02), make_sched, 3)
    assert [h["lr"][0] for h in res.history] == pytest.approx(lrs, rel=1e-12)
    assert_same_configs(m, singles)


def test_add_param_group():
    """A group added after two steps (the input and output layers, with their own rate, the
    config axis given) trains as torch.optim.Adam's added group does; its axis, configs and
    options are checked."""
    data, m = toy(), net()
    singles = [m.config(c) for c in range(3)]

    def run(model, opt, add):
        for i, (xb, yb) in enumerate(batches((data.x_train, data.y_train), 16, seed=1)):
            if i == 2:
                opt.add_param_group(add(model))
            opt.zero_grad()
            out = model(xb)
            torch.stack([torch.nn.functional.cross_entropy(o, yb) for o in out]).sum().backward()
            opt.step()

    residual = [m.V, m.b]
    opt = BatchedAdam(residual, lr=torch.tensor(RATES, dtype=F64))  # a plain list: the axes from config_axis
    run(m, opt, lambda mod: {"params": [mod.A, mod.B], "axis": 0, "lr": 0.03, "betas": (0.5, 0.9)})
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["lr"] == 0.03
    assert opt.param_groups[1]["betas"] == (0.5, 0.9) and opt.param_groups[1]["axis"] == 0
    for c, s in enumerate(singles):
        run(s, torch.optim.Adam([s.V, s.b], lr=RATES[c]),
            lambda mod: {"params": [mod.A, mod.B], "lr": 0.03, "betas": (0.5, 0.9)})
    assert_same_configs(m, singles)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [m.A]})
    with pytest.raises(ValueError, match="params must have this optimiser's 3 configs"):
        opt.add_param_group({"params": [torch.zeros(2, 4, requires_grad=True)], "axis": 0})


def test_untagged_tensors_take_the_axis_argument():
    """Tensors of the caller's own (no config_axis) need axis=; configs along axis 1 here."""
    w = torch.randn(5, 3, 4, dtype=F64, generator=torch.Generator().manual_seed(0), requires_grad=True)
    opt = BatchedSGD([w], lr=[0.1, 0.2, 0.3], axis=1)
    w.grad = torch.ones_like(w)
    before = w.detach().clone()
    opt.step()
    torch.testing.assert_close(before - w.detach(), torch.tensor([0.1, 0.2, 0.3], dtype=F64).view(1, 3, 1)
                               .expand(5, 3, 4), rtol=0, atol=1e-14)  # w - (w - lr): rounding of |w| < 6
    with pytest.raises(ValueError, match="axis must be given"):
        BatchedSGD([w])


# -- the finite mask: on the parameters' device, no read from the host -------------------------------

def _steps(m, opt, n, nan_config=None):
    x = torch.randn(16, 6, generator=torch.Generator().manual_seed(3), dtype=m.A.dtype)
    y = torch.arange(16) % 3
    for _ in range(n):
        opt.zero_grad()
        out = m(x)
        per = torch.stack([torch.nn.functional.cross_entropy(o, y) for o in out])
        if nan_config is not None:
            per = per * torch.tensor([float("nan") if c == nan_config else 1.0 for c in range(m.configs)],
                                     dtype=per.dtype)
        per.sum().backward()
        opt.observe(per.detach())
        opt.step()


@pytest.mark.parametrize("cls,kw", [(BatchedAdam, {}), (BatchedSGD, dict(momentum=0.9, nesterov=True))])
@pytest.mark.parametrize("nan_config", [None, 1])
def test_the_masked_update_of_other_devices_equals_the_cpu_branches(cls, kw, nan_config, monkeypatch):
    """The update a GPU runs (no branch on the mask) gives bitwise the numbers of the CPU's
    branches, all configurations live or one frozen; run on the CPU with every way a tensor is
    read back to the host disabled during the steps (bool, item, float, tolist, cpu)."""
    a, b = net(), net()
    opt_a, opt_b = cls(a, lr=RATES, **kw), cls(b, lr=RATES, **kw)
    opt_b._host_branches = False  # the update of a GPU
    _steps(a, opt_a, 4, nan_config)

    def refuse(*args, **kw):
        raise AssertionError("a read from the device in the step path")

    with monkeypatch.context() as mp:
        for name in ("__bool__", "item", "__float__", "tolist", "cpu", "__int__", "numpy"):
            mp.setattr(torch.Tensor, name, refuse)
        _steps(b, opt_b, 4, nan_config)
    assert opt_a.finite.tolist() == opt_b.finite.tolist() == [c != nan_config for c in range(3)]
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-9)  # another CPU's kernels may differ in the last bits


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_no_host_synchronisation_per_step_on_cuda():
    """On a GPU, observe() and step() never wait for the device (torch's sync debug mode
    raises on any synchronising call)."""
    m = ResidualNetwork("res-1", 8, 10, 6, 3, configs=3, bias=True, dtype=F64, device="cuda")
    for cls in (BatchedAdam, BatchedSGD):
        opt = cls(m, lr=RATES)
        _steps_cuda = [(torch.randn(16, 6, dtype=F64, device="cuda"), torch.arange(16, device="cuda") % 3)]
        for x, y in _steps_cuda * 3:
            opt.zero_grad()
            per = torch.stack([torch.nn.functional.cross_entropy(o, y) for o in m(x)])
            per.sum().backward()
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
            try:
                opt.observe(per.detach())
                opt.step()
            finally:
                torch.cuda.set_sync_debug_mode("default")
        assert opt.finite.device.type == "cuda" and opt.finite.all()


def test_state_dict_round_trip_with_factors_mask_and_schedule():
    """An optimiser (one configuration frozen) and its scheduler saved after 3 steps and loaded
    into new ones continue bitwise as the originals do."""
    a = net()
    opt = BatchedAdam(a, lr=RATES)
    sched = S.StepLR(opt, step_size=1, gamma=0.5)
    _steps(a, opt, 3, nan_config=2)
    sched.step()
    b = copy.deepcopy(a)
    opt_b = BatchedAdam(b, lr=1.0)
    sched_b = S.StepLR(opt_b, step_size=1, gamma=0.5)
    saved = io.BytesIO()  # through a file, as a checkpoint goes (the state dict holds references)
    torch.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, saved)
    saved.seek(0)
    state = torch.load(saved, weights_only=True)
    opt_b.load_state_dict(state["opt"])
    sched_b.load_state_dict(state["sched"])
    g = opt_b.param_groups[0]
    assert g["lr"] == 0.5 and g["lr_scale"].tolist() == RATES and opt_b.finite.tolist() == [True, True, False]
    assert opt_b.lr.tolist() == opt.lr.tolist()
    for model, o, s in ((a, opt, sched), (b, opt_b, sched_b)):
        _steps(model, o, 2)
        s.step()
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-9)  # another CPU's kernels may differ in the last bits


def test_zero_grad_goes_through_the_modules_public_hook():
    """Built from the module, zero_grad hands V's gradient back through release_grads (the next
    backward writes into the same tensor); built from a plain list, torch's set_to_none. Both
    train to the same numbers."""
    a, b = net(), net()
    opt_a, opt_b = BatchedAdam(a, lr=RATES), BatchedAdam(list(b.parameters()), lr=RATES)
    _steps(a, opt_a, 1)
    held = a.V.grad.data_ptr()
    _steps(a, opt_a, 1)
    assert a.V.grad.data_ptr() == held
    _steps(b, opt_b, 2)
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-9)  # another CPU's kernels may differ in the last bits


# -- train() --------------------------------------------------------------------------------------

OLD = {  # train(net(), toy(), optimizer=..., lr=RATES, epochs=4, batch_size=32, seed=3) at commit 1a8fd4e
    "adam": [(1.3249735265334563, 1.3994261302429045, 0.4375), (0.42437116779587525, 0.5972372044251526, 0.75),
             (0.34925499364949436, 0.7486125379529668, 0.7916666666666666)],
    "sgd": [(1.408117442409255, 1.4665777981069168, 0.4166666666666667), (0.9042269490964839, 0.970463128721538, 0.5625),
            (0.9121189312441141, 0.9719248454546315, 0.6145833333333334)],
}


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_default_train_gives_the_numbers_of_before(optimizer):
    """The default schedule (divide by 10 halfway, now a MultiStepLR) gives bitwise the old
    learning rates (a division by 10, not a product by 0.1) and the old losses."""
    res = train(net(), toy(), optimizer=optimizer, lr=RATES, epochs=4, batch_size=32, seed=3)
    r = torch.tensor(RATES, dtype=F64)
    assert res.lr_schedule == [r.tolist(), r.tolist(), (r / 10).tolist(), (r / 10).tolist()]
    assert res.lr_schedule[2] == [1e-4, 0.005, 0.01]  # 0.05 * 0.1 would be 0.005000000000000001
    for rec, (tl, vl, va) in zip(res.records, OLD[optimizer]):
        assert (rec["train_loss"], rec["test_loss"], rec["test_accuracy"]) == pytest.approx((tl, vl, va), rel=1e-12)
    explicit = train(net(), toy(), optimizer=optimizer, lr=RATES, epochs=4, batch_size=32, seed=3,
                     scheduler=lambda opt: S.MultiStepLR(opt, milestones=[2], gamma=0.1))
    assert explicit.records == res.records and explicit.lr_schedule == res.lr_schedule


def test_history_callbacks_and_stopping():
    """One history record per epoch (lr, per-configuration running loss and accuracy, finite);
    every callback sees every epoch; returning True stops after that epoch (a progress function
    that returns True, as a progress bar's update may, does not)."""
    seen, ticks = [], []
    res = train(net(), toy(), lr=RATES, epochs=6, batch_size=32, progress=lambda n: ticks.append(n) or True,
                callbacks=[seen.append, lambda rec: rec["epoch"] == 2, lambda rec: "yes"])
    assert res.epochs == 3 and len(res.history) == 3 and seen == res.history and ticks == [1, 1, 1]
    h = res.history[0]
    assert set(h) == {"epoch", "lr", "train_loss", "train_accuracy", "finite", "seconds"}
    assert h["epoch"] == 0 and h["lr"] == RATES and h["finite"] == [True] * 3
    assert all(0 <= a <= 1 for a in h["train_accuracy"]) and all(math.isfinite(v) for v in h["train_loss"])
    assert res.history[1]["train_loss"][2] < res.history[0]["train_loss"][2]  # lr 0.1 learns fast
    assert json.loads(res.to_json())["history"][2]["epoch"] == 2


def test_per_batch_schedule_and_reduce_on_plateau():
    steps = []
    res = train(net(), toy(), lr=0.01, epochs=3, batch_size=32, scheduler_interval="batch",
                scheduler=lambda opt: S.LambdaLR(opt, lambda k: steps.append(k) or 0.5 ** k))
    assert [h["lr"][0] for h in res.history] == pytest.approx([0.01, 0.01 * 0.5 ** 3, 0.01 * 0.5 ** 6], rel=1e-12)
    plateau = train(net(), toy(), lr=0.01, epochs=3, batch_size=32,
                    scheduler=lambda opt: S.ReduceLROnPlateau(opt, factor=0.5, patience=0, threshold=10.0))
    assert [h["lr"][0] for h in plateau.history] == pytest.approx([0.01, 0.005, 0.0025], rel=1e-12)


class _EpochOrder:
    """Mini-batches in the order train() draws them in memory, epoch after epoch (re-iterable)."""

    def __init__(self, x, y, batch_size, seed):
        self.x, self.y, self.batch_size, self.seed, self.epoch = x, y, batch_size, seed, 0

    def __iter__(self):
        e, self.epoch = self.epoch, self.epoch + 1
        return iter(list(batches((self.x, self.y), self.batch_size, seed=R.epoch_seed(self.seed, e))))


@pytest.mark.slow
def test_mini_batch_data_trains_as_the_in_memory_path():
    """Mini-batches given as an iterable in the in-memory order give bitwise the same training
    (weights, history); the records, evaluated over other batches (test data as a DataLoader),
    agree to rounding. A shuffling DataLoader trains too."""
    data = toy()
    a, b = net(), net()
    ref = train(a, data, lr=RATES, epochs=3, batch_size=32, seed=5)
    test = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data.x_test, data.y_test), batch_size=40)
    got = train(b, _EpochOrder(data.x_train, data.y_train, 32, 5), lr=RATES, epochs=3, test_data=test)
    for p, q in zip(a.parameters(), b.parameters()):  # two code paths: equal within rounding, not bitwise
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-9)
    assert [{k: v for k, v in h.items() if k != "seconds"} for h in got.history] == \
        [{k: v for k, v in h.items() if k != "seconds"} for h in ref.history]
    for r, s in zip(got.records, ref.records):
        assert r == pytest.approx(s, rel=1e-12)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data.x_train, data.y_train), batch_size=24,
                                         shuffle=True, generator=torch.Generator().manual_seed(0))
    res = train(net(), loader, lr=RATES, epochs=2)
    assert res.epochs == 2 and res.records[0]["test_loss"] is None and res.records[0]["train_accuracy"] is not None


def test_any_torch_optimiser_over_the_module():
    """train() drives torch.optim.Adam over a batched module too (one rate for all; no mask:
    finite from the final losses)."""
    m = net(configs=2)
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    res = train(m, toy(), optimizer=opt, epochs=2, batch_size=32)
    assert res.lr_schedule == [[0.01, 0.01], [0.001, 0.001]] and all(r["finite"] for r in res.records)


# -- get_config / from_config, and chunks stored before them ---------------------------------------

@pytest.mark.parametrize("kw", [dict(arch="res-2", bias=True, activation="leaky_relu:0.3"),
                                dict(arch="inside", delta="per-layer", dtype=torch.float64),
                                dict(arch="res-3", configs=4, beta=0.8)])
def test_config_round_trip(kw):
    m = ResidualNetwork(**{"depth": 5, "width": 4, "in_features": 3, "out_features": 2, **kw})
    cfg = json.loads(json.dumps(m.get_config()))
    again = ResidualNetwork.from_config(cfg)
    assert again.get_config() == cfg
    again.load_state_dict(m.state_dict())
    x = torch.randn(6, 3, dtype=m.A.dtype)
    torch.testing.assert_close(again(x), m(x), rtol=1e-6, atol=1e-9)


def test_a_chunk_stored_before_get_config_still_loads(tmp_path):
    """studies.load_trained reads the module options a chunk wrote before (no delta, no dtype)."""
    from deeplimits.studies import load_trained

    m = ResidualNetwork("res-1", 4, 3, 2, 2, configs=2, bias=True, activation="relu", dtype=F64)
    old = {"arch": "res-1", "depth": 4, "width": 3, "in_features": 2, "out_features": 2, "configs": 2, "beta": 0.5,
           "activation": "relu", "bias": True}
    path = tmp_path / "chunk.pt"
    torch.save({"module": old, "configs": [{"lr": 0.1}], "state_dict": m.state_dict()}, path)
    loaded, configs = load_trained(path)
    assert loaded.get_config() == m.get_config() and configs == [{"lr": 0.1}]
    for p, q in zip(loaded.parameters(), m.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-9)


def test_parameters_carry_their_axis_through_copies():
    m = net()
    for k in (m, copy.deepcopy(m), m.config(1)):
        assert [p.config_axis for p in k.parameters()] == [0, 1, 1, 0]  # A, V, b, B


# -- the training seeds live in deeplimits._random, with their old values -----------------------------

def test_training_seeds():
    assert R.epoch_seed(7, 3) == 7 * 100_003 + 3 and R.SEED_STRIDE == 100_003
    assert R.epoch_seed_limit(10) == (2 ** 63 - 1 - 9) // 100_003
    assert R.epoch_seed(R.epoch_seed_limit(10), 9) < 2 ** 63 <= R.epoch_seed(R.epoch_seed_limit(10) + 1, 9)
    # chunk_seed(seed, 2^40 | init), the values of studies/training/trained.py before
    assert [R.io_seed(0, 0), R.io_seed(5, 2), R.io_seed(123456, 77)] == [
        2023162227673094689, 8440749212027782986, 2462847669598635075]


def test_batched_optimisers_are_torch_optimisers():
    opt = BatchedAdam(net(), lr=RATES)
    assert isinstance(opt, torch.optim.Optimizer) and isinstance(opt, _Batched)
    assert all(isinstance(g["lr"], float) for g in opt.param_groups)
