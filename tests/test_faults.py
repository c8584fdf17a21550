"""Faults a long run meets (issue 38): a full disk is named in one line and the finished tasks are
kept (the same command resumes), and a second invocation on the same ``--out`` waits for the first,
says so, and reuses its tasks: each task is computed once."""

import errno
import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from deeplimits.cli import main
from deeplimits.runs import RunStore
from deeplimits.runs.integrity import is_disk_full

fcntl = pytest.importorskip("fcntl")

ARGV = ["convergence", "--regime", "sde", "--depths", "4,8", "--draws", "64", "--chunk", "16", "--width", "4",
        "--quiet"]


def _attempts(out):
    with sqlite3.connect(os.path.join(out, "run.sqlite")) as db:
        rows = db.execute("SELECT key, status, attempts FROM tasks").fetchall()
    db.close()
    return rows


@pytest.mark.slow
def test_a_full_disk_mid_run_is_one_line_and_the_rerun_resumes(tmp_path, monkeypatch, capsys):
    """SQLite's own SQLITE_FULL, made by capping the store's pages after two finished tasks."""
    out = str(tmp_path / "run")
    record = RunStore.record

    def record_then_fill(self, task, result, seconds):
        if self.counts().get("done", 0) >= 2:  # the disk fills now: no page may be added
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            self._db.execute(f"PRAGMA max_page_count = {pages}")
        return record(self, task, result, seconds)

    monkeypatch.setattr(RunStore, "record", record_then_fill)
    assert main(ARGV + ["--out", out]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"the disk holding {out} is full: its 2 finished tasks are kept" in err and "run the same command again" in err
    assert [s for _, s, _ in _attempts(out)] == ["done", "done"]
    monkeypatch.setattr(RunStore, "record", record)
    assert main(ARGV + ["--out", out, "--json", str(tmp_path / "a.json")]) == 0  # space freed: it resumes
    assert sorted(a for *_, a in _attempts(out)) == [1, 1, 1, 1]
    assert main(ARGV + ["--out", str(tmp_path / "clean"), "--json", str(tmp_path / "b.json")]) == 0
    a, b = (json.load(open(tmp_path / f)) for f in ("a.json", "b.json"))
    assert a["error"] == pytest.approx(b["error"], rel=1e-12)  # the same seeds: the same numbers


def test_a_full_disk_writing_an_output_is_named(tmp_path, monkeypatch, capsys):
    from deeplimits.cli import outputs

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "r.json"))

    monkeypatch.setattr(outputs, "write_json", full)
    monkeypatch.setattr(outputs, "write_convergence", full)
    assert main(ARGV + ["--out", str(tmp_path / "run"), "--json", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the disk is full" in err and "finished tasks are kept" in err


def test_what_reads_as_a_full_disk(tmp_path, monkeypatch):
    assert is_disk_full(sqlite3.OperationalError("database or disk is full"))
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not is_disk_full(sqlite3.DatabaseError("file is not a database"), str(tmp_path))
    io = sqlite3.OperationalError("disk I/O error")  # what SQLite says when its log cannot grow
    assert not is_disk_full(io, str(tmp_path))  # this disk has room: a real I/O error
    monkeypatch.setattr(os, "statvfs", lambda p: type("S", (), {"f_bavail": 2, "f_frsize": 4096})())
    assert is_disk_full(io, str(tmp_path))


def _command(out, json_path):
    code = "import sys; from deeplimits.cli import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", code, *ARGV, "--out", out, "--json", json_path]


@pytest.mark.slow
def test_a_second_invocation_waits_for_the_first_and_computes_nothing_twice(tmp_path):
    """The first invocation is stood in for by a lock held here; the second says it waits, stores
    nothing while it waits, and runs once the lock is released."""
    out = tmp_path / "run"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    proc = subprocess.Popen(_command(str(out), str(tmp_path / "r.json")), stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()  # the command's own line: no clock decides
        assert "is being run by another invocation; waiting for it to finish" in line
        assert proc.poll() is None and not (out / "run.sqlite").exists()
    finally:
        os.close(fd)  # the first one ends
    rest = proc.communicate(timeout=600)[1]
    assert proc.returncode == 0, rest
    assert sorted(a for *_, a in _attempts(str(out))) == [1, 1, 1, 1]


@pytest.mark.slow
def test_two_concurrent_invocations_each_task_once_and_the_same_result(tmp_path):
    out = str(tmp_path / "run")
    cmds = [_command(out, str(tmp_path / f"{i}.json")) for i in range(2)]
    for c in cmds:
        c[c.index("64")] = "256"  # a run long enough to overlap
    first = subprocess.Popen(cmds[0], stderr=subprocess.PIPE, text=True)
    while not os.path.exists(os.path.join(out, "run.sqlite")) and first.poll() is None:
        time.sleep(0.05)
    second = subprocess.Popen(cmds[1], stderr=subprocess.PIPE, text=True)
    errs = [p.communicate(timeout=600)[1] for p in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, errs
    assert sorted(a for *_, a in _attempts(out)) == [1] * 16
    a, b = (json.load(open(tmp_path / f"{i}.json")) for i in range(2))
    assert a["error"] == b["error"] and a["rate"] == b["rate"]  # one store, the same stored numbers
