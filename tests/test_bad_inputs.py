"""Bad command lines and bad library calls, as a new user would type them (issue 10).

Every bad command line exits with status 2 (usage) or 1 (runtime) and exactly one line on
stderr, no traceback, nothing left on disk, in well under 10 s; every bad library call raises
a ValueError (or the named subclass) whose message names the parameter, before any work.

Most rows run in-process (``main(argv)``, fast); rows that could hang or use the network or a
pipe run as subprocesses with a hard ``timeout=``. Rows marked ``pending`` need the merged work
of the sibling branches (plan-time ``ResourceError``; Dask ``timeout``/``ExecutorError``):
flip :data:`NEEDS_MERGE` once they are in.
"""

import os
import sqlite3
import subprocess
import sys
import time

import pytest

import sweep_tasks  # noqa: F401 - registers the test task functions
import torch

import deeplimits as dl
from deeplimits import _validate as V
from deeplimits.cli import main

NEEDS_MERGE = False  # the executor checks and the Dask timeout are in run_sweep
# until then those rows would hang up to their time limit: marked, not run. The size refusals run.
pending = pytest.mark.xfail(NEEDS_MERGE, reason="needs the executor checks and Dask timeout in run_sweep",
                            strict=False, run=not NEEDS_MERGE)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 10.0  # seconds per bad command line (the size refusals included)
SUB = "sub"  # run as a subprocess (hang-prone, pipes, schedulers)

C = ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8", "--draws", "2"]  # a tiny valid base
S = ["stability", "--width", "2", "--n-in", "2", "--depths", "2,4", "--betas", "0.5", "--draws", "2"]
SC = ["scaling", "--depths", "4,8", "--max-epochs", "1"]
TR = ["train", "--depth", "4", "--width", "3", "--epochs", "1"]
P = ["phase", "--hursts", "0.6", "--betas", "0.5", "--width", "2", "--n-in", "2", "--depth", "4", "--draws", "1",
     "--inputs", "1"]

