"""Benchmarks of the signal-propagation studies (issue 5), each against a peer in the same run.

stability: the published i.i.d. protocol: res-3, d = 40, n_in = 64, uniform i.i.d. weights,
    depths linspace(10, 1000, 10), beta in {0.25, 0.5, 1}, 50 draws, r_h and r_p.
    Target: at most 5 s (the paper's reference code needs about 230 s on this machine).
    Peer: the usual PyTorch code, one network per (depth, beta, draw), weights drawn per
    beta, p_k by autograd through all L layers.

phase: the full phase-diagram preset: res-3, d = 40, L = 1000, 51 H x 70 beta, 5 weight
    draws x 10 inputs per H. Target: at most 5 minutes on 2 cores. Peer: the same usual code
    (one network per (H, beta, draw), autograd), timed on a few cells and extrapolated to the
    grid (all cells cost the same: the depth is fixed); floor: drawing the weights alone.

criticality (issue 31): the command ``deeplimits stability --preset criticality`` (res-3,
    uniform weights, d = 100, L = 1000, beta = 1/2) with ``--draws N`` (default the preset's
    10^4), a fresh process, against the floor: drawing the same weights (every task's samples,
    the same seeds, generator and blocks) and nothing else, in this process, on ``--floor-draws``
    draws (default the same N) scaled to N (every task costs the same). Target: within 2x of the
    floor, at most 5 minutes on 2 cores, the quartiles of ||h_L|| / ||h_0|| within 0.02 of 1.21
    and 1.34, every condition of the high-probability bounds met.

The stability benchmark also times the command ``deeplimits stability`` (a fresh process: start,
imports, the study, its report and JSON) against the peer (issue 31: at least 100x as a command).

Run from the repository root:

    python benchmarks/bench_propagation.py stability [--peer-draws 50]
    python benchmarks/bench_propagation.py phase [--peer-cells 6]
    python benchmarks/bench_propagation.py criticality [--draws 10000] [--floor-draws 1000]
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

from deeplimits.paths import fgn
from deeplimits import phase_diagram, stability
from deeplimits.studies import PHASE_PRESETS, STABILITY_PRESETS

IID = STABILITY_PRESETS["iid"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def command_seconds(argv, json_path=None) -> float:
    """Wall seconds of ``deeplimits ARGV`` as a fresh process (from a scratch directory, with
    this checkout first on the path), writing its run under a fresh temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "deeplimits", *argv, "--out", os.path.join(tmp, "run"), "--quiet"]
        cmd += ["--json", json_path] if json_path else []
        t0 = time.perf_counter()
        subprocess.run(cmd, env={**os.environ, "PYTHONPATH": ROOT}, cwd=tmp, check=True, capture_output=True)
        return time.perf_counter() - t0


def usual_network(V, W, beta, x, A, B):
    """One network the usual way: autograd for p_0 and p_L. Returns (r_h, r_p)."""
    L = V.shape[0]
    h0 = (A @ x).requires_grad_(True)
    h = h0
    for k in range(L):
        h = h + L ** -beta * (V[k] @ torch.relu(W[k] @ h))
    h.retain_grad()
    loss = 0.5 * (B @ h).pow(2).sum()
    loss.backward()
    r_h = ((h - h0).norm() / h0.norm()).item()
    r_p = ((h0.grad - h.grad).norm() / h.grad.norm()).item()
    return r_h, r_p


