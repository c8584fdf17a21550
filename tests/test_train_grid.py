"""Training grids (issue 12, parts 3-6): TrainPlan, its run store and trained weights, resumption,
batched chunks against one configuration per chunk, the explosion reported, ``deeplimits train``."""

import json
import os

import pytest
import torch

from deeplimits.cli import main
from deeplimits.runs import RunStore, SweepError
from deeplimits.studies import load_trained, plan_training, results_from_store
from deeplimits.studies.training import trained as T
from deeplimits.training import ResidualNetwork
from deeplimits.training.train import evaluate
from deeplimits.data import load_dataset

F64 = torch.float64
SMALL = dict(driver="fractional", hursts=[0.3, 0.7], betas=[0.5, 1.0], lrs=[1e-3, 1e-2], depth=8, width=6, epochs=2,
             batch_size=256)
KEYS = {"driver", "hurst", "beta", "lr", "seed", "train_loss", "test_loss", "train_accuracy", "test_accuracy",
        "finite", "epochs", "seconds"}
NUMBERS = ("train_loss", "test_loss", "train_accuracy", "test_accuracy")


def _close(a, b, rel):
    for ra, rb in zip(a, b, strict=True):
        assert {k: ra[k] for k in ("hurst", "beta", "lr", "seed")} == {k: rb[k] for k in ("hurst", "beta", "lr", "seed")}
        for k in NUMBERS:
            assert ra[k] == pytest.approx(rb[k], rel=rel, abs=rel), (k, ra, rb)


@pytest.mark.slow
def test_grid_records_best_and_stored_weights(tmp_path):
    plan = plan_training(**SMALL)
    assert plan.chunk == 4 and len(plan.tasks()) == 2 and len(plan.configs()) == 8
    with RunStore(tmp_path, plan.to_dict()) as store:
        res = plan.run(store=store)
    assert len(res.records) == 8 and all(set(r) == KEYS for r in res.records)
    assert [(b["hurst"], b["beta"], b["line"]) for b in res.best] == [(0.3, 0.5, 0.5), (0.7, 0.5, 0.7),
                                                                      (0.3, 1.0, 0.5), (0.7, 1.0, 0.7)]
    for b in res.best:  # the best is the largest test accuracy of its (H, beta)
        accs = [r["test_accuracy"] for r in res.records if (r["hurst"], r["beta"]) == (b["hurst"], b["beta"])]
        assert b["test_accuracy"] == max(accs) and b["configs"] == 2
    json.dumps(res.to_dict(), allow_nan=False)
    # the stored weights are the trained networks: evaluated again they give the recorded accuracies
    data = load_dataset("digits")
    for task in plan.tasks():
        net, configs = load_trained(T.weights_path(str(tmp_path), task.key))
        assert [c["beta"] for c in configs] == [task.params["beta"]] * 4
        _, acc = evaluate(net, data.x_test, data.y_test, "cross_entropy")
        want = [r["test_accuracy"] for r in res.records if r["beta"] == task.params["beta"]]
        # the same module and data: equal up to float32 summation order (one sample is 1/359)
        assert acc.tolist() == pytest.approx(want, abs=1e-6)
    again = results_from_store(RunStore(tmp_path, create=False))[0]
    assert again.records == res.records


def test_initial_weights_depend_on_H_and_seed_only():
    plan = plan_training(**{**SMALL, "seeds": 2})
    params = plan.tasks()[0].params
    configs = plan.configs(0)
    net = ResidualNetwork("res-1", 8, 6, 64, 10, configs=len(configs), beta=0.5, bias=True)
    T.init_weights(net, params, configs, plan.seed)
    other = plan.configs(1)  # beta = 1: the same initialisations
    net1 = ResidualNetwork("res-1", 8, 6, 64, 10, configs=len(other), beta=1.0, bias=True)
    T.init_weights(net1, params, other, plan.seed)
    for c, cfg in enumerate(configs):
        for c2, cfg2 in enumerate(configs + other):
            m = net if c2 < len(configs) else net1
            j = c2 % len(configs)
            same = cfg["init"] == cfg2["init"]
            for name in ("V", "A", "B"):
                a, b = getattr(net, name), getattr(m, name)
                a, b = (a[:, c], b[:, j]) if name == "V" else (a[c], b[j])
                # the same initialisation within rounding; another differs far beyond it
                assert torch.allclose(a, b, rtol=1e-6, atol=1e-7) == same, (name, cfg, cfg2)


@pytest.mark.slow
def test_batched_chunk_equals_one_configuration_per_chunk():
    """chunk = 4 (two lrs and two H in one module) against chunk = 1: float64, rounding only."""
    kw = {**SMALL, "dtype": F64, "betas": [0.5]}
    batched = plan_training(**kw).run()
    alone = plan_training(**kw, chunk=1).run()
    _close(batched.records, alone.records, 1e-9)


