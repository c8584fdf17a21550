"""The short commands against their floors and peers as whole processes (issue 57), in CPU time.

Every measurement is a child process of its own, read with ``os.wait4`` (user + system CPU seconds
and peak RSS of that child alone: the imports, the work, the statistics, the figures, the JSON);
each comparison runs one unmeasured round, then ``--pairs`` alternating rounds (command, then floor
or peer, then again), and reports the medians and the ratio of the medians with the load average
before and after. Only ratios measured in the same run mean much on a shared machine. The children
run with Python's bytecode cache on (``PYTHONPYCACHEPREFIX``, outside the tree), as an installed
package runs: this machine's sessions set ``PYTHONDONTWRITEBYTECODE``, which would make every
process compile the package's modules again (about 0.3 s of CPU that no installed copy pays).

* ``law``: ``deeplimits law --preset quick`` (and with ``--no-figures``) against its plain floor:
  the same normal draws (the same seeds and sub-streams, :func:`deeplimits._random.normal`), depths,
  test functions and estimator, written plainly in torch: per chunk of draws and segment of the
  path, the dyadic sums of the fine increments, the res-1 tanh networks of every depth with their
  weights ``sqrt(3) erf(G / sqrt 2)`` (uniform) and their control variates (the test functions'
  gradients in closed form), Euler-Maruyama on the three SDE grids, the test functions, the per-draw
  vector's sums and cross products and the kept norm ratios; no statistics, no store, no figure,
  torch on one thread. The floor's sums are checked against the study's (the same numbers).
* ``transfer``: ``deeplimits transfer --preset quick`` against the one-at-a-time loop as a whole
  command: a process that loads the digits task once and trains every configuration of the study
  (variant x rate x seed of every beta, optimiser and depth) alone, from the same initial network
  and with the same mini-batches, with ``torch.optim`` and one configuration per network, and
  writes the final losses as JSON.
* ``order``: ``deeplimits order --scheme euler-maruyama --problem linear-sde`` (its default
  depths 8..512, ``--draws``) against a torchsde script doing the same work: one
  ``BrownianInterval`` for all draws, one ``sdeint(method="euler")`` per depth on the grid ``k/L``,
  the exact solution from the interval's values, the mean errors and their standard errors printed.
* ``figures``: per command, the CPU time of its figures in the command's own process (the command
  run in-process with ``--figures``, its figure calls timed) over the command's whole CPU time.

Each command is measured as a user runs it (its figures drawn in the background after the JSON:
the process ends first, so their CPU time is not the process's; ``figures`` measures it), with
``--figures`` (drawn before the process ends: counted) and with ``--no-figures``.

Run from the repository root:

    PYTHONPATH=$PWD python benchmarks/bench_commands.py law [--pairs 3]
    PYTHONPATH=$PWD python benchmarks/bench_commands.py transfer [--pairs 3]
    PYTHONPATH=$PWD python benchmarks/bench_commands.py order [--pairs 3] [--draws 256]
    PYTHONPATH=$PWD python benchmarks/bench_commands.py figures
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


#: the children's environment: Python's bytecode cache on (as in an installed package, whose modules
#: are compiled once; this machine's sessions set PYTHONDONTWRITEBYTECODE), kept outside the tree
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "deeplimits-bench-pycache"))


def measure(cmd: list[str], cwd: str | None = None) -> dict:
    """One child: its CPU seconds (user + system) and peak RSS (``wait4``: that child alone), its
    standard output (through a file: no pipe to fill)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True, env=ENV)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {errors.strip().splitlines()[-3:]}")
    return dict(cpu=ru.ru_utime + ru.ru_stime, user=ru.ru_utime, sys=ru.ru_stime, rss=ru.ru_maxrss / 1024,
                wall=time.perf_counter() - t0, out=text)


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def pairs(named: dict, n: int) -> dict:
    """``n`` rounds of every ``{name: command}``, in turn, after one unmeasured round (the bytecode
    caches written); each name's CPU seconds and their median."""
    for make in named.values():
        with tempfile.TemporaryDirectory() as tmp:
            measure(*make(tmp))
    runs = {k: [] for k in named}
    for _ in range(n):
        for k, make in named.items():
            with tempfile.TemporaryDirectory() as tmp:
                cmd, cwd = make(tmp)
                runs[k].append(measure(cmd, cwd))
    return {k: dict(cpu=[r["cpu"] for r in rs], median=_median([r["cpu"] for r in rs]),
                    rss=max(r["rss"] for r in rs), sys_user=max(r["sys"] / r["user"] for r in rs), last=rs[-1])
            for k, rs in runs.items()}


