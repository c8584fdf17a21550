"""Plan-time resource estimates (issue 10): every request that cannot fit is refused at once,
with the estimate and the parameters to change, and the estimate is a faithful function of the sizes."""

import json
import os
import subprocess
import sys
import time

import pytest

import deeplimits as dl
from deeplimits import _resources as R
from deeplimits._validate import ResourceError
from deeplimits.studies.convergence import plan_convergence
from deeplimits.paths import fgn
from deeplimits.studies import STABILITY_PRESETS, plan_phase, plan_stability

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = [
    ("convergence draws=1e18", lambda: plan_convergence("sde", draws=10 ** 18), ["1.56e+16", "draws"]),
    ("convergence draws=1e20", lambda: plan_convergence("sde", draws=10 ** 20), ["2^63 - 1", "draws"]),
    ("convergence fbm reference=2^30", lambda: plan_convergence("fbm", hurst=0.7, reference=2 ** 30),
     ["GiB per draw", "reference", "width"]),
    ("convergence width=1e6", lambda: plan_convergence("sde", width=10 ** 6), ["TiB", "width"]),
    ("convergence inputs=1e9", lambda: plan_convergence("sde", inputs=10 ** 9), ["TiB", "inputs"]),
    ("convergence sde reference=2^30", lambda: plan_convergence("sde", reference=2 ** 30), ["1.07e+09", "reference"]),
    ("stability draws=1e15", lambda: plan_stability(draws=10 ** 15), ["tasks", "draws"]),
    ("stability depths=[1e12]", lambda: plan_stability(depths=[10 ** 12]), ["iB", "depths"]),
    ("stability width=1000 depth=20000", lambda: plan_stability(width=1000, depths=[20000]),
     ["149 GiB per draw", "width", "depths"]),
    ("phase depth=1e9", lambda: plan_phase(depth=10 ** 9), ["iB", "depth"]),
    ("phase inputs=1e5", lambda: plan_phase(inputs=100000), ["TiB", "inputs"]),
    ("fgn n=1e12", lambda: fgn(10 ** 12, 0.7), ["TiB", "n"]),
    ("fgn 1e9 paths", lambda: fgn(1024, 0.7, (10 ** 9,)), ["TiB", "size"]),
    ("pair sample huge inputs", lambda: dl.pair("sde", width=10).sample(10 ** 6, inputs=10 ** 6), ["TiB", "inputs"]),
]


