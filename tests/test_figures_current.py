"""Every figure under docs/figures is drawn by a command or an example that the tests run at a
small size, and a committed figure that shows a verdict says what its command prints today.

:data:`FIGURES` names, for each committed figure, what draws it. A figure that shows a verdict
carries its results and the readings it shows (deeplimits._figure_data); the quick tests read
each committed one under today's rules without recomputing anything (a rule changed since the
figure was drawn fails them) and check that the home figure holds the main job's plans; the slow
test runs the main job itself and compares what it prints with the committed home figure. The
small runs of the examples are tests/test_examples.py; those of the commands are
:func:`test_each_command_draws_its_figures_small`.
"""

import json
import pathlib
import re
import shutil

import pytest

from deeplimits._figure_data import embed, read
from deeplimits.studies.figures import figure_results, stale_readings

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIGS = ROOT / "docs" / "figures"

#: figure -> what draws it: ``examples/NAME.py`` or a ``deeplimits`` command line (its full size)
FIGURES = {
    "convergence.png": "examples/convergence.py", "convergence_sde.png": "examples/convergence.py",
    "convergence_ode.png": "examples/convergence.py", "convergence_fbm.png": "examples/convergence.py",
    "ito_correction.png": "examples/ito_correction.py", "rough.png": "examples/rough.py",
    "phase_rough.png": "examples/rough.py", "stability.png": "examples/stability.py",
    "theory.png": "examples/stability.py", "criticality.png": "examples/criticality.py",
    "phase.png": "examples/phase_diagram.py", "heatmap_quick.png": "examples/training_heatmap.py",
    "trained_weights.png": "examples/trained_weights.py", "weight_scaling.png": "examples/weight_scaling.py",
    "law.png": "deeplimits law --law uniform", "law-fig2.png": "deeplimits law --fig2",
    "transfer.png": "deeplimits transfer --limit 512", "transfer_optimum.png": "deeplimits transfer --limit 512",
    "transfer_coordinates.png": "deeplimits transfer --limit 512",
    "transfer_limit.png": "deeplimits transfer --limit 512",
    "trained_limit.png": "deeplimits trained-limit",
    "weight_scaling_relu.png": "deeplimits scaling --preset relu",
    "weight_scaling_relu_published.png": "deeplimits scaling --preset published-relu",
    "conv_scaling.png": "deeplimits scaling --arch conv",
    "heatmap_digits.png": "deeplimits train --preset digits",
    "accuracy_by_rate.png": "examples/accuracy_by_rate.py", "criticality_inside.png": "examples/inside_model.py",
    "stability_inside.png": "examples/inside_model.py", "stability_inside_smooth.png": "examples/inside_model.py",
    "fbm_paths.png": "examples/fbm_paths.py", "gradient_boundary.png": "examples/gradient_boundary.py",
    "linear_res1.png": "examples/linear_res1.py", "stability_smooth.png": "examples/smooth_stability.py",
    "shapes.png": "deeplimits shapes",
}
#: the figures that show a verdict: each carries its results and readings
VERDICTS = {"convergence.png", "convergence_sde.png", "convergence_ode.png", "convergence_fbm.png",
            "ito_correction.png", "law.png", "law-fig2.png", "transfer.png", "transfer_optimum.png",
            "transfer_coordinates.png", "transfer_limit.png", "trained_limit.png", "rough.png",
            "shapes.png", "weight_scaling.png", "weight_scaling_relu.png", "weight_scaling_relu_published.png",
            "conv_scaling.png"}
#: figures that show a verdict but were drawn before figures carried their readings, and why they
#: are not redrawn yet (each run is long on 2 CPU cores); a redrawn one must leave this table
NOT_YET: dict = {}


def test_every_committed_figure_says_what_draws_it():
    committed = {p.name for p in FIGS.glob("*.png")}
    assert committed == set(FIGURES), (sorted(committed - set(FIGURES)), sorted(set(FIGURES) - committed))
    for name, how in FIGURES.items():
        if how.startswith("examples/"):
            assert (ROOT / how).exists() and name in (ROOT / how).read_text(), (name, how)
    shown = "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    assert all(f"figures/{name}" in shown for name in FIGURES), [n for n in FIGURES if f"figures/{n}" not in shown]


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_a_figure_that_shows_a_verdict_carries_it(name):
    found = figure_results(FIGS / name)
    assert found, f"{name} carries no results: drawn before figures carried their readings; redraw it ({FIGURES[name]})"
    assert all(result is not None and readings for result, readings in found), name


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_a_committed_figure_reads_as_today(name):
    """Its results, read by today's rules, give the readings it shows."""
    assert stale_readings(FIGS / name) == [], f"redraw it: {FIGURES[name]}"


def test_not_yet_lists_exactly_the_verdict_figures_that_carry_nothing():
    assert not NOT_YET.keys() & VERDICTS and NOT_YET.keys() <= FIGURES.keys()
    assert [n for n in NOT_YET if read(FIGS / n) is not None] == []  # redrawn: move it to VERDICTS


