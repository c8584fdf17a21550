"""One name for the number of draws: ``draws`` in the convergence and order studies, their results
and the command line. ``paths``, its name before 0.1.0, is gone from the code (its rename shims are
removed): as an argument, an attribute, a regime default or a flag it is refused like any unknown
name. What was stored with it still loads: the convergence spec keeps its key ``paths`` (it names
the run directory), and result JSON written with ``paths`` reads as ``draws``."""

import json
import pathlib

import pytest

import deeplimits as dl
from deeplimits.cli import build_parser, main
from deeplimits.errors import ParameterError
from deeplimits.schemes.problems import scheme_on

GOLDEN = pathlib.Path(__file__).parent / "golden"
PLAN = dict(width=2, depths=[4, 8], reference=32, seed=1, chunk=2)


def test_draws_names_the_draws_and_the_spec_keeps_its_key():
    plan = dl.plan_convergence("sde", draws=6, **PLAN)
    assert plan.draws == 6 and plan.chunk_sizes == [2, 2, 2]
    spec = plan.to_dict()  # the run directory's name and the store's key: the key it had before the rename
    assert spec["paths"] == 6 and "draws" not in spec
    assert dl.ConvergencePlan.from_dict(spec) == plan
    assert not hasattr(plan, "paths")


@pytest.mark.parametrize("fn", [dl.plan_convergence, dl.strong_convergence])
def test_the_old_argument_is_an_unknown_keyword(fn):
    with pytest.raises(ParameterError) as e:
        fn("sde", paths=4, **PLAN)
    assert e.value.param == "paths" and "\n" not in str(e.value)


def test_strong_order_takes_draws_only():
    em, p = scheme_on("euler-maruyama", "linear-sde")
    kw = dict(depths=[4, 8], reference=32, exact=p.exact, seed=2)
    assert dl.strong_order(em, [1.0], draws=8, **kw).draws == 8
    with pytest.raises((ParameterError, TypeError)):
        dl.strong_order(em, [1.0], paths=8, **kw)


def test_old_result_json_with_paths_loads():
    old = json.loads((GOLDEN / "sde.json").read_text())  # written before the rename
    assert "paths" in old and "draws" not in old
    r = dl.ConvergenceResult.from_dict(old)
    assert r.draws == old["paths"] == 16 and r.error == old["error"]
    assert r.to_dict()["draws"] == 16 and "16 draws" in r.report() and not hasattr(r, "paths")
    for d in json.loads((GOLDEN / "default.json").read_text()):  # a list of results (the default study's JSON)
        assert dl.ConvergenceResult.from_dict(d).draws == d["paths"]


@pytest.mark.parametrize("command", ["convergence", "order"])
def test_the_cli_flag_is_draws_and_paths_is_unknown(command, capsys):
    parser = build_parser()
    text = parser._subparsers._group_actions[0].choices[command].format_help()
    assert "--draws DRAWS" in text and "--paths" not in text
    base = {"convergence": ["convergence", "--regime", "sde"],
            "order": ["order", "--scheme", "euler-maruyama", "--problem", "linear-sde"]}[command]
    assert parser.parse_args(base + ["--draws", "7"]).draws == 7
    assert main(base + ["--paths", "7"]) == 2
    assert "unrecognized arguments: --paths" in capsys.readouterr().err
