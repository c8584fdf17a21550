"""Run store integrity (issue 10): a checksum per finished task verified on read (a damaged task
is recomputed, never used), older stores load, read-only stores open, concurrent creation is
safe; Dask executor arguments are checked before any work and an unreachable or workerless
cluster is a one-line ExecutorError within the timeout."""

import itertools
import json
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
import time
import types

import pytest

import sweep_tasks  # noqa: F401 - registers the test task functions

import deeplimits as dl
from deeplimits import runs as sweeps
from deeplimits.cli import main
from deeplimits.runs import ExecutorError, RunStore, RunStoreError, Task, run_sweep

TASKS = [Task(f"t{i}", "test-draws", {"n": 5}, 100 + i) for i in range(4)]


def sql(path, query, *args):
    with sqlite3.connect(os.path.join(path, "run.sqlite")) as db:
        out = db.execute(query, args).fetchall()
    db.close()
    return out


def change_one_digit(text: str) -> str:
    i = next(i for i, c in enumerate(text) if c in "123456789")
    return text[:i] + str((int(text[i]) % 9) + 1) + text[i + 1:]


def test_a_changed_digit_or_a_truncation_is_recomputed_as_undamaged(tmp_path):
    clean = run_sweep(TASKS, RunStore(tmp_path / "clean", {"d": 1}))
    store = RunStore(tmp_path / "run", {"d": 1})
    assert run_sweep(TASKS, store) == clean
    assert store.integrity() == {"verified": 4, "unverified": 0, "damaged": []} and store.integrity_line() == ""
    (r1,), (r2,), (r3,) = (sql(store.directory, "SELECT result FROM tasks WHERE key = ?", k)[0] for k in ("t1", "t2", "t3"))
    shorter = json.dumps(json.loads(r2)[:3])  # valid JSON, fewer draws
    sql(store.directory, "UPDATE tasks SET result = ? WHERE key = 't1'", change_one_digit(r1))
    sql(store.directory, "UPDATE tasks SET result = ? WHERE key = 't2'", shorter)
    sql(store.directory, "UPDATE tasks SET result = ? WHERE key = 't3'", r3[: len(r3) // 2])  # not JSON
    store = RunStore(tmp_path / "run", create=False)
    assert store.damaged() == ["t1", "t2", "t3"]
    assert set(store.results()) == {"t0"} and store.counts() == {"done": 1, "damaged": 3}
    line = store.integrity_line()
    assert "3 damaged tasks not used (t1, t2, t3)" in line and "\n" not in line
    recs = {r["key"]: r for r in store.records()}
    assert recs["t1"]["status"] == "damaged" and recs["t1"]["result"] is None and recs["t0"]["status"] == "done"
    # the rerun recomputes exactly the damaged tasks, with their fixed seeds: the undamaged numbers
    ran = []
    store = RunStore(tmp_path / "run", {"d": 1})
    again = run_sweep(TASKS, store, progress=lambda t: ran.append(t.key))
    assert again == clean and store.damaged() == [] and store.counts() == {"done": 4}
    assert {r["key"]: r["attempts"] for r in store.records()} == {"t0": 1, "t1": 2, "t2": 2, "t3": 2}


def test_the_command_reports_a_damaged_digit_and_the_rerun_equals_an_undamaged_run(tmp_path, capsys):
    """End to end through the CLI: one digit changed in a stored chunk is reported by ``runs show``
    and ``runs list`` in one line, and the same command again writes the same result.json (the
    recomputed chunk has its fixed seed; only the wall time may differ)."""
    argv = ["convergence", "--regime", "sde", "--depths", "4,8", "--reference", "16", "--draws", "6",
            "--chunk", "3", "--quiet", "--out", str(tmp_path / "run")]
    assert main(argv + ["--json", str(tmp_path / "a.json")]) == 0
    key, text = sql(tmp_path / "run", "SELECT key, result FROM tasks ORDER BY key")[0]
    sql(tmp_path / "run", "UPDATE tasks SET result = ? WHERE key = ?", change_one_digit(text), key)
    capsys.readouterr()
    assert main(["runs", "show", str(tmp_path / "run")]) == 0
    assert f"integrity: 1 damaged task not used ({key})" in capsys.readouterr().out
    assert main(["runs", "list", str(tmp_path)]) == 0
    assert "1 damaged task not used" in capsys.readouterr().out
    assert main(argv + ["--json", str(tmp_path / "b.json")]) == 0
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    a.pop("seconds"), b.pop("seconds")
    assert a == b  # the same code path and seeds on the same machine: identical numbers
    assert RunStore(tmp_path / "run", create=False).damaged() == []


def test_a_row_moved_to_another_key_or_seed_is_damaged(tmp_path):
    store = RunStore(tmp_path, {"d": 1})
    run_sweep(TASKS, store)
    sql(tmp_path, "UPDATE tasks SET seed = seed + 1 WHERE key = 't0'")
    r3 = sql(tmp_path, "SELECT result, checksum FROM tasks WHERE key = 't3'")[0]
    sql(tmp_path, "UPDATE tasks SET result = ?, checksum = ? WHERE key = 't2'", *r3)  # t3's row copied onto t2
    assert RunStore(tmp_path, create=False).damaged() == ["t0", "t2"]


def small_plan(**kw):
    base = dict(width=3, depths=[4, 8], draws=9, reference=32, seed=4, chunk=3)
    base.update(kw)
    return dl.plan_convergence("sde", **base)


def test_a_truncated_convergence_chunk_is_not_used_as_fewer_draws(tmp_path, capsys):
    from deeplimits.studies import results_from_store

    plan = small_plan()
    clean = dl.run_plan(plan)
    store = RunStore(tmp_path, plan.to_dict())
    dl.run_plan(plan, store=store)
    key, text = sql(tmp_path, "SELECT key, result FROM tasks ORDER BY key")[1]
    res = json.loads(text)
    res["max_err"], res["terminal_err"] = res["max_err"][:1], res["terminal_err"][:1]  # one draw of three
    sql(tmp_path, "UPDATE tasks SET result = ? WHERE key = ?", json.dumps(res), key)
    reader = RunStore(tmp_path, create=False)
    assert reader.damaged() == [key]
    assert results_from_store(reader)[0].draws == 6  # the two sound chunks only, never 7 draws
    assert main(["runs", "show", str(tmp_path)]) == 0
    capsys.readouterr()
    again = dl.run_plan(plan, store=RunStore(tmp_path, plan.to_dict()))
    assert again.draws == 9 and again.error == clean.error and again.terminal_error == clean.terminal_error


def test_a_damaged_spec_or_result_text_is_a_one_line_error_or_damaged(tmp_path):
    RunStore(tmp_path, {"d": 1})
    run_sweep(TASKS[:1], RunStore(tmp_path, {"d": 1}))
    sql(tmp_path, "UPDATE tasks SET result = '[1.0, 2.' WHERE key = 't0'")
    assert RunStore(tmp_path, create=False).records()[0]["status"] == "damaged"
    sql(tmp_path, "UPDATE meta SET value = '{\"d\": 1' WHERE key = 'spec'")
    for create in (False, True):
        with pytest.raises(RunStoreError, match="spec is not JSON") as info:
            RunStore(tmp_path, {"d": 1} if create else None, create=create)
        assert "\n" not in str(info.value)


SCHEMA1 = """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tasks (key TEXT PRIMARY KEY, fn TEXT NOT NULL, params TEXT NOT NULL,
  seed INTEGER NOT NULL, status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
  result TEXT, error TEXT, seconds REAL, finished REAL, attempts INTEGER NOT NULL, versions TEXT NOT NULL);"""


def old_store(path, rows):
    os.makedirs(path, exist_ok=True)
    db = sqlite3.connect(os.path.join(path, "run.sqlite"))
    db.executescript(SCHEMA1)
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("schema", "1"), ("spec", json.dumps({"d": 1})),
                                                      ("created", "0"), ("versions", "{}")])
    db.executemany("INSERT INTO tasks VALUES (?, ?, ?, ?, 'done', ?, NULL, 1.0, 0.0, 1, '{}')", rows)
    db.commit()
    db.close()


