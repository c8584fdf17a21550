"""The scaling experiment (issue 13, part 5): the inside model trained at a family of depths,
the exponents of delta and of the weights, the limit they support, ``deeplimits scaling``."""

import json

import pytest

from deeplimits.cli import main
from deeplimits.runs import RunStore
from deeplimits.studies import plan_scaling, results_from_store

TINY = dict(depths=[4, 8, 16], max_epochs=2, stop_loss=0.05, samples=256)


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


def test_trained_family_report_and_store(tmp_path):
    plan = plan_scaling(**TINY, seeds=2)
    with RunStore(tmp_path, plan.to_dict()) as store:
        res = plan.run(store=store)
    assert len(res.records) == 6 and {r["depth"] for r in res.records} == {4, 8, 16}
    assert {"alpha", "beta", "alpha+beta", "ode_rate", "max_norm", "increment_norm"} <= set(res.exponents)
    e = res.exponents
    assert e["alpha+beta"]["value"] == pytest.approx(e["alpha"]["value"] + e["beta"]["value"])
    assert all(r["ode_distance"] > 0 for r in res.records) and "the trained pair" in res.report()
    assert res.hypothesis in ("smooth", "rough", "neither") and res.reason
    # trained until the threshold or the epoch limit
    assert all(r["train_loss"] <= 0.05 or r["epochs"] == 2 for r in res.records)
    assert all(r["finite"] and r["trend_ratio"] > 0 for r in res.records)
    text = res.report()
    assert "published" in text and "supports:" in text and "0.7" in text
    again = results_from_store(RunStore(tmp_path, create=False))[0]
    assert again.records == res.records
    json.dumps(res.to_dict(), allow_nan=False)


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
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plan_scaling(**kwargs)


def test_cli(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["scaling", "--depths", "4,8,16", "--max-epochs", "2", "--stop-loss", "0.05", "--samples", "256",
            "--activation", "relu", "--out", str(out), "--quiet", "--json", "-"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["delta_mode"] == "per-layer" and len(d["records"]) == 3
    assert (out / "scaling.png").exists() and (out / "result.json").exists()


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
