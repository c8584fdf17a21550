"""No file names code to run, and no crafted file or flag exhausts the machine.

A run directory or a weights file is data a user may have got from someone else: opening it
(``runs show|plot|export``, ``load_trained``, ``deeplimits weights``) never imports what it names.
Each attack below plants a module ``evilact.py`` that creates a marker file when imported, puts it
where Python would find it (the run directory, the working directory of ``python -m``), names it
in the stored spec or in a weights chunk (re-signing the store's checksums, as an attacker who
knows the format would), and checks the marker is absent afterwards. A user's own code enters
only by what the user types (``--activation mymod:f``), is recorded with the hash of its source,
and a resume with a changed source is refused.

Crafted files are refused in one line before they allocate: their peak memory is measured in a
fresh interpreter as the growth of ``ru_maxrss`` across the call. Size flags are refused before any
work by the estimate that makes them impossible, and their ``--dry-run`` refuses the same.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from deeplimits._user_code import load_user_object, reading_stored
from deeplimits.cli import main
from deeplimits.errors import DamagedStoreError, ParameterError
from deeplimits.runs.integrity import checksum, spec_checksum
from test_fuzz import cpu_bound, fuzz

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = ["train", "--betas", "0.5,1", "--lrs", "1e-2", "--depth", "8", "--width", "6", "--epochs", "1", "--quiet",
         "--json", os.devnull]
EVIL = ("import os, pathlib\n"
        "pathlib.Path(os.environ.get('DEEPLIMITS_MARKER', 'MARKER')).touch()\n"
        "def f(x):\n    return x\n")


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text and "internal error" not in text, text
    return lines[0]


@pytest.fixture(scope="module")
def train_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("trained") / "run"
    assert main(TRAIN + ["--out", str(out)]) == 0
    return out


@pytest.fixture
def evil(tmp_path, monkeypatch):
    """A copy-able module ``evilact`` on ``sys.path`` whose import creates the marker file."""
    where = tmp_path / "evilcode"
    where.mkdir()
    (where / "evilact.py").write_text(EVIL)
    marker = tmp_path / "MARKER"
    monkeypatch.setenv("DEEPLIMITS_MARKER", str(marker))
    monkeypatch.syspath_prepend(str(where))
    sys.modules.pop("evilact", None)
    yield marker
    sys.modules.pop("evilact", None)


def _meta(run, key):
    with sqlite3.connect(run / "run.sqlite") as db:
        return db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]


def edit_spec(run, change, *, resign=True):
    """Edit the stored spec by ``change(spec)``; ``resign``: recompute its checksum (an attacker can)."""
    spec = json.loads(_meta(run, "spec"))
    change(spec)
    text = json.dumps(spec, sort_keys=True)
    with sqlite3.connect(run / "run.sqlite") as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'spec'", (text,))
        if resign:
            db.execute("UPDATE meta SET value = ? WHERE key = 'spec_checksum'",
                       (spec_checksum(text, _meta(run, "user_code")),))


def edit_task(run, key_part, change):
    """Edit the first stored task whose key holds ``key_part`` by ``change(result)`` and re-sign it."""
    with sqlite3.connect(run / "run.sqlite") as db:
        row = db.execute("SELECT key, fn, params, seed, result, versions FROM tasks WHERE key LIKE ? ORDER BY key",
                         (f"%{key_part}%",)).fetchone()
        key, fn, params, seed, result, versions = row
        new = json.dumps(change(json.loads(result)))
        db.execute("UPDATE tasks SET result = ?, checksum = ? WHERE key = ?",
                   (new, checksum(key, fn, params, seed, new, versions), key))
    return key


# -- 1. nothing a stored file names is imported ------------------------------------------------------

@pytest.mark.parametrize("action", ["show", "plot", "export"])
@pytest.mark.slow
def test_a_spec_naming_code_is_never_imported(train_run, tmp_path, evil, action, capsys):
    run = tmp_path / "run"
    shutil.copytree(train_run, run)
    edit_spec(run, lambda s: s.update(activation="evilact:f"))
    argv = ["runs", action, str(run)] + (["--csv", str(tmp_path / "t.csv")] if action == "export" else [])
    assert main(argv) == 0  # figures and tables from the stored numbers
    capsys.readouterr()
    assert not evil.exists() and "evilact" not in sys.modules


def test_an_edited_spec_not_resigned_is_a_damaged_store(train_run, tmp_path, evil, capsys):
    run = tmp_path / "run"
    shutil.copytree(train_run, run)
    edit_spec(run, lambda s: s.update(activation="evilact:f"), resign=False)
    for action in ("show", "plot"):
        assert main(["runs", action, str(run)]) == 1
        assert "spec fails its checksum" in one_line(capsys.readouterr().err)
    assert not evil.exists()
    assert main(TRAIN + ["--out", str(run)]) == 1  # the same command does not resume an edited store
    assert "spec fails its checksum" in one_line(capsys.readouterr().err)
    from deeplimits.runs import RunStore

    with pytest.raises(DamagedStoreError, match="spec fails its checksum"):
        RunStore(run, create=False)


def test_a_weights_chunk_naming_code_is_never_imported(train_run, tmp_path, evil, capsys):
    """The chunk's module config names ``evilact:f``, and the task recording its SHA-256 is re-signed."""
    from deeplimits.studies import load_trained
    from deeplimits.studies.training.trained import file_sha256

    run = tmp_path / "run"
    shutil.copytree(train_run, run)
    chunk = sorted((run / "weights").glob("*.pt"))[0]
    state = torch.load(chunk, weights_only=True)
    state["module"]["activation"] = "evilact:f"
    torch.save(state, chunk)
    edit_task(run, chunk.stem.split("_")[-2], lambda r: {**r, "weights_sha256": file_sha256(chunk)})
    assert main(["runs", "plot", str(run)]) == 0
    capsys.readouterr()
    with pytest.raises(ParameterError, match="never imports") as info:
        load_trained(chunk)
    assert "\n" not in str(info.value) and "activation=" in str(info.value)
    net, _ = load_trained(chunk, activation=torch.tanh)  # the user gives the function: it loads
    assert net.depth == 8
    assert not evil.exists() and "evilact" not in sys.modules