def test_a_schema_1_store_loads_unverified_and_is_migrated_and_sealed_by_a_resume(tmp_path):
    t0 = TASKS[0]
    value = run_sweep([t0], None)["t0"]
    old_store(tmp_path, [("t0", t0.fn, json.dumps(t0.params), t0.seed, json.dumps(value)),
                         ("t1", t0.fn, json.dumps(TASKS[1].params), TASKS[1].seed, "[0.5, 0.")])
    before = (tmp_path / "run.sqlite").read_bytes()
    reader = RunStore(tmp_path, create=False, readonly=True)
    assert reader.results() == {"t0": value}
    assert reader.integrity() == {"verified": 0, "unverified": 1, "damaged": ["t1"]}
    assert "1 task from an older store without checksums (unverified)" in reader.integrity_line()
    reader.close()
    assert (tmp_path / "run.sqlite").read_bytes() == before  # a reader does not migrate
    store = RunStore(tmp_path, {"d": 1})  # opening does not migrate; the resume's first task does
    assert store.meta()["schema"] == "1" and store.results() == {"t0": value}
    out = run_sweep(TASKS[:3], store)
    assert store.meta()["schema"] == "3" and json.loads(store.meta()["migrated"])["from_schema"] == 1
    assert out == run_sweep(TASKS[:3], None)
    # the migration sealed t0 as found (verified from now on); t1 and t2 were computed and checksummed
    assert store.integrity() == {"verified": 3, "unverified": 0, "damaged": []}
    db = sqlite3.connect(tmp_path / "run.sqlite")
    db.execute("UPDATE tasks SET result = '[9.0]' WHERE key = 't0'")  # a change after the migration is seen
    db.commit()
    db.close()
    assert store.integrity()["damaged"] == ["t0"]