def test_a_figure_drawn_by_an_older_rule_fails(tmp_path):
    """The home figure as it was before its regeneration (sde read ``pre-asymptotic``, fBm's leading
    term from 596): the same results, other readings. And a figure without its data."""
    data = read(FIGS / "convergence.png")
    data["results"][0]["readings"]["verdict"] = "pre-asymptotic"
    data["results"][2]["readings"]["dominates_from"] = 596
    old = tmp_path / "convergence.png"
    old.write_bytes(embed((FIGS / "convergence.png").read_bytes(), data))
    stale = stale_readings(old)
    assert len(stale) == 2 and "'pre-asymptotic'" in stale[0] and "596" in stale[1], stale
    bare = tmp_path / "bare.png"
    bare.write_bytes(embed((FIGS / "convergence.png").read_bytes(), {"results": []}))
    assert figure_results(bare) == []


def _main_job_plans() -> list[dict]:
    from deeplimits.cli import convergence
    from deeplimits.cli.parser import build_parser

    return [p.to_dict() for p in convergence._plans(build_parser().parse_args(["convergence"]))]


def test_the_home_figure_holds_the_main_jobs_plans():
    """Its results hold the plans ``deeplimits convergence`` runs today (every setting of each plan)."""
    assert [r.spec for r, _ in figure_results(FIGS / "convergence.png")] == _main_job_plans()
    for name, regime in (("convergence_sde.png", "sde"), ("convergence_ode.png", "ode"), ("convergence_fbm.png", "fbm")):
        [(r, readings)] = figure_results(FIGS / name)
        home = next(x for x, _ in figure_results(FIGS / "convergence.png") if x.regime == regime)
        assert r.to_dict() == home.to_dict() and readings == home.readings()


@pytest.mark.slow
def test_the_home_figure_says_what_the_main_job_prints(tmp_path, monkeypatch, capsys):
    """The main job itself, as a newcomer runs it: its printed verdicts (and the depth from which
    fBm's leading term would dominate) are those of the committed home figure."""
    from deeplimits.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["convergence", "--out", "run", "--quiet"]) == 0
    printed = capsys.readouterr().out
    committed = [readings for _, readings in figure_results(FIGS / "convergence.png")]
    assert [readings for _, readings in figure_results(tmp_path / "run" / "convergence.png")] == committed
    said = re.findall(r"^-> ([a-z -]+?):", printed, re.M)
    assert said == [r["verdict"] for r in committed], (said, committed)
    for r in committed:
        if r["dominates_from"] is not None:
            assert f"would dominate from depth {r['dominates_from']}" in printed