@pytest.mark.slow
def test_resumes_after_a_failed_chunk(tmp_path, monkeypatch):
    plan = plan_training(**SMALL)
    calls = []
    real = T.train_task

    def flaky(params, seed):
        calls.append(params["beta"])
        if params["beta"] == 1.0 and len(calls) == 2:
            raise RuntimeError("killed")
        return real(params, seed)

    from deeplimits.runs import tasks as TK

    monkeypatch.setitem(TK._TASKS, "train-chunk", flaky)
    with RunStore(tmp_path, plan.to_dict()) as store, pytest.raises(SweepError, match="1 of 2 tasks failed"):
        plan.run(store=store)
    assert os.listdir(tmp_path / "weights") == ["train_beta-000_chunk-0000.pt"]
    with RunStore(tmp_path, plan.to_dict()) as store:
        res = plan.run(store=store)
    assert calls == [0.5, 1.0, 1.0]  # the finished chunk is not trained again
    assert sorted(os.listdir(tmp_path / "weights")) == ["train_beta-000_chunk-0000.pt", "train_beta-001_chunk-0000.pt"]
    fresh = plan.run()
    _close(res.records, fresh.records, 1e-6)  # the same seeds: the same numbers, up to float32 kernels


@pytest.mark.slow
def test_explosion_is_reported_not_raised(tmp_path):
    # ReLU, fractional weights H = 0.9 at beta = 0.1, L = 1000: deep in the explosion region
    # (beta << max(H, 1/2)), h_L overflows float32 and every learning rate fails
    res = plan_training(driver="fractional", hursts=[0.9], activation="relu", betas=[0.1, 1.0], lrs=[1e-2, 1e-1],
                        depth=1000, width=30, epochs=1, save_weights=False).run()
    failed = [r for r in res.records if r["beta"] == 0.1]
    assert failed and all(not r["finite"] and r["test_accuracy"] is None for r in failed)
    best = {b["beta"]: b for b in res.best}
    assert best[0.1]["test_accuracy"] is None and best[0.1]["finite"] == 0
    assert best[1.0]["test_accuracy"] > 0.5
    assert "failed" in res.report()
    json.dumps(res.to_dict(), allow_nan=False)
    res.plot(str(tmp_path / "h.png"))
    assert (tmp_path / "h.png").stat().st_size > 0


@pytest.mark.parametrize("kwargs,match", [
    (dict(hursts=[0.5]), "hursts apply only to a driver with a Hurst index"),
    (dict(driver="fractional"), "hursts must be given for driver 'fractional', whose law"),
    (dict(driver="fractional", hursts=[1.0]), r"hursts must lie in \(0.0, 1.0\)"),
    (dict(lrs=[0.0]), r"lrs must lie in \(0.0, inf\]"),
    (dict(lrs=[]), "lrs must not be empty"),
    (dict(betas=[0.5, 0.5]), "betas must not repeat"),
    (dict(dataset="imagenet"), "dataset must be one of"),
    (dict(dataset="mnist"), "root is required for dataset 'mnist'"),
    (dict(length_scale=0.1), "length_scale applies only to a driver declaring it"),
    (dict(depth=0), "depth must be"),
    (dict(chunk=10 ** 9, depth=1000), "lower chunk"),
])
def test_plan_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plan_training(**kwargs)


def test_missing_files_named_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="root must hold the files .*train-images-idx3-ubyte"):
        plan_training(dataset="mnist", root=str(tmp_path))


@pytest.mark.slow
def test_cli_default_reaches_the_accuracy_of_the_issue(tmp_path, capsys):
    """``deeplimits train --dataset digits --depth 64 --width 30 --json t.json``: >= 0.93."""
    out = tmp_path / "run"
    rc = main(["train", "--dataset", "digits", "--depth", "64", "--width", "30", "--json", str(tmp_path / "t.json"),
               "--out", str(out), "--quiet"])
    assert rc == 0
    d = json.loads((tmp_path / "t.json").read_text())
    (rec,) = d["records"]
    assert set(rec) == KEYS and rec["epochs"] == 10 and rec["driver"] == "gaussian"
    assert rec["test_accuracy"] >= 0.93
    assert (out / "weights.png").exists() and not (out / "heatmap.png").exists()


