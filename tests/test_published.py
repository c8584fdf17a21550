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


def _published_columns(text: str) -> dict:
    """Per section of docs/published.md (its ``## `` heading), the decimal numbers of its tables'
    columns headed as the papers' ("published", "the paper...")."""
    import re

    out: dict = {}
    section, lines, i = None, text.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("## "):
            section = lines[i][3:].strip()
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-| :]+\|$", lines[i + 1]):
            head = [c.strip() for c in lines[i].strip("|").split("|")]
            cols = [k for k, c in enumerate(head) if c == "published" or c.startswith("the paper")]
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip("|").split("|")]
                for k in cols:
                    out.setdefault(section, set()).update(re.findall(r"(?<![\w.])\d+\.\d+", cells[k]))
                i += 1
            continue
        i += 1
    return out


def test_every_number_quoted_as_the_papers_is_read_from_one_table():
    """docs/published.md's "published" columns quote only what deeplimits.studies.papers holds
    under the same section, and every number of that table stands on the page."""
    import pathlib

    from deeplimits.studies.papers import PAPER_NUMBERS, numbers_of

    page = _published_columns((pathlib.Path(__file__).parent.parent / "docs" / "published.md").read_text())
    assert sum(len(v) for v in page.values()) >= 20
    for section, quoted in page.items():
        assert quoted <= numbers_of(section), (section, sorted(quoted - numbers_of(section)))
    missing = [(s, v) for s, v, _ in PAPER_NUMBERS if v not in page.get(s, set())]
    assert not missing, missing
    # the rule sees a misquote
    wrong = _published_columns("## Marion et al., §2: the distributions at criticality\n\n| | published | ours |\n"
                               "|---|---|---|\n| quartiles | about 1.22 and 1.34 | 1.2175 |\n")
    assert wrong["Marion et al., §2: the distributions at criticality"] - numbers_of(
        "Marion et al., §2: the distributions at criticality") == {"1.22"}
