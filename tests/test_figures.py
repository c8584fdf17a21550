"""Every study's result draws its own figures (issue 41): ``result.figures(out)`` writes the
files its command writes and returns their paths, so the command line keeps no table of result
types. Tiny real runs; each file must be a PNG image of a real size."""

import json

import pytest

from deeplimits.cli.outputs import write_study
from deeplimits.studies import plan_phase, plan_scaling, plan_stability, plan_trained_limit
from deeplimits.studies.transfer import plan_transfer as _plan_transfer
from deeplimits.studies.law import plan_fig2, plan_law
from deeplimits.studies.shapes import plan_shapes

PNG = b"\x89PNG\r\n\x1a\n"


def _images(paths, names):
    assert sorted(p.rsplit("/", 1)[-1] for p in paths) == sorted(names)
    for p in paths:
        with open(p, "rb") as f:
            head = f.read(24)
        assert head[:8] == PNG
        width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
        assert width >= 300 and height >= 200, (p, width, height)


STUDIES = {
    "stability": (lambda: plan_stability(depths=[4, 8], betas=[0.5], width=4, draws=4, histograms=True),
                  ["stability.png", "theory.png", "histograms.png"]),
    "phase": (lambda: plan_phase([0.3, 0.7], [0.5, 1.0], depth=16, width=4, draws=2), ["phase.png"]),
    "scaling": (lambda: plan_scaling(depths=[4, 8], width=4, seeds=1, samples=32, max_epochs=1), ["scaling.png"]),
    "trained-limit": (lambda: plan_trained_limit(cases=["linear"], depths=[2, 4], reference=8, seeds=2, epochs=1,
                                                 width=2, samples=10), ["trained-limit.png"]),
    "transfer": (lambda: _plan_transfer(depths=[2, 4, 8], lrs=[-1, 1], seeds=2, width=2, samples=16, epochs=1,
                                        batch_size=16, betas=[1.0], optimizers=["adam"]),
                 ["transfer.png", "optimum.png", "coordinates.png"]),
    "law": (lambda: plan_law(depths=[4, 8, 16], fine=64, draws=512, samples=100), ["law.png"]),
    "law-fig2": (lambda: plan_fig2(depths=[2, 4], width=4, draws=16), ["fig2.png"]),
    "shapes": (lambda: plan_shapes(depths=[4, 8], widths=[4, 8], dims=[4, 8], seeds=3, fit_min=[0, 0, 0]),
               ["shapes.png"]),
}


@pytest.mark.parametrize("study", list(STUDIES))
def test_each_result_draws_the_figures_its_command_writes(study, tmp_path):
    plan, names = STUDIES[study]
    result = plan().run()
    (tmp_path / "a").mkdir()
    _images(result.figures(str(tmp_path / "a")), names)
    drawn = type(result).figures
    seen = []

    def after_the_json(self, out):  # the command writes the JSON first, then draws (issue 57)
        seen.append((tmp_path / "b" / "result.json").exists())
        return drawn(self, out)

    type(result).figures = after_the_json
    try:
        written = write_study(result, str(tmp_path / "b"), None)  # the figures' paths, then the JSON's
    finally:
        type(result).figures = drawn
    assert seen == [True] and written[-1].endswith("result.json")
    _images([p for p in written if p.endswith(".png")], names)
    # drawn again from the stored JSON alone (what `deeplimits runs plot` and a notebook do)
    stored = type(result).from_dict(json.loads((tmp_path / "b" / "result.json").read_text()))
    (tmp_path / "c").mkdir()
    _images(stored.figures(str(tmp_path / "c")), names)
    assert write_study(result, str(tmp_path / "d"), None, figures=False) == [str(tmp_path / "d" / "result.json")]
    _points(result, study)


def _points(result, study):
    """The result's measured points: the same columns for every study, real numbers, each row's
    study named (``runs export --csv``, deeplimits.studies._shared.points)."""
    from deeplimits.studies._shared.points import COLUMNS

    rows = result.points()
    assert rows and all(tuple(r) == COLUMNS for r in rows), study
    assert {r["study"] for r in rows} == {study}
    assert all(isinstance(r["quantity"], str) and r["quantity"] and r["setting"] is not None for r in rows)
    assert any(isinstance(r["value"], float) for r in rows)
    assert all(r[k] is None or isinstance(r[k], float) for r in rows for k in ("value", "stderr", "ci_low", "ci_high"))


def test_a_command_draws_its_figures_now_later_or_not_at_all(monkeypatch):
    """The ``deeplimits`` process draws by default in the background (after its JSON), ``--figures``
    waits for them, ``--no-figures`` draws none; a call of ``main([...])`` in a session always waits."""
    from types import SimpleNamespace

    from deeplimits.cli import outputs

    def mode(figures=None, allowed=True, **kw):
        monkeypatch.setitem(outputs.BACKGROUND, "allowed", allowed)
        return outputs.figure_mode(SimpleNamespace(figures=figures, **kw))
    assert mode() == "background" and mode(True) == "now" and mode(False) == "none"
    assert mode(allowed=False) == "now" and mode(workers=2) == "now" and mode(False, allowed=False) == "none"


def test_figures_drawn_in_the_background_appear_whole_after_the_json(tmp_path):
    """The background child (``os.fork``) draws into a directory of its own and moves each finished
    file into the run directory; a failure leaves its reason in figures-error.txt."""
    import os

    from deeplimits.cli.outputs import _draw_then_move, in_background

    def draw(into):
        path = os.path.join(into, "a.png")
        with open(path, "wb") as f:
            f.write(PNG + b"\0" * 64)
        return [path]

    def broken(into):
        raise ValueError("no figure today")
    for work in (draw, broken):
        pid = in_background(lambda: _draw_then_move(work, str(tmp_path)))
        assert os.waitpid(pid, 0)[1] == 0
    assert (tmp_path / "a.png").read_bytes()[:8] == PNG
    assert (tmp_path / "figures-error.txt").read_text() == "ValueError: no figure today\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "figures-error.txt"]  # no directory left


def test_a_base_2_depth_axis_has_no_minor_ticks_to_label_over_each_other():
    # depths 8..512 on base 2: matplotlib labels minor ticks over so few powers, and 2 and 5 times a
    # power of 2 ("1.25 x 2^4", ...) were drawn on top of each other; base 10 keeps its 2 and 5
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import LogLocator, NullLocator

    from deeplimits._figures import _light_log_ticks

    fig = Figure()
    ax = fig.add_subplot()
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.plot([8, 512], [0.3, 0.01])
    _light_log_ticks(fig)
    assert isinstance(ax.xaxis.get_minor_locator(), NullLocator)
    assert isinstance(ax.yaxis.get_minor_locator(), LogLocator)
