"""Stores written before the options were declared (issue 22) still load and resume: the specs
(hence the store keys and task seeds) of the built-in regimes are the ones recorded in
tests/golden/SPECS.json by the package before the change, for the convergence commands of
tests/golden/COMMANDS.json, more commands that set every option, and library calls (options
without a flag then, ``length_scale``; neutral values passed to any regime)."""

import json
import pathlib
import shlex

import pytest

from deeplimits.cli import build_parser
from deeplimits.cli import convergence as C
from deeplimits.studies.convergence import ConvergencePlan, plan_convergence
from deeplimits.studies.plan import plan_from_dict

SPECS = json.loads((pathlib.Path(__file__).parent / "golden" / "SPECS.json").read_text())


def test_the_recorded_commands_cover_every_built_in_option():
    argv = " ".join(v["argv"] for v in SPECS["commands"].values())
    calls = [k for v in SPECS["calls"].values() for k in v["kwargs"]]
    for flag in ("--hurst", "--corrected", "--alpha", "--beta", "--sa", "--sb", "--no-ito-correction", "--arch"):
        assert flag in argv, flag
    assert "length_scale" in calls and "ito_correction" in calls


@pytest.mark.parametrize("name", sorted(SPECS["commands"]))
def test_commands_give_the_specs_of_before(name):
    cmd = SPECS["commands"][name]
    plans = C._plans(build_parser().parse_args(shlex.split(cmd["argv"])))
    assert [p.to_dict() for p in plans] == cmd["specs"]
    for p, spec in zip(plans, cmd["specs"]):  # and the old specs load as the same plans
        assert plan_from_dict(spec) == p and ConvergencePlan.from_dict(spec).to_dict() == spec


@pytest.mark.parametrize("name", sorted(SPECS["calls"]))
def test_library_calls_give_the_specs_of_before(name):
    call = SPECS["calls"][name]
    kwargs = {("draws" if k == "paths" else k): v for k, v in call["kwargs"].items()}  # (recorded before the rename)
    plan = plan_convergence(call["regime"], **kwargs)
    assert plan.to_dict() == call["spec"]
    assert ConvergencePlan.from_dict(call["spec"]) == plan
    assert [t.key for t in plan.tasks()] == [t.key for t in ConvergencePlan.from_dict(call["spec"]).tasks()]


def test_options_read_by_name_and_unknown_keys_refused():
    plan = ConvergencePlan.from_dict(SPECS["commands"]["inside-sde-sa-noito"]["specs"][0])
    assert (plan.sa, plan.sb, plan.ito_correction, plan.beta, plan.hurst, plan.corrected) == \
        (0.7, 0.0, False, None, None, False)
    assert plan.name == "inside-sde-no-ito"
    sde = ConvergencePlan.from_dict(SPECS["commands"]["sde"]["specs"][0])
    assert sde.ito_correction is True and sde.length_scale is None
    with pytest.raises(AttributeError):
        sde.colour
    with pytest.raises(ValueError, match=r"unknown keys \['beta'\]"):
        ConvergencePlan.from_dict({**SPECS["commands"]["sde"]["specs"][0], "beta": 0.5})
