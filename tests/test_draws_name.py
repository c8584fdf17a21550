"""One name for the number of draws (issue 28): ``draws`` in the convergence and order studies,
their results and the command line; ``paths`` (its former name) still works for one release
with a DeprecationWarning naming ``draws``, and giving both is refused before any work. The
convergence spec keeps its key ``paths`` (it names the run directory), and result JSON written
with ``paths`` still loads."""

import json
import pathlib
import warnings

import pytest

import deeplimits as dl
from deeplimits.cli import build_parser, main
from deeplimits.errors import ParameterError
from deeplimits.regimes import REGISTRY, Regime, register_regime
from deeplimits.schemes.problems import scheme_on

GOLDEN = pathlib.Path(__file__).parent / "golden"
PLAN = dict(width=2, depths=[4, 8], reference=32, seed=1, chunk=2)


def test_paths_warns_and_gives_the_same_plan():
    new = dl.plan_convergence("sde", draws=6, **PLAN)
    with pytest.warns(DeprecationWarning, match=r"paths= is deprecated .* use draws=") as rec:
        old = dl.plan_convergence("sde", paths=6, **PLAN)
    assert rec[0].filename == __file__  # the warning points at the caller's line
    assert old == new and old.draws == 6 and old.chunk_sizes == [2, 2, 2]
    # the spec (the run directory's name, the store's key) keeps the key it had before the rename
    spec = new.to_dict()
    assert spec["paths"] == 6 and "draws" not in spec
    assert dl.ConvergencePlan.from_dict(spec) == new
    with pytest.warns(DeprecationWarning, match=r"ConvergencePlan.paths is deprecated .* ConvergencePlan.draws"):
        assert new.paths == 6


def test_draws_alone_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dl.plan_convergence("sde", draws=3, **PLAN).draws == 3
        assert dl.plan_convergence("ode", width=2, depths=[4, 8]).draws == dl.get_regime("ode").defaults["draws"]


@pytest.mark.parametrize("fn", [dl.plan_convergence, dl.strong_convergence])
def test_both_names_are_refused_before_any_work(fn):
    with pytest.raises(ParameterError, match="draws and paths are the same argument") as e:
        fn("sde", draws=4, paths=4, **PLAN)
    assert e.value.param == "draws"
    with pytest.raises(ParameterError, match="draws must be an integer >= 1"), pytest.warns(DeprecationWarning):
        fn("sde", paths=0, **PLAN)  # the old name is validated under the new one


def test_strong_convergence_paths_gives_the_same_result():
    new = dl.strong_convergence("sde", draws=4, **PLAN)
    with pytest.warns(DeprecationWarning, match="use draws="):
        old = dl.strong_convergence("sde", paths=4, **PLAN)
    assert old.draws == new.draws == 4
    assert old.error == pytest.approx(new.error, rel=1e-12)  # same seeds, same code path
    d = new.to_dict()
    assert d["draws"] == 4 and "paths" not in d


def test_strong_order_takes_draws_and_the_old_name():
    em, p = scheme_on("euler-maruyama", "linear-sde")
    kw = dict(depths=[4, 8], reference=32, exact=p.exact, seed=2)
    new = dl.strong_order(em, [1.0], draws=8, **kw)
    with pytest.warns(DeprecationWarning, match="use draws="):
        old = dl.strong_order(em, [1.0], paths=8, **kw)
    assert new.draws == old.draws == 8 and old.error == pytest.approx(new.error, rel=1e-12)
    with pytest.raises(ParameterError, match="draws and paths are the same argument"):
        dl.strong_order(em, [1.0], draws=8, paths=8, **kw)


def test_old_result_json_with_paths_loads():
    old = json.loads((GOLDEN / "sde.json").read_text())  # written before the rename
    assert "paths" in old and "draws" not in old
    r = dl.ConvergenceResult.from_dict(old)
    assert r.draws == old["paths"] == 16 and r.error == old["error"]
    assert r.to_dict()["draws"] == 16 and "16 draws" in r.report()
    with pytest.warns(DeprecationWarning, match="ConvergenceResult.paths is deprecated"):
        assert r.paths == 16
    # a list of results (the default study's JSON) loads the same way
    for d in json.loads((GOLDEN / "default.json").read_text()):
        assert dl.ConvergenceResult.from_dict(d).draws == d["paths"]


def test_a_regime_declaring_defaults_paths_is_read_as_draws():
    saved = dict(REGISTRY)
    try:
        with pytest.warns(DeprecationWarning, match=r"defaults\['paths'\] is deprecated"):
            @register_regime
            class Older(type(REGISTRY["sde"])):
                name = "older-sde"
                defaults = dict(Regime.defaults, reference=64, paths=5)

        assert Older.defaults["draws"] == 5 and "paths" not in Older.defaults
        assert dl.plan_convergence("older-sde", width=2, depths=[4, 8]).draws == 5
    finally:
        REGISTRY.clear()
        REGISTRY.update(saved)


@pytest.mark.parametrize("command", ["convergence", "order"])
def test_cli_flag_is_draws_and_paths_is_a_hidden_alias(command, capsys):
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]
    text = sub.format_help()
    assert "--draws DRAWS" in text and "--paths" not in text and "PATHS" not in text
    base = {"convergence": ["convergence", "--regime", "sde"],
            "order": ["order", "--scheme", "euler-maruyama", "--problem", "linear-sde"]}[command]
    assert parser.parse_args(base + ["--draws", "7"]).draws == 7
    assert parser.parse_args(base + ["--paths", "7"]).draws == 7
    err = capsys.readouterr().err
    assert err == "deeplimits: --paths is deprecated and will be removed in the next release; use --draws\n"


@pytest.mark.slow
def test_cli_alias_runs_and_errors_name_draws(tmp_path, capsys):
    js = tmp_path / "r.json"
    argv = ["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--depths", "4,8", "--seed", "1",
            "--json", str(js), "--out", str(tmp_path / "run")]
    assert main(argv + ["--paths", "8"]) == 0
    assert "--paths is deprecated" in capsys.readouterr().err
    assert json.loads(js.read_text())["draws"] == 8
    assert main(argv + ["--draws", "0"]) == 2
    assert capsys.readouterr().err.strip() == "deeplimits order: --draws must be an integer >= 1, got 0"
    assert main(["convergence", "--regime", "sde", "--paths", "0", "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "deeplimits convergence: --draws must be an integer >= 1, got 0"
