"""Facts the published-results page states about the papers' settings and the presets
(docs/published.md, issue 28): each checked against the code, so the page cannot drift."""

import math

import pytest

from deeplimits.studies import theory as dl
from deeplimits.studies.presets import linspace
from deeplimits.studies.propagation.presets import PHASE_PRESETS
from deeplimits.studies.training.presets import TRAIN_PRESETS


def test_corollary_5_width_is_704_over_9_delta():
    """At L alpha^2 = 1 the lower bound exceeds 1 exactly when d > 704 / (9 delta); the paper's
    remark prints 99 / (64 delta). delta = 1/4: the threshold is 312.9."""
    delta = 0.25
    assert 704 / (9 * delta) == pytest.approx(312.888, abs=1e-3)
    assert dl.high_probability_bounds(0.5, 1000, 312, delta)[0] < 1 < dl.high_probability_bounds(0.5, 1000, 313, delta)[0]
    for delta in (0.05, 0.1, 0.5):  # the crossing moves as 1/delta
        d = math.ceil(704 / (9 * delta) + 1e-9)
        assert dl.high_probability_bounds(0.5, 400, d - 1, delta)[0] < 1 < dl.high_probability_bounds(0.5, 400, d, delta)[0]
    lower = dl.high_probability_bounds(0.5, 1000, 100, 0.25)[0]
    assert math.sqrt(lower) == pytest.approx(0.8657, abs=5e-5)  # below 1 at the published size


def test_phase_preset_contains_the_table_3_range():
    betas = PHASE_PRESETS["full"]["betas"]
    assert len(betas) == 70 and betas[0] == 0 and betas[-1] == 1.3
    assert len(PHASE_PRESETS["full"]["hursts"]) == 51
    assert PHASE_PRESETS["full"]["hursts"][0] == 0.05 and PHASE_PRESETS["full"]["hursts"][-1] == 0.97


def test_training_preset_follows_the_authors_code():
    grid = [round(v, 6) for v in linspace(0.1, 0.9, 10)]
    for name in ("published", "published-cifar10"):
        p = TRAIN_PRESETS[name]
        assert p["hursts"] == grid and p["betas"] == grid and p["depth"] == 1000 and p["width"] == 30
