"""One result convention (issue 11): every study is a Plan dataclass with one ``to_dict`` /
``from_dict``. The specs, task keys, parameters and seeds below were written by the package
before plans became dataclasses (the dict-returning ``plan_stability`` / ``plan_phase`` and
``ConvergencePlan.to_spec``): stores made then must load and resume unchanged."""

import json

import pytest
import torch

import deeplimits as dl
from deeplimits.runs import RunStore, task_function
from deeplimits.studies import (ConvergencePlan, PhasePlan, StabilityPlan, plan_from_dict, plan_phase,
                                plan_stability, results_from_store)

OLD = {
    "stability": (
        {"study": "stability", "arch": "res-2", "driver": "smooth", "length_scale": 0.1, "activation": "tanh",
         "width": 4, "n_in": 4, "depths": [8, 16], "betas": [0.5], "draws": 6, "inputs": 1, "seed": 0,
         "dtype": "float32", "histograms": False, "chunk": 3},
        [["stability/chunk-00000", "stability-chunk", 7896617691693857887],
         ["stability/chunk-00001", "stability-chunk", 2918264622725855778]]),
    "phase": (
        {"study": "phase", "arch": "res-3", "activation": "relu", "hursts": [0.3, 0.7], "betas": [0.5, 1.0],
         "width": 4, "n_in": 4, "depth": 30, "draws": 2, "inputs": 2, "seed": 0, "dtype": "float32"},
        [["phase/hurst-0.300000", "phase-hurst", 7896617691693857887],
         ["phase/hurst-0.700000", "phase-hurst", 2918264622725855778]]),
    # the spec keeps the key "paths" for the plan's draws (issue 28): it names the run directory
    "convergence": (
        {"regime": "fbm", "width": 8, "activation": None, "arch": None, "hurst": 0.7, "corrected": False,
         "depths": [4, 8], "paths": 4, "inputs": 1, "reference": 32, "seed": 0, "dtype": "float64", "chunk": 2},
        [["fbm-H0.7/chunk-00000", "convergence-chunk", 7896617691693857887],
         ["fbm-H0.7/chunk-00001", "convergence-chunk", 2918264622725855778]]),
}
OLD_PHASE_PARAMS = {"arch": "res-3", "activation": "relu", "betas": [0.5, 1.0], "width": 4, "n_in": 4, "depth": 30,
                    "draws": 2, "inputs": 2, "dtype": "float32", "hurst": 0.3}


def new_plans():
    return {"stability": plan_stability("res-2", "smooth", width=4, n_in=4, depths=[8, 16], betas=[0.5], draws=6,
                                        chunk=3),
            "phase": plan_phase([0.3, 0.7], [0.5, 1.0], width=4, n_in=4, depth=30, draws=2, inputs=2),
            "convergence": dl.plan_convergence("fbm", hurst=0.7, depths=[4, 8], draws=4, reference=32, chunk=2)}


@pytest.mark.parametrize("study", sorted(OLD))
def test_old_specs_load_and_give_the_same_tasks(study):
    spec, tasks = OLD[study]
    plan = plan_from_dict(spec)
    assert type(plan) is {"stability": StabilityPlan, "phase": PhasePlan, "convergence": ConvergencePlan}[study]
    assert plan == new_plans()[study] and plan.to_dict() == spec
    assert json.loads(json.dumps(plan.to_dict())) == spec  # plain JSON
    assert [[t.key, t.fn, t.seed] for t in plan.tasks()] == tasks
    if study == "phase":
        assert plan.tasks()[0].params == OLD_PHASE_PARAMS


def test_unknown_keys_and_studies_are_errors():
    spec = dict(OLD["phase"][0], colour="blue")
    with pytest.raises(ValueError, match="unknown keys.*colour"):
        plan_from_dict(spec)
    with pytest.raises(ValueError, match="unknown study 'tennis'"):
        plan_from_dict({"study": "tennis"})


def test_pre_registry_task_names_resolve():
    """Stores written before tasks were registered by name hold ``module:function`` names."""
    assert task_function("deeplimits.propagation:phase_task") is task_function("phase-hurst")
    assert task_function("deeplimits.convergence:run_task") is task_function("convergence-chunk")
    with pytest.raises(KeyError, match="no sweep task registered as 'nope'"):
        task_function("nope")


@pytest.mark.parametrize("study", sorted(OLD))
def test_one_run_and_one_reader_for_every_study(tmp_path, study):
    """``Plan.run`` into a store, then :func:`results_from_store` rebuilds the same result."""
    plan = plan_from_dict(OLD[study][0])
    ran = plan.run(store=RunStore(tmp_path, plan.to_dict()))
    [stored] = results_from_store(RunStore(tmp_path, create=False))
    a, b = ran.to_dict(), stored.to_dict()
    a.pop("seconds"), b.pop("seconds")
    assert a == b and type(stored) is type(ran)


