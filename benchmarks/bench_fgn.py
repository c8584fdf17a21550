"""Throughput and exactness of ``deeplimits.fgn`` against ``torchfbm`` and ``fbm`` (issue 2).

Measures, in one run:

1. Throughput in paths/second (best of ``--repeats`` timed calls, after one warm-up call) of
   * ``deeplimits.fgn(n, H, (paths,), dtype=...)``,
   * ``torchfbm.generate_davies_harte(n, H, size=(paths,), dtype=..., seed=...)``,
   * ``fbm.FBM(n, H, length=1, method='daviesharte').fgn()``, one path per call (float64
     numpy only), timed on ``--fbm-paths`` paths because it is slow.
2. Speed-up of deeplimits vs fbm (target >= 50x) and vs torchfbm (target >= 2x).
3. Exactness at H = 0.97 and at ``--hurst``: the lag-1 and lag-2 correlation of each generator
   against the exact fGn autocorrelation
   ``gamma(k) = (|k+1|^2H - 2|k|^2H + |k-1|^2H) / 2``.
   The estimator is the ratio of grand means
   ``r_k = mean_{p,i} x_{p,i} x_{p,i+k} / mean_{p,i} x_{p,i}^2``
   (divided by the empirical variance, not by 1: at H near 1 the per-path second moment
   fluctuates so much that dividing by it cancels most of the noise). Its Monte Carlo
   standard error is the delta-method one from the spread over paths,
   ``sd_p(N_p - r_k S_p) / (sqrt(P) * mean_p S_p)`` with ``N_p``, ``S_p`` the per-path means.
   The empirical variance ``mean x^2`` (exact value 1) is reported with its standard error
   ``sd_p(S_p) / sqrt(P)`` too. deeplimits PASSes if every one of these is within 4 standard
   errors of the exact value. fbm output is rescaled to unit variance by ``n**H``. For H close
   to 1 fbm's Davies-Harte embedding has negative eigenvalues and fbm falls back to Hosking's
   O(n^2) method (about 1 path/s at n = 1024), so its exactness check then uses n = 256.

Torch's thread count is left at its default. Everything is seeded.

Run (from the repository root):

    python benchmarks/bench_fgn.py                    # float32, n=1024, H=0.7, 20000 paths
    python benchmarks/bench_fgn.py --dtype float64 --json fgn64.json
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
import warnings

import fbm
import numpy as np
import torch
import torchfbm

import deeplimits

SEED = 12345
EXACT_HURST = 0.97
FBM_HOSKING_N = 256  # path length for fbm's exactness check when it falls back to Hosking
LAGS = (1, 2)
TOLERANCE_SE = 4.0
TARGET_VS_FBM = 50.0
TARGET_VS_TORCHFBM = 2.0


def exact_gamma(k: int, hurst: float) -> float:
    h2 = 2.0 * hurst
    return 0.5 * (abs(k + 1) ** h2 - 2.0 * abs(k) ** h2 + abs(k - 1) ** h2)


# ---------------------------------------------------------------------------------------
# Generators: each returns a (paths, n) float64 numpy array or tensor of unit-variance fGn
# ---------------------------------------------------------------------------------------

def make_deeplimits(n, hurst, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return lambda paths: deeplimits.fgn(n, hurst, (paths,), generator=g, dtype=dtype)


def make_torchfbm(n, hurst, dtype, seed):
    calls = iter(range(seed, seed + 10**9))  # a fresh seed for every call, reproducibly
    return lambda paths: torchfbm.generate_davies_harte(n, hurst, size=(paths,), dtype=dtype,
                                                        seed=next(calls))


def make_fbm(n, hurst, seed):
    """fbm draws from numpy's global RNG, one path per ``fgn()`` call, variance (1/n)^(2H)."""
    np.random.seed(seed)
    f = fbm.FBM(n=n, hurst=hurst, length=1, method="daviesharte")

    def sample(paths):
        return np.stack([f.fgn() for _ in range(paths)]) * n ** hurst

    return sample, f


# ---------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------

def paths_per_second(sample, paths: int, repeats: int) -> float:
    """Best of ``repeats`` timed calls of ``sample(paths)`` after one warm-up call."""
    sample(paths)
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        sample(paths)
        best = min(best, time.perf_counter() - t0)
    return paths / best


def correlations(x, hurst: float) -> dict:
    """Empirical variance and lag-k correlations with Monte Carlo standard errors."""
    x = torch.as_tensor(x).to(torch.float64)
    paths = x.shape[0]
    s = (x * x).mean(1)  # per-path second moment S_p
    s_bar = s.mean().item()
    out = {"paths": paths, "n": x.shape[1],
           "variance": {"estimate": s_bar, "exact": 1.0,
                        "se": s.std().item() / math.sqrt(paths)}}
    for k in LAGS:
        nk = (x[:, :-k] * x[:, k:]).mean(1)  # per-path lag-k product mean N_p
        r = nk.mean().item() / s_bar
        se = (nk - r * s).std().item() / (math.sqrt(paths) * s_bar)
        out[f"lag{k}"] = {"estimate": r, "exact": exact_gamma(k, hurst), "se": se}
    for v in out.values():
        if isinstance(v, dict):
            v["z"] = (v["estimate"] - v["exact"]) / v["se"]
    return out