# (argv, exit status, text the line must contain[, SUB][, marks]); {RUN} is a stored run, {BAD} a damaged one,
# afile is a regular file and adir a directory in the working directory.
CLI = [
    # -- the command itself
    ([], 2, "required"),
    (["nosuch"], 2, "invalid choice"),
    (["--version=2"], 2, "ignored explicit argument"),
    (["--bogus"], 2, "required"),
    # -- convergence: every flag
    (["convergence", "--regime"], 2, "expected one argument"),
    (["convergence", "--regime", "SDE"], 2, "invalid choice"),
    (["convergence", "--regime", "fbm", "--hurst", "nan"], 2, "--hurst"),
    (["convergence", "--regime", "fbm", "--hurst", "inf"], 2, "--hurst"),
    (["convergence", "--regime", "fbm", "--hurst", "0.3"], 2, "hurst must lie in (0.5, 1)"),
    (["convergence", "--regime", "fbm", "--hurst", "x"], 2, "--hurst"),
    (["convergence", "--hurst", "0.7"], 2, "--hurst needs --regime"),
    (["convergence", "--regime", "sde", "--width", "-1"], 2, "width"),
    (["convergence", "--regime", "sde", "--width", "2.5"], 2, "--width"),
    (["convergence", "--regime", "sde", "--width", "100000000000000000000"], 2, "--width"),
    (["convergence", "--regime", "sde", "--activation", "cube"], 2, "activation"),
    (["convergence", "--regime", "sde", "--activation", ""], 2, "activation"),
    (["convergence", "--regime", "ode", "--arch", "res-9"], 2, "invalid choice"),
    (["convergence", "--arch", "res-2"], 2, "--arch needs --regime"),
    (["convergence", "--corrected"], 2, "--corrected needs --regime fbm"),
    (["convergence", "--corrected=yes"], 2, "ignored explicit argument"),
    (["convergence", "--regime", "inside-ode", "--alpha", "1.5"], 2, "alpha"),
    (["convergence", "--regime", "inside-ode", "--alpha", "nan"], 2, "--alpha"),
    (["convergence", "--regime", "inside-ode", "--beta", "-0.5"], 2, "beta"),
    (["convergence", "--regime", "inside-ode", "--beta", "1e999"], 2, "--beta"),
    (["convergence", "--regime", "inside-sde", "--sa", "0"], 2, "sa"),
    (["convergence", "--regime", "inside-sde", "--sa", "inf"], 2, "--sa"),
    (["convergence", "--regime", "inside-sde", "--sb", "-1"], 2, "sb"),
    (["convergence", "--regime", "sde", "--no-ito-correction"], 2, "--no-ito-correction applies only"),
    (["convergence", "--depths", "inf"], 2, "--depths", SUB),
    (["convergence", "--depths", "nan"], 2, "--depths"),
    (["convergence", "--depths", "1e999"], 2, "--depths"),
    (["convergence", "--depths", "4,inf"], 2, "--depths"),
    (["convergence", "--depths", "-4,8"], 2, "depths"),
    (["convergence", "--depths", "8,4"], 2, "depths"),
    (["convergence", "--depths", "4.5"], 2, "--depths"),
    (["convergence", "--depths", ","], 2, "--depths"),
    (["convergence", "--depths", "4:8"], 2, "--depths"),
    (["convergence", "--depths", "4:8:0"], 2, "--depths"),
    (["convergence", "--depths", "4:8:1000000000"], 2, "--depths"),
    (["convergence", "--depths", "1:1e999:3"], 2, "--depths"),
    (["convergence", "--depths", "100000000000000000000"], 2, "--depths"),
    (["convergence", "--regime", "sde", "--depths", "1099511627776"], 2, "", SUB),  # 2^40
    (["convergence", "--paths", "1e20"], 2, "--draws", SUB),
    (["convergence", "--regime", "sde", "--paths", "100000000000000000"], 2, "--draws", SUB),
    (["convergence", "--draws", "0"], 2, "--draws"),
    (["convergence", "--draws", "-5"], 2, "--draws"),
    (["convergence", "--draws", "ten"], 2, "--draws"),
    (["convergence", "--inputs", "0"], 2, "--inputs"),
    (["convergence", "--regime", "sde", "--inputs", "1000000000000"], 2, "--inputs", SUB),
    (["convergence", "--regime", "sde", "--depths", "4,8", "--reference", "12"], 2, "reference"),
    (["convergence", "--regime", "sde", "--reference", "nan"], 2, "--reference"),
    (["convergence", "--seed", "-1"], 2, "seed"),
    (["convergence", "--seed", "1.5"], 2, "--seed"),
    (["convergence", "--seed", "100000000000000000000"], 2, "--seed"),
    (["convergence", "--chunk", "0"], 2, "chunk"),
    (["convergence", "--dtype", "float16"], 2, "invalid choice"),
    (C + ["--out", "afile"], 2, "--out must be a directory"),
    (C + ["--out", "afile/sub"], 2, "--out"),
    (C + ["--out", "/dev/null"], 2, "--out"),
    (C + ["--out", ""], 2, "--out"),
    (C + ["--out", "/proc/nonexistent/run"], 2, "--out"),
    (C + ["--workers", "0"], 2, "--workers"),
    (C + ["--workers", "-3"], 2, "--workers"),
    (C + ["--workers", "100000"], 2, "--workers"),
    (C + ["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], 2, "not both"),
    (C + ["--scheduler", "notanaddress"], 2, "--scheduler", SUB),
    (C + ["--scheduler", "tcp://127.0.0.1:0"], 2, "--scheduler"),
    (C + ["--scheduler", "tcp://127.0.0.1:99999"], 2, "--scheduler"),
    (C + ["--scheduler", ""], 2, "--scheduler"),
    (C + ["--scheduler", "tcp://127.0.0.1:1", "--timeout", "2"], 1, "127.0.0.1:1", SUB, pending),
    (C + ["--timeout", "5"], 2, "--timeout applies only with --workers or --scheduler"),
    (C + ["--workers", "1", "--timeout", "0"], 2, "--timeout"),
    (C + ["--workers", "1", "--timeout", "-1"], 2, "--timeout"),
    (C + ["--workers", "1", "--timeout", "nan"], 2, "--timeout"),
    (C + ["--workers", "1", "--timeout", "1e9"], 2, "--timeout"),
    (C + ["--json", "adir"], 2, "--json must be a file path"),
    (C + ["--json", "/dev/full"], 2, "--json", SUB),
    (C + ["--json", "afile/x.json"], 2, "--json"),
    (C + ["--json", ""], 2, "--json"),
    (C + ["--json", "/proc/nonexistent/x.json"], 2, "--json"),
    (C + ["--quiet=1"], 2, "ignored explicit argument"),
    (C + ["--device", "gpu"], 2, "--device"),
    (C + ["--device", "cuda:x"], 2, "device must be one of cpu, cuda"),
    # -- stability: every flag
    (["stability", "--preset", "huge"], 2, "invalid choice"),
    (["stability", "--bias"], 2, "applies only to"),
    (["stability", "--delta", "0"], 2, "delta"),
    (["stability", "--delta", "x"], 2, "--delta"),
    (["stability", "--arch", "res-4"], 2, "invalid choice"),
    (["stability", "--activation", "cube"], 2, "activation"),
    (["stability", "--activation", "leaky_relu:nan"], 2, "activation"),
    (["stability", "--width", "0"], 2, "--width"),
    (["stability", "--width", "1e20"], 2, "--width"),
    (["stability", "--n-in", "0"], 2, "--n-in"),
    (["stability", "--n-in", "x"], 2, "--n-in"),
    (["stability", "--driver", "brownian"], 2, "invalid choice"),
    (["stability", "--driver", "fractional"], 2, "--hurst must be given"),
    (["stability", "--driver", "fractional", "--hurst", "nan"], 2, "--hurst"),
    (["stability", "--driver", "fractional", "--hurst", "1"], 2, "hurst"),
    (["stability", "--hurst", "0.7"], 2, "--hurst applies only"),
    (["stability", "--driver", "smooth", "--length-scale", "0"], 2, "length"),
    (["stability", "--driver", "smooth", "--length-scale", "inf"], 2, "--length-scale"),
    (["stability", "--length-scale", "0.2"], 2, "--length-scale applies only"),
    (["stability", "--depths", "inf"], 2, "--depths"),
    (["stability", "--depths", "0,10"], 2, "depths"),
    (["stability", "--depths", "10:1000:1000000000"], 2, "--depths"),
    (["stability", "--depths", "1000000000000"], 2, "--depths", SUB),
    (["stability", "--width", "1000", "--depths", "20000"], 2, "", SUB),
    (["stability", "--betas", "0:1:1000000000"], 2, "--betas", SUB),
    (["stability", "--betas", "nan"], 2, "--betas"),
    (["stability", "--betas", "0.5,inf"], 2, "--betas"),
    (["stability", "--betas", "-1:1:3"], 2, "betas"),
    (["stability", "--betas", ""], 2, "--betas"),
    (["stability", "--draws", "0"], 2, "--draws"),
    (["stability", "--draws", "1e15"], 2, "--draws", SUB),
    (["stability", "--draws", "1000000000000000"], 2, "--draws", SUB),
    (["stability", "--inputs", "0"], 2, "--inputs"),
    (["stability", "--inputs", "100000000"], 2, "--inputs", SUB),
    (["stability", "--histograms=1"], 2, "ignored explicit argument"),
    (["stability", "--chunk", "0"], 2, "chunk"),
    (["stability", "--seed", "-2"], 2, "seed"),
    (["stability", "--dtype", "int64"], 2, "invalid choice"),
    (S + ["--out", "afile"], 2, "--out"),
    (S + ["--json", "adir"], 2, "--json"),
    (S + ["--json", "/dev/full"], 2, "--json"),
    (S + ["--json", "afile/x.json"], 2, "--json"),
    (S + ["--workers", "0"], 2, "--workers"),
    (S + ["--scheduler", "localhost"], 2, "--scheduler"),
    (S + ["--scheduler", "tcp://127.0.0.1:1", "--timeout", "2"], 1, "127.0.0.1:1", SUB, pending),
    (S + ["--timeout", "3"], 2, "--timeout"),
    (S + ["--quiet", "extra"], 2, "unrecognized"),
    (S + ["--device", ""], 2, "--device"),
    # -- phase: every flag
    (["phase", "--preset", "small"], 2, "invalid choice"),
    (["phase", "--bias"], 2, "applies only to"),
    (["phase", "--arch", "res"], 2, "invalid choice"),
    (["phase", "--activation", "nope"], 2, "activation"),
    (["phase", "--width", "-4"], 2, "--width"),
    (["phase", "--n-in", "0"], 2, "--n-in"),
    (["phase", "--hursts", "nan"], 2, "--hursts"),
    (["phase", "--hursts", "0.5,1.5"], 2, "hursts"),
    (["phase", "--hursts", "0.1:0.9:1000000"], 2, "--hursts"),
    (["phase", "--betas", "inf"], 2, "--betas"),
    (["phase", "--betas", "0:1:1000000000"], 2, "--betas"),
    (["phase", "--depth", "0"], 2, "--depth"),
    (["phase", "--depth", "1e9"], 2, "--depth", SUB),
    (["phase", "--depth", "1000000000"], 2, "--depth", SUB),
    (["phase", "--draws", "0"], 2, "--draws"),
    (["phase", "--inputs", "0"], 2, "--inputs"),
    (["phase", "--inputs", "100000"], 2, "--inputs", SUB),
    (["phase", "--seed", "x"], 2, "--seed"),
    (["phase", "--dtype", "double"], 2, "invalid choice"),
    (P + ["--out", "afile"], 2, "--out"),
    (P + ["--json", "adir"], 2, "--json"),
    (P + ["--json", "/dev/full"], 2, "--json"),
    (P + ["--workers", "0"], 2, "--workers"),
    (P + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (P + ["--timeout", "1"], 2, "--timeout"),
    (P + ["--quiet=yes"], 2, "ignored explicit argument"),
    (P + ["--device", "tpu"], 2, "--device"),
    # -- train: every flag
    (["train", "--preset", "huge"], 2, "invalid choice"),
    (["train", "--dataset", "imagenet"], 2, "--dataset must be one of"),
    (["train", "--dataset", "mnist"], 2, "--root is required"),
    (["train", "--dataset", "mnist", "--root", "adir"], 2, "train-images-idx3-ubyte"),
    (["train", "--dataset", "cifar10", "--root", "afile"], 2, "--root"),
    (["train", "--driver", "fbm"], 2, "invalid choice"),
    (["train", "--hursts", "0.7"], 2, "--hursts apply only to driver 'fractional'"),
    (["train", "--driver", "fractional"], 2, "--hursts must be given"),
    (["train", "--driver", "fractional", "--hursts", "1.5"], 2, "--hursts"),
    (["train", "--driver", "fractional", "--hursts", "nan"], 2, "--hursts"),
    (["train", "--length-scale", "0.2"], 2, "--length-scale applies only to driver 'smooth'"),
    (["train", "--driver", "smooth", "--length-scale", "-1"], 2, "--length-scale"),
    (["train", "--betas", "-1"], 2, "--betas"),
    (["train", "--betas", "0.5,0.5"], 2, "--betas must not repeat"),
    (["train", "--lrs", "0"], 2, "--lrs"),
    (["train", "--lrs", "inf"], 2, "--lrs"),
    (["train", "--seeds", "0"], 2, "--seeds"),
    (["train", "--arch", "res-9"], 2, "invalid choice"),
    (["train", "--activation", "cube"], 2, "activation"),
    (["train", "--bias=yes"], 2, "ignored explicit argument"),
    (["train", "--depth", "0"], 2, "--depth"),
    (["train", "--depth", "1000000000"], 2, "--depth", SUB),
    (["train", "--width", "-3"], 2, "--width"),
    (["train", "--epochs", "0"], 2, "--epochs"),
    (["train", "--batch-size", "0"], 2, "--batch-size"),
    (["train", "--optimizer", "lbfgs"], 2, "invalid choice"),
    (["train", "--lr-decay-halfway=no"], 2, "ignored explicit argument"),
    (["train", "--stop-loss", "-1"], 2, "--stop-loss"),
    (["train", "--chunk", "0"], 2, "--chunk"),
    (["train", "--chunk", "100000000", "--depth", "1000"], 2, "--chunk"),
    (["train", "--save-weights=no"], 2, "ignored explicit argument"),
    (["train", "--seed", "-1"], 2, "--seed"),
    (["train", "--dtype", "half"], 2, "invalid choice"),
    (TR + ["--out", "afile"], 2, "--out"),
    (TR + ["--json", "adir"], 2, "--json"),
    (TR + ["--workers", "0"], 2, "--workers"),
    (TR + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (TR + ["--timeout", "1"], 2, "--timeout"),
    (TR + ["--quiet=yes"], 2, "ignored explicit argument"),
    (TR + ["--device", "tpu"], 2, "--device"),
    # -- weights: every flag
    (["weights"], 2, "required"),
    (["weights", "nothere.npy"], 2, "no file or run directory"),
    (["weights", "afile"], 2, "must be a .npy or .pt file"),
    (["weights", "adir"], 2, "has no stored weights"),
    (["weights", "afile", "--beta", "nan"], 2, "--beta"),
    (["weights", "afile", "--json", "adir"], 2, "--json"),
    (["weights", "afile", "--figure", "adir"], 2, "--figure"),
    # -- scaling: every flag
    (["scaling", "--preset", "huge"], 2, "invalid choice"),
    (["scaling", "--activation", "sin"], 2, "invalid choice"),
    (["scaling", "--dataset", "mnist"], 2, "invalid choice"),
    (["scaling", "--delta", "each"], 2, "invalid choice"),
    (["scaling", "--depths", "8"], 2, "at least two distinct depths"),
    (["scaling", "--depths", "0,8"], 2, "--depths"),
    (["scaling", "--width", "0"], 2, "--width"),
    (["scaling", "--seeds", "0"], 2, "--seeds"),
    (["scaling", "--lr", "0"], 2, "--lr"),
    (["scaling", "--optimizer", "lbfgs"], 2, "invalid choice"),
    (["scaling", "--batch-size", "0"], 2, "--batch-size"),
    (["scaling", "--stop-loss", "0"], 2, "--stop-loss"),
    (["scaling", "--max-epochs", "0"], 2, "--max-epochs"),
    (["scaling", "--init-scale", "-1"], 2, "--init-scale"),
    (["scaling", "--samples", "1"], 2, "--samples"),
    (["scaling", "--seed", "-1"], 2, "--seed"),
    (["scaling", "--dtype", "half"], 2, "invalid choice"),
    (SC + ["--out", "afile"], 2, "--out"),
    (SC + ["--json", "adir"], 2, "--json"),
    (SC + ["--workers", "0"], 2, "--workers"),
    (SC + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (SC + ["--timeout", "1"], 2, "--timeout"),
    (SC + ["--quiet=yes"], 2, "ignored explicit argument"),
    (SC + ["--device", "tpu"], 2, "--device"),
    # -- runs: every action and flag
    (["runs"], 2, "required"),
    (["runs", "delete"], 2, "invalid choice"),
    (["runs", "list", "--csv", "x.csv"], 2, "--csv applies only to runs export"),
    (["runs", "list", "--json", "x.json"], 2, "--json applies only"),
    (["runs", "show"], 2, "give the run directory"),
    (["runs", "show", "nothere"], 2, "no run store"),
    (["runs", "show", "afile"], 2, "run store"),
    (["runs", "show", "{RUN}", "--csv", "x.csv"], 2, "--csv applies only"),
    (["runs", "show", "{BAD}"], (1, 2), "damaged", SUB),
    (["runs", "export", "{RUN}"], 2, "give --csv PATH and/or --json PATH"),
    (["runs", "export", "{RUN}", "--csv", "adir"], 2, "--csv"),
    (["runs", "export", "{RUN}", "--csv", "/dev/full"], 2, "--csv"),
    (["runs", "export", "{RUN}", "--json", "afile/x.json"], 2, "--json"),
    (["runs", "export", "{RUN}", "--json", "/proc/nonexistent/x.json"], 2, "--json"),
    (["runs", "export", "nothere", "--csv", "x.csv"], 2, "no run store"),
    (["runs", "export", "{BAD}", "--json", "x.json"], (1, 2), "damaged"),
    (["runs", "plot"], 2, "give the run directory"),
    (["runs", "plot", "{RUN}", "--json", "adir"], 2, "--json"),
    (["runs", "plot", "{RUN}", "--json", "/dev/full"], 2, "--json"),
    (["runs", "plot", "{RUN}", "--csv", "x.csv"], 2, "--csv applies only"),
    (["runs", "plot", "{BAD}"], (1, 2), "damaged"),
    (["runs", "plot", "nothere"], 2, "no run store"),
]


def _ids(rows):
    return [" ".join(r[0])[:60] or "(nothing)" for r in rows]


def tree(root):
    """Every file and directory under ``root`` with its size and modification time."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            if n.endswith(("-wal", "-shm")):  # SQLite's companions while a reader has the store open
                continue
            p = os.path.join(d, n)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A finished tiny run and a damaged copy (its spec and a result are not JSON)."""
    base = tmp_path_factory.mktemp("stored")
    run = base / "run"
    assert main(C + ["--reference", "16", "--out", str(run), "--quiet"]) == 0
    bad = base / "bad"
    assert main(C + ["--reference", "16", "--out", str(bad), "--quiet"]) == 0
    with sqlite3.connect(bad / "run.sqlite") as db:
        db.execute("UPDATE meta SET value = '{not json' WHERE key = 'spec'")
        db.execute("UPDATE tasks SET result = '[1, 2' WHERE key = (SELECT MIN(key) FROM tasks)")
    db.close()
    return {"{RUN}": str(run), "{BAD}": str(bad)}


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("keep me\n")
    (tmp_path / "adir").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rows(rows):
    out = []
    for row in rows:
        argv, status, needle, *rest = row
        marks = [m for m in rest if not isinstance(m, str)]
        out.append(pytest.param(argv, status, needle, SUB in rest, marks=marks, id=" ".join(argv)[:70] or "-"))
    return out


@pytest.mark.parametrize("argv,status,needle,sub", _rows(CLI))
def test_bad_command_line(argv, status, needle, sub, cwd, stored, capsys):
    argv = [stored.get(a, a) for a in argv]
    before, before_stored = tree(cwd), {k: tree(v) for k, v in stored.items()}
    t0 = time.perf_counter()
    if sub:
        env = {**os.environ, "PYTHONPATH": ROOT}
        try:
            r = subprocess.run([sys.executable, "-m", "deeplimits", *argv], cwd=cwd, env=env, capture_output=True,
                               text=True, timeout=LIMIT + 10)  # interpreter and torch start-up on a busy machine
        except subprocess.TimeoutExpired:
            pytest.fail(f"hung: no answer in {LIMIT + 10} s")
        rc, err = r.returncode, r.stderr
    else:
        rc = main(argv)
        err = capsys.readouterr().err
    elapsed = time.perf_counter() - t0
    assert rc in (status if isinstance(status, tuple) else (status,)), err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].strip() and err.endswith("\n"), err
    assert needle in lines[0]
    assert elapsed < (LIMIT + 10 if sub else LIMIT)
    assert tree(cwd) == before, "left something behind"
    assert {k: tree(v) for k, v in stored.items()} == before_stored
    assert (cwd / "afile").read_text() == "keep me\n"


def test_table_covers_every_flag_of_every_command():
    from deeplimits.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    given = {(r[0][0], a.split("=")[0]) for r in CLI if r[0] for a in r[0] if a.startswith("--")}
    for name, p in sub.choices.items():
        for action in p._actions:
            flags = [o for o in action.option_strings if o not in ("-h", "--help")]
            if flags:
                assert any((name, f) in given for f in flags), f"{name} {flags[0]} has no bad command line"
    assert len(CLI) >= 100


def _sh(argv, **kw):
    return subprocess.run([sys.executable, "-m", "deeplimits", *argv], env={**os.environ, "PYTHONPATH": ROOT},
                          capture_output=True, text=True, timeout=60, **kw)


def test_broken_pipe_exits_quietly(stored, tmp_path):
    """``deeplimits runs show DIR | head -1``: stdout closed by the reader, no traceback, no
    message, exit status 141 (128 + SIGPIPE, what a shell reports for a tool killed by it)."""
    for argv in (["runs", "show", stored["{RUN}"]], ["runs", "list", os.path.dirname(stored["{RUN}"])]):
        r, w = os.pipe()
        os.close(r)  # the reader is gone before the first line: every write fails with EPIPE
        try:
            p = subprocess.run([sys.executable, "-m", "deeplimits", *argv], stdout=w, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONPATH": ROOT}, cwd=tmp_path, timeout=60, text=True)
        finally:
            os.close(w)
        assert p.returncode == 141 and p.stderr == "", p.stderr
    sh = subprocess.run(["bash", "-c", f"{sys.executable} -m deeplimits runs show {stored['{RUN}']} | head -1; "
                                       f"echo status ${{PIPESTATUS[0]}}"],
                        env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True, timeout=60)
    assert sh.stderr == "" and sh.stdout.startswith("run ") and sh.stdout.split()[-1] in ("0", "141")


def test_existing_json_file_is_not_damaged_by_a_refused_run(cwd):
    assert main(C + ["--depths", "3", "--json", "afile"]) == 2
    assert (cwd / "afile").read_text() == "keep me\n" and tree(cwd).keys() == {"afile", "adir"}


def test_internal_errors_are_one_line(monkeypatch, capsys, cwd):
    import deeplimits.cli as cli
    import deeplimits.cli.runs as cli_runs

    def boom(args):
        raise ZeroDivisionError("surprise\nsecond line")

    monkeypatch.setattr(cli_runs, "run_runs", boom)
    assert cli.main(["runs", "list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: ZeroDivisionError: surprise second line" in err
    assert "DEEPLIMITS_DEBUG=1" in err
    monkeypatch.setenv("DEEPLIMITS_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["runs", "list"])


def test_python_dash_m_deeplimits():
    r = _sh(["--version"])
    assert r.returncode == 0 and r.stdout.startswith("deeplimits ")


def test_write_error_after_the_work_is_one_line(cwd, monkeypatch, capsys):
    """An output that fails after the probe (disk full mid-way): exit 1, one line."""
    import deeplimits.cli.outputs as cli_outputs

    def full(payload, out, json_path):
        raise OSError(28, "No space left on device", "result.json")

    monkeypatch.setattr(cli_outputs, "dump_json", full)
    assert main(C + ["--reference", "16", "--out", "o", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err


# -- the library --------------------------------------------------------------------------------

def _tasks():
    from deeplimits.runs import Task

    return [Task("t0", "test-flaky", {"i": 0, "flag": "/nonexistent"}, 0)]


def _run_sweep(**kw):
    from deeplimits.runs import run_sweep

    return run_sweep(_tasks(), **kw)


PLAN = dict(regime="sde", width=2, depths=[4, 8], paths=2)

# (call, exception type, regex the message must match[, marks])
LIB = [
    (lambda: dl.fgn(0, 0.7), ValueError, "n must be"),
    (lambda: dl.fgn(8, float("nan")), ValueError, "hurst"),
    (lambda: dl.fgn(8, 1.0), ValueError, "hurst"),
    (lambda: dl.fgn(8, 0.7, (2, -1)), ValueError, "size"),
    (lambda: dl.fgn(8, 0.7, dtype=torch.int32), ValueError, "dtype"),
    (lambda: dl.fgn(10 ** 12, 0.7), V.ResourceError, "n"),
    (lambda: dl.fgn(1024, 0.7, (10 ** 9,)), V.ResourceError, "size"),
    (lambda: dl.pair("sdf", width=2), ValueError, "regime"),
    (lambda: dl.pair("sde", width=0), ValueError, "width"),
    (lambda: dl.pair("sde", width=2, activation="cube"), ValueError, "activation"),
    (lambda: dl.pair("ode", width=2, arch="res-7"), ValueError, "arch"),
    (lambda: dl.pair("fbm", width=2, hurst=float("inf")), ValueError, "hurst"),
    (lambda: dl.pair("inside-ode", width=2, beta=float("nan")), ValueError, "beta"),
    (lambda: dl.pair("inside-sde", width=2, sa=-1.0), ValueError, "sa"),
    (lambda: dl.strong_convergence("sde", width=2, depths=[3]), ValueError, "depths"),
    (lambda: dl.strong_convergence("sde", width=2, depths=[float("inf")]), ValueError, "depths"),
    (lambda: dl.strong_convergence("sde", width=2, paths=0), ValueError, "paths"),
    (lambda: dl.strong_convergence("sde", width=2, paths=2.5), ValueError, "paths"),
    (lambda: dl.strong_convergence("sde", width=2, seed=-1), ValueError, "seed"),
    (lambda: dl.plan_convergence(**{**PLAN, "inputs": 0}), ValueError, "inputs"),
    (lambda: dl.plan_convergence(**{**PLAN, "chunk": 0}), ValueError, "chunk"),
    (lambda: dl.plan_convergence(**{**PLAN, "reference": 12}), ValueError, "reference"),
    (lambda: dl.plan_convergence(**{**PLAN, "dtype": torch.float16}), ValueError, "dtype"),
    (lambda: dl.plan_convergence(**{**PLAN, "paths": 10 ** 20}), V.ResourceError, "paths"),
    (lambda: dl.plan_convergence(**{**PLAN, "depths": [2 ** 40]}), V.ResourceError, "reference"),
    (lambda: dl.run_plan(dl.plan_convergence(**PLAN), workers=0), ValueError, "workers", pending),
    (lambda: dl.run_plan(dl.plan_convergence(**PLAN), scheduler="nowhere"), ValueError, "scheduler", pending),
    (lambda: dl.stability(width=0), ValueError, "width"),
    (lambda: dl.stability(depths=[]), ValueError, "depths"),
    (lambda: dl.stability(depths=[10, 10]), ValueError, "depths"),
    (lambda: dl.stability(betas=[float("nan")]), ValueError, "betas"),
    (lambda: dl.stability(betas=[-1.0]), ValueError, "betas"),
    (lambda: dl.stability(driver="brownian"), ValueError, "driver"),
    (lambda: dl.stability(draws=0), ValueError, "draws"),
    (lambda: dl.stability(histograms="yes"), ValueError, "histograms"),
    (lambda: dl.stability(draws=10 ** 15), V.ResourceError, "draws"),
    (lambda: dl.stability(depths=[10 ** 12]), V.ResourceError, "depth"),
    (lambda: dl.stability(width=1000, depths=[20000]), V.ResourceError, ""),
    (lambda: dl.stability(width=2, n_in=2, depths=[2], draws=2, workers=0), ValueError, "workers", pending),
    (lambda: dl.stability(width=2, n_in=2, depths=[2], draws=2, scheduler="x"), ValueError, "scheduler",
     pending),
    (lambda: dl.phase_diagram(hursts=[0.0]), ValueError, "hursts"),
    (lambda: dl.phase_diagram(hursts=[float("nan")]), ValueError, "hursts"),
    (lambda: dl.phase_diagram(betas=[]), ValueError, "betas"),
    (lambda: dl.phase_diagram(depth=0), ValueError, "depth"),
    (lambda: dl.phase_diagram(inputs=-1), ValueError, "inputs"),
    (lambda: dl.phase_diagram(depth=10 ** 9), V.ResourceError, "depth"),
    (lambda: dl.phase_diagram(inputs=100000), V.ResourceError, "inputs"),
    (lambda: dl.phase_diagram(hursts=[0.6], betas=[0.5], width=2, n_in=2, depth=4, draws=1, inputs=1,
                              workers=0), ValueError, "workers", pending),
    (lambda: _run_sweep(workers=0), ValueError, "workers", pending),
    (lambda: _run_sweep(workers=2.5), ValueError, "workers", pending),
    (lambda: _run_sweep(scheduler="notanaddress"), ValueError, "scheduler", pending),
    (lambda: _run_sweep(workers=1, scheduler="tcp://127.0.0.1:1"), ValueError, "not both", pending),
    (lambda: V.executor(0, None), ValueError, "workers"),
    (lambda: V.executor(None, "tcp://h:0"), ValueError, "scheduler"),
    (lambda: V.executor(None, "tcp://h:1", float("nan")), ValueError, "timeout"),
    (lambda: V.writable_file("json", "/dev/full"), ValueError, "json"),
    (lambda: V.writable_file("json", "/"), ValueError, "json"),
    (lambda: V.writable_dir("out", "/dev/null"), ValueError, "out"),
]


def _lib_rows():
    out = []
    for i, (call, exc, rx, *marks) in enumerate(LIB):
        out.append(pytest.param(call, exc, rx, bool(marks), marks=marks, id=f"lib{i:02d}-{rx or exc.__name__}"))
    return out


def _raises_in_time(call, exc, rx):
    """Run ``call`` in a forked child with a time limit (a pending check may hang or grab memory)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    q = ctx.Queue()

    def child():
        try:
            call()
            q.put(("none", "", ""))
        except BaseException as e:  # noqa: BLE001
            q.put(([c.__name__ for c in type(e).__mro__], str(e), ""))

    p = ctx.Process(target=child)
    p.start()
    p.join(LIMIT)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail(f"no answer in {LIMIT} s")
    mro, msg, _ = q.get(timeout=5)
    assert mro != "none", "no exception raised"
    assert exc.__name__ in mro, (mro, msg)
    assert rx in msg and "\n" not in msg


@pytest.mark.parametrize("call,exc,rx,isolated", _lib_rows())
def test_bad_library_call(call, exc, rx, isolated, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(os.path.dirname(os.path.abspath(__file__)))
    t0 = time.perf_counter()
    if isolated:
        _raises_in_time(call, exc, rx)
    else:
        with pytest.raises(exc) as info:
            call()
        assert rx in str(info.value)
    assert time.perf_counter() - t0 < LIMIT
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("error,status", [(OSError("Timed out trying to connect to tcp://10.0.0.1:8786 after 3 s"), 1),
                                          (KeyboardInterrupt(), 130)])
def test_a_run_that_fails_before_any_task_leaves_nothing(error, status, cwd, monkeypatch, capsys):
    """An unreachable scheduler (or Ctrl-C) before the first task: the run directory and store
    this command created are removed; one line."""
    import deeplimits.studies.convergence as conv
    from deeplimits import runs as sweeps

    err_type = getattr(sweeps, "ExecutorError", None)
    if err_type is not None and isinstance(error, OSError):
        error = err_type(str(error))

    def unreachable(*a, **kw):
        raise error

    monkeypatch.setattr(conv, "run_plan", unreachable)
    assert main(C + ["--scheduler", "tcp://10.0.0.1:8786", "--quiet"]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert tree(cwd).keys() == {"afile", "adir"}
    (cwd / "adir" / "keep").write_text("x")  # an existing --out directory stays, its new store goes
    assert main(C + ["--scheduler", "tcp://10.0.0.1:8786", "--out", "adir", "--quiet"]) == status
    assert sorted(os.listdir(cwd / "adir")) == ["keep"]


def test_refused_sizes_name_the_flags_to_change(cwd, monkeypatch, capsys):
    """A ResourceError from a plan: exit 2, one line, its knobs shown as the command's flags."""
    import deeplimits.studies.stability as prop
    import deeplimits.studies.convergence as conv

    def too_big(*a, **kw):
        raise V.ResourceError("needs about 7.3 TiB of memory, 15 GiB available", needed=8e12, available=1.6e10,
                              knobs=("draws", "n_in", "length_scale"))

    monkeypatch.setattr(prop, "plan_stability", too_big)
    assert main(["stability"]) == 2
    err = capsys.readouterr().err
    assert err == ("deeplimits stability: needs about 7.3 TiB of memory, 15 GiB available "
                   "(change --draws, --n-in, --length-scale)\n")

    def too_many(*a, **kw):
        raise V.ResourceError("paths = 10^20 draws take about 10^13 s", needed=1e13, available=1e5, knobs=("paths",))

    monkeypatch.setattr(conv, "plan_convergence", too_many)
    assert main(["convergence"]) == 2
    assert capsys.readouterr().err.endswith("(change --draws)\n")
    assert tree(cwd).keys() == {"afile", "adir"}


def test_writable_probes_leave_nothing(tmp_path):
    (tmp_path / "f").write_text("x")
    assert V.writable_file("json", tmp_path / "a" / "b" / "r.json") == str(tmp_path / "a" / "b" / "r.json")
    assert V.writable_dir("out", tmp_path / "c" / "d") == str(tmp_path / "c" / "d")
    assert V.writable_file("json", tmp_path / "f") and (tmp_path / "f").read_text() == "x"
    assert V.writable_file("json", "/dev/null") == "/dev/null"
    for call in (lambda: V.writable_file("json", tmp_path / "f" / "x.json"),
                 lambda: V.writable_dir("out", tmp_path / "f" / "sub"),
                 lambda: V.writable_file("json", tmp_path),
                 lambda: V.writable_file("json", "/dev/full"),
                 lambda: V.writable_dir("out", tmp_path / "f")):
        with pytest.raises(ValueError, match="json|out"):
            call()
    assert sorted(os.listdir(tmp_path)) == ["f"]