@pytest.mark.slow
def test_the_console_entry_imports_nothing_a_store_names(train_run, tmp_path):
    """``python -m deeplimits`` from inside the run directory (which puts it on sys.path), the spec
    naming ``evilact:f`` and an installed module ``this:s`` (which prints on import)."""
    for name in ("evilact:f", "this:s"):
        run = tmp_path / name.replace(":", "_")
        shutil.copytree(train_run, run)
        (run / "evilact.py").write_text(EVIL)
        edit_spec(run, lambda s: s.update(activation=name))
        out = subprocess.run([sys.executable, "-m", "deeplimits", "runs", "plot", "."], cwd=run, capture_output=True,
                             text=True, timeout=600, env={**os.environ, "PYTHONPATH": ROOT,
                                                          "DEEPLIMITS_MARKER": str(run / "MARKER")})
        assert out.returncode == 0, out.stderr
        assert not (run / "MARKER").exists() and "Beautiful is better" not in out.stdout + out.stderr


def test_no_import_while_a_stored_file_is_read():
    with reading_stored("the run directory r"):
        with pytest.raises(ParameterError, match="r is data: nothing a stored file names is imported"):
            load_user_object("json:dumps", what="activation")
    assert load_user_object("json:dumps", what="activation")[0] is json.dumps  # the user's word: imported
    with pytest.raises(ParameterError, match="acts on the system"):
        load_user_object("this:s", what="activation")


def test_user_code_is_recorded_and_a_changed_source_is_not_resumed(tmp_path, monkeypatch, capsys):
    where = tmp_path / "code"
    where.mkdir()
    (where / "myact.py").write_text("def cube(x):\n    return x + 0.1 * x ** 3\n")
    monkeypatch.syspath_prepend(str(where))
    sys.modules.pop("myact", None)
    argv = ["train", "--betas", "1", "--lrs", "1e-2", "--depth", "8", "--width", "6", "--epochs", "1", "--quiet",
            "--activation", "myact:cube", "--json", os.devnull, "--out", str(tmp_path / "run")]
    assert main(argv) == 0
    recorded = json.loads(_meta(tmp_path / "run", "user_code"))["myact:cube"]
    assert recorded["module"] == "myact" and len(recorded["sha256"]) == 64
    assert main(argv) == 0  # the same source: resumed
    capsys.readouterr()
    (where / "myact.py").write_text("def cube(x):\n    return x + 0.2 * x ** 3\n")
    assert main(argv) == 2
    assert "resuming would mix the results of two codes" in one_line(capsys.readouterr().err)
    assert main(["runs", "show", str(tmp_path / "run")]) == 0
    assert "user code: myact:cube" in capsys.readouterr().out
    sys.modules.pop("myact", None)