def _report(rows: dict, base: str, load: float, what: str) -> None:
    print(f"{what}; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for k, r in rows.items():
        ratio = r["median"] / rows[base]["median"]
        print(f"  {k:38s} CPU s {' '.join(f'{c:6.2f}' for c in r['cpu'])}  median {r['median']:6.2f}  "
              f"{ratio:5.2f}x the {base}  peak RSS {r['rss']:5.0f} MB  sys/user {r['sys_user']:.3f}")


PY = sys.executable


def _cli(*argv):
    return lambda tmp: ([PY, "-m", "deeplimits", *argv, "--out", os.path.join(tmp, "run")], tmp)


# ----------------------------------------------------------------------------------------
# law: the plain floor
# ----------------------------------------------------------------------------------------

def law_floor(depths=(4, 8, 16, 32), fine=128, draws=65536, chunk=8192, width=4, samples=20000, seed=0) -> dict:
    """The quick preset's work written plainly (module docstring): per chunk, the sums and cross
    products of the per-draw vectors (test functions at every grid, then the control variates)."""
    import numpy as np
    import torch

    from deeplimits._random import chunk_seed, mix_seed, normal

    torch.set_num_threads(1)
    d, E, L0, dt = width, width * width, min(depths), torch.float32
    grids = list(depths) + [fine // 4, fine // 2, fine]
    seg = fine // L0
    sqrt3, root2 = math.sqrt(3.0), 1 / math.sqrt(2.0)
    n_chunks = -(-draws // chunk)
    keep = -(-samples // n_chunks)
    out = []
    for c in range(n_chunks):
        n, s0 = min(chunk, draws - c * chunk), chunk_seed(seed, c)
        h = [torch.ones(n, d, dtype=dt) for _ in grids]
        cv = torch.zeros(n, len(depths), 4, dtype=dt)
        for s in range(L0):
            z = normal((seg, n, E), mix_seed(s0, s), dt, None)
            lv, cur, r = {1: z}, z, 1
            while 2 * r <= fine // L0:
                cur = (cur[0::2] + cur[1::2]) * root2
                r *= 2
                lv[r] = cur
            for i, L in enumerate(grids):
                g, scale = lv[fine // L], d ** -0.5 / math.sqrt(L)
                for k in range(seg // (fine // L)):
                    t = torch.tanh(h[i])
                    if i < len(depths):  # a network: uniform weights sqrt(3) erf(G / sqrt 2), with controls
                        q = torch.erf(g[k] * root2) * sqrt3
                        V, D = q.view(n, d, d), (q - g[k]).view(n, d, d)
                        x = h[i]
                        grad = torch.stack([2 * x / d, 4 * x ** 3 / d, (2 * t * (1 - t * t) - torch.sin(x) / 2) / d,
                                            x / (x * x).sum(1, keepdim=True)], 1)  # (n, 4, d)
                        dt_ = torch.bmm(D, t.unsqueeze(-1)).squeeze(-1)  # (n, d): the weights' departure
                        cv[:, i] += scale * (grad * dt_.unsqueeze(1)).sum(-1)
                        h[i] = x + scale * torch.bmm(V, t.unsqueeze(-1)).squeeze(-1)
                    else:
                        h[i] = h[i] + scale * torch.bmm(g[k].view(n, d, d), t.unsqueeze(-1)).squeeze(-1)
        hs = torch.stack(h, 1)  # (n, grids, d)
        t = torch.tanh(hs)
        phis = torch.stack([(hs * hs).mean(-1), (hs ** 4).mean(-1), (t * t + torch.cos(hs) / 2).mean(-1),
                            torch.log(hs.norm(dim=-1)) - 0.5 * math.log(d)], 1)  # (n, phis, grids)
        x = torch.cat([phis.reshape(n, -1), cv.transpose(1, 2).reshape(n, -1)], 1).double().numpy()
        ratios = (hs[:, list(range(len(depths))) + [-1]].norm(dim=-1) / math.sqrt(d)).double().numpy()
        out.append({"n": n, "sum": x.sum(0), "outer": x.T @ x, "ratios": np.round(ratios[:keep], 7)})
    return {"sum": np.sum([o["sum"] for o in out], 0).tolist(), "outer": np.sum([o["outer"] for o in out], 0).tolist()}


def law_study_sums(draws=65536) -> dict:
    """The study's own sums over the same chunks (:func:`deeplimits.studies.law.study.chunk_values`)."""
    import numpy as np
    import torch

    from deeplimits.studies.law import plan_law
    from deeplimits.studies.law.study import chunk_values

    torch.set_num_threads(1)
    plan = plan_law(depths=[4, 8, 16, 32], fine=128, draws=draws)
    xs = [chunk_values(t.params, t.seed)[0] for t in plan.tasks()]
    return {"sum": np.sum([x.sum(0) for x in xs], 0).tolist()}


def bench_law(args) -> None:
    import numpy as np

    if args.check:  # the floor computes the study's numbers
        a = np.array(law_floor(draws=args.check)["sum"])
        b = np.array(law_study_sums(args.check)["sum"])
        print(f"floor against the study over {args.check} draws: max relative difference of the sums "
              f"{float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12))):.2e} ({len(a)} numbers)")
    load = os.getloadavg()[0]
    q = ("law", "--preset", "quick", "--quiet")
    rows = pairs({"deeplimits law --preset quick": _cli(*q), "  --figures (drawn before it ends)": _cli(*q, "--figures"),
                  "  --no-figures": _cli(*q, "--no-figures"),
                  "plain floor": lambda tmp: ([PY, __file__, "--child", "law-floor"], tmp)}, args.pairs)
    _report(rows, "plain floor", load, f"law --preset quick against its plain floor, {args.pairs} rounds")


# ----------------------------------------------------------------------------------------
# transfer: the one-at-a-time loop as a whole command
# ----------------------------------------------------------------------------------------

def transfer_loop(preset: str = "quick") -> None:
    """Every configuration of ``deeplimits transfer --preset PRESET`` trained alone (module
    docstring): per task ``(beta, optimizer, depth)`` the study's initial networks (its seed), then
    each variant x rate x seed copied out (:meth:`~deeplimits.training.ResidualNetwork.config`) and
    trained by itself with the study's rate, epochs, mini-batches and shuffling seed."""
    import types

    import torch

    from deeplimits.data import load_dataset
    from deeplimits.studies.transfer import plan_transfer
    from deeplimits.studies.transfer.presets import PRESETS, exponent_of, settings
    from deeplimits.studies.transfer.coords import tiled
    from deeplimits.studies.transfer.study import _initial_net
    from deeplimits.training import train

    torch.set_num_threads(1)
    p = PRESETS[preset]
    plan = plan_transfer(**{k: p[k] for k in ("depths", "width", "seeds", "lrs", "epochs", "samples")})
    d = load_dataset("digits", seed=plan.seed)
    data = types.SimpleNamespace(x_train=d.x_train[:plan.samples], y_train=d.y_train[:plan.samples],
                                 x_test=d.x_test, y_test=d.y_test, task="classification")
    classes = int(data.y_train.max()) + 1
    losses = []
    for task in plan.tasks():
        L, beta, opt = task.params["depth"], task.params["beta"], task.params["optimizer"]
        net0 = _initial_net(L, plan.width, classes, data, beta, plan.seeds, torch.Generator().manual_seed(task.seed))
        for _, _, variant in settings([beta], [opt]):
            p_exp = exponent_of(beta, opt, variant)
            for lr in plan.lrs:
                for j in range(plan.seeds):
                    r = train(tiled(net0.config(j), 1), data, lr=[2.0 ** lr * float(L) ** p_exp], optimizer=opt,
                              epochs=plan.epochs, batch_size=plan.batch_size, loss="cross_entropy",
                              lr_decay_halfway=False, seed=plan.seed)
                    losses.append(r.records[0]["train_loss"])
    print(json.dumps({"configurations": len(losses)}))


def bench_transfer(args) -> None:
    load = os.getloadavg()[0]
    q = ("transfer", "--preset", "quick", "--quiet")
    rows = pairs({"deeplimits transfer --preset quick": _cli(*q),
                  "  --figures (drawn before it ends)": _cli(*q, "--figures"), "  --no-figures": _cli(*q, "--no-figures"),
                  "one at a time": lambda tmp: ([PY, __file__, "--child", "transfer-loop"], tmp)}, args.pairs)
    _report(rows, "one at a time", load, f"transfer --preset quick against the one-at-a-time loop, {args.pairs} rounds")


# ----------------------------------------------------------------------------------------
# order: the torchsde script
# ----------------------------------------------------------------------------------------

def torchsde_script(draws: int, depths=tuple(2 ** k for k in range(3, 10)), seed: int = 1) -> None:
    """The torchsde way of issue 29 as a script: errors per depth with their standard errors, printed."""
    sys.path.insert(0, HERE)
    import numpy as np
    from bench_scheme_order import torchsde_way

    mx, tm = torchsde_way(list(depths), draws, seed)
    for j, L in enumerate(depths):
        print(f"{L:5d}  max {mx[:, j].mean():.5f} ± {mx[:, j].std(ddof=1) / np.sqrt(draws):.5f}  "
              f"terminal {tm[:, j].mean():.5f} ± {tm[:, j].std(ddof=1) / np.sqrt(draws):.5f}")


def bench_order(args) -> None:
    load = os.getloadavg()[0]
    base = ("order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--draws", str(args.draws))
    rows = pairs({"deeplimits order": _cli(*base), "  --figures (drawn before it ends)": _cli(*base, "--figures"),
                  "  --no-figures": _cli(*base, "--no-figures"),
                  "torchsde script": lambda tmp: ([PY, __file__, "--child", "torchsde", "--draws", str(args.draws)],
                                                  tmp)}, args.pairs)
    _report(rows, "torchsde script", load, f"order (depths 8..512, {args.draws} draws) as a process against the "
                                           f"torchsde script, {args.pairs} rounds")


# ----------------------------------------------------------------------------------------
# figures: their share of each command
# ----------------------------------------------------------------------------------------

FIGURE_COMMANDS = {
    "law --preset quick": ["law", "--preset", "quick"],
    "transfer --preset quick": ["transfer", "--preset", "quick"],
    "order (linear-sde, 256 draws)": ["order", "--scheme", "euler-maruyama", "--problem", "linear-sde"],
    "convergence --regime sde": ["convergence", "--regime", "sde"],
    "trained-limit --preset quick": ["trained-limit", "--preset", "quick"],
}


def figure_child(argv: list[str]) -> None:
    """One command in this process, its figure calls timed (``new_figure`` to the file written):
    prints ``{figures, command}`` CPU seconds as JSON, ``command`` from before its imports."""
    t0 = time.process_time()
    import deeplimits._figures as F
    from deeplimits.cli import main

    spent, open_ = [0.0], [None]
    new, save = F.new_figure, F.save_figure

    def timed_new(*a, **k):
        open_[0] = time.process_time()
        return new(*a, **k)

    def timed_save(fig, path):
        try:
            return save(fig, path)
        finally:
            spent[0] += time.process_time() - open_[0]
    F.new_figure, F.save_figure = timed_new, timed_save
    import deeplimits.plots as P  # the re-exported names too (the studies import them from here)

    P.new_figure, P.save_figure = timed_new, timed_save
    c0 = time.process_time()
    import matplotlib.figure  # noqa: F401 - its import is the figures' cost: timed as theirs below
    spent[0] += time.process_time() - c0
    main(argv + ["--figures"])
    print(json.dumps({"figures": spent[0], "command": time.process_time() - t0}))


def bench_figures(args) -> None:
    load = os.getloadavg()[0]
    print(f"figures' share of each command (CPU, in-process); load average {load:.2f}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for label, argv in FIGURE_COMMANDS.items():
        with tempfile.TemporaryDirectory() as tmp:
            r = measure([PY, __file__, "--child", "figures", "--", *argv, "--out", os.path.join(tmp, "run")], tmp)
        got = json.loads(r["out"].strip().splitlines()[-1])
        print(f"  {label:32s} figures {got['figures']:5.2f} s of {got['command']:6.2f} s "
              f"({100 * got['figures'] / got['command']:4.1f}%); the process {r['cpu']:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", choices=("law", "transfer", "order", "figures"))
    ap.add_argument("--pairs", type=int, default=3, help="rounds of each comparison (default 3)")
    ap.add_argument("--draws", type=int, default=256, help="order: draws (default 256, the command's default)")
    ap.add_argument("--check", type=int, default=0, help="law: first check the floor's sums against the study's "
                                                          "over this many draws")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1:] if "--" in argv else []
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.child == "law-floor":
        law_floor()
    elif args.child == "transfer-loop":
        transfer_loop()
    elif args.child == "torchsde":
        torchsde_script(args.draws)
    elif args.child == "figures":
        figure_child(rest)
    else:
        {"law": bench_law, "transfer": bench_transfer, "order": bench_order, "figures": bench_figures}[args.what](args)


if __name__ == "__main__":
    main()