def exactness(hurst, n, paths, fbm_paths, dtype) -> dict:
    res = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res["deeplimits"] = correlations(make_deeplimits(n, hurst, dtype, SEED + 1)(paths), hurst)
        res["torchfbm"] = correlations(make_torchfbm(n, hurst, dtype, SEED + 2)(paths), hurst)
    res["torchfbm"]["warnings"] = sorted({str(w.message) for w in caught})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sample, f = make_fbm(n, hurst, SEED + 3)
        first = sample(1)
    note = ""
    if f.method != "daviesharte":  # fell back to Hosking: O(n^2) per path, use shorter paths
        n_fbm = min(n, FBM_HOSKING_N)
        note = f"fbm fell back to '{f.method}' (negative embedding eigenvalues); used n={n_fbm}"
        sample, f = make_fbm(n_fbm, hurst, SEED + 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = sample(fbm_paths)
    else:
        x = np.concatenate([first, sample(fbm_paths - 1)])
    res["fbm"] = correlations(x, hurst)
    res["fbm"]["method"] = f.method
    res["fbm"]["note"] = note
    res["fbm"]["warnings"] = sorted({str(w.message) for w in caught})
    return res


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------

def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1024, help="path length")
    p.add_argument("--hurst", type=float, default=0.7, help="Hurst index for the timings")
    p.add_argument("--paths", type=int, default=20000,
                   help="paths per timed call and for the exactness check (deeplimits, torchfbm)")
    p.add_argument("--repeats", type=int, default=5, help="timed calls (best is kept)")
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--fbm-paths", type=int, default=200, help="paths per timed call for fbm")
    p.add_argument("--fbm-exact-paths", type=int, default=1000,
                   help="fbm paths for the exactness check")
    p.add_argument("--json", metavar="PATH", help="write all numbers to this JSON file")
    a = p.parse_args(argv)
    dtype = getattr(torch, a.dtype)
    torch.manual_seed(SEED)
    np.random.seed(SEED)

    print(f"deeplimits.fgn benchmark: n={a.n} H={a.hurst} paths={a.paths} repeats={a.repeats} "
          f"dtype={a.dtype}")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"python {platform.python_version()}, fbm {getattr(fbm, '__version__', '?')}, "
          f"torchfbm {getattr(torchfbm, '__version__', '?')}\n")

    # 1-3. throughput
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torchfbm may warn about clamped eigenvalues
        speed = {
            "deeplimits": paths_per_second(make_deeplimits(a.n, a.hurst, dtype, SEED),
                                           a.paths, a.repeats),
            "torchfbm": paths_per_second(make_torchfbm(a.n, a.hurst, dtype, SEED),
                                         a.paths, a.repeats),
            "fbm": paths_per_second(make_fbm(a.n, a.hurst, SEED)[0], a.fbm_paths, a.repeats),
        }
    print("Throughput (paths/s, best of repeats):")
    for name, v in speed.items():
        extra = f"  ({a.fbm_paths} paths per call, float64 numpy)" if name == "fbm" else ""
        print(f"  {name:<11}{v:14,.0f}{extra}")

    # 4. speed-up ratios
    ratios = {
        "vs_fbm": {"ratio": speed["deeplimits"] / speed["fbm"], "target": TARGET_VS_FBM},
        "vs_torchfbm": {"ratio": speed["deeplimits"] / speed["torchfbm"],
                        "target": TARGET_VS_TORCHFBM},
    }
    print("\nSpeed-up of deeplimits:")
    for name, r in ratios.items():
        r["pass"] = r["ratio"] >= r["target"]
        print(f"  {name:<12}{r['ratio']:9.2f}x   target >= {r['target']:g}x   {verdict(r['pass'])}")

    # 5. exactness
    exact = {}
    for h in dict.fromkeys([EXACT_HURST, a.hurst]):
        res = exactness(h, a.n, a.paths, a.fbm_exact_paths, dtype)
        dl = res["deeplimits"]
        res["deeplimits_pass"] = all(abs(dl[q]["z"]) <= TOLERANCE_SE
                                     for q in ("variance", *(f"lag{k}" for k in LAGS)))
        exact[str(h)] = res
        print(f"\nExactness at H={h} (correlation = mean x_i x_(i+k) / mean x_i^2; "
              f"+- is one standard error):")
        print(f"  {'generator':<11}{'paths x n':>12}  {'quantity':<9}{'estimate':>10}"
              f"{'+- se':>10}{'exact':>9}{'error':>10}{'z':>8}")
        for name in ("deeplimits", "torchfbm", "fbm"):
            r = res[name]
            for q in ("variance", *(f"lag{k}" for k in LAGS)):
                v = r[q]
                print(f"  {name:<11}{r['paths']:>6} x {r['n']:<4} {q:<9}{v['estimate']:10.4f}"
                      f"{v['se']:10.4f}{v['exact']:9.4f}{v['estimate'] - v['exact']:+10.4f}"
                      f"{v['z']:+8.1f}")
            for w in r.get("warnings", []):
                print(f"  {'':<11}warning: {w[:90]}")
            if r.get("note"):
                print(f"  {'':<11}note: {r['note']}")
        print(f"  deeplimits within {TOLERANCE_SE:g} standard errors of exact: "
              f"{verdict(res['deeplimits_pass'])}")

    results = {"config": {**vars(a), "torch": torch.__version__,
                          "threads": torch.get_num_threads(), "seed": SEED},
               "paths_per_second": speed, "speedup": ratios, "exactness": exact}
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=2)
        print(f"\nwrote {a.json}")
    return results


if __name__ == "__main__":
    main()