def _every_plan(device):
    """One small plan of every study on ``device``."""
    from deeplimits.studies import plan_scaling, plan_training

    return {"convergence": dl.plan_convergence("sde", depths=[2, 4], draws=2, width=2, device=device),
            "stability": plan_stability("res-2", width=2, n_in=2, depths=[4], betas=[0.5], draws=2, device=device),
            "phase": plan_phase([0.3], [0.5], width=2, n_in=2, depth=4, draws=1, inputs=1, device=device),
            "train": plan_training("synthetic", depth=2, width=2, epochs=1, device=device),
            "scaling": plan_scaling(depths=[2, 4], width=2, seeds=1, samples=8, max_epochs=1, device=device)}


def test_one_device_encoding_for_every_plan():
    """Every plan holds its device as :func:`deeplimits._validate.device_spec` encodes it:
    ``None`` on the CPU (not in the spec: the specs of CPU runs are those of before), else its
    name; a spec with a device reads back with it."""
    from deeplimits._validate import device_spec

    assert device_spec(None) is None and device_spec("cpu") is None and device_spec(torch.device("cpu")) is None
    for default, named in zip(_every_plan(None).values(), _every_plan("cpu").values()):
        assert default == named and default.device is None and "device" not in default.to_dict()
    for study, plan in _every_plan(None).items():
        spec = {**plan.to_dict(), "device": "cuda:1"}  # as a GPU run records it (read back on any machine)
        back = plan_from_dict(spec)
        assert back.device == "cuda:1" and back.to_dict() == spec, study


@pytest.mark.parametrize("study", ["stability", "phase"])
def test_a_result_holds_its_plan(study):
    """A result keeps the plan it summarises (issue 22) and re-declares none of its fields: the
    plan's values are read through it and written to its JSON under their old names, and JSON
    written before results held plans still loads (a stability plan's chunking was not recorded:
    one chunk of all the draws)."""
    import dataclasses

    plan = new_plans()[study]
    res = plan.run()
    assert res.plan == plan
    assert not {f.name for f in dataclasses.fields(res)} & {f.name for f in dataclasses.fields(plan)}
    d = res.to_dict()
    assert d["plan"] == plan.to_dict() and d["width"] == res.width == plan.width == 4 and d["dtype"] == "float32"
    if study == "phase":
        assert d["hurst"] == res.hurst == [0.3, 0.7] and d["beta"] == [0.5, 1.0] and d["bias"] is None
    else:
        from deeplimits.studies.propagation.presets import DELTA

        assert plan.length_scale is not None and plan.delta is None  # the declared defaults
        assert d["driver"] == {"driver": "smooth", "length_scale": plan.length_scale} == res.driver
        assert d["delta"] == res.delta == DELTA
    back = type(res).from_dict(json.loads(json.dumps(d)))
    assert back == res and back.plan == plan
    old = {k: v for k, v in d.items() if k != "plan"}  # as written before
    again = type(res).from_dict(old)
    assert again.plan == (plan if study == "phase" else dataclasses.replace(plan, chunk=plan.draws))
    assert again.to_dict()["records" if study == "stability" else "log10_rh"] == d[
        "records" if study == "stability" else "log10_rh"]
    with pytest.raises(AttributeError, match="colour"):
        res.colour


def test_a_training_result_holds_its_plan(tmp_path):
    """The training grid's result holds its plan too (issue 22); JSON without the plan did not
    record the grid's settings and is refused with a pointer to the run store."""
    import dataclasses

    from deeplimits.studies import plan_training

    plan = plan_training("synthetic", depth=2, width=3, epochs=1, save_weights=False)
    res = plan.run()
    assert res.plan == plan and (res.width, res.depth, res.arch, res.epochs) == (3, 2, plan.arch, 1)
    assert not {f.name for f in dataclasses.fields(res)} & {f.name for f in dataclasses.fields(plan)}
    d = json.loads(res.to_json())
    assert d["plan"] == plan.to_dict() and d["dataset"] == "synthetic" and d["width"] == 3
    assert type(res).from_dict(d) == res
    with pytest.raises(ValueError, match="no 'plan' key.*results_from_store") as e:
        type(res).from_dict({k: v for k, v in d.items() if k != "plan"})
    assert e.value.param == "d"


def test_a_result_that_held_a_spec_reads_back_with_its_plan():
    """The law, transfer and trained-limit results held their plan's spec under ``'spec'``; they hold
    their plan now (``'plan'`` in their JSON, :attr:`spec` a property), and JSON written before
    still reads back: the same plan, the same report."""
    from deeplimits.studies import plan_trained_limit
    from deeplimits.studies.trained_limit.result import TrainedLimitResult

    res = plan_trained_limit(cases=["linear"], depths=[2, 4], reference=8, seeds=2, epochs=1, width=2,
                             samples=10).run()
    d = json.loads(res.to_json())
    assert d["plan"] == res.spec == res.plan.to_dict() and "spec" not in d
    old = {("spec" if k == "plan" else k): v for k, v in d.items()}  # as written before
    back = TrainedLimitResult.from_dict(old)
    assert back.plan == res.plan and back.report().splitlines()[:-1] == res.report().splitlines()[:-1]
