"""What a calibration table's verdict is read from, kept: the draws, the mean errors, their
covariance and the power-law rate with its bootstrap interval of each table (and of each stage of
each run sized to decide), so that a calibration is read again under a changed verdict rule
without drawing again (docs/schemes.md, "How often the verdict is wrong").

A table's verdict (:func:`~.sized.table_result`) depends on its per-draw errors only through these
statistics (:func:`~deeplimits.studies.convergence.statistics.error_statistics`), and an exponent
off by ``m`` (every draw's errors times ``(L / L_0)^-m``) scales the means by ``(L / L_0)^-m``, the
covariance by its outer square and moves the rate and both ends of its interval by ``m`` (the same
bootstrap resamples, each a least-squares slope of the log means on ``log L``). The statistics of a
row are tiny beside its draws (the sde regime's 200 tables and 30 runs of 4 stages: 0.2 MB against
its draws' 50 MB) and do not depend on the rule: stored with the calibration
(``benchmarks/calibration_stats/``), a changed rule is measured again in minutes on any machine,
where stored draws (:mod:`.pools`) live on one. tests/test_table_stats.py checks that a table read
from its statistics gets :func:`~.sized.table_result`'s verdict at every reading.

A stored file is data: it is read with ``numpy.load(allow_pickle=False)`` after every member's
declared shape and type are checked against the row it claims to be."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import pathlib
import zipfile

import numpy as np

from ..._files import replace_atomically
from ...errors import DamagedFileError, ParameterError
from ..equivalence import MARGIN

__all__ = ["TableStats", "RowStats", "table_stats", "stats_path", "part_path", "join_runs", "MAX_TABLES_STORED"]

MAX_TABLES_STORED = 1_000_000
"""The most tables (or run stages) a stored file may declare (checked before anything is allocated)."""
MAX_BYTES_STORED = 256 * 2 ** 20
"""The most bytes one member of a stored file may declare (checked before anything is allocated)."""
_FIELDS = {"draws": 1, "error": 2, "cov": 3, "rate": 2}  # a field's dimensions


@dataclasses.dataclass(frozen=True)
class TableStats:
    """The statistics of ``T`` tables (module docstring): ``draws`` ``(T,)`` finite draws,
    ``error`` ``(T, k)`` mean errors, ``cov`` ``(T, k, k)`` their covariance, ``rate`` ``(T, 3)``
    the rate and its 95% bootstrap interval."""

    draws: np.ndarray
    error: np.ndarray
    cov: np.ndarray
    rate: np.ndarray

    def __len__(self) -> int:
        return len(self.draws)

    def result(self, case, i: int, *, shift: float = 0.0, margin: float = MARGIN, share: float = 1.0):
        """The :class:`~deeplimits.studies.convergence.result.ConvergenceResult` table ``i`` gets
        with its exponent off by ``shift``, read at ``margin`` and the share ``share`` of the
        levels: :func:`~.sized.table_result` of the table's errors times ``(L / L_0)^-shift``."""
        from ..convergence.result import ConvergenceResult

        L = np.asarray(case.depths, dtype=float)
        s = (L / L[0]) ** -shift
        n = int(self.draws[i])
        cov = self.cov[i] * np.outer(s, s)
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None)).tolist() if n > 1 else [math.nan] * len(L)
        error = (self.error[i] * s).tolist()
        rate, lo, hi = (float(x) + shift for x in self.rate[i])
        return ConvergenceResult(
            regime="calibration", hurst=None, width=1, activation="-", arch="-", corrected=False, inputs=1,
            reference=case.reference or case.depths[-1], seed=0, dtype="float64", theory_rate=case.order.rate,
            rate_note="", seconds=0.0, nested_reference=case.reference is not None, margin=margin,
            level_share=share, draws=n, depths=list(case.depths), error=error, stderr=se, terminal_error=error,
            terminal_stderr=se, rate=rate, rate_ci=[lo, hi], nonfinite=0,
            error_cov=cov.tolist() if n > 1 else None,
            expansion=[dataclasses.asdict(x) for x in case.order.expansion],
            remainder=dataclasses.asdict(case.order.omitted))

    def verdict(self, case, i: int, **kw) -> str:
        """The verdict of :meth:`result`."""
        return self.result(case, i, **kw).verdict

    def arrays(self, prefix: str) -> dict:
        """The fields as ``{prefix + name: array}`` (for :meth:`RowStats.save`)."""
        return {prefix + f: getattr(self, f) for f in _FIELDS}


