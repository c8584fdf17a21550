"""A regime added with a new option (issue 22): declared once (an :class:`~deeplimits.options.Option`
in ``Regime.options``), the option reaches the pair (validation, default), the plan's spec (run
store), the result, the command line's flag and its ``--help`` line, with no line of cli/ or
studies/ written for it; another regime refuses it, naming the regimes that take it."""

import json

import pytest

import deeplimits as dl
from deeplimits.cli import main
from deeplimits.regimes import REGISTRY, Option, Regime, StrongOrder, register_regime
from deeplimits.runs import RunStore
from deeplimits.studies import plan_from_dict

GAIN = Option("gain", float, default=1.0, low=0.0, high=2.0, low_open=True, help="slope of the linear activation")


class Damped(Regime):
    """res-1 with a linear activation of slope ``gain``: h + L^-1/2 V (gain h) -> dH = gain dX H."""

    name = "damped-sde"
    network = "res-1 with sigma(h) = gain h"
    limit = "linear Itô SDE dH = gain dX H"
    weights = "Brownian increments"
    scaling = "beta = 1/2"
    order = StrongOrder(0.5, "always", "Euler–Maruyama of a linear Itô SDE: strong order 1/2")
    options = (GAIN,)
    defaults = dict(width=2, depths=[4, 8], draws=4, reference=32)

    def build(self, width, activation, arch, gain):
        net = dl.ResNet("res-1", activation or dl.Activation(lambda h: gain * h, f"linear:{gain:g}"), beta=0.5)
        return dl.Pair(self.name, width, net, dl.SDELimit(net.activation), {"V": dl.IIDDriver("gaussian")}, self.order)


class Damped2(Damped):
    name = "damped-sde2"


@pytest.fixture
def damped():
    """Register the two regimes for one test, then unregister them."""
    saved = dict(REGISTRY)
    register_regime(Damped)
    register_regime(Damped2)
    yield REGISTRY["damped-sde"]
    REGISTRY.clear()
    REGISTRY.update(saved)


def run(argv, capsys):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_the_help_lists_the_new_flag_with_its_help_and_default(damped, capsys):
    with pytest.raises(SystemExit) as e:
        main(["convergence", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--gain GAIN damped-sde, damped-sde2: slope of the linear activation (in (0, 2]; default 1)" in text
    assert "damped-sde: Brownian increments, beta = 1/2 -> linear Itô SDE dH = gain dX H" in text


def test_the_flag_runs_a_plan_and_the_spec_and_the_result_record_it(damped, tmp_path, capsys):
    js = tmp_path / "r.json"
    argv = ["convergence", "--regime", "damped-sde", "--gain", "0.5", "--out", str(tmp_path / "run"), "--quiet",
            "--json", str(js)]
    rc, out, err = run(argv, capsys)
    assert rc == 0, err
    result = json.loads(js.read_text())
    assert result["options"] == {"gain": 0.5} and result["regime"] == "damped-sde" and result["depths"] == [4, 8]
    assert "damped-sde gain=0.5 (res-1, linear:0.5, d=2)" in out
    with RunStore(tmp_path / "run", create=False) as store:
        spec = store.spec
    assert spec["gain"] == 0.5 and "options" not in spec  # a field of its own, as every declared option
    plan = plan_from_dict(spec)
    assert plan.gain == 0.5 and plan.to_dict() == spec and plan.pair().network.activation.name == "linear:0.5"
    # not given: its declared default is recorded (the spec says what ran)
    assert dl.plan_convergence("damped-sde").to_dict()["gain"] == 1.0
    assert dl.strong_convergence("damped-sde", gain=1.5, depths=[4, 8], draws=2).options == {"gain": 1.5}


@pytest.mark.parametrize("value,needle", [
    ("3", "--gain must lie in (0.0, 2.0] for regime 'damped-sde', got 3.0"),
    ("0", "--gain must lie in (0.0, 2.0] for regime 'damped-sde', got 0.0"),
    ("x", "--gain: expected a number, got 'x'"),
    ("nan", "--gain"),
])
def test_a_bad_value_is_one_line_naming_the_flag(damped, tmp_path, capsys, value, needle):
    rc, _, err = run(["convergence", "--regime", "damped-sde", "--gain", value, "--out", str(tmp_path / "r")], capsys)
    assert rc == 2 and needle in err and err.count("\n") == 1 and not (tmp_path / "r").exists()


def test_other_regimes_refuse_it_naming_the_regimes_that_take_it(damped, capsys):
    rc, _, err = run(["convergence", "--regime", "sde", "--gain", "0.5"], capsys)
    assert rc == 2 and "--gain applies only to --regime damped-sde or damped-sde2" in err
    rc, _, err = run(["convergence", "--gain", "0.5"], capsys)
    assert rc == 2 and "--gain needs --regime damped-sde or damped-sde2" in err
    with pytest.raises(ValueError, match="gain applies only to regimes 'damped-sde' and 'damped-sde2', not 'fbm'"):
        dl.pair("fbm", width=2, hurst=0.7, gain=0.5)
    with pytest.raises(ValueError, match="hurst applies only to regimes 'fbm' and 'rough', not 'damped-sde'"):
        dl.pair("damped-sde", width=2, hurst=0.7)
    assert dl.pair("damped-sde", width=2).options == {"gain": 1.0}


def test_declarations_are_checked_when_a_regime_is_registered(damped):
    def regime(name, *options):
        return type("R", (Damped,), {"name": name, "options": options})

    with pytest.raises(ValueError, match="'gain' is declared by regime 'damped-sde' as float"):
        register_regime(regime("other", Option("gain", int, default=1)))
    for name in ("seed", "json", "draws"):
        with pytest.raises(ValueError, match=f"declares '{name}' \\(a name taken by pair or the convergence study\\)"):
            register_regime(regime("other", Option(name, int)))
    with pytest.raises(ValueError, match="declares 'gain' twice"):
        register_regime(regime("other", GAIN, GAIN))
    with pytest.raises(ValueError, match="options must be a tuple of deeplimits.regimes.Option"):
        register_regime(type("R", (Damped,), {"name": "other", "options": {"gain": "a description"}}))
    with pytest.raises(ValueError, match="a bool option needs a default True or False"):
        Option("fast", bool)
    assert "other" not in REGISTRY