@pytest.mark.slow
def test_cli_grid_figures_resume_and_redraw(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["train", "--driver", "fractional", "--hursts", "0.3,0.7", "--betas", "0.5,1", "--lrs", "1e-3,1e-2",
            "--depth", "8", "--width", "6", "--epochs", "1", "--out", str(out), "--quiet", "--json", "-"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert len(first["records"]) == 8 and len(first["best"]) == 4
    assert {"heatmap.png", "weights.png", "result.json", "run.sqlite", "weights"} <= set(os.listdir(out))
    assert main(argv) == 0  # everything stored: nothing trained again, the same result
    again = json.loads(capsys.readouterr().out)
    assert again["records"] == first["records"]
    os.remove(out / "heatmap.png")
    assert main(["runs", "plot", str(out)]) == 0
    assert (out / "heatmap.png").exists()


@pytest.mark.parametrize("argv,match", [
    (["--hursts", "0.5"], "--hursts apply only to a driver with a Hurst index"),
    (["--dataset", "mnist"], "root is required for dataset 'mnist'"),
    (["--lrs", "-1"], "--lrs must lie in"),
])
def test_cli_bad_input_one_line(tmp_path, capsys, argv, match):
    assert main(["train", "--out", str(tmp_path / "r"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and match.replace("\\", "") in err
    assert not (tmp_path / "r").exists()


HAS_CUDA = torch.cuda.is_available()


@pytest.mark.slow
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not HAS_CUDA, reason="no CUDA device on this machine (torch.cuda.is_available() is False)"))])
def test_grid_on_a_device_agrees_with_the_cpu(device):
    """The same seeds on another device: the same initial weights (drawn on the CPU) and data
    order, so the trained records agree up to the device's kernels (float64: 1e-6 relative)."""
    kw = {**SMALL, "betas": [0.5], "dtype": F64, "save_weights": False}
    here = plan_training(**kw).run()
    there = plan_training(**kw, device=device).run()
    assert plan_training(**kw, device=device).to_dict().get("device") == (None if device == "cpu" else device)
    _close(here.records, there.records, 1e-6)


@pytest.mark.parametrize("preset,writer", [("published", "write_mnist"), ("published-cifar10", "write_cifar")])
def test_published_presets_plan_from_local_files(tmp_path, preset, writer):
    """The published grids (10 x 10 (H, beta) x 5 lr, L = 1000) on files in the expected
    format: planned (files read, every check) without training; tiny files train one chunk."""
    import test_data

    from deeplimits.studies import TRAIN_PRESETS

    getattr(test_data, writer)(tmp_path)
    plan = plan_training(**TRAIN_PRESETS[preset], root=str(tmp_path))
    assert len(plan.configs()) == 500 and plan.depth == 1000 and plan.epochs == 10 and plan.activation == "relu"
    assert plan.to_dict()["root"] == str(tmp_path)
    small = plan_training(**{**TRAIN_PRESETS[preset], "hursts": [0.7], "betas": [0.7], "lrs": [1e-2],
                             "depth": 4, "epochs": 1}, root=str(tmp_path))
    (rec,) = small.run().records
    assert rec["finite"] and 0.0 <= rec["test_accuracy"] <= 1.0


@pytest.mark.slow
def test_progress_counts_every_configuration_epoch():
    """In this process a chunk reports each epoch; the total is configurations x epochs, also
    with early stopping (the rest is counted when the chunk finishes)."""
    calls = []
    plan = plan_training(**{**SMALL, "betas": [0.5], "epochs": 3, "save_weights": False})
    plan.run(calls.append)
    assert calls == [4, 4, 4, 0] and sum(calls) == 4 * 3
    calls.clear()
    stop = plan_training(**{**SMALL, "betas": [0.5], "epochs": 3, "stop_loss": 1e9, "save_weights": False})
    res = stop.run(calls.append)
    assert res.records[0]["epochs"] == 1 and calls == [4, 8]


@pytest.mark.slow
def test_grid_on_a_local_dask_cluster_stores_weights_and_matches(tmp_path):
    """The chunks trained by Dask workers: the same records as in this process (the same seeds;
    float32 kernels of another process agree to 1e-5), the weights written beside the store."""
    plan = plan_training(**{**SMALL, "betas": [0.5, 1.0]})
    with RunStore(tmp_path, plan.to_dict()) as store:
        res = plan.run(store=store, workers=1)
    assert sorted(os.listdir(tmp_path / "weights")) == ["train_beta-000_chunk-0000.pt", "train_beta-001_chunk-0000.pt"]
    _close(res.records, plan.run().records, 1e-5)


@pytest.mark.parametrize("argv,dataset,size", [
    (["train", "--preset", "published"], "mnist", "60000 training and 10000 test samples of 784 inputs"),
    (["train", "--preset", "published-cifar10"], "cifar10", "50000 training and 10000 test samples of 3072 inputs"),
    (["scaling", "--arch", "conv", "--preset", "published", "--device", "cpu"], "cifar10", "50000 training"),
])
def test_dry_run_without_the_files_sizes_the_published_data_set(tmp_path, capsys, argv, dataset, size):
    """Issue 55: a preset on files this machine lacks still prints its memory and time (the data
    set's published sizes), reading nothing; the run itself still needs --root."""
    from deeplimits.studies import sizes

    out = str(tmp_path / "r")
    assert main([*argv, "--out", out, "--dry-run", "--json", "-"]) == 0
    captured = capsys.readouterr()
    plan = json.loads(captured.out)
    assert plan["plans"][0]["dataset"] == dataset and plan["seconds"] > 3600 and plan["peak_bytes"] > 2 ** 30
    assert f"sizes: as published ({dataset}: {size}" in captured.err and "a run needs --root DIR" in captured.err
    assert not sizes._PUBLISHED["on"]  # only within the dry run
    assert main([*argv, "--out", out]) == 2 and "root is required" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
