"""Grouped settings (issue 41, item 4): every plan function takes its settings in groups
(deeplimits.studies.settings) and, as before, their fields as flat keywords, with the same plan;
a field given twice, a field the study does not take, an unknown keyword or a group of the wrong
kind is a one-line ParameterError naming it; a study's function is ``execution.run(plan_X(...))``."""

import copy
import inspect
import pickle

import pytest
import torch

import deeplimits as dl
from deeplimits.errors import ParameterError
from deeplimits.studies import settings as S
from deeplimits.studies.convergence.study import plan_convergence
from deeplimits.studies.propagation.study import plan_phase, plan_stability
from deeplimits.studies.scaling.study import plan_scaling
from deeplimits.studies.scaling_conv.study import plan_conv_scaling
from deeplimits.studies.scheme_order.study import plan_strong_order
from deeplimits.studies.trained_limit.study import plan_trained_limit
from deeplimits.studies.training.conv import plan_conv_training
from deeplimits.studies.training.study import plan_training

_EM = dl.EulerMaruyama(lambda t, x: -x, lambda t, x: x[..., None])

#: (plan function, positional arguments, flat keywords, the same as groups)
CASES = [
    (plan_training, (), dict(arch="res-2", depth=8, width=6, epochs=2, seed=3, betas=[0.5, 1.0]),
     dict(network=S.Network(arch="res-2", depth=8, width=6), training=S.Training(epochs=2),
          compute=S.Compute(seed=3), grid=S.Grid(betas=[0.5, 1.0]))),
    (plan_conv_training, (), dict(depth=4, width=4, stages=2, epochs=1, momentum=0.5, chunk=1),
     dict(network=S.Network(depth=4, width=4), conv=S.Conv(stages=2, momentum=0.5), training=S.Training(epochs=1),
          compute=S.Compute(chunk=1))),
    (plan_scaling, (), dict(depths=[4, 8], max_epochs=2, width=4, activation="relu", lr=[0.01, 0.1], loss="squared"),
     dict(depths=[4, 8], max_epochs=2, network=S.Network(width=4, activation="relu"),
          training=S.Training(lr=[0.01, 0.1]), protocol=S.ScalingProtocol(loss="squared"))),
    (plan_conv_scaling, (), dict(depths=[3, 4], width=4, epochs=1, stages=1, seed=2),
     dict(depths=[3, 4], network=S.Network(width=4), training=S.Training(epochs=1), conv=S.Conv(stages=1),
          compute=S.Compute(seed=2))),
    (plan_stability, ("res-1",), dict(width=4, n_in=3, depths=[2, 4], draws=3, dtype=torch.float64, chunk=2),
     dict(n_in=3, depths=[2, 4], draws=3, network=S.Network(width=4), compute=S.Compute(dtype=torch.float64, chunk=2))),
    (plan_phase, ([0.6], [0.5]), dict(width=3, n_in=2, depth=4, draws=1, inputs=1, seed=5),
     dict(n_in=2, draws=1, inputs=1, network=S.Network(width=3, depth=4), compute=S.Compute(seed=5))),
    (plan_convergence, ("sde",), dict(width=2, depths=[4, 8], draws=4, reference=16, chunk=2, seed=1),
     dict(depths=[4, 8], draws=4, reference=16, network=S.Network(width=2), compute=S.Compute(chunk=2, seed=1))),
    (plan_strong_order, (_EM, [1.0]), dict(depths=[4, 8], draws=4, reference=16, seed=1, dtype=torch.float64),
     dict(depths=[4, 8], draws=4, reference=16, compute=S.Compute(seed=1, dtype=torch.float64))),
    (plan_trained_limit, (), dict(depths=[2, 4], reference=8, width=3, samples=10, epochs=2, lr=0.1, seed=4),
     dict(depths=[2, 4], reference=8, samples=10, network=S.Network(width=3), training=S.Training(epochs=2, lr=0.1),
          compute=S.Compute(seed=4))),
]
IDS = [c[0].__name__ for c in CASES]


@pytest.mark.parametrize("fn,args,flat,groups", CASES, ids=IDS)
def test_the_grouped_and_the_flat_forms_make_the_same_plan(fn, args, flat, groups):
    a, b = fn(*args, **flat), fn(*args, **groups)
    assert a == b
    if hasattr(a, "to_dict"):
        assert a.to_dict() == b.to_dict()  # the same spec: the same run directory and store
    assert fn(*args, **S.group(fn, flat)) == a  # the command line's way in