@pytest.mark.parametrize("make,needles", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_impossible_requests_are_refused_at_once_with_the_estimate(make, needles):
    t0 = time.process_time()  # CPU time: a loaded machine stretches the clock, not the work
    with pytest.raises(ResourceError) as info:
        make()
    assert time.process_time() - t0 < 5.0
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, msg
    assert info.value.needed > info.value.available and info.value.knobs
    assert isinstance(info.value, ValueError)  # callers that catch ValueError still see it


def test_available_memory_is_the_physical_memory():
    assert R.available_memory() == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert R.fmt_bytes(149 * 2 ** 30) == "149 GiB" and R.fmt_bytes(512) == "512 B"


def test_a_given_chunk_that_cannot_fit_is_refused_and_says_what_fits(monkeypatch):
    monkeypatch.setattr(R, "available_memory", lambda device=None: 4 << 30)  # a 4 GiB machine
    with pytest.raises(ResourceError, match=r"chunk=64 .*4 GiB \(at most \d+ draws per chunk fit\)") as info:
        plan_convergence("sde", width=1000, chunk=64)
    assert "chunk" in info.value.knobs
    plan = plan_convergence("sde", width=1000)  # the default chunk is lowered to fit instead
    est = plan.estimate()
    assert est.peak_bytes <= 4 << 30 and 1 <= plan.chunk < 64
    with pytest.raises(ResourceError, match="chunk"):
        plan_stability(width=1000, depths=[100], draws=100, chunk=100)
    assert plan_stability(width=1000, depths=[100], draws=100).estimate().peak_bytes <= 4 << 30


def test_default_plans_keep_their_chunks():
    # the chunk is part of the spec (and of the seeds): ordinary plans are unchanged
    assert plan_convergence("sde").chunk == 64 and plan_convergence("fbm", hurst=0.7).chunk == 64
    assert plan_stability().chunk == 50
    assert plan_stability(**{**STABILITY_PRESETS["criticality"]}).chunk == 13


def test_estimates_scale_with_draws_and_width():
    # linear in the draws of a chunk (the fixed part is small here), quadratic in the width of matrix weights
    a = plan_stability(width=100, depths=[1000], draws=5, chunk=5).estimate().peak_bytes
    b = plan_stability(width=100, depths=[1000], draws=10, chunk=10).estimate().peak_bytes
    c = plan_stability(width=200, depths=[1000], draws=5, chunk=5).estimate().peak_bytes
    assert 1.8 < b / a <= 2.0 + 1e-9 and 3.5 < c / a <= 4.0 + 1e-9
    # fbm: the stored fGn is quadratic in the width and linear in the draws; the sweep's chunk
    # streams (at most a block), and the fGn's noise is a sub-batch of 2 MiB
    f1 = plan_convergence("fbm", hurst=0.7, width=32, draws=8, chunk=4).estimate().peak_bytes
    f2 = plan_convergence("fbm", hurst=0.7, width=64, draws=8, chunk=4).estimate().peak_bytes
    f3 = plan_convergence("fbm", hurst=0.7, width=32, draws=8, chunk=8).estimate().peak_bytes
    assert 3.2 < f2 / f1 <= 4.0 + 1e-9 and 1.7 < f3 / f1 <= 2.0 + 1e-9, (f1, f2, f3)
    e = plan_phase([0.3, 0.7], [0.5], depth=100).estimate()
    assert e.tasks == 2 and e.networks == 2 * 1 * 5 * 2


def test_estimate_counts_tasks_and_networks():
    est = plan_convergence("sde", depths=[8, 16], draws=100, chunk=30, reference=64).estimate()
    assert (est.tasks, est.networks, est.chunk, est.steps) == (4, 200, 30, 64)
    assert "per task of 30 draws" in str(est)


_MEASURE = r"""
import json, sys, torch
from deeplimits.studies import estimate_stability, plan_stability
from deeplimits.studies.propagation.study import stability_task

def peak():  # VmHWM: this process's peak resident memory (ru_maxrss would include the forking parent's)
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))

spec = json.loads(sys.argv[1])
stability_task({**spec, "draws": 1, "depths": [8]}, 0)  # warm up (thread pools, kernels)
before = peak()
stability_task(spec, 0)
after = peak()
print(json.dumps({"grown": after - before, "estimate": estimate_stability(spec).peak_bytes}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
@pytest.mark.parametrize("driver", ["uniform", "fractional"])
def test_estimate_is_within_a_factor_two_of_the_measured_peak(driver):
    kw = {"hurst": 0.7} if driver == "fractional" else {}
    spec = plan_stability("res-3", dl.FractionalDriver(0.7) if kw else driver, width=100, n_in=16,
                          depths=[250, 500] if kw else [1000], betas=[0.5], draws=3, seed=0)
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _MEASURE, json.dumps(spec.to_dict())], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=1800)  # a hang guard only: loaded CI machines are slow
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["estimate"] > 200 * 2 ** 20  # large enough to dominate the allocator's noise
    assert 0.5 < m["grown"] / m["estimate"] < 2.0, m


_MEASURE_FGN = r"""
import json, sys, torch
from deeplimits import _resources as R
from deeplimits.paths import fgn
from deeplimits.studies.convergence import plan_convergence, run_task

def peak():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))

case = sys.argv[1]
if case == "fgn":  # float64 on the CPU: drawn a sub-batch of pairs at a time
    fgn(64, 0.7, (4,))
    before = peak()
    fgn(8192, 0.7, (4096,))
    estimate = R.fgn_bytes(8192, 4096, 8, sub_batched=True)
else:  # a task of the fbm convergence study: the fGn, then the sweep over it
    plan = plan_convergence("fbm", hurst=0.7, width=8, depths=[8, 16, 32], draws=64, chunk=64, reference=4096)
    run_task({**plan.to_dict(), "draws": 1}, 0)
    before = peak()
    run_task({**plan.to_dict(), "draws": 64}, 0)
    estimate = plan.estimate().peak_bytes
