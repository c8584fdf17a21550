"""benchmarks/bench_conv_peak.py (issue 40), the conv training step against the machine's
peaks, kept from rotting: at a tiny size it prints every row of its table, each rate a fraction of
both peaks measured in the same run and each step a ratio to the usual loop, and writes its JSON."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_conv_peak.py"


@pytest.mark.slow
def test_peak_mode_prints_every_case_against_both_peaks(tmp_path):
    out = tmp_path / "peak.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, str(SCRIPT), "--depth", "1", "--width", "4", "--configs", "2",
                        "--rounds", "1", "--steps", "1", "--json", str(out)], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "| case | threads | CPU ms | wall ms | GFLOP/s | of conv peak | of matmul peak | time / usual loop |" in p.stdout
    rows = {r["case"]: r for r in json.loads(out.read_text())["rows"]}
    for case in ("matmul 2048 threads=1", "conv peak channels-last", "C=2 grouped", "C=2 block-diagonal dense",
                 "C=2 deeplimits channels-last", "C=2 deeplimits oneDNN off", "C=2 its convolutions alone"):
        assert rows[case]["gflops"] > 0, case
    assert rows["matmul 2048 threads=1"]["of_matmul_peak"] == 1.0
    assert rows["C=2 usual loop"]["to_usual_loop"] == 1.0 and rows["C=2 grouped"]["to_usual_loop"] is None