def _create(path, spec, barrier, queue):
    barrier.wait()
    try:
        RunStore(path, spec).close()
        queue.put(("ok", spec["s"]))
    except RunStoreError as e:
        queue.put(("refused", str(e)))


@pytest.mark.parametrize("specs", [[0] * 6, [0, 1] * 3])
def test_processes_creating_the_same_store_at_once(tmp_path, specs):
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(len(specs)), ctx.Queue()
    procs = [ctx.Process(target=_create, args=(str(tmp_path / "run"), {"s": s}, barrier, queue)) for s in specs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(1800)  # hang guards only: loaded CI machines are slow
    outcomes = [queue.get(timeout=1800) for _ in procs]
    assert all(p.exitcode == 0 for p in procs)
    winner = RunStore(tmp_path / "run", create=False).spec["s"]
    assert sorted(o for o in outcomes if o[0] == "ok") == [("ok", winner)] * specs.count(winner)
    refused = [o[1] for o in outcomes if o[0] == "refused"]
    assert len(refused) == len(specs) - specs.count(winner) and all("different command" in r for r in refused)


def test_a_read_only_store_opens_for_reading(tmp_path, monkeypatch):
    writer = RunStore(tmp_path, {"d": 1})
    run_sweep(TASKS, writer)
    writer.close()
    assert sorted(os.listdir(tmp_path)) == ["run.sqlite"]  # closed cleanly: no write-ahead log left
    before = (tmp_path / "run.sqlite").read_bytes()
    ro = RunStore(tmp_path, create=False, readonly=True)
    assert ro.readonly and len(ro.results()) == 4 and ro.counts() == {"done": 4}
    with pytest.raises(RunStoreError, match="read-only"):
        ro.record(TASKS[0], [1.0], 0.1)
    ro.close()
    assert (tmp_path / "run.sqlite").read_bytes() == before and sorted(os.listdir(tmp_path)) == ["run.sqlite"]
    # what chmod -w does for a non-root user (root writes anyway): found unwritable, opened read-only
    monkeypatch.setattr(sweeps.store, "_writable", lambda path: False)
    auto = RunStore(tmp_path, create=False)
    assert auto.readonly and len(auto.results()) == 4
    with pytest.raises(RunStoreError, match="read-only: it can be shown"):
        RunStore(tmp_path, {"d": 1})


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through chmod -w; the readonly=True path is tested above")
def test_a_chmod_read_only_run_directory(tmp_path):
    run_sweep(TASKS, RunStore(tmp_path / "run", {"d": 1})).clear()
    os.chmod(tmp_path / "run" / "run.sqlite", 0o444)
    os.chmod(tmp_path / "run", 0o555)
    try:
        store = RunStore(tmp_path / "run", create=False)
        assert store.readonly and len(store.results()) == 4
        assert main(["runs", "show", str(tmp_path / "run")]) == 0
    finally:
        os.chmod(tmp_path / "run", 0o755)


KILLED = """
import sys
import sweep_tasks  # noqa: F401
from deeplimits.runs import RunStore, run_sweep, Task
store = RunStore(sys.argv[1], {"d": 1})
run_sweep([Task(f"t{i}", "test-draws", {"n": 5}, 100 + i) for i in range(4)], store)
import os; os._exit(0)  # killed: no checkpoint, the tasks are in the write-ahead log only
"""


@pytest.mark.slow
def test_a_read_only_reader_sees_the_tasks_of_a_killed_run(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.path.dirname(__file__)])}
    subprocess.run([sys.executable, "-c", KILLED, str(tmp_path)], check=True, env=env, timeout=1800)  # hang guard
    assert os.path.getsize(tmp_path / "run.sqlite-wal") > 0
    assert RunStore(tmp_path, create=False, readonly=True).results() == run_sweep(TASKS, None)