@pytest.mark.parametrize("fn,args,flat,groups", CASES, ids=IDS)
def test_a_field_given_twice_is_refused(fn, args, flat, groups):
    name = next(k for k, v in groups.items() if isinstance(v, S.Group))
    field = next(iter(groups[name].given()))
    with pytest.raises(ParameterError, match=rf"^{field} is given twice, as a keyword and in {name}") as e:
        fn(*args, **{**groups, field: groups[name].given()[field]})
    assert e.value.param == field


@pytest.mark.parametrize("fn,args,flat,groups", CASES, ids=IDS)
def test_an_unknown_keyword_and_a_wrong_group_are_refused(fn, args, flat, groups):
    said = f"colour is not a parameter of {fn.__name__}"  # (convergence: nor an option of its regime)
    with pytest.raises(ParameterError, match=f"^{said}") as e:
        fn(*args, **flat, colour="red")
    assert e.value.param == "colour" and "\n" not in str(e.value)
    name = next(k for k, v in groups.items() if isinstance(v, S.Group))
    with pytest.raises(ParameterError, match=rf"^{name} must be a {type(groups[name]).__name__} or None") as e:
        fn(*args, **{**groups, name: dict(groups[name].given())})
    assert e.value.param == name


def test_a_field_the_study_does_not_take_is_refused_naming_it():
    cases = [(plan_training, {"lr": 0.1}, "lr"), (plan_training, {"training": S.Training(lr=0.1)}, "lr"),
             (plan_conv_training, {"optimizer": "adam"}, "optimizer"), (plan_scaling, {"depth": 8}, "depth"),
             (plan_phase, {"chunk": 2}, "chunk"), (plan_stability, {"network": S.Network(depth=4)}, "depth")]
    for fn, kw, field in cases:
        with pytest.raises(ParameterError, match=rf"^{field} does not apply to {fn.__name__} \(it takes") as e:
            fn(**kw)
        assert e.value.param == field


def test_a_required_field_must_be_given():
    from deeplimits.studies import train_depth_family

    with pytest.raises(ParameterError, match="^epochs must be given to train_depth_family") as e:
        train_depth_family("res-2", None, depths=[2, 4], reference=8, seeds=1, lr=0.1)
    assert e.value.param == "epochs"


def test_unset_fields_take_the_studys_default_and_the_signature_shows_them():
    assert plan_training(depth=4, width=3, epochs=1).batch_size == 128
    assert plan_conv_training(depth=4, width=4, stages=2, epochs=1).lrs == (0.1,)  # conv's own default
    assert S.defaults(plan_training)["depth"] == 64 and S.defaults(plan_conv_training)["depth"] == 8
    assert S.defaults(dl.strong_order)["dtype"] == torch.float64
    assert S.defaults(plan_strong_order)["dtype"] == torch.float32
    params = inspect.signature(plan_training).parameters
    assert params["network"].default == S.Network(arch="res-1", activation=None, bias=True, depth=64, width=30)
    assert params["settings"].kind is inspect.Parameter.VAR_KEYWORD  # the flat keywords' way in
    assert repr(S.Network(depth=8)) == "Network(depth=8)" and S.Network(depth=8).given() == {"depth": 8}


def test_the_markers_survive_copies_and_pickles():
    for marker in (S.DEFAULT, S.REQUIRED):
        assert copy.deepcopy(marker) is marker and pickle.loads(pickle.dumps(marker)) is marker
    g = pickle.loads(pickle.dumps(S.Compute(seed=1)))
    assert g == S.Compute(seed=1) and g.dtype is S.DEFAULT


def test_execution_runs_a_plan_as_the_study_function_does(tmp_path):
    from deeplimits.runs import RunStore

    plan = plan_convergence("sde", network=S.Network(width=2), depths=[4, 8], draws=4, reference=16,
                            compute=S.Compute(chunk=2))
    seen = []
    store = RunStore(tmp_path / "run", plan.to_dict())
    a = S.Execution(progress=seen.append, store=store).run(plan)
    assert seen == [2, 2] and store.counts() == {"done": 2}
    b = dl.strong_convergence("sde", width=2, depths=[4, 8], draws=4, reference=16, chunk=2,
                              execution=S.Execution(store=RunStore(tmp_path / "run", plan.to_dict())))
    assert a.error == b.error  # read back from the store: nothing recomputed
    with pytest.raises(ParameterError, match="^store does not apply to strong_order"):
        dl.strong_order(_EM, [1.0], depths=[4, 8], draws=2, reference=16, store=store)
