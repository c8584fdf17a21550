"""Progress a reader can follow (issue 28): one line every few seconds when standard error is not
a terminal, a resumed run starting at its stored count, ``seconds`` summed over sessions."""

import json

import pytest

from deeplimits.cli import execution, main
from deeplimits.cli.execution import LogProgress
from deeplimits.runs import RunStore

CMD = ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8,16", "--draws", "64", "--chunk", "8"]


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_log_progress_writes_a_line_per_interval(capsys):
    clock = Clock()
    bar = LogProgress(total=100, initial=20, unit="draw", desc="sde", interval=10, clock=clock)
    bar.update(10)
    assert capsys.readouterr().err == ""  # within the interval: nothing yet
    clock.t = 10.0
    bar.update(10)
    clock.t = 15.0
    bar.update(40)
    clock.t = 20.0
    bar.update(20)  # rate counts this session only: 60 draws in 20 s
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "sde: 40/100 draws (40%), 10 s, about 30 s left"  # 20 draws in 10 s, 60 left
    assert lines[1] == "sde: 100/100 draws (100%), 20 s"
    assert len(lines) == 2


@pytest.mark.slow
def test_a_command_logs_progress_and_resumes_from_its_stored_count(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(execution, "LOG_INTERVAL", 0.0)  # a line per task
    assert main(CMD + ["--out", "run"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("sde:")]
    assert len(lines) >= 8 and lines[0].startswith("sde: 8/64 draws") and "64/64 draws (100%)" in lines[-1]
    first = json.loads((tmp_path / "run" / "result.json").read_text())
    with RunStore(tmp_path / "run", create=False) as store:
        keys = sorted(store.results())
        stored_seconds = sum(r["seconds"] for r in store.records())
        for key in keys[4:]:
            store.discard(key, "test: computed again")
    assert main(CMD + ["--out", "run"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("sde:")]
    assert lines[0].startswith("sde: 40/64 draws"), lines  # 32 stored + the first chunk of this session
    again = json.loads((tmp_path / "run" / "result.json").read_text())
    assert again["error"] == first["error"]
    with RunStore(tmp_path / "run", create=False) as store:
        earlier = sum(r["seconds"] for r in store.records() if r["key"] in keys[:4])
    assert again["seconds"] >= earlier > 0 and stored_seconds > 0  # the earlier session's tasks are counted
