"""Every study's result draws its own figures (issue 41): ``result.figures(out)`` writes the
files its command writes and returns their paths, so the command line keeps no table of result
types. Tiny real runs; each file must be a PNG image of a real size."""

import pytest

from deeplimits.cli.outputs import write_study
from deeplimits.studies import plan_phase, plan_scaling, plan_stability, plan_trained_limit
from deeplimits.studies.transfer import plan_transfer as _plan_transfer
from deeplimits.studies.law import plan_fig2, plan_law

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
}


@pytest.mark.parametrize("study", list(STUDIES))
def test_each_result_draws_the_figures_its_command_writes(study, tmp_path):
    plan, names = STUDIES[study]
    result = plan().run()
    (tmp_path / "a").mkdir()
    _images(result.figures(str(tmp_path / "a")), names)
    written = write_study(result, str(tmp_path / "b"), None)  # what the command writes: the figures, then the JSON
    _images([p for p in written if p.endswith(".png")], names)
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
