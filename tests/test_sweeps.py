"""Sweeps: the run store survives SIGKILL and resumes, Dask gives the local numbers, a killed
worker's task is rerun, a corrupted store is a clear error."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

import sweep_tasks  # noqa: F401 - registers the test task functions
import torch

import deeplimits as dl
from deeplimits.cli import main
from deeplimits.runs import RunStore, RunStoreError, SweepError, Task, run_sweep


def small_plan(**kw):
    base = dict(width=3, depths=[4, 8, 16], draws=12, reference=64, seed=4, chunk=3)
    base.update(kw)
    return dl.plan_convergence("sde", **base)


def test_store_records_each_task_once_and_resumes(tmp_path):
    plan = small_plan()
    spec = plan.to_dict()
    store = RunStore(tmp_path, spec)
    first = dl.run_plan(plan, store=store)
    assert store.counts() == {"done": 4}
    # resuming computes nothing: every task is already stored (progress reports the work done by
    # this call; what was stored is stored_units)
    calls = []
    again = dl.run_plan(plan, store=RunStore(tmp_path, spec), progress=calls.append)
    assert again.error == first.error and sum(calls) == 0 and plan.stored_units(RunStore(tmp_path, spec)) == 12
    recs = RunStore(tmp_path, spec).records()
    assert [r["attempts"] for r in recs] == [1, 1, 1, 1]
    assert {r["versions"]["torch"] for r in recs} == {torch.__version__}
    assert all(r["seconds"] > 0 and r["status"] == "done" for r in recs)
    # the same numbers as the plain in-process run
    assert dl.run_plan(plan).error == first.error


def test_store_refuses_another_command_and_corruption(tmp_path):
    RunStore(tmp_path / "a", small_plan().to_dict())
    with pytest.raises(RunStoreError, match="different command"):
        RunStore(tmp_path / "a", small_plan(seed=5).to_dict())
    bad = tmp_path / "b"
    bad.mkdir()
    (bad / "run.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(RunStoreError, match="not a readable deeplimits run store"):
        RunStore(bad, {})
    assert (bad / "run.sqlite").read_bytes().startswith(b"this is not")  # never overwritten
    other = tmp_path / "c"
    other.mkdir()
    sqlite3.connect(other / "run.sqlite").execute("CREATE TABLE x (y)")
    with pytest.raises(RunStoreError, match="not a deeplimits run store"):
        RunStore(other, {})


def test_cli_reports_a_corrupted_store_in_one_line(tmp_path, capsys):
    (tmp_path / "run.sqlite").write_bytes(b"\x00garbage" * 64)
    # a damaged store is a runtime failure (exit 1), not a bad argument (README, "Errors, limits and exit statuses")
    assert main(["convergence", "--regime", "sde", "--depths", "4,8", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert "not a readable deeplimits run store" in err and "\n" not in err


def test_failed_tasks_are_stored_and_retried(tmp_path):
    flag = tmp_path / "fail"
    flag.write_text("1")
    tasks = [Task(f"t{i}", "test-flaky", {"i": i, "flag": str(flag)}, i) for i in range(3)]
    store = RunStore(tmp_path / "run", {"flaky": True})
    with pytest.raises(SweepError, match="1 of 3 tasks failed"):
        run_sweep(tasks, store)
    assert store.counts() == {"done": 2, "failed": 1}
    flag.unlink()
    assert run_sweep(tasks, store) == {"t0": 0, "t1": 10, "t2": 20}
    recs = {r["key"]: r for r in store.records()}
    assert recs["t1"]["status"] == "done" and recs["t1"]["attempts"] == 2 and recs["t0"]["attempts"] == 1


CMD = [sys.executable, "-m", "deeplimits.cli", "convergence", "--regime", "sde", "--width", "8", "--depths",
       "8,16,32,64", "--reference", "1024", "--draws", "40", "--chunk", "2", "--seed", "9", "--quiet"]


def done_count(path):
    try:
        with sqlite3.connect(path, timeout=1800) as db:  # waits for the lock as long as it is held: a hang guard only
            return db.execute("SELECT COUNT(*) FROM tasks WHERE status = 'done'").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_sigkill_half_way_then_resume(tmp_path):
    run = tmp_path / "killed"
    proc = subprocess.Popen(CMD + ["--out", str(run)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 1800  # a hang guard only
    while done_count(run / "run.sqlite") < 6 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed: make it longer"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = done_count(run / "run.sqlite")
    assert 6 <= stored < 20
    before = {r["key"]: r["result"] for r in RunStore(run, create=False).records()}
    # resume: only the missing tasks run, the finished ones are kept as they are
    subprocess.run(CMD + ["--out", str(run), "--json", str(tmp_path / "resumed.json")], check=True,
                   stdout=subprocess.DEVNULL)
    recs = RunStore(run, create=False).records()
    assert len(recs) == 20 and len({r["key"] for r in recs}) == 20
    assert all(r["attempts"] == 1 and r["status"] == "done" for r in recs)
    assert all(r["result"] == before[r["key"]] for r in recs if r["key"] in before)
    # identical to an uninterrupted run
    subprocess.run(CMD + ["--out", str(tmp_path / "clean"), "--json", str(tmp_path / "clean.json")], check=True,
                   stdout=subprocess.DEVNULL)
    a, b = json.loads((tmp_path / "resumed.json").read_text()), json.loads((tmp_path / "clean.json").read_text())
    assert a["error"] == b["error"] and a["terminal_error"] == b["terminal_error"] and a["rate"] == b["rate"]


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as c:
        yield c


@pytest.mark.slow
def test_local_dask_cluster_gives_the_local_numbers(cluster, tmp_path):
    plan = small_plan()
    local = dl.run_plan(plan)
    remote = dl.run_plan(plan, scheduler=cluster.scheduler_address, store=RunStore(tmp_path, plan.to_dict()))
    assert remote.error == local.error and remote.terminal_error == local.terminal_error
    assert RunStore(tmp_path, plan.to_dict()).counts() == {"done": 4}
    # and --workers builds its own LocalCluster on loopback
    mine = dl.run_plan(plan, workers=2)
    assert mine.error == local.error


@pytest.mark.slow
def test_a_killed_worker_task_is_rerun(cluster, tmp_path):
    from distributed import Client

    plan = dl.plan_convergence("sde", width=16, depths=[8, 16, 32], draws=12, reference=16384, seed=2, chunk=2)
    with Client(cluster.scheduler_address) as client:
        pids = list(client.run(os.getpid).values())
    store = RunStore(tmp_path, plan.to_dict())
    out = {}
    t = threading.Thread(target=lambda: out.update(r=dl.run_plan(plan, scheduler=cluster.scheduler_address,
                                                                  store=store)))
    t.start()
    deadline = time.time() + 1800  # a hang guard only
    while done_count(tmp_path / "run.sqlite") < 1 and time.time() < deadline:
        time.sleep(0.02)
    killed_at = done_count(tmp_path / "run.sqlite")
    os.kill(pids[0], signal.SIGKILL)  # it is in the middle of one of the remaining tasks
    assert 1 <= killed_at < 6
    t.join(timeout=1800)
    assert not t.is_alive() and "r" in out
    assert out["r"].draws == 12 and out["r"].error == dl.run_plan(plan).error
    assert RunStore(tmp_path, plan.to_dict()).counts() == {"done": 6}


def test_a_store_killed_while_being_created_is_recreated(tmp_path):
    sqlite3.connect(tmp_path / "run.sqlite").execute("PRAGMA journal_mode=WAL").fetchall()  # no tables yet
    plan = small_plan()
    res = dl.run_plan(plan, store=RunStore(tmp_path, plan.to_dict()))
    assert RunStore(tmp_path, plan.to_dict()).counts() == {"done": 4} and res.draws == 12


def test_cli_failed_task_is_one_line_and_others_are_stored(tmp_path, capsys, monkeypatch):
    import deeplimits._random as dl_random
    import deeplimits.studies.convergence.study as conv

    real = conv.run_chunk

    def broken(p, depths, reference, draws, inputs, seed, dtype, device=None):
        if seed == dl_random.chunk_seed(0, 1):
            raise RuntimeError("boom")
        return real(p, depths, reference, draws, inputs, seed, dtype, device)

    monkeypatch.setattr(conv, "run_chunk", broken)
    argv = ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8", "--draws", "6", "--chunk", "2",
            "--reference", "32", "--out", str(tmp_path), "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "1 of 3 tasks failed" in err and "\n" not in err and "Traceback" not in err
    assert RunStore(tmp_path, create=False).counts() == {"done": 2, "failed": 1}
    monkeypatch.setattr(conv, "run_chunk", real)
    assert main(argv) == 0  # the rerun retries the failed task only
    assert RunStore(tmp_path, create=False).counts() == {"done": 3}