# -- executors -------------------------------------------------------------------------------

def test_executor_arguments_are_checked_before_any_work(tmp_path):
    store = RunStore(tmp_path, {"d": 1})
    for kw, word in (({"workers": 0}, "workers"), ({"scheduler": "notanaddress"}, "scheduler"),
                     ({"workers": 1, "timeout": 0}, "timeout"), ({"workers": 1, "scheduler": "tcp://127.0.0.1:9"}, "both")):
        with pytest.raises(ValueError, match=word):
            run_sweep(TASKS, store, **kw)
    assert store.counts() == {}


def _moving_clock():
    """A clock that moves 100 s at each look: a user's 600 s timeout passes after a few real looks
    (real connection attempts, real queries of a real scheduler) however loaded the machine, and no
    wall-clock limit is shortened. Where nothing ever answers, or no worker ever comes, the expiry is
    the outcome whatever its length."""
    looks = itertools.count(0.0, 100.0)
    return lambda: next(looks)


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    core = pytest.importorskip("distributed.comm.core")
    monkeypatch.setattr(core, "time", _moving_clock())  # the connection's deadline
    store = RunStore(tmp_path, {"d": 1})
    with pytest.raises(ExecutorError) as info:  # nothing listens on port 1: the same error however loaded
        run_sweep(TASKS, store, scheduler="tcp://127.0.0.1:1", timeout=600)
    assert "127.0.0.1:1" in str(info.value) and "within 600 s" in str(info.value) and "\n" not in str(info.value)
    assert store.counts() == {}
    assert issubclass(ExecutorError, RuntimeError)


