"""The scaling experiment (issue 13, part 5): the inside model trained at a family of depths,
the exponents of delta and of the weights, the limit they support, ``deeplimits scaling``."""

import json

import pytest

from deeplimits.cli import main
from deeplimits.runs import RunStore
from deeplimits.studies import plan_scaling, results_from_store

TINY = dict(depths=[4, 8, 16], max_epochs=2, stop_loss=0.05, samples=256)


@pytest.mark.slow
def test_untrained_networks_give_the_initial_exponents():
    """A learning rate of 1e-12 leaves the networks at initialisation: delta = 1/L exactly, so
    alpha = 1 (to float32 rounding). W ~ 0.01/(L d) N(0, 1) is pure noise: its max norm gives
    beta_max = 1 up to the slowly growing max of Gaussians (sqrt(2 log (L d^2)) changes by ~10%
    from L = 8 to 64), while its cumulative sum is a random walk of size L^-1/2, so the
    cumulative-sum beta (step 2) is 3/2: over 2000 draws of this family its slope is
    1.498 +- 0.045 (one standard deviation), so 0.2 is 4.4 standard deviations."""
    res = plan_scaling(depths=[8, 16, 32, 64], lr=1e-12, max_epochs=1, samples=64).run()
    assert res.exponents["alpha"]["value"] == pytest.approx(1.0, abs=1e-4)
    assert 0.85 < res.exponents["beta_max"]["value"] < 1.0
    assert abs(res.exponents["beta"]["value"] - 1.5) < 0.2
    assert [r["delta"] for r in res.records] == pytest.approx([1 / 8, 1 / 16, 1 / 32, 1 / 64], rel=1e-6)


@pytest.mark.slow
def test_trained_family_report_and_store(tmp_path, capsys):
    plan = plan_scaling(**TINY, seeds=2)
    with RunStore(tmp_path, plan.to_dict()) as store:
        res = plan.run(store=store)
    assert len(res.records) == 6 and {r["depth"] for r in res.records} == {4, 8, 16}
    assert {"alpha", "beta", "alpha+beta", "ode_rate", "max_norm", "increment_norm"} <= set(res.exponents)
    e = res.exponents
    assert e["alpha+beta"]["value"] == pytest.approx(e["alpha"]["value"] + e["beta"]["value"])
    assert all(r["ode_distance"] > 0 for r in res.records) and "own-ODE error" in res.report() and "says nothing of a common limit" in res.report()
    assert res.hypothesis == "insufficient evidence"  # three depths: no verdict (issue 37)
    assert res.reason == "3 depths (a verdict needs at least 4 spanning a factor of 4)"
    # trained until the threshold or the epoch limit
    assert all(r["train_loss"] <= 0.05 or r["epochs"] == 2 for r in res.records)
    assert all(r["finite"] and r["trend_ratio"] > 0 for r in res.records)
    text = res.report()
    assert "published" in text and f"no verdict, insufficient evidence: {res.reason}" in text and "0.7" in text
    assert "biases (b, the same networks; Cohen et al.'s Appendix B): beta" in text  # read as W is
    eb = res.families[0]["biases"]["exponents"]  # step 2 on b_k: beta = 1 - the cumulative-sum slope
    assert eb["beta"]["value"] == pytest.approx(1 - eb["cumsum_norm"]["value"])
    again = results_from_store(RunStore(tmp_path, create=False))[0]
    assert again.records == res.records
    capsys.readouterr()
    assert main(["runs", "show", str(tmp_path)]) == 0  # the stored run's report, the verdict recomputed
    assert f"no verdict, insufficient evidence: {res.reason}" in capsys.readouterr().out
    json.dumps(res.to_dict(), allow_nan=False)
    # plot(path=None, *, ax=None), as every result: six Axes of your own, or a refusal naming ax
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3)
    assert res.plot(ax=axes) is fig and all(a.has_data() for a in axes.flat[:2])
    with pytest.raises(ValueError, match="ax must be 6 matplotlib Axes"):
        res.plot(ax=axes[0])
    plt.close(fig)