def table_stats(case, tables) -> TableStats:
    """The statistics of the tables ``tables`` (an iterable of per-draw errors, each ``(draws,
    len(depths))``, its draws finite) as :func:`~.sized.table_result` computes them (bootstrap of
    200, seed 0)."""
    from ..convergence.statistics import error_statistics

    k, rows = len(case.depths), []
    for errors in tables:
        st = error_statistics(list(case.depths), errors, errors, 0, case.order, n_boot=200)
        cov = np.asarray(st["error_cov"], dtype=float) if st["error_cov"] is not None else np.full((k, k), math.nan)
        rows.append((st["draws"] - st["nonfinite"], st["error"], cov, [st["rate"], *st["rate_ci"]]))
    if not rows:
        return TableStats(np.zeros(0, int), np.zeros((0, k)), np.zeros((0, k, k)), np.zeros((0, 3)))
    d, e, c, r = zip(*rows)
    return TableStats(np.asarray(d, dtype=np.int64), np.asarray(e, dtype=float), np.stack(c).astype(float),
                      np.asarray(r, dtype=float))


@dataclasses.dataclass(frozen=True)
class RowStats:
    """A calibration row's statistics: its ``tables`` (:class:`TableStats`, one per table, in the
    order of the row's picks) and, with runs sized to decide, ``runs`` (one per stage of each run,
    run by run: run ``t``'s stage ``i`` at ``t * len(stages) + i``), the draws of each stage
    ``stages``, the CPU seconds each run had spent drawing at the end of each stage
    ``run_seconds`` ``(runs, stages)`` and the pool's ``pool_seconds``; ``meta``: what the
    statistics were drawn as (the case's name, ident, depths, draws, reference, seed, pool size,
    budget, the engine's fingerprint, torch's version)."""

    meta: dict
    tables: TableStats
    pool_seconds: float = 0.0
    runs: TableStats | None = None
    stages: tuple = ()
    run_seconds: np.ndarray | None = None

    def save(self, path) -> None:
        """Write the row to ``path`` (``.npz``, through a temporary file: a crash leaves the old one)."""
        arrays = {"meta": np.array(json.dumps({**self.meta, "pool_seconds": self.pool_seconds,
                                                "stages": list(self.stages)}))}
        arrays.update(self.tables.arrays("tables_"))
        if self.runs is not None:
            arrays.update(self.runs.arrays("runs_"))
            arrays["run_seconds"] = np.asarray(self.run_seconds, dtype=float)
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, lambda f: np.savez_compressed(f, **arrays))

    @classmethod
    def load(cls, path) -> "RowStats":
        """The row stored at ``path``: every member's declared shape and type checked (module
        docstring) before it is read; a :class:`~deeplimits.errors.DamagedFileError` (one line naming
        ``path``) for a file that is not such a row."""
        path = pathlib.Path(path)
        try:
            with zipfile.ZipFile(path) as z:
                heads = {n[:-4]: _header(z, n) for n in z.namelist() if n.endswith(".npy")}
                meta = _meta(z, heads)
                k = len(meta["depths"])
                tables = _stats(z, heads, "tables_", k)
                runs = run_seconds = None
                stages = tuple(int(x) for x in meta["stages"])
                if "runs_draws" in heads:
                    runs = _stats(z, heads, "runs_", k)
                    if not stages or len(runs) % len(stages):
                        raise ValueError(f"{len(runs)} run stages for {len(stages)} stages a run")
                    run_seconds = _member(z, heads, "run_seconds", (len(runs) // len(stages), len(stages)), np.float64)
                pool_seconds = float(meta.get("pool_seconds", 0.0))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError, MemoryError, EOFError,
                zipfile.BadZipFile) as exc:
            why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise DamagedFileError(path, f"stats file {str(path)!r} is not a calibration row's statistics: {why}") from None
        return cls(meta, tables, pool_seconds, runs, stages, run_seconds)

    def check(self, case) -> None:
        """A :class:`~deeplimits.errors.ParameterError` naming ``stats`` (one line) unless these
        statistics were drawn as ``case`` is: its name, depths, draws a table and reference (and its
        ident, where both have one)."""
        m = self.meta
        want = dict(case=case.name, depths=[int(x) for x in case.depths], draws=int(case.draws), reference=case.reference)
        have = {key: m.get(key) for key in want}
        if m.get("ident") is not None and case.ident is not None:
            want["ident"], have["ident"] = case.ident, m["ident"]
        diff = [f"{key} {have[key]!r}, not {want[key]!r}" for key in want if have[key] != want[key]]
        if diff:
            raise ParameterError("stats", f"stats of {m.get('case')!r} were drawn as another case ({'; '.join(diff)}): "
                                          "draw them again")


def stats_path(root, name: str) -> pathlib.Path:
    """Where the statistics of the case ``name`` lie under the directory ``root``."""
    return pathlib.Path(root) / ("".join(c if c.isalnum() or c in "-.=" else "_" for c in name) + ".npz")


def part_path(root, name: str, runs: range) -> pathlib.Path:
    """Where the runs ``runs`` of the case ``name``, drawn as a part of its row, lie under ``root``."""
    return stats_path(root, f"{name}.runs-{runs.start}-{runs.stop}")


def join_runs(root, name: str) -> RowStats:
    """Join the parts of the row ``name`` under ``root`` (:func:`part_path`, each drawn by
    :func:`~.calibration.draw_runs`) to its row's statistics (:func:`stats_path`: its tables, and the
    runs it holds already, runs ``0 .. k - 1``): the parts must continue those runs without a gap or
    an overlap (``k .. m - 1``), drawn as the same case with the same seed, budget and stages.
    The joined row is written in place of the row's file (through a temporary file), then the parts
    are removed; returns it (its meta's ``parts``: the ranges joined, and ``runs_engines``: the parts'
    engines, where one differs from the row's). A :class:`~deeplimits.errors.ParameterError` naming
    ``stats`` (one line) for parts that do not continue the row, before anything is written."""
    root = pathlib.Path(root)
    where = stats_path(root, name)
    if not where.exists():
        raise ParameterError("stats", f"stats: no statistics of {name!r} at {str(where)!r} to join runs to: "
                                      "draw the row's tables first")
    row, parts = RowStats.load(where), _parts(root, name)
    k = 0 if row.runs is None else len(row.run_seconds)
    same = ("case", "ident", "depths", "draws", "reference", "seed")
    engines = set(row.meta.get("runs_engines", []))
    for runs, part, path in parts:
        diff = [f"{key} {part.meta.get(key)!r}, not {row.meta.get(key)!r}" for key in same
                if part.meta.get(key) != row.meta.get(key)]
        if row.runs is not None:
            diff += [f"{key} {x!r}, not {y!r}" for key, x, y in (("budget", part.meta.get("budget"), row.meta.get("budget")),
                                                                   ("stages", list(part.stages), list(row.stages)))
                     if x != y]
        if diff:
            raise ParameterError("stats", f"stats: the part {path.name} was drawn otherwise than the row of {name!r} "
                                          f"({'; '.join(diff)})")
        if runs.start != k:
            raise ParameterError("stats", f"stats: the part {path.name} holds runs {runs.start}..{runs.stop - 1} where "
                                          f"the row of {name!r} needs runs from {k} on, without a gap or an overlap")
        if row.runs is None:
            row = dataclasses.replace(row, meta={**row.meta, "budget": part.meta["budget"]}, stages=part.stages,
                                      runs=part.runs, run_seconds=part.run_seconds)
        else:
            joined = TableStats(*(np.concatenate([getattr(row.runs, f), getattr(part.runs, f)]) for f in _FIELDS))
            row = dataclasses.replace(row, runs=joined, run_seconds=np.concatenate([row.run_seconds, part.run_seconds]))
        if part.meta.get("engine") != row.meta.get("engine"):
            engines.add(part.meta.get("engine"))
        k = runs.stop
    ranges = row.meta.get("parts", []) + [[r.start, r.stop] for r, _, _ in parts]
    row = dataclasses.replace(row, meta={**row.meta, "parts": ranges, **({"runs_engines": sorted(engines)} if engines else {})})
    row.save(where)
    for _, _, path in parts:
        path.unlink()
    return row


def _parts(root: pathlib.Path, name: str) -> list:
    """``(runs, part, path)`` of each part of the row ``name`` under ``root``, by their first run: each
    holding the runs its name says, and runs alone (:func:`join_runs`)."""
    stem = stats_path(root, name).name[:-len(".npz")] + ".runs-"
    parts = []
    for path in root.glob(stem + "*.npz"):
        part, runs = RowStats.load(path), None
        ab = part.meta.get("runs")
        if isinstance(ab, list) and len(ab) == 2 and all(type(x) is int for x in ab) and 0 <= ab[0] < ab[1]:
            runs = range(*ab)
        if runs is None or part_path(root, name, runs).name != path.name:
            raise ParameterError("stats", f"stats: the part {path.name} does not say which runs it holds as its name "
                                          f"does (meta runs {ab!r:.40})")
        if part.runs is None or len(part.run_seconds) != len(runs) or len(part.tables):
            raise ParameterError("stats", f"stats: the part {path.name} does not hold runs {runs.start}..{runs.stop - 1} "
                                          "alone (a part holds runs, no table)")
        parts.append((runs, part, path))
    if not parts:
        raise ParameterError("stats", f"stats: no parts of {name!r} ({stem}A-B.npz) under {str(root)!r}")
    return sorted(parts, key=lambda x: x[0].start)


def _header(z: zipfile.ZipFile, name: str) -> tuple:
    """``(shape, dtype)`` a member declares, read from its header only."""
    with z.open(name) as f:
        head = io.BytesIO(f.read(4096))
    major, _ = np.lib.format.read_magic(head)
    read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
    shape, _, dtype = read(head)
    return tuple(shape), dtype


def _member(z, heads, name: str, shape: tuple, dtype) -> np.ndarray:
    """Member ``name`` after its declared ``shape`` and exact ``dtype`` (and its size, at most
    :data:`MAX_BYTES_STORED`) are checked."""
    declared, have = heads[name]
    if declared != shape or have != np.dtype(dtype):
        raise ValueError(f"{name} declares shape {declared} of {have}, expected {shape} of {np.dtype(dtype)}")
    if int(np.prod(shape, dtype=np.int64)) * have.itemsize > MAX_BYTES_STORED:
        raise ValueError(f"{name} declares {shape} of {have}: more than {MAX_BYTES_STORED} bytes")
    with z.open(name + ".npy") as f:
        out = np.lib.format.read_array(f, allow_pickle=False)
    if out.shape != shape:
        raise ValueError(f"{name} holds shape {out.shape}, expected {shape}")
    return out


def _meta(z, heads) -> dict:
    declared, dtype = heads["meta"]
    if declared != () or dtype.kind != "U" or dtype.itemsize > 4 * 100_000:
        raise ValueError(f"meta declares shape {declared} of {dtype}, expected a text")
    with z.open("meta.npy") as f:
        meta = json.loads(str(np.lib.format.read_array(f, allow_pickle=False)))
    if not isinstance(meta, dict):
        raise ValueError("meta is not a JSON object")
    depths, stages = meta.get("depths"), meta.get("stages", [])
    if not (isinstance(depths, list) and 1 <= len(depths) <= 64 and all(isinstance(x, int) for x in depths)):
        raise ValueError("meta: depths must be a list of 1 to 64 integers")
    if not (isinstance(stages, list) and len(stages) <= 64 and all(isinstance(x, int) for x in stages)):
        raise ValueError("meta: stages must be a list of at most 64 integers")
    for key in ("pool", "budget", "pool_seconds"):
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value < 0):
            raise ValueError(f"meta: {key} must be a number >= 0, got {value!r:.40}")
    return meta


def _stats(z, heads, prefix: str, k: int) -> TableStats:
    declared = heads[prefix + "draws"][0]
    if len(declared) != 1 or declared[0] > MAX_TABLES_STORED:
        raise ValueError(f"{prefix}draws declares shape {declared}, at most ({MAX_TABLES_STORED},)")
    t = declared[0]
    shapes = {"draws": (t,), "error": (t, k), "cov": (t, k, k), "rate": (t, 3)}
    return TableStats(**{f: _member(z, heads, prefix + f, shapes[f], np.int64 if f == "draws" else np.float64)
                         for f in _FIELDS})