@pytest.fixture
def lonely():
    """A scheduler on loopback with no worker (in this process)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as c:
        yield c


@pytest.mark.slow
def test_a_cluster_without_workers_fails_after_the_timeout(lonely, monkeypatch):
    import distributed
    import distributed.client as dc

    class Moving(distributed.Client):  # the wait for a worker reads the moving clock, nothing else does
        def wait_for_workers(self, n_workers, timeout=None):
            real, dc.time = dc.time, _moving_clock()
            try:
                return super().wait_for_workers(n_workers, timeout=timeout)
            finally:
                dc.time = real

    monkeypatch.setattr(distributed, "Client", Moving)
    # no worker ever comes
    with pytest.raises(ExecutorError, match="no Dask worker reachable .* within 600 s"):
        run_sweep(TASKS, None, scheduler=lonely.scheduler_address, timeout=600)


@pytest.mark.slow
def test_a_cluster_whose_workers_all_leave_fails_after_the_timeout(lonely, tmp_path, monkeypatch):
    lonely.scale(1)
    lonely.wait_for_workers(1, timeout=600)
    tasks = [Task(f"s{i}", "test-sleepy", {"s": 2.0}, i) for i in range(8)]  # 8 s of work: the retirement is in time
    store = RunStore(tmp_path, {"s": 1})

    def retire():
        while not store.counts().get("done") and time.perf_counter() - t0 < 600:  # a hang guard only
            time.sleep(0.02)
        lonely.scale(0)  # every worker leaves (and none comes back)

    t0 = time.perf_counter()
    threading.Thread(target=retire, daemon=True).start()
    # the timeout runs from the moment the last worker leaves (none comes back after scale(0)), on the
    # executor's clock: here one that moves 1000 s at each look, so the 600 s of a user's timeout pass at
    # the second look without a worker, however loaded the machine (the waits between looks are real)
    from deeplimits.runs import executors

    looks = itertools.count(0.0, 1000.0)
    monkeypatch.setattr(executors, "time", types.SimpleNamespace(perf_counter=time.perf_counter,
                                                                 monotonic=lambda: next(looks)))
    with pytest.raises(ExecutorError, match="no worker for 600 s") as info:
        run_sweep(tasks, store, scheduler=lonely.scheduler_address, timeout=600)
    assert "\n" not in str(info.value)
    assert 1 <= store.counts().get("done", 0) < 8


@pytest.mark.slow
def test_the_local_cluster_dashboard_listens_on_loopback_only(monkeypatch):
    import distributed

    seen = []

    class Spy(distributed.LocalCluster):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            server = self.scheduler.http_server
            seen.append((self.dashboard_link, [s.getsockname()[0] for s in server._sockets.values()]))

    monkeypatch.setattr(distributed, "LocalCluster", Spy)
    assert run_sweep(TASKS[:1], None, workers=1) == run_sweep(TASKS[:1], None)
    (link, hosts), = seen
    assert link.startswith("http://127.0.0.1:") and hosts and set(hosts) == {"127.0.0.1"}


def test_a_result_lost_with_its_worker_does_not_hang_the_run(monkeypatch):
    """A task that finished on a worker which then left: its result can no longer be fetched
    (``Future.result`` would wait for ever). The coordinator waits at most ``timeout`` for it,
    keeps it pending, and with no worker left ends with ExecutorError in bounded time."""
    import distributed

    from deeplimits.runs import executors

    class Lost:  # finished, but its data left with the worker
        def result(self, timeout=None):
            assert timeout is not None, "an unbounded wait for a result can hang the run"
            time.sleep(min(timeout, 0.05))
            raise TimeoutError

    class Client:
        def nthreads(self):
            return {}

    monkeypatch.setattr(distributed, "wait", lambda futs, timeout, return_when: (set(futs), set()))
    finished = []
    t0 = time.perf_counter()
    with pytest.raises(ExecutorError, match="no worker for 0.2 s"):
        executors._await(Client(), {Lost(): TASKS[0]}, lambda t, *a, **kw: finished.append(t), None, 0.2)
    assert finished == []