print(json.dumps({"grown": peak() - before, "estimate": estimate}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
@pytest.mark.parametrize("case", ["fgn", "convergence"])
def test_fgn_estimates_follow_the_sub_batched_sampler(case):
    """The fGn is written straight into the tensor it returns, its noise and FFT a 2 MiB sub-batch
    at a time (issue 40): the models count that, not the whole-batch temporaries of before
    (which made them 6x too high and lowered chunks, hence changed seeds, on machines they fit)."""
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _MEASURE_FGN, case], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=1800)  # a hang guard only
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["estimate"] > 100 * 2 ** 20  # large enough to dominate the allocator's noise
    assert 0.7 < m["grown"] / m["estimate"] < 1.5, m


def test_every_study_is_sized_by_its_model_in_the_memory_module():
    """One place for the memory models (issue 22): each plan's estimate is the model of
    deeplimits.studies.memory (or of its study package's ``memory`` module, issue 41) for its
    largest task, and no other module of the studies counts bytes (a ``*_bytes`` function
    elsewhere only hands over to a memory module)."""
    import ast
    import pathlib

    import torch

    from deeplimits.studies import memory as M
    from deeplimits.studies.convergence import memory as CM
    from deeplimits.studies import plan_scaling, plan_training
    from deeplimits.studies.propagation import memory as PM
    from deeplimits.studies.propagation.core import _phase_depths
    from deeplimits.studies.scaling.memory import scaling_bytes
    from deeplimits.studies.training.memory import training_bytes

    st = plan_stability("res-2", dl.make_driver("fractional", 0.6), width=6, n_in=4, depths=[8, 16], betas=[0.5, 1.0], draws=6, chunk=4)
    assert st.estimate().peak_bytes == PM.propagation_bytes("res-2", dl.make_driver("fractional", 0.6), 6, 4, [8, 16],
                                                            [0.5, 1.0], 1, 4, 4)
    ph = plan_phase([0.3, 0.7], [0.5], width=5, n_in=3, depth=40, draws=2, inputs=3)
    assert ph.estimate().peak_bytes == PM.propagation_bytes("res-3", dl.make_driver("fractional", 0.3), 5, 3,
                                                            sorted(_phase_depths(40)), [0.5], 3, 2, 4)
    cv = plan_convergence("fbm", hurst=0.7, width=4, depths=[4, 8], draws=8, chunk=4, reference=32)
    assert cv.estimate().peak_bytes == CM.convergence_bytes(cv.pair(), 4, 1, 32, [4, 8], 8, cv.device)
    tr = plan_training("synthetic", depth=4, width=3, epochs=1, lrs=[0.01, 0.1], seeds=2, chunk=3)
    assert tr.estimate().chunk == 3 and tr.estimate().peak_bytes == training_bytes(tr, 3) > M.INTERPRETER_BYTES
    sc = plan_scaling(depths=[2, 4], width=2, seeds=1, samples=8, max_epochs=1)
    assert sc.estimate().peak_bytes == scaling_bytes(sc, 4) > M.INTERPRETER_BYTES
    # the default chunk of a stability study: TASK_BYTES over the bytes per draw of its historical rule
    from deeplimits.studies.propagation.presets import TASK_BYTES

    per_draw = PM.default_draw_bytes("res-3", dl.make_driver("uniform"), 40, [10, 100], [0.5], 1, 4)
    assert plan_stability(depths=[10, 100], betas=[0.5], draws=10 ** 6).chunk == TASK_BYTES // per_draw
    studies = pathlib.Path(M.__file__).parent
    own = []
    for path in studies.rglob("*.py"):
        if path.name == "memory.py":  # the shared models, or a study package's own
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_bytes"):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                calls_memory = any(isinstance(n, ast.Name) and n.id.endswith("_bytes") for n in ast.walk(body[-1]))
                if len(body) > 2 or not calls_memory:
                    own.append(f"{path.name}:{node.name}")
    assert not own, f"memory models outside the studies' memory modules: {own}"
    assert torch.float32.itemsize == 4  # the item sizes used above