# -- 2. crafted files are refused before they allocate -----------------------------------------------

def _dag(levels: int, fan: int, leaf):
    node = leaf
    for _ in range(levels):
        node = [node] * fan
    return node


def cifar_graph(path):
    """About 390 bytes: labels a list of lists sharing references, 8^10 paths through them."""
    path.write_bytes(pickle.dumps({b"data": np.zeros((1, 3072), np.uint8), b"labels": _dag(10, 8, [0] * 8)}, 2))


def cifar_shared_list(path):
    """About 2 MB: one list of a million labels referenced 3000 times."""
    big = [1] * 1_000_000
    path.write_bytes(pickle.dumps({b"data": np.zeros((1, 3072), np.uint8), b"labels": [big] * 3000}, 2))


def cifar_copies(path):
    """About 1 MB: one 1 MB string, memoised, turned into bytes 3000 times (``_codecs.encode`` of a
    shared reference: each call a new copy)."""
    import codecs

    class Blob:
        def __init__(self, text):
            self.text = text

        def __reduce__(self):
            return codecs.encode, (self.text, "latin1")

    text = "x" * (1 << 20)
    path.write_bytes(pickle.dumps({b"data": np.zeros((1, 3072), np.uint8), b"labels": [0],
                                   b"blobs": [Blob(text) for _ in range(3000)]}, 2))


def pt_graph(path):
    """2 to 5 KB: lists of 50 references to the list below, 15 levels deep, one tensor at the bottom."""
    torch.save(_dag(15, 50, [torch.zeros(3)]), path)


def pt_dict_graph(path):
    node = {"x": torch.zeros(3)}
    for _ in range(15):
        node = {f"k{j}": node for j in range(30)}
    torch.save(node, path)


CRAFTED = {"cifar-graph": (cifar_graph, "read_cifar_batch"), "cifar-shared-list": (cifar_shared_list, "read_cifar_batch"),
           "cifar-copies": (cifar_copies, "read_cifar_batch"), "pt-graph": (pt_graph, "load_weights"),
           "pt-dict-graph": (pt_dict_graph, "load_weights")}