@pytest.mark.parametrize("kwargs,match", [
    (dict(depths=[8]), "at least two distinct depths"),
    (dict(depths=[8, 8]), "at least two distinct depths"),
    (dict(activation="sin"), "activation must be one of"),
    (dict(delta="each"), "delta must be one of"),
    (dict(stop_loss=0.0), "stop_loss"),
    (dict(lr=-1.0), "lr"),
    (dict(lr=[0.1, 0.1]), "distinct rates"),
    (dict(lr=[]), "lr must be a rate > 0 or a list"),
    (dict(loss="l1"), "loss must be one of"),
    (dict(dtype="float16"), "dtype"),
    (dict(delta_init="uniform"), "delta_init must be one of"),
    (dict(delta_init="normal"), "delta_init 'normal' draws one delta_k per layer"),  # tanh: shared delta
    (dict(bias_init="uniform"), "bias_init must be one of"),
    (dict(inputs="ball"), "inputs must be one of"),
    (dict(batches="random"), "batches must be one of"),
    (dict(stop_rule="test"), "stop_rule must be one of"),
    (dict(batches="published", batch_size=64, samples=64), "batches 'published' cuts"),
    (dict(batches="collapsed", batch_size=64, samples=64), "batches 'collapsed' cuts"),
    (dict(inputs="sphere", dataset="digits"), "inputs 'sphere' normalises the synthetic task's inputs"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plan_scaling(**kwargs)


@pytest.mark.slow
def test_cli(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["scaling", "--depths", "4,8,16", "--max-epochs", "2", "--stop-loss", "0.05", "--samples", "256",
            "--activation", "relu", "--out", str(out), "--quiet", "--json", "-"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["delta_mode"] == "per-layer" and len(d["records"]) == 3
    assert (out / "scaling.png").exists() and (out / "result.json").exists()
    (out / "scaling.png").unlink()  # 'runs plot' redraws the figure of Figs. 2-6 from the store alone
    assert main(["runs", "plot", str(out)]) == 0 and (out / "scaling.png").exists()
    assert "delta_sign_changes" in d["records"][0] and d["protocol"]["loss"] == "mse"


def test_digits_through_a_fixed_embedding():
    """Digits embedded to d = 6 by a fixed random layer, squared loss on one-hot targets: the
    embedding and read-out stay fixed, the report compares with the embedded-MNIST values."""
    res = plan_scaling(dataset="digits", width=6, depths=[4, 8], max_epochs=1, stop_loss=0.05).run()
    assert res.dataset == "digits" and len(res.records) == 2
    assert res.published.get("beta") == 0.2 and "digits" in res.report()
    assert all(r["finite"] and r["train_loss"] > 0 for r in res.records)


def test_specs_without_a_dataset_read_back_as_the_synthetic_task():
    from deeplimits.studies import ScalingPlan

    spec = plan_scaling(**TINY).to_dict()
    assert spec.pop("dataset") == "synthetic"
    assert ScalingPlan.from_dict(spec) == plan_scaling(**TINY)


def test_published_preset_plans_the_published_family():
    """--preset published: depths floor(1.2^n) for n = 13..50 (10 to 9100), one resumable task
    per depth and seed, and the time estimate printed before any work."""
    from deeplimits.cli.scaling import estimate_line
    from deeplimits.studies import SCALING_PRESETS

    plan = plan_scaling(**SCALING_PRESETS["published"], seeds=2)
    assert list(plan.depths) == sorted({int(1.2 ** n) for n in range(13, 51)})
    assert plan.depths[0] == 10 and plan.depths[-1] == 9100
    tasks = plan.tasks()
    assert len(tasks) == 2 * len(plan.depths) and len({t.key for t in tasks}) == len(tasks)
    assert {(t.params["depth"], t.params["seed_index"]) for t in tasks} == {(L, s) for L in plan.depths for s in (0, 1)}
    assert (plan.loss, plan.stop_loss, plan.batch_size, plan.optimizer, plan.lr) == ("mse", 1e-3, 32, "adam", (0.01,))
    budget, typical = plan.seconds()
    assert budget == pytest.approx(3 * typical)  # 300 epochs at most, 100 typical
    line = estimate_line(plan)
    assert line.startswith(f"plan: {len(plan.depths)} depths x 2 seeds, one task each") and "hours" in line


@pytest.mark.slow
def test_the_estimate_is_printed_before_the_run_and_dask_gives_the_same_records(tmp_path, capsys):
    pytest.importorskip("distributed")
    argv = ["scaling", "--depths", "4,8", "--max-epochs", "1", "--samples", "64", "--quiet"]
    assert main(argv + ["--out", str(tmp_path / "local"), "--json", str(tmp_path / "local.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("plan: 2 depths x 1 seed, one task each;") and out.index("plan:") < out.index("inside model")
    assert main(argv + ["--out", str(tmp_path / "dask"), "--json", str(tmp_path / "dask.json"), "--workers", "2"]) == 0
    local, dask = (json.loads((tmp_path / f"{n}.json").read_text())["records"] for n in ("local", "dask"))
    assert [(r["depth"], r["epochs"]) for r in local] == [(r["depth"], r["epochs"]) for r in dask]
    # the same seeds in another process: the same float32 arithmetic up to the thread count
    assert [r["train_loss"] for r in dask] == pytest.approx([r["train_loss"] for r in local], rel=1e-4)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_ablation_plans_change_one_knob_at_a_time(activation):
    """Each variant differs from the protocol in its own options only (ReLU, one delta_k per
    layer: its own rows, the delta init and the depth range among them)."""
    from deeplimits.studies.scaling.ablation import ABLATION, PER_LAYER_ABLATION, ablation_plans

    base = dict(depths=[4, 8], max_epochs=1, samples=64, activation=activation)
    rows = ABLATION if activation == "tanh" else PER_LAYER_ABLATION
    plans = ablation_plans(**base)
    assert len(plans) == len(rows) - 1 and plans[0][1] == "protocol"
    protocol = plans[0][3].to_dict()
    for (slug, knob, variant, p), (_, _, change) in zip(plans, [a for a in rows if a[2] is not None]):
        differ = {k for k, v in p.to_dict().items() if protocol[k] != v}
        want = {k for k, v in change.items() if protocol[k] != plan_scaling(**{**base, k: v}).to_dict()[k]}
        assert differ == want, (knob, differ)
    assert activation == "tanh" or {"delta init", "depth range"} <= {k for _, k, _, _ in plans}


@pytest.mark.slow
def test_ablation_changes_one_knob_at_a_time(tmp_path, capsys):
    """--ablation: the protocol, then each variant (its plans: the test above); the estimator row
    reads the protocol's run with the max norm; one run store per variant."""
    from deeplimits.studies.scaling.ablation import ABLATION, ablation_plans

    plans = ablation_plans(depths=[4, 8], max_epochs=1, samples=64)
    argv = ["scaling", "--depths", "4,8", "--max-epochs", "1", "--samples", "64", "--quiet", "--ablation",
            "--out", str(tmp_path), "--json", "-"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["knob"] for r in d["rows"]] == [a[0] for a in ABLATION]
    assert d["rows"][1]["alpha"] == d["rows"][0]["alpha"] and d["rows"][1]["beta"] != d["rows"][0]["beta"]
    assert all((tmp_path / slug / "run.sqlite").exists() for slug, *_ in plans)


@pytest.mark.slow
def test_per_layer_delta_starts_as_the_published_code_draws_it():
    """With one delta_k per layer the default is the published code's N(0, 1/L^2) (random signs),
    one draw per layer: untrained (lr 1e-12), L delta_k over 400 layers has standard deviation
    1 within 0.12 (its standard error is 1/sqrt(800) = 0.035: 3.4 standard errors) and a share
    of positive signs 1/2 within 0.1 (standard error 0.025: 4 of them); shared, delta = 1/L."""
    import torch

    from deeplimits.studies.scaling.task import _data, _network

    from deeplimits.studies.scaling.ablation import ablation_row

    plan = plan_scaling(activation="relu", depths=[8, 400], lr=1e-12, max_epochs=1, samples=64)
    res = plan.run()
    assert plan.delta_init == "normal" and "delta_k ~ N(0, 1/L^2)" in res.report()
    # with one delta_k per layer the ablation reads alpha + beta off |delta_k| W_k (Remark 2.2)
    e = res.exponents
    assert ablation_row("protocol", "", res)["alpha+beta"] == e["alpha+beta"]["value"]
    assert ablation_row("estimator", "", res, "beta_max")["alpha+beta"] == e["alpha+beta_max"]["value"]
    params = {**plan.to_dict(), "depth": 400}
    net = _network(params, _data(params, torch.float32, "cpu"), 2, 7, torch.float32, "cpu")
    scaled = net.delta.detach()[:, 0] * 400
    assert abs(float(scaled.std()) - 1) < 0.12 and abs(float((scaled > 0).double().mean()) - 0.5) < 0.1
    assert torch.equal(net.delta[:, 0], net.delta[:, 1])  # one draw, every configuration
    tanh = plan_scaling(depths=[8, 16])
    assert tanh.delta_init == "constant"
    assert plan_scaling(activation="relu", depths=[8, 16], delta_init="constant").delta_init == "constant"


def test_published_bias_init_and_inputs_on_the_sphere():
    """The published code's biases, N(0, (init_scale / (L sqrt d))^2), and its inputs x / ||x||
    with the targets of x (docs/weights.md, "What moves alpha + beta with ReLU")."""
    import torch

    from deeplimits.data import cohen_targets
    from deeplimits.studies.scaling.task import _data, _network

    plan = plan_scaling(activation="relu", depths=[8, 400], bias_init="normal", inputs="sphere", lr=1e-12,
                        max_epochs=1, samples=64)
    assert "b_0 ~ 0.01/(L sqrt d) N(0, 1)" in plan.run().report()
    params = {**plan.to_dict(), "depth": 400}
    data = _data(params, torch.float32, "cpu")
    net = _network(params, data, 2, 7, torch.float32, "cpu")
    b = net.b.detach()[:, 0]
    # 4000 independent N(0, s^2) entries: their sample std is s (1 +- 1/sqrt(8000) = 1.1%), so 5% is 4.5 sigma
    assert abs(float(b.std()) / (0.01 / (400 * 10 ** 0.5)) - 1) < 0.05
    assert abs(float(b.mean())) < 5 * 0.01 / (400 * 10 ** 0.5) / 4000 ** 0.5  # the mean: 5 standard errors
    assert torch.equal(net.b[:, 0], net.b[:, 1])  # one draw, every configuration
    zero = _network({**params, "bias_init": "zero"}, data, 1, 7, torch.float32, "cpu")
    assert torch.count_nonzero(zero.b) == 0
    cube = _data({**params, "inputs": "cube"}, torch.float32, "cpu")
    for x, x0 in ((data.x_train, cube.x_train), (data.x_test, cube.x_test)):
        assert torch.allclose(torch.linalg.vector_norm(x, dim=-1), torch.ones(len(x)), atol=1e-6)  # float32 rounding
        assert torch.allclose(x * torch.linalg.vector_norm(x0, dim=-1, keepdim=True), x0, atol=1e-6)  # the same x
        assert float((torch.linalg.vector_norm(x0, dim=-1) - 1).abs().min()) > 0.1  # the cube's are not on it
    # the targets are those of the cube's x, not of x / ||x||: the loader's, untouched
    assert torch.equal(data.y_train, cube.y_train) and torch.equal(data.y_test, cube.y_test)
    assert not torch.allclose(cohen_targets(data.x_train), data.y_train, atol=1e-3)
    # a spec written before the options reads back as what it ran: zero biases, inputs on the cube
    from deeplimits.studies.scaling import ScalingPlan

    old = {k: v for k, v in plan.to_dict().items() if k not in ("bias_init", "inputs")}
    assert (ScalingPlan.from_dict(old).bias_init, ScalingPlan.from_dict(old).inputs) == ("zero", "cube")


@pytest.mark.slow
def test_relu_trains_at_the_published_scale_only_with_the_published_delta_init():
    """docs/weights.md, "ReLU with one delta_k per layer": at the published initial scale 0.01,
    delta_k ~ N(0, 1/L^2) reaches MSE 1e-3 within 8 epochs at L = 10 and 22 (3 and 4 measured),
    while delta_k = 1/L stays at MSE 0.036 (every residual branch adds a non-negative vector:
    the loss of h_L = x plus a constant), seeded, the same data."""
    kw = dict(activation="relu", depths=[10, 22], max_epochs=8)
    published = plan_scaling(**kw).run()
    assert all(r["reached"] for r in published.records), [r["train_loss"] for r in published.records]
    stalled = plan_scaling(**kw, delta_init="constant").run()
    assert all(r["train_loss"] > 0.03 and not r["reached"] for r in stalled.records)


def test_tiny_operations_run_on_one_thread_and_the_count_comes_back():
    import torch

    from deeplimits.studies.scaling.task import ONE_THREAD_BELOW, _threads_for

    before = torch.get_num_threads()
    with _threads_for(32 * 10, "cpu"):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with _threads_for(ONE_THREAD_BELOW, "cpu"):  # large enough to split: left alone
        assert torch.get_num_threads() == before


def test_a_pair_the_solver_gives_up_on_is_nan_for_that_configuration_only(monkeypatch):
    """torchdiffeq's dopri5 asserts when its step underflows (a learning rate that blew the
    weights up): the task keeps the other configurations' distances, NaN for that one."""
    import math

    import torch

    import deeplimits.diagnostics as D
    from deeplimits.studies.scaling.task import _pair_distance
    from deeplimits.training import ResidualNetwork

    net = ResidualNetwork("inside", 5, 3, 3, 3, configs=3, bias=True)
    with torch.no_grad():
        net.W[:, 1] = 1e6  # the configuration the fake solver cannot solve

    def fake(module, x):
        if module.W.detach().abs().max() > 1e5:
            raise AssertionError("underflow in dt 0.0")
        return torch.full((module.configs,), 0.25)

    monkeypatch.setattr(D, "own_ode_error", fake)
    got = _pair_distance(net, torch.zeros(4, 3)).tolist()
    assert got[0] == 0.25 and math.isnan(got[1]) and got[2] == 0.25

    def broken(module, x):
        raise AssertionError("something else")
    monkeypatch.setattr(D, "own_ode_error", broken)
    with pytest.raises(AssertionError, match="something else"):  # only the solver's underflow is a result
        _pair_distance(net, torch.zeros(4, 3))


@pytest.mark.slow
def test_copying_shuffle_has_the_law_of_numpys_shuffle_of_a_tensor():
    """``np.random.shuffle`` on a torch tensor copies where it should swap (numpy issue 18206):
    ``new[i] = old[J_i]``, ``J_i`` uniform on ``0..i``, so batch ``p`` survives one pass with
    probability ``1 - p/n`` and ``(n + 1)/2`` distinct batches survive on average (16.5 of 32).
    Over 4000 passes the mean count has a standard error of about 0.04 (its standard deviation
    is below 2.6), so 0.25 is 6 standard errors; a true permutation keeps all 32. The same
    check runs on numpy's own shuffle of a tensor, the thing reproduced."""
    import warnings

    import numpy as np
    import torch

    from deeplimits.data import copying_shuffle

    n, draws = 32, 4000
    g = torch.Generator().manual_seed(3)
    ours = [copying_shuffle(torch.arange(n), g) for _ in range(draws)]
    counts = np.array([len(torch.unique(o)) for o in ours])
    assert all(int(o[0]) == 0 for o in ours)  # position 0 is never written
    assert abs(counts.mean() - (n + 1) / 2) < 0.25
    # P(new[i] = old[i]) = P(J_i = i) = 1/(i + 1): at i = 1, 1/2 +- 0.008; at i = 31, 1/32 +- 0.0028 (5 sigma)
    stays = np.array([[int(o[i]) == i for i in (1, n - 1)] for o in ours]).mean(0)
    assert abs(stays[0] - 0.5) < 0.04 and abs(stays[1] - 1 / n) < 0.014
    rs = np.random.RandomState(5)
    theirs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns that a tensor may get duplicates: the point
        for _ in range(draws):
            t = torch.arange(n)[:, None].clone()
            rs.shuffle(t)
            theirs.append(len(torch.unique(t)))
    assert abs(np.mean(theirs) - (n + 1) / 2) < 0.25
    # after a few epochs one batch fills the epoch: the mean count after 10 passes is about 1.3
    order = torch.arange(n)
    for _ in range(10):
        order = copying_shuffle(order, g)
    assert len(torch.unique(order)) <= 4
    # position 0 is never written, so the batch that survives is the first one: after 60 passes
    # (the mean count after 10 is about 1.1) every batch is batch 0
    for _ in range(50):
        order = copying_shuffle(order, g)
    assert torch.equal(order, torch.zeros(n, dtype=order.dtype))


@pytest.mark.slow
def test_published_batches_and_running_stop_rule():
    """``batches='published'``: the training split cut in order into whole batches (the
    remainder dropped), reordered each epoch by :func:`copying_shuffle`; ``stop_rule='running'``
    reads the mean of the epoch's mini-batch losses and stops after 5 epochs without a 1%
    improvement (the published code's loop)."""
    import torch

    from deeplimits.data import copying_shuffle
    from deeplimits.studies.scaling.task import PATIENCE, _data, _epoch_batches, _network, train_to_threshold
    from deeplimits._random import epoch_seed

    plan = plan_scaling(activation="relu", depths=[6, 12], samples=125, batches="published", stop_rule="running",
                        lr=1e-12, max_epochs=40)
    params = {**plan.to_dict(), "depth": 6}
    data = _data(params, torch.float64, "cpu")  # 100 training samples: 3 batches of 32, 4 dropped
    pairs, order = _epoch_batches(data.x_train, data.y_train, 32, "published", None, 9, 0)
    expect = copying_shuffle(torch.arange(3), torch.Generator().manual_seed(epoch_seed(9, 0)))
    assert torch.equal(order, expect) and len(pairs) == 3
    for (xb, _), k in zip(pairs, expect.tolist()):
        assert torch.equal(xb, data.x_train[32 * k:32 * (k + 1)])
    # collapsed: the first batch, every batch of the epoch (the remainder dropped: 3 of 100 // 32)
    pairs, _ = _epoch_batches(data.x_train, data.y_train, 32, "collapsed", None, 9, 0)
    assert len(pairs) == 3 and all(torch.equal(xb, data.x_train[:32]) for xb, _ in pairs)
    # a rate of 1e-12 leaves the weights where they are, and batches that cover the split once (80
    # samples, 20 each) make the running mean the split's loss (float64 rounding): it is flat, so
    # the best is set at epoch 0 and PATIENCE epochs without improvement stop at 1 + PATIENCE epochs
    data80 = _data({**params, "samples": 100}, torch.float64, "cpu")
    kw = dict(optimizer="adam", lrs=[1e-12], loss="mse", max_epochs=40, batch_size=20, seed=9, stop_rule="running")
    res = train_to_threshold(_network(params, data80, 1, 7, torch.float64, "cpu"), data80, stop_loss=1e-3, **kw)
    assert res["epochs"] == [1 + PATIENCE] and res["reached"] == [False]
    assert res["history"][0][0] == pytest.approx(res["train_loss"][0], rel=1e-9)
    res = train_to_threshold(_network(params, data80, 1, 7, torch.float64, "cpu"), data80, stop_loss=1e9, **kw)
    assert res["epochs"] == [1] and res["reached"] == [True]
    # the published batches: an epoch of 3 batches of 32, whatever their loss the rule stops
    res = train_to_threshold(_network(params, data, 1, 7, torch.float64, "cpu"), data, stop_loss=1e-3,
                             **{**kw, "batch_size": 32}, batches="published")
    assert 1 + PATIENCE <= res["epochs"][0] < 40 and res["reached"] == [False]
    report = plan.run().report()
    assert "copying shuffle" in report and "running mean of the mini-batch losses, patience 5" in report
    assert plan.protocol()["batches"] == "published" and plan.protocol()["stop_rule"] == "running"
    old = {k: v for k, v in plan.to_dict().items() if k not in ("batches", "stop_rule")}
    from deeplimits.studies.scaling import ScalingPlan

    assert (ScalingPlan.from_dict(old).batches, ScalingPlan.from_dict(old).stop_rule) == ("shuffled", "evaluated")


@pytest.mark.slow
def test_published_angles_of_the_synthetic_task():
    """``angle_start=0``: the published code's recursion (``generate_dataset.py``: ``for t in
    range(n): z = z + n^-1/2 tanh(sin(5 t pi / n) z + cos(5 t pi / n))``), transcribed here in
    numpy; ``angle_start=1`` is Cohen et al.'s formula (``k = 1..K``) and differs from it."""
    import numpy as np
    import torch

    from deeplimits.data import cohen_targets, load_dataset

    x = np.random.default_rng(0).uniform(-1, 1, size=(50, 10))
    z = x.copy()
    for t in range(100):
        z = z + 100 ** -0.5 * np.tanh(np.sin(5 * t * np.pi / 100) * z + np.cos(5 * t * np.pi / 100))
    published = z / np.linalg.norm(z, axis=1, keepdims=True)
    assert np.allclose(cohen_targets(torch.from_numpy(x), 100, angle_start=0).numpy(), published, atol=1e-12)
    assert not np.allclose(cohen_targets(torch.from_numpy(x), 100).numpy(), published, atol=1e-3)
    ds = load_dataset("synthetic", seed=3, n=40, angle_start=0, dtype=torch.float64)
    assert torch.allclose(cohen_targets(ds.x_train, angle_start=0), ds.y_train, atol=1e-12)
    plan = plan_scaling(depths=[4, 8], angle_start=0, lr=1e-12, max_epochs=1, samples=64)
    assert plan.protocol()["angle_start"] == 0 and "task angles 5(k-1)pi/K" in plan.run().report()
    with pytest.raises(ValueError, match="angle_start must be an integer in"):
        cohen_targets(torch.from_numpy(x), 100, angle_start=2)
    with pytest.raises(ValueError, match="angle_start sets the synthetic task's angles"):
        plan_scaling(angle_start=0, dataset="digits")


# -- the biases, read as the weights are (Cohen et al., ICML 2021, Appendix B) -----------------------------------


def _smooth_family(beta_w: float, beta_b: float, alpha: float, per_layer: bool):
    """Records of one learning rate whose weights are exactly smooth: ``W_k = L^-beta_w A(k/L)``,
    ``b_k = L^-beta_b c(k/L)`` (Hypothesis 1), ``delta = L^-alpha`` (per layer: ``delta_k = L^-alpha``
    for every k, so ``|delta_k| b_k`` reads ``alpha + beta_b``)."""
    import math

    import torch

    from deeplimits.diagnostics import weight_diagnostics

    records = []
    for L in (64, 128, 256, 512, 1024):
        t = (torch.arange(L, dtype=torch.float64) + 1) / L
        A = torch.stack([torch.sin(3 * t + i) for i in range(4)], -1).reshape(L, 2, 2)
        c = torch.stack([1 + torch.cos(2 * t + i) for i in range(2)], -1)
        W, b = L ** -beta_w * A, L ** -beta_b * c
        rec = {"depth": L, "seed": 0, "lr": 1e-2, "delta": L ** -alpha, "trend_ratio": 1.0, "ode_distance": 1 / L,
               "W": weight_diagnostics(W, name="W").to_dict(), "b": weight_diagnostics(b, name="b").to_dict()}
        if per_layer:
            rec["effective"] = weight_diagnostics(L ** -alpha * W, name="|delta| W").to_dict()
            rec["effective_b"] = weight_diagnostics(L ** -alpha * b, name="|delta| b").to_dict()
        records.append(rec)
    assert math.isfinite(records[-1]["b"]["max_norm"])
    return records


@pytest.mark.parametrize("per_layer", [False, True])
def test_the_biases_are_diagnosed_as_the_weights_are(per_layer):
    """On exactly smooth weights the cumulative-sum norm of ``b_k = L^-beta c(k/L)`` is ``L^(1 -
    beta)`` times a Riemann sum of ``c`` (error ``O(1/L)``: 0.1% of the slope over 64..1024), so the
    biases read their own beta (0.6) beside the weights' (0.3), and ``alpha + beta`` is 1.3, read
    off ``|delta_k| b_k`` with one delta per layer."""
    from deeplimits.studies.scaling.result import family_exponents

    fam = family_exponents(_smooth_family(0.3, 0.6, 0.7, per_layer))
    b = fam["biases"]
    assert fam["exponents"]["beta"]["value"] == pytest.approx(0.3, abs=0.01)
    assert b["exponents"]["beta"]["value"] == pytest.approx(1.3 if per_layer else 0.6, abs=0.01)
    assert b["exponents"]["alpha+beta"]["value"] == pytest.approx(1.3, abs=0.01)
    assert b["weights"] == ("|delta| b" if per_layer else "b")
    assert b["exponents"]["nu"]["value"] > 0.5  # increments of a smooth c: nu = 1
    assert b["hypothesis"] and b["reason"]
    old = [{k: v for k, v in r.items() if k not in ("b", "effective_b")} for r in _smooth_family(0.3, 0.6, 0.7,
                                                                                                  per_layer)]
    assert family_exponents(old)["biases"] is None  # records stored before the biases were diagnosed


def test_alpha_reads_the_norm_of_a_shared_delta_whatever_its_sign():
    """A shared delta that training turns negative (tanh at L = 4388 in the published preset:
    -0.0134) is read by its absolute value, the max norm of step 1, not as the log of a negative."""
    from deeplimits.studies.scaling.result import family_exponents

    records = _smooth_family(0.3, 0.6, 0.7, False)
    records[-1]["delta"] = -records[-1]["delta"]
    assert family_exponents(records)["exponents"]["alpha"]["value"] == pytest.approx(0.7, abs=1e-9)
