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


#: the statuses a row of the index table may carry (docs/published.md, issue 55)
STATUSES = ("reproduced", "variant", "not reproduced", "needs a GPU or data")


def _slug(heading: str) -> str:
    """The anchor the site gives a heading (Python-Markdown's ``toc`` slugify, which mkdocs uses):
    accents folded, punctuation dropped, lower case, runs of spaces and hyphens one hyphen."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _index_rows(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows of the first table under the index heading of ``text``."""
    from deeplimits.studies.papers import INDEX

    lines = text.split(f"\n## {INDEX}\n", 1)[1].split("\n## ", 1)[0].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append([c.strip() for c in line.strip().strip("|").split("|")])
    return table[0], table[2:]


def _index_problems(text: str) -> list[str]:
    """What is wrong with the index table of ``text``: a row without a command in backticks
    (``deeplimits ...`` or ``python examples/...``), a status outside :data:`STATUSES`, a row
    without a link to a heading of the page, or a link to a heading the page does not have."""
    import re

    anchors = {_slug(line.lstrip("#").strip()) for line in text.splitlines() if re.match(r"#{1,6} ", line)}
    head, rows = _index_rows(text)
    col = {name: head.index(name) for name in ("item", "command", "status")}
    problems = []
    for row in rows:
        if len(row) != len(head):
            problems.append(f"{row[0]}: {len(row)} cells, the header has {len(head)}")
            continue
        item = row[col["item"]]
        links = re.findall(r"\]\(#([^)]+)\)", item)
        if not links:
            problems.append(f"{item}: no link to a section of the page")
        problems += [f"{item}: no heading has the anchor #{a}" for a in links if a not in anchors]
        spans = re.findall(r"`([^`]+)`", row[col["command"]])
        if not any(s.startswith(("deeplimits ", "python examples/")) or s == "deeplimits" for s in spans):
            problems.append(f"{item}: no command in backticks")
        status = row[col["status"]]
        if not any(status == s or status.startswith(s + ":") for s in STATUSES):
            problems.append(f"{item}: status {status.split(':')[0]!r} is not one of {STATUSES}")
    return problems


def test_the_index_table_has_a_command_a_status_and_a_section_for_every_row():
    """docs/published.md's index: one row per figure, table and proposition of the two papers,
    each with a command, a status from :data:`STATUSES` and a link to its section."""
    import pathlib

    text = (pathlib.Path(__file__).parent.parent / "docs" / "published.md").read_text()
    assert not _index_problems(text)
    head, rows = _index_rows(text)
    assert head == ["item", "the papers", "ours", "command", "status"]
    items = " ".join(row[0] for row in rows)
    # every figure and the settings tables of Marion et al., the scaling figures of Cohen et al.
    import re

    marion = {int(n) for m in re.findall(r"Marion Figs?\. ([\d ,and()a-b]+)", items) for n in re.findall(r"\d+", m)}
    assert set(range(1, 15)) <= marion, sorted(set(range(1, 15)) - marion)
    for label in ("Marion Table 3", "Marion Table 4", "Marion Prop. 4", "Marion Cor. 5", "Marion Prop. 6",
                  "Marion Prop. 14", "Cohen Figs. 2–6", "Cohen Figs. 7 and 8", "Cohen Thm 4.4", "Cohen §3.2 on CIFAR-10, Figs. 11 and 12"):
        assert label in items, label
    # the rule sees each fault
    bad = text.replace("| `deeplimits stability --preset smooth` | reproduced |", "| none | reproduced |", 1)
    assert any("no command" in p for p in _index_problems(bad))
    bad = text.replace("| `python examples/fbm_paths.py` | reproduced |", "| `python examples/fbm_paths.py` | done |", 1)
    assert any("status 'done'" in p for p in _index_problems(bad))
    bad = text.replace("(#marion-et-al-fig-6-fractional-brownian-paths)", "(#marion-et-al-fig-6-paths)", 1)
    assert any("#marion-et-al-fig-6-paths" in p for p in _index_problems(bad))
    assert _slug("Liu & Tindel: the corrected network at H < 1/2") == "liu-tindel-the-corrected-network-at-h-12"
    assert _slug("Marion et al., §2: stability at initialisation, i.i.d. weights") == \
        "marion-et-al-2-stability-at-initialisation-iid-weights"


def test_the_index_commands_exist():
    """Every ``deeplimits`` command of the index parses with the real parser, and every
    ``python examples/...`` script is in the repository."""
    import pathlib
    import re
    import shlex

    from deeplimits.cli import build_parser

    root = pathlib.Path(__file__).parent.parent
    head, rows = _index_rows((root / "docs" / "published.md").read_text())
    parser = build_parser()
    for row in rows:
        for span in re.findall(r"`([^`]+)`", row[head.index("command")]):
            words = shlex.split(span)
            if words[0] == "deeplimits":
                parser.parse_args(words[1:])
            elif words[0] == "python":
                assert (root / words[1]).is_file(), span
