"""The package's exceptions (issue 22): one base, a ParameterError carrying the parameter that
every argument check raises, damaged files and run stores apart, and the command line showing
the flag of ``e.param`` (never a message's first word)."""

import ast
import pathlib
import pickle

import pytest

import deeplimits as dl
from deeplimits import data as D
from deeplimits import diagnostics as G
from deeplimits import training as T
from deeplimits import errors as E
from deeplimits.cli.errors import usage

PKG = pathlib.Path(dl.__file__).resolve().parent

#: the ValueErrors left that are not about a parameter (module -> functions): a method called on
#: a sample that has no such thing
PLAIN_VALUE_ERRORS = {"paths/base.py": {"iter_increments", "at"},
                      # about a file's content: its readers raise them as DamagedFileError naming the file
                      "_bounded.py": {"charge", "scan_pickle", "walk_once"},
                      "studies/scheme_order/table_stats.py": {"load", "_member", "_meta", "_stats"},
                      # a stored task's description of its pair: read inside a store's reader, which names the store
                      "studies/convergence/described.py": {"described"}}
#: messages that name what was given rather than the parameter: (module, parameter) -> a message
NAMED_OTHERWISE = {("studies/plan.py", "spec"): "unknown study 'x'",
                   ("data/base.py", "loader"): "the labels of 'name' must lie in [0, n)",
                   ("regimes/base.py", "cls"): "regime 'x' is already registered"}


def _raises(path):
    """``(function, exception name, call)`` of every ``raise X(...)`` of ``path``."""
    tree = ast.parse(path.read_text())
    out = []
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        for node in ast.walk(fn):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
                out.append((fn.name, node.exc.func.id, node.exc))
    return out


def test_the_hierarchy():
    for name in E.__all__:
        cls = getattr(E, name)
        assert issubclass(cls, Warning) or issubclass(cls, E.DeeplimitsError), name
        assert issubclass(cls, Warning) or getattr(dl, name) is cls  # exported from the root
    assert issubclass(E.ParameterError, ValueError) and issubclass(E.ResourceError, E.ParameterError)
    assert issubclass(E.DamagedFileError, ValueError) and not issubclass(E.DamagedFileError, E.ParameterError)
    assert not issubclass(E.RunStoreError, ValueError) and issubclass(E.DamagedStoreError, E.RunStoreError)
    assert issubclass(E.MissingExtra, ImportError) and issubclass(E.SweepError, RuntimeError)
    from deeplimits import runs
    from deeplimits._extras import MissingExtra

    assert runs.RunStoreError is E.RunStoreError and runs.SweepError is E.SweepError and MissingExtra is E.MissingExtra


@pytest.mark.slow
def test_no_plain_value_error_is_raised_about_a_parameter():
    """Every ``raise ValueError(...)`` of the package is a ParameterError (or a DamagedFileError),
    but the few listed that are not about a parameter; each ParameterError names its parameter."""
    plain, unnamed = [], []
    for path in PKG.rglob("*.py"):
        rel = str(path.relative_to(PKG))
        for fn, exc, call in _raises(path):
            if exc == "ValueError" and fn not in PLAIN_VALUE_ERRORS.get(rel, ()):
                plain.append(f"{rel}:{call.lineno} ({fn})")
            if exc == "ParameterError" and rel != "cli/execution.py":
                param, msg = call.args[0], call.args[1]
                text = ast.unparse(msg)
                told = isinstance(msg, ast.Constant) or (isinstance(msg, ast.JoinedStr)
                                                         and isinstance(msg.values[0], ast.Constant))
                if isinstance(param, ast.Constant) and told and param.value not in text \
                        and (rel, param.value) not in NAMED_OTHERWISE:
                    unnamed.append(f"{rel}:{call.lineno}: {param.value!r} not in {text[:60]}")
    assert not plain, plain
    assert not unnamed, unnamed


@pytest.mark.parametrize("call,param", [
    (lambda: dl.pair("sde", width=0), "width"),
    (lambda: dl.make_driver("smooth", length_scale=-1.0), "length_scale"),
    (lambda: dl.plan_convergence("sde", depths=[3]), "depths"),
    (lambda: T.ResidualNetwork("res-1", 2, 2, 2, 2, beta=-1.0), "beta"),
    (lambda: dl.plan_stability(betas=[]), "betas"),
    (lambda: D.load_dataset("digits", test_fraction=1.0), "test_fraction"),
    (lambda: D.load_dataset("digits", colour=1), "colour"),
])
def test_a_refused_argument_carries_its_parameter(call, param):
    with pytest.raises(E.ParameterError) as info:
        call()
    assert info.value.param == param and param in str(info.value)


def test_a_resource_error_is_a_parameter_error_of_its_first_knob():
    e = E.ResourceError("needs ~1 TiB; this machine has 8 GiB", needed=2 ** 40, available=2 ** 33,
                        knobs=("width", "draws"))
    assert e.param == "width" and e.knobs == ("width", "draws") and isinstance(e, ValueError)


@pytest.mark.parametrize("e", [E.ParameterError("width", "width must be an integer >= 1, got 0"),
                               E.ResourceError("needs ~1 TiB", needed=1.0, available=0.5, knobs=("chunk",)),
                               E.DamagedFileError("/x/data_batch_1", "/x/data_batch_1 is not a CIFAR-10 batch"),
                               E.RunStoreError("no run store at x")])
def test_the_exceptions_survive_pickling(e):
    """A task on a Dask worker raises them: they come back with their attributes."""
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e) and str(back) == str(e) and vars(back) == vars(e)


def test_the_command_line_shows_the_flag_of_the_parameter():
    e = E.ParameterError("batch_size", "batch_size must be an integer >= 1, got 0")
    assert str(usage("train", e, ("batch_size",))) == "deeplimits train: --batch-size must be an integer >= 1, got 0"
    e = E.ParameterError("device", "device: 'cuda' is not available on this machine")
    assert str(usage("train", e, ("device",))).endswith(": --device: 'cuda' is not available on this machine")
    assert str(usage("phase", e, {"device": "--on"})).endswith(": --on: 'cuda' is not available on this machine")
    # the parameter, not the first word: a message that starts with another flag's name keeps it
    e = E.ParameterError("delta", "width must be even for delta='shared'")
    assert str(usage("scaling", e, ("width", "delta"))) == "deeplimits scaling: width must be even for delta='shared'"
    e = ValueError("width must be an integer")  # no parameter: shown as it is
    assert str(usage("train", e, ("width",))) == "deeplimits train: width must be an integer"
    e = E.ParameterError("hurst", "hursts must be given")  # a longer word is not the parameter
    assert str(usage("train", e, ("hurst",))) == "deeplimits train: hursts must be given"
    e = E.ResourceError("needs ~2 GiB per draw", needed=2.0, available=1.0, knobs=("draws", "width"))
    assert str(usage("convergence", e, ("draws", "width"))) == \
        "deeplimits convergence: needs ~2 GiB per draw (change --draws, --width)"


def test_a_damaged_file_names_the_file(tmp_path):
    bad = tmp_path / "w.npy"
    bad.write_bytes(b"not numpy")
    with pytest.raises(E.DamagedFileError) as info:
        G.load_weights(str(bad))
    assert info.value.path == str(bad) and str(bad) in str(info.value)
