"""The training grid read one learning rate at a time (Marion et al., JMLR 2025, §4.2: with a fixed
learning rate the accuracy falls for large beta; docs/training.md, "One learning rate at a time"):
the per-rate means over H, their standard errors and the verdict, on records of known accuracies."""

import math

import numpy as np
import pytest

from deeplimits.errors import ParameterError
from deeplimits.studies import plan_training
from deeplimits.studies.training import accuracy_by_rate, large_beta_lines, plot_accuracy_by_rate
from deeplimits.studies.training.result import TrainGridResult
from deeplimits.studies.training.study import _best

HURSTS, BETAS, LRS = (0.3, 0.5, 0.7, 0.9), (0.5, 0.7, 0.9, 1.1), (1e-3, 1e-1)


def _grid(accuracy, seeds=2, noise=0.01, seed=0):
    """A grid whose test accuracy at (H, beta, lr, seed) is ``accuracy(beta, lr)`` plus a seeded
    uniform noise of half-width ``noise``; beta = 0.5 < max(H, 1/2) cells explode (accuracy None)."""
    rng = np.random.default_rng(seed)
    plan = plan_training("digits", "fractional", hursts=list(HURSTS), betas=list(BETAS), lrs=list(LRS),
                         seeds=seeds, depth=8, width=4, epochs=1, save_weights=False)
    records = []
    for h in HURSTS:
        for b in BETAS:
            for lr in LRS:
                for s in range(seeds):
                    blown = b < max(h, 0.5)
                    acc = None if blown else float(accuracy(b, lr) + rng.uniform(-noise, noise))
                    records.append({"driver": "fractional", "hurst": h, "beta": b, "lr": lr, "seed": s,
                                    "train_loss": 1.0, "test_loss": 1.0, "train_accuracy": acc,
                                    "test_accuracy": acc, "finite": not blown, "epochs": 1, "seconds": 0.0})
    return TrainGridResult(plan, records, _best(records), 0.0)


def test_a_fall_at_a_small_rate_and_none_at_a_large_one():
    """At lr 1e-3 the accuracy is 0.9 at beta 0.5 and falls by 0.2 per 0.2 of beta (the branch
    L^-beta V learns ever slower); at lr 1e-1 it is 0.9 everywhere. The noise (+-0.01, a standard
    error of the drop under 0.01) is small against the 0.6 drop, so the verdicts are sure."""
    res = _grid(lambda b, lr: 0.9 - (b - 0.5) if lr == 1e-3 else 0.9)
    small, large = accuracy_by_rate(res)
    assert small["lr"] == 1e-3 and small["betas"] == list(BETAS)
    assert small["cells"] == [2, 3, 4, 4]  # on or above beta = max(H, 1/2): H = 0.3, 0.5 at beta 0.5, ...
    assert small["mean"] == pytest.approx([0.9, 0.7, 0.5, 0.3], abs=0.01)
    assert small["best_beta"] == 0.5 and small["drop"] == pytest.approx(0.6, abs=0.02) and small["falls"] is True
    assert large["falls"] is False and abs(large["drop"]) < 0.02
    lines = large_beta_lines(res)
    assert "lr 0.001" in lines[1] and lines[1].endswith("-> falls") and "-> falls" not in lines[2]
    assert any("Marion et al., §4.2" in line for line in res.report().splitlines())


def test_the_standard_error_is_that_of_the_mean_over_h():
    """Per beta the mean over H of the per-cell means over seeds, with the standard error of that
    mean (sample deviation over the H counted / sqrt(count))."""
    res = _grid(lambda b, lr: 0.8, noise=0.05, seed=3)
    rec = accuracy_by_rate(res)[0]
    cells = {}
    for r in res.records:
        if r["lr"] == 1e-3 and r["beta"] == 1.1:
            cells.setdefault(r["hurst"], []).append(r["test_accuracy"])
    per = np.array([np.mean(v) for v in cells.values()])
    assert rec["mean"][-1] == pytest.approx(per.mean(), rel=1e-12)
    assert rec["se"][-1] == pytest.approx(per.std(ddof=1) / math.sqrt(per.size), rel=1e-12)
    best = rec["betas"].index(rec["best_beta"])
    assert best != len(rec["betas"]) - 1  # this seed's noise puts the best elsewhere
    assert rec["drop_se"] == pytest.approx(math.hypot(rec["se"][best], rec["se"][-1]), rel=1e-12)


def test_a_fall_within_the_noise_is_not_a_fall():
    """A drop of 0.01 under a noise of +-0.2 per configuration: not significant."""
    res = _grid(lambda b, lr: 0.8 - 0.01 * (b > 1), noise=0.2, seed=5)
    assert all(r["falls"] is not True for r in accuracy_by_rate(res))


def test_figure_and_refusal(tmp_path):
    res = _grid(lambda b, lr: 0.9 - (b - 0.5) * (lr == 1e-3))
    path = tmp_path / "rates.png"
    plot_accuracy_by_rate(res, str(path))
    assert path.stat().st_size > 5_000
    reg = _grid(lambda b, lr: 0.5)
    for r in reg.records:
        r["train_accuracy"] = r["test_accuracy"] = None
    with pytest.raises(ParameterError, match="classification"):
        accuracy_by_rate(reg)