#: the commands of FIGURES at a small size (the command's own words first, then flags that shrink
#: it) and the files each writes
SMALL = {
    "deeplimits law --law uniform": (["law", "--law", "uniform", "--depths", "4,8,16", "--fine", "64", "--draws", "2048"],
                                     ["law.png"]),
    "deeplimits law --fig2": (["law", "--fig2", "--depths", "2,4", "--width", "4", "--draws", "16"], ["fig2.png"]),
    "deeplimits transfer --limit 512": (["transfer", "--limit", "16", "--preset", "quick", "--depths", "2,4,8",
                                         "--seeds", "2", "--betas", "1", "--optimizer", "sgd"],
                                        ["transfer.png", "optimum.png", "coordinates.png", "limit.png"]),
    "deeplimits trained-limit": (["trained-limit", "--preset", "quick"], ["trained-limit.png"]),
    "deeplimits shapes": (["shapes", "--preset", "quick"], ["shapes.png"]),
    "deeplimits scaling --preset relu": (["scaling", "--preset", "relu", "--depths", "10,20,40"], ["scaling.png"]),
    "deeplimits scaling --preset published-relu": (["scaling", "--preset", "published-relu", "--depths", "10,20,40"],
                                                    ["scaling.png"]),
    "deeplimits scaling --arch conv": (["scaling", "--arch", "conv", "--depths", "3,4,6", "--epochs", "1"],
                                       ["scaling.png"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(SMALL))
def test_each_command_draws_its_figures_small(command, tmp_path, monkeypatch):
    """Each command that draws a committed figure, at a small size, writes that figure."""
    from deeplimits.cli import main

    argv, names = SMALL[command]
    assert command.split()[1] == argv[0]
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--out", "run", "--quiet"]) == 0
    for name in names:
        assert (tmp_path / "run" / name).stat().st_size > 5_000, name
    assert json.loads((tmp_path / "run" / "result.json").read_text())


def test_small_commands_cover_the_commands_of_figures_with_verdicts():
    commands = {FIGURES[n] for n in VERDICTS if not FIGURES[n].startswith("examples/")}
    assert commands <= SMALL.keys(), sorted(commands - SMALL.keys())


def test_a_figure_carries_its_results_without_importing_what_they_name(tmp_path):
    """Reading a figure is reading data: a result naming a module of the user's is rebuilt, not imported."""
    import sys

    data = read(FIGS / "convergence.png")
    data["results"][0]["data"]["activation"] = "evilact_fig:f"
    (tmp_path / "evilact_fig.py").write_text("raise SystemExit('imported')\n")
    fake = tmp_path / "f.png"
    fake.write_bytes(embed((FIGS / "convergence.png").read_bytes(), data))
    sys.path.insert(0, str(tmp_path))
    try:
        assert figure_results(fake)[0][0].activation == "evilact_fig:f" and "evilact_fig" not in sys.modules
    finally:
        sys.path.remove(str(tmp_path))
    shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)


def _redraw(name, results, path):
    """Draw the committed figure ``name`` again from the results it carries (what ``runs plot`` does
    from a run store), into ``path``; the figure."""
    from deeplimits.studies.convergence.plots import plot_convergence
    from deeplimits.studies.transfer.limit import plot_limit

    if name in ("convergence.png", "ito_correction.png"):
        return plot_convergence(results, path=path)
    [r] = results
    draw = {"transfer.png": r.plot, "transfer_optimum.png": getattr(r, "plot_optimum", None),
            "transfer_coordinates.png": getattr(r, "plot_coordinates", None),
            "transfer_limit.png": lambda path: plot_limit(r, path)}.get(name, r.plot)
    return draw(path)


def layout_faults(fig) -> list[str]:
    """What a reader would see wrong in a drawn figure, one line each: a panel whose texts (title,
    axis labels, tick labels, legend) reach past the figure's edge; x tick labels drawn over each
    other; a legend inside a panel over a plotted point."""
    import numpy as np

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box, out = fig.bbox, []
    for i, a in enumerate(fig.axes):
        if not a.get_visible():
            continue
        tight = a.get_tightbbox(renderer)
        if tight.x0 < box.x0 - 1 or tight.y0 < box.y0 - 1 or tight.x1 > box.x1 + 1 or tight.y1 > box.y1 + 1:
            out.append(f"panel {i} ({a.get_title()[:40]!r}): its texts reach past the figure's edge")
        labels = sorted((t.label1.get_window_extent(renderer) for t in a.xaxis._update_ticks()
                         if t.label1.get_visible() and t.label1.get_text()), key=lambda b: b.x0)
        if any(b.x1 > c.x0 + 0.5 for b, c in zip(labels, labels[1:])):
            out.append(f"panel {i} ({a.get_title()[:40]!r}): x tick labels drawn over each other")
        leg = a.get_legend()
        if leg is None or not leg.get_visible():
            continue
        lb = leg.get_window_extent(renderer)
        if not a.bbox.overlaps(lb):  # a legend outside the panel covers nothing of it
            continue
        for line in a.get_lines():
            if line.get_marker() in (None, "None", "", " ") or not line.get_visible():
                continue
            xy = a.transData.transform(np.column_stack(line.get_data()).astype(float))
            xy = xy[np.isfinite(xy).all(1)]
            if any(lb.contains(x, y) for x, y in xy):
                out.append(f"panel {i} ({a.get_title()[:40]!r}): the legend covers a point of {line.get_label()!r}")
                break
    return out


#: verdict figures an example draws with its own axes from more than the results it carries: not
#: redrawn here (tests/test_examples.py runs the example small)
OWN_AXES = {"rough.png": "examples/rough.py: both networks, of which it carries the corrected one's results"}


@pytest.mark.parametrize("name", sorted(VERDICTS - set(OWN_AXES)))
@pytest.mark.slow
def test_a_committed_figure_redrawn_from_its_results_has_nothing_cut_or_covered(name, tmp_path):
    """The committed figure's own results drawn again by today's code: no text past the edge (the
    sde panel's y label was), no x labels over each other (the coordinate check's were), no legend
    over a point (the fBm panel's covered its deepest)."""
    results = [r for r, _ in figure_results(FIGS / name)]
    assert results and None not in results, name
    fig = _redraw(name, results, str(tmp_path / name))
    assert layout_faults(fig) == [], name


def test_the_layout_check_sees_a_cut_label_overlapping_ticks_and_a_covering_legend():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2), dpi=100)
    FigureCanvasAgg(fig)
    a = fig.add_subplot()
    a.plot([1, 2, 3], [3, 2, 1], "o-", label="a point under the legend")
    a.legend(loc="center", fontsize=20)
    a.set_xticks([1, 1.02, 3], ["one thousand", "two thousand", "3"])
    a.set_ylabel("a label " * 20)
    a.set_position([0.01, 0.2, 0.95, 0.75])
    faults = layout_faults(fig)
    assert any("past the figure's edge" in f for f in faults), faults
    assert any("over each other" in f for f in faults), faults
    assert any("covers a point" in f for f in faults), faults


def test_a_result_with_a_missing_number_is_carried_as_its_json_file_has_it():
    """A non-finite number (an error every draw of a depth blew up on) is carried as null, as in
    result.json: drawing the figure never fails on it (``deeplimits order`` did)."""
    import dataclasses
    import math

    from deeplimits._figure_data import figure_data

    [(home, _)] = figure_results(FIGS / "convergence_sde.png")
    nan = dataclasses.replace(home, rate_ci=[math.nan, math.nan])
    json.dumps(figure_data([nan]), allow_nan=False)
    assert figure_data([nan])["results"][0]["data"]["rate_ci"] == [None, None]