@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_files_are_refused_in_one_line(tmp_path, name):
    from deeplimits.data.files import read_cifar_batch
    from deeplimits.diagnostics import load_weights

    make, reader = CRAFTED[name]
    path = tmp_path / ("f.pt" if reader == "load_weights" else "data_batch_1")
    make(path)
    with cpu_bound(), pytest.raises(ValueError) as info:
        {"read_cifar_batch": read_cifar_batch, "load_weights": load_weights}[reader](str(path))
    assert "\n" not in str(info.value) and str(path) in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_files_cost_little_memory(tmp_path, name):
    make, reader = CRAFTED[name]
    path = tmp_path / ("f.pt" if reader == "load_weights" else "data_batch_1")
    make(path)
    module = "deeplimits.data.files" if reader == "read_cifar_batch" else "deeplimits.diagnostics"
    script = ("import resource, sys\n"
              f"from {module} import {reader}\n"
              "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              "try:\n"
              f"    {reader}(sys.argv[1])\n"
              "except ValueError as e:\n"
              "    print('REFUSED', e)\n"
              "print('GROWTH_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=600,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}).stdout
    assert "REFUSED" in out, out
    assert int(out.split("GROWTH_KB")[1]) / 1024 < 200, out


@pytest.mark.slow
def test_weights_dry_run_refuses_what_the_run_refuses(tmp_path, capsys, monkeypatch):
    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {tmp_path / 'MARKER'}",)

    torch.save({"layers.0.weight": torch.zeros(2), "x": Payload()}, tmp_path / "bad.pt")
    pt_graph(tmp_path / "graph.pt")
    monkeypatch.chdir(tmp_path)
    for f in ("bad.pt", "graph.pt"):
        for dry in ([], ["--dry-run"]):
            assert main(["weights", f, *dry]) == 2
            assert f in one_line(capsys.readouterr().err)
    assert not (tmp_path / "MARKER").exists() and not (tmp_path / "runs").exists()


# -- 3. size flags bounded by the plan, the dry run refusing the same ---------------------------------

RUNAWAY = {
    "law --fig2 --draws 1000000000000": ("--draws", "too many tasks"),
    "law --samples 100000000000 --draws 100000000000": ("--draws", "too many chunks"),
    "order --calibrate --tables 1000000 --pool-factor 1000": ("--tables", "[1, 100000]"),
    "order --calibrate --tables 1000000000000": ("--tables", "[1, 100000]"),
    "order --calibrate --cases sde --pool-factor 100000000": ("--pool-factor", "too many draws"),
    "trained-limit --checkpoints 1000000000": ("--checkpoints", "[1, 50]"),
}
ONE_LINE = {
    "law --draws 3 --chunk 3 --samples 3": ("--draws", ">= "),
    "law --plain --controls": ("--plain", "exclude each other"),
    "law --plain --no-controls": ("--plain", "exclude each other"),
    "order --calibrate --cases foo": ("--cases", "got 'foo'"),
    "order --calibrate --pool-factor 0": ("--pool-factor", ">= 1"),
    "order --calibrate --tables 0": ("--tables", "[1, 100000]"),
    "order --calibrate --tables -5": ("--tables", "[1, 100000]"),
    "order --calibrate --cases sde,sde": ("--cases", "distinct"),
    "order --calibrate --scheme milstein": ("--scheme", "not with --calibrate"),
    "order --calibrate --depths 8,16": ("--depths", "not with --calibrate"),
    "order --calibrate --draws 64": ("--draws", "not with --calibrate"),
    "trained-limit --reference 15 --depths 4,8": ("--reference", "multiple of every depth"),
}


@pytest.mark.parametrize("line", list(RUNAWAY) + list(ONE_LINE))
@pytest.mark.parametrize("dry", [True, False])
@pytest.mark.slow
def test_flags_are_refused_before_any_work(line, dry, tmp_path, monkeypatch, capsys):
    flag, needle = {**RUNAWAY, **ONE_LINE}[line]
    monkeypatch.chdir(tmp_path)
    with cpu_bound():
        assert main(line.split() + (["--dry-run"] if dry else [])) == 2
    msg = one_line(capsys.readouterr().err)
    assert flag in msg and needle in msg, msg
    assert not (tmp_path / "runs").exists()


def test_conv_transfer_depths_name_the_flag(tmp_path, monkeypatch, capsys):
    from test_hostile_files import write_cifar

    write_cifar(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    assert main(["transfer", "--preset", "published", "--root", "data", "--depths", "4,8,16", "--dry-run"]) == 2
    assert "--depths must be multiples of the 3 stages" in one_line(capsys.readouterr().err)


# -- 4. a stored result that no task could have written ----------------------------------------------

LAW = ["law", "--preset", "quick", "--draws", "4096", "--chunk", "1024", "--quiet"]


@pytest.fixture(scope="module")
def law_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("law") / "run"
    assert main(LAW + ["--out", str(out), "--json", str(out.parent / "clean.json")]) == 0
    return out


@pytest.mark.parametrize("field", ["sum", "outer", "ratios"])
@pytest.mark.parametrize("value", [float("nan"), "x", 1e308])
@pytest.mark.slow
def test_a_resigned_law_task_is_left_out_and_recomputed(law_run, tmp_path, field, value, capsys):
    run = tmp_path / "run"
    shutil.copytree(law_run, run)

    def spoil(r):
        row = r[field][0]
        if isinstance(row, list):
            row[0] = value
        else:
            r[field][0] = value
        return r

    edit_task(run, "draws-", spoil)
    for action in (["show"], ["plot"], ["export", "--csv", str(tmp_path / "t.csv")]):
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("error", RuntimeWarning)  # no numpy overflow on the way
            assert main(["runs", action[0], str(run), *action[1:]]) == 0
        err = capsys.readouterr().err
        if action[0] != "export":  # export writes the records as stored
            assert "unusable" in one_line(err) and "left out" in err
    assert main(LAW + ["--out", str(run), "--json", str(tmp_path / "again.json")]) == 0
    assert "computing its task" in one_line(capsys.readouterr().err)
    clean = json.loads((law_run.parent / "clean.json").read_text())
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["joint"]["verdict"] == clean["joint"]["verdict"]
    np.testing.assert_allclose(again["joint"]["error"], clean["joint"]["error"], rtol=1e-9)


@pytest.fixture(scope="module")
def convergence_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("convergence") / "run"
    assert main(["convergence", "--regime", "sde", "--width", "2", "--depths", "8,16,32", "--draws", "8", "--quiet",
                 "--no-figures", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("change", [
    {"hurst": "abc"}, {"stages": 5}, {"options": 5}, {"order": None}, {"width": True}, {"arch": "x" * 20_000},
    {"order": {"rate": "abc"}}, {"order": {"rate": None}}, {"order": {"constant": "x"}},
    {"order": {"constant": 1.0, "constant_next": [[1.0, -1e308]]}}, {"order": {"constant_next": [[1.0]]}},
    {"order": {"log_power": 1e308}}, {"order": {"note": "x" * 20_000}}, {"order": {"next_terms": [{"x": 1}]}},
    {"order": {"kind": "nope"}}], ids=lambda c: ",".join(f"{k}.{','.join(v)}" if isinstance(v, dict) else k
                                                       for k, v in c.items()))
def test_a_resigned_description_of_the_pair_is_a_damaged_store(convergence_run, tmp_path, change, capsys):
    """A convergence task keeps what its summary reads of the pair (read without building it): a
    description no task writes, re-signed, is refused in one line as damaged, never an internal error."""
    run = tmp_path / "run"
    shutil.copytree(convergence_run, run)

    def spoil(r):
        order = {**r["pair"]["order"], **change["order"]} if isinstance(change.get("order"), dict) else None
        return {**r, "pair": {**r["pair"], **change, **({"order": order} if order else {})}}

    edit_task(run, "chunk-", spoil)
    for action in (["show"], ["plot"], ["export", "--csv", str(tmp_path / "t.csv")]):
        assert main(["runs", action[0], str(run), *action[1:]]) == 1
        assert "is damaged" in one_line(capsys.readouterr().err)


# -- 5. the fuzz: edited specs and reference graphs ---------------------------------------------------

SPEC_VALUES = st.sampled_from(["evilact:f", "os:system", "this:s", "", "res-9", "nan", -1, 10 ** 40, 1e308, None, [],
                               {"x": "evilact:f"}, ["evilact:f"], True])


@pytest.mark.slow
@fuzz(40)
@given(key=st.sampled_from(["activation", "arch", "driver", "dataset", "depth", "width", "betas", "lrs", "study",
                            "optimizer", "hursts", "seeds", "epochs"]), value=SPEC_VALUES, resign=st.booleans())
def test_fuzz_edited_specs_never_import_and_end_in_one_line(train_run, tmp_path_factory, key, value, resign):
    run = tmp_path_factory.mktemp("fuzz") / "run"
    shutil.copytree(train_run, run)
    marker = run / "MARKER"
    (run / "evilact.py").write_text(EVIL)
    os.environ["DEEPLIMITS_MARKER"] = str(marker)
    sys.path.insert(0, str(run))
    try:
        edit_spec(run, lambda s: s.update({key: value}), resign=resign)
        for action in ("show", "plot"):
            with cpu_bound():
                code = main(["runs", action, str(run)])
            assert code in (0, 1, 2)
    finally:
        sys.path.remove(str(run))
        os.environ.pop("DEEPLIMITS_MARKER", None)
    assert not marker.exists() and "evilact" not in sys.modules


@pytest.mark.slow
@fuzz(40)
@given(levels=st.integers(1, 20), fan=st.integers(1, 60), as_dict=st.booleans(), leaf=st.sampled_from(["tensor", "int"]))
def test_fuzz_reference_graphs_in_weight_files_are_read_or_refused_at_once(tmp_path_factory, levels, fan, as_dict,
                                                                           leaf):
    from deeplimits.diagnostics import load_weights

    node = torch.zeros(3) if leaf == "tensor" else 7
    for _ in range(levels):
        node = {f"k{j}": node for j in range(fan)} if as_dict else [node] * fan
    path = tmp_path_factory.mktemp("graph") / "g.pt"
    torch.save(node, path)
    with cpu_bound():
        try:
            load_weights(str(path))
        except ValueError as e:
            assert "\n" not in str(e)
