"""The main job, ``deeplimits convergence`` (default study: sde, ode, fbm at H = 3/4), against its
floor (issue 40).

Two child processes, measured one after the other with ``os.wait4`` (CPU user and sys time,
peak RSS, minor page faults of each child alone):

* the floor: the work the job cannot avoid, with every buffer allocated once and torch on one
  thread: per regime and chunk of draws, the same normal draws in the same order (the same
  seeds and sub-streams, filled into one reused buffer), the fGn's multiply by the circulant
  eigenvalues and its FFT (fbm), the trees of level sums over each block of fine increments,
  and one reference loop (the reference scheme's step on every fine step; for the ode regime
  the adaptive reference solve itself);
* the job: ``python -m deeplimits convergence --out DIR --quiet --figures`` (the imports, the figure
  and the JSON included: ``--figures`` draws the figure before the process ends, as every command
  did before figures could be drawn in the background).

It prints both, the ratio job / floor in CPU time, and a PASS/FAIL line against the targets:
CPU time at most 2x the floor, peak RSS at most 600 MB, sys time at most 10% of user time.

Run (from the repository root):

    python benchmarks/bench_main_job.py
    python benchmarks/bench_main_job.py --regime fbm      # one regime of the study (floor and job)
    python benchmarks/bench_main_job.py --only job --out /tmp/x   # the job alone, keeping its output

The deeplimits measured is the one ``PYTHONPATH`` names (``PYTHONPATH=$PWD`` for a checkout).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

TARGET_RATIO, TARGET_RSS_MB, TARGET_SYS = 2.0, 600.0, 0.10


def _normals_into(out, seed: int, start: int, total: int) -> None:
    """Numbers ``start .. start + out.size`` of the stream of ``_random.normal`` of ``total`` numbers
    seeded ``seed`` (the same sub-streams: ``start`` and ``out.size`` multiples of its sub-stream size)."""
    import numpy as np

    from deeplimits import _random

    sub = _random._SUB
    assert start % sub == 0 and (out.size % sub == 0 or start + out.size == total)
    children = np.random.SeedSequence(seed).spawn(max(1, -(-total // sub)))
    first = start // sub

    def fill(i):
        np.random.Generator(np.random.PCG64(children[first + i])).standard_normal(
            out=out[i * sub:(i + 1) * sub], dtype=out.dtype)

    list(_random._executor().map(fill, range(-(-out.size // sub))))


def _levels_into(x, bufs: list, top: int) -> None:
    """The tree of pairwise sums of ``x`` up to ``top`` fine steps, into ``bufs``."""
    import torch

    r, cur = 1, x
    for b in bufs:
        if r >= top:
            break
        torch.add(cur[0::2], cur[1::2], out=b[:cur.shape[0] // 2])
        cur, r = b[:cur.shape[0] // 2], 2 * r


def _fgn_blocks(n_draws, shape, R, hurst, seed, state):
    """The fGn of ``n_draws x shape`` paths on ``R`` points, time-major, from sub-batches of
    pairs drawn into reused buffers; yields it scaled, in blocks of fine steps."""
    import math

    import numpy as np
    import torch

    from deeplimits._random import _empty, _SUB
    from deeplimits.paths.fractional import _circulant_sqrt_eigenvalues

    paths = n_draws * math.prod(shape)
    pairs = (paths + 1) // 2
    lam = _circulant_sqrt_eigenvalues(R, float(hurst))
    bp = min(pairs, max(1, _SUB // (4 * R)) * 16)
    if "fgn" not in state:
        state["noise"] = torch.from_numpy(_empty(bp * 4 * R, np.float64))
        state["fft"] = torch.empty((bp, 2 * R), dtype=torch.complex128)
        state["fgn"] = torch.from_numpy(_empty(R * paths, np.float64)).view(R, paths)
    out = state["fgn"]
    for p0 in range(0, pairs, bp):
        b = min(bp, pairs - p0)
        noise = state["noise"][:b * 4 * R]
        _normals_into(noise.numpy(), seed, p0 * 4 * R, pairs * 4 * R)
        noise = noise.view(b, 2 * R, 2)
        noise.mul_(lam[:, None])
        y = torch.fft.fft(torch.view_as_complex(noise), dim=-1, out=state["fft"][:b])[:, :R]
        out[:, p0:p0 + b].copy_(y.real.T)
        hi = min(paths, pairs + p0 + b)
        if hi > pairs + p0:
            out[:, pairs + p0:hi].copy_(y.imag.T[:, :hi - pairs - p0])
    unit = shape[-1] ** -0.5 * R ** -hurst
    c = max(1, (1 << 22) // paths)
    buf = state.setdefault("scaled", torch.empty((c, paths), dtype=torch.float64))
    for k0 in range(0, R, c):
        x = torch.mul(out[k0:k0 + c], unit, out=buf[:min(c, R - k0)])
        yield x.view(-1, n_draws, *shape)


def _brownian_blocks(n_draws, shape, R, seed, state):
    """The Brownian sample's blocks of fine increments (the same seeds), drawn into one buffer."""
    import math

    import numpy as np
    import torch

    from deeplimits._random import _empty, mix_seed
    from deeplimits.paths.base import _BLOCK_ELEMENTS, _pow2_floor

    m = n_draws * math.prod(shape)
    block = min(R, _pow2_floor(max(1, _BLOCK_ELEMENTS // m)))
    if "block" not in state:
        state["block"] = torch.from_numpy(_empty(block * m, np.float64))
    buf = state["block"][:block * m]
    for j in range(R // block):
        _normals_into(buf.numpy(), mix_seed(seed, j), 0, block * m)
        yield buf.mul_(shape[-1] ** -0.5 / R ** 0.5).view(block, n_draws, *shape)


def _floor_regime(regime: str, options: dict) -> None:
    import torch

    from deeplimits._random import chunk_seed, randn, seed_from, single_threaded_torch
    from deeplimits.studies.convergence import plan_convergence

    plan = plan_convergence(regime, **options)
    p, R, state = plan.pair(), plan.reference, {}
    with single_threaded_torch():
        for c, n in enumerate(plan.chunk_sizes):
            g = torch.Generator().manual_seed(chunk_seed(plan.seed, c))
            if not p.rough:
                s = p.sample(n, inputs=plan.inputs, generator=g, dtype=plan.dtype)
                p.solve_limit(s, s.h0, R)
                continue
            (name, drv), = p.drivers.items()
            shape = p._weight_layout(name)[0]
            seed = seed_from(g)
            blocks = (_fgn_blocks(n, shape, R, drv.hurst, seed, state) if drv.name == "fractional" else
                      _brownian_blocks(n, shape, R, seed, state))
            H = randn((n, plan.inputs, p.width), g, plan.dtype)
            step = p.limit.reference_step({name: SimpleNamespace(scale=shape[-1] ** -0.5)}, R)
            top = R // min(plan.depths)
            for x in blocks:
                if "levels" not in state:
                    state["levels"] = [torch.empty_like(x[:x.shape[0] >> k]) for k in range(1, x.shape[0].bit_length())]
                _levels_into(x, state["levels"], top)
                for i in range(x.shape[0]):
                    H = step(H, {name: x[i]})


def _floor() -> None:
    from deeplimits.studies.convergence.presets import DEFAULT_STUDY

    only = os.environ.get("BENCH_REGIME")
    for regime, options in DEFAULT_STUDY:
        if only in (None, regime):
            _floor_regime(regime, dict(options))


def _measure(cmd: list[str], env: dict | None = None, cwd: str | None = None) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{cmd} failed with status {proc.returncode}")
    return dict(user=ru.ru_utime, sys=ru.ru_stime, rss=ru.ru_maxrss / 1024, minflt=ru.ru_minflt,
                wall=time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--regime", choices=("sde", "ode", "fbm"), help="one regime of the default study")
    ap.add_argument("--only", choices=("floor", "job"), help="measure only one of the two")
    ap.add_argument("--out", help="the job's --out (default: a temporary directory)")
    ap.add_argument("--child", choices=("floor",), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _floor()
        return 0
    env = dict(os.environ, **({"BENCH_REGIME": args.regime} if args.regime else {}))
    rows = {}
    if args.only in (None, "floor"):
        rows["floor"] = _measure([sys.executable, __file__, "--child", "floor"], env)
    if args.only in (None, "job"):
        with tempfile.TemporaryDirectory() as tmp:
            out = args.out or tmp
            regime = ["--regime", args.regime] if args.regime else []
            # run from the temporary directory: the deeplimits that PYTHONPATH names, not the one in the current one
            rows["job"] = _measure([sys.executable, "-m", "deeplimits", "convergence", *regime, "--out",
                                    os.path.abspath(out), "--quiet", "--figures"], cwd=tmp)
    print(f"{'':6} {'user s':>8} {'sys s':>7} {'CPU s':>7} {'sys/user':>8} {'peak RSS MB':>12} {'minor faults':>13} "
          f"{'wall s':>7}")
    for name, r in rows.items():
        print(f"{name:6} {r['user']:8.2f} {r['sys']:7.2f} {r['user'] + r['sys']:7.2f} {r['sys'] / r['user']:8.3f} "
              f"{r['rss']:12.0f} {r['minflt']:13,d} {r['wall']:7.2f}")
    if len(rows) == 2:
        f, j = rows["floor"], rows["job"]
        ratio = (j["user"] + j["sys"]) / (f["user"] + f["sys"])
        checks = [(f"CPU job/floor {ratio:.2f} <= {TARGET_RATIO}", ratio <= TARGET_RATIO),
                  (f"peak RSS {j['rss']:.0f} MB <= {TARGET_RSS_MB:.0f} MB", j["rss"] <= TARGET_RSS_MB),
                  (f"sys/user {j['sys'] / j['user']:.3f} <= {TARGET_SYS}", j["sys"] <= TARGET_SYS * j["user"])]
        ok = all(c for _, c in checks)
        print(("PASS" if ok else "FAIL") + ": " + "; ".join(f"{t} {'ok' if c else 'FAIL'}" for t, c in checks))
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