def peer_stability(draws, d=40, n_in=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    a = math.sqrt(3.0 / d)
    for L in IID["depths"]:
        for beta in IID["betas"]:
            for _ in range(draws):
                V = (torch.rand(L, d, d, generator=g) * 2 - 1) * a
                W = (torch.rand(L, d, d, generator=g) * 2 - 1) * a
                x = torch.randn(n_in, generator=g)
                A = torch.randn(d, n_in, generator=g) / math.sqrt(n_in)
                B = torch.randn(1, d, generator=g) / math.sqrt(d)
                out.append((L, beta, *usual_network(V, W, beta, x, A, B)))
    return out


def bench_stability(args):
    kw = {k: v for k, v in IID.items() if k != "driver"}
    stability(**{**kw, "depths": [10], "draws": 2})  # warm-up
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        res = stability(**kw)
        times.append(time.perf_counter() - t0)
    t_ours = min(times)
    t_cmd = sorted(command_seconds(["stability"]) for _ in range(3))[1]
    t0 = time.perf_counter()
    rows = peer_stability(args.peer_draws)
    t_peer = time.perf_counter() - t0
    print(f"deeplimits: {t_ours:.2f} s best of {args.repeat} (all: {', '.join(f'{t:.2f}' for t in times)}; "
          f"target <= 5 s: {'PASS' if max(times) <= 5 else 'FAIL'})")
    print(f"peer (autograd, one network per draw, {args.peer_draws} draws): {t_peer:.1f} s -> "
          f"{t_peer / t_ours * 50 / args.peer_draws:.0f}x slower per draw")
    full = t_peer * 50 / args.peer_draws
    print(f"the command `deeplimits stability` (fresh process, median of 3): {t_cmd:.2f} s; the peer's 50 draws "
          f"{full:.1f} s -> {full / t_cmd:.0f}x as a command (target >= 100x: {'PASS' if full / t_cmd >= 100 else 'FAIL'})")
    t_torch = import_torch_seconds()
    print(f"a fresh `python -c 'import torch'` (median of 3): {t_torch:.2f} s: a command that imports torch is at "
          f"most {full / t_torch:.0f}x the peer; 100x would need the whole command within {full / 100:.2f} s")
    print(f"{'beta':>5} {'depth':>6} {'median r_h':>11} {'peer median':>12} {'median r_p':>11} {'peer median':>12}")
    for rec in res.records:
        if rec["depth"] in (10, 1000):
            pr = [r for r in rows if r[0] == rec["depth"] and r[1] == rec["beta"]]
            print(f"{rec['beta']:5.2f} {rec['depth']:6d} {rec['r_h']['median']:11.4g} {np.median([r[2] for r in pr]):12.4g} "
                  f"{rec['r_p']['median']:11.4g} {np.median([r[3] for r in pr]):12.4g}")
    return dict(ours_seconds=times, command_seconds=t_cmd, peer_seconds=t_peer, peer_draws=args.peer_draws,
                import_torch_seconds=t_torch)


def import_torch_seconds() -> float:
    """Median wall seconds of a fresh ``python -c 'import torch'`` (3 runs): the least any
    command of a torch package can take."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        times.append(time.perf_counter() - t0)
    return sorted(times)[1]


def criticality_floor(draws: int) -> float:
    """Seconds to draw the weights of ``draws`` draws of the criticality preset, task by task, as
    its tasks draw them (the same seeds, generator and blocks), and nothing else."""
    from deeplimits.blocks import make_block
    from deeplimits.studies.propagation import core as P
    from deeplimits.studies.propagation.memory import weight_layout
    from deeplimits.studies.propagation.study import plan_stability

    crit = {k: v for k, v in STABILITY_PRESETS["criticality"].items()}
    plan = plan_stability(**{**crit, "draws": draws})
    t0 = time.perf_counter()
    for task in plan.tasks():
        p = task.params
        g = torch.Generator().manual_seed(task.seed)
        samples, *_, top = P._draw(weight_layout(make_block(p["arch"]), p["width"]), P._spec_driver(p), p["width"], p["n_in"], p["depths"],
                                   p["draws"], p["inputs"], g, torch.float32)
        for s in samples.values():
            for _ in s.iter_weights(top):
                pass
    return time.perf_counter() - t0


def bench_criticality(args):
    draws = args.draws
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "c.json")
        t_cmd = command_seconds(["stability", "--preset", "criticality", "--draws", str(draws)], js)
        with open(js) as f:
            res = json.load(f)
    fd = args.floor_draws or draws
    t_floor = criticality_floor(fd) * draws / fd
    rec = res["records"][0]
    q = rec["norm_ratio_h"]
    quart = abs(q["q25"] - 1.21) <= 0.02 and abs(q["q75"] - 1.34) <= 0.02
    met = rec["hp_unmet"] == {"lower": [], "upper": []}
    print(f"deeplimits stability --preset criticality --draws {draws}: {t_cmd:.1f} s as a command (the study "
          f"{res['seconds']:.1f} s); target <= 300 s: {'PASS' if t_cmd <= 300 else 'FAIL'}")
    print(f"floor (drawing the same weights alone, {fd} draws scaled to {draws}): {t_floor:.1f} s -> command / "
          f"floor = {t_cmd / t_floor:.2f}, study / floor = {res['seconds'] / t_floor:.2f} (target <= 2: "
          f"{'PASS' if t_cmd / t_floor <= 2 else 'FAIL'})")
    print(f"quartiles of ||h_L||/||h_0||: {q['q25']:.4f} / {q['median']:.4f} / {q['q75']:.4f} (within 0.02 of "
          f"1.21 and 1.34: {'PASS' if quart else 'FAIL'}); conditions of the high-probability bounds all met: "
          f"{'PASS' if met else 'FAIL ' + str(rec['hp_unmet'])}")
    return dict(draws=draws, command_seconds=t_cmd, study_seconds=res["seconds"], floor_seconds=t_floor,
                floor_draws=fd, quartiles=[q["q25"], q["median"], q["q75"]], hp_unmet=rec["hp_unmet"], record=rec)


def bench_phase(args):
    full = PHASE_PRESETS["full"]
    d, L, draws, inputs = full["width"], full["depth"], full["draws"], full["inputs"]
    phase_diagram([0.5], [0.5], width=d, depth=50, draws=1, inputs=1)  # warm-up
    t0 = time.perf_counter()
    res = phase_diagram(**full)
    t_ours = time.perf_counter() - t0
    # floor: the fGn weights of the whole grid (2 matrices x d^2 paths x draws per H)
    t0 = time.perf_counter()
    for h in full["hursts"]:
        fgn(1024, h, (2, draws, d, d), dtype=torch.float32)
    t_floor = time.perf_counter() - t0
    # peer: one network per (H, beta, weight draw, input) the usual way, a few cells timed
    g = torch.Generator().manual_seed(0)
    cells = [(h, b) for h, b in zip(np.linspace(0.1, 0.9, args.peer_cells), np.linspace(0.2, 1.2, args.peer_cells))]
    t0 = time.perf_counter()
    for h, beta in cells:
        noise = fgn(L, float(h), (2, d, d), generator=g, dtype=torch.float32) / math.sqrt(d)
        V, W = noise.movedim(-1, 0).unbind(1)
        for _ in range(inputs):
            usual_network(V, W, float(beta), torch.randn(full["n_in"], generator=g),
                          torch.randn(d, full["n_in"], generator=g) / math.sqrt(full["n_in"]),
                          torch.randn(1, d, generator=g) / math.sqrt(d))
    per_network = (time.perf_counter() - t0) / (len(cells) * inputs)
    n_networks = len(full["hursts"]) * len(full["betas"]) * draws * inputs
    t_peer = per_network * n_networks
    print(f"deeplimits phase --preset full: {t_ours:.1f} s (target <= 300 s: {'PASS' if t_ours <= 300 else 'FAIL'})")
    print(f"floor (drawing the fGn weights alone): {t_floor:.1f} s -> ours / floor = {t_ours / t_floor:.1f}")
    print(f"peer (usual code, autograd): {per_network * 1e3:.0f} ms per network x {n_networks} networks = "
          f"{t_peer / 3600:.1f} h (extrapolated from {len(cells) * inputs} networks) -> {t_peer / t_ours:.0f}x")
    print(res.report())
    return dict(ours_seconds=t_ours, floor_seconds=t_floor, peer_seconds_per_network=per_network,
                peer_seconds_extrapolated=t_peer, beta_star=res.beta_star, beta_star_scaling=res.beta_star_scaling)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=["stability", "phase", "criticality"])
    ap.add_argument("--draws", type=int, default=STABILITY_PRESETS["criticality"]["draws"],
                    help="criticality: draws of the command")
    ap.add_argument("--floor-draws", type=int, help="criticality: draws of the floor (default --draws), scaled")
    ap.add_argument("--peer-draws", type=int, default=50, help="stability: draws of the peer")
    ap.add_argument("--peer-cells", type=int, default=6, help="phase: (H, beta) cells timed for the peer")
    ap.add_argument("--repeat", type=int, default=5, help="stability: timed runs of ours")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    out = {"stability": bench_stability, "phase": bench_phase, "criticality": bench_criticality}[args.which](args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
