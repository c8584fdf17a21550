"""Stored draws of the calibration (``python benchmarks/calibration_table.py --pools DIR``): a
case's per-draw errors cost almost all of its calibration's time (an fBm regime's 51,200 draws
about 25 minutes of CPU, its 1,200 verdicts about 20 s), and they do not depend on the verdict's
rule. A store keeps every sample a calibration draws, keyed by the case (its name and what its
builder was given), the draws, the seed, the package's code and the versions of torch and numpy,
so that a changed rule is measured again on the same draws in minutes.

The key's code part is the SHA-256 of every module of the package except the verdict's own
(the whole modules of :data:`~.sized.RULE`, and the command line and the plots): an edited engine
draws again; an edited verdict reads the stored draws. A stored file is data: it is read with
``numpy.load(allow_pickle=False)`` after its declared shape is checked against the request."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import pathlib
import time

import numpy as np

from ..._files import replace_atomically

__all__ = ["PoolStore", "engine_fingerprint", "code_fingerprint"]

_PKG = pathlib.Path(__file__).resolve().parents[2]
#: the modules that do not draw errors: the verdict's (whole modules of RULE), the command line, the plots,
#: the calibration's reading of its draws (the seeds and counts it asks for are in the key)
_SKIP = ("cli/", "plots.py", "_figures.py", "_figure_data.py", "studies/timing.py",
         *(f"studies/scheme_order/{m}.py" for m in ("pools", "report", "plots", "calibration", "sized", "result", "table_stats")))


@functools.lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """The code that draws a case's errors: SHA-256 (16 hex digits) of the package's modules except
    the verdict's and those that draw nothing (module docstring)."""
    return code_fingerprint(_PKG)


def code_fingerprint(package) -> str:
    """:func:`engine_fingerprint` of the package directory ``package`` (a copy of it, in a test)."""
    from .sized import RULE

    package = pathlib.Path(package)
    rule = {p.replace(".", "/") + ".py" for p in RULE if ":" not in p}
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel in rule or rel.startswith(_SKIP):
            continue
        h.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


class PoolStore:
    """A directory of stored samples: :meth:`sample` returns the stored draws of a request, or draws
    them and stores them with the CPU seconds they took (:attr:`reused_seconds` adds them up for
    the draws read back, so a calibration still reports what its draws cost). Only a case that
    declares what its draws depend on (:attr:`~.cases.Case.ident`, as the shipped cases do) is
    stored; another is drawn every time."""

    def __init__(self, root) -> None:
        self.root = pathlib.Path(root)
        self.hits = self.misses = 0
        self.reused_seconds = 0.0

    def key(self, case, draws: int, seed: int) -> str | None:
        """The file name of a request: the case's name and :attr:`~.cases.Case.ident`, its depths,
        declared order and reference, the draws, the seed, the engine's code and the versions of
        torch and numpy (``None``: a case without an ident, never stored)."""
        if case.ident is None:
            return None
        import torch

        ident = json.dumps([case.name, case.ident, list(case.depths), case.order.expansion_text, case.reference,
                            int(draws), int(seed), engine_fingerprint(), torch.__version__, np.__version__])
        slug = "".join(c if c.isalnum() or c in "-." else "_" for c in case.name)
        return f"{slug}-{hashlib.sha256(ident.encode()).hexdigest()[:16]}.npy"

    def sample(self, case, draws: int, seed: int, **kw) -> np.ndarray:
        """``case.sample(draws, seed, **kw)``, from the store when it holds it."""
        name = self.key(case, draws, seed)
        if name is None:
            return case.sample(draws, seed, **kw)
        path = self.root / name
        stored = self._read(path, (draws, len(case.depths)))
        if stored is not None:
            self.hits += 1
            self.reused_seconds += stored[1]
            return stored[0]
        self.misses += 1
        t0 = time.process_time()
        out = np.asarray(case.sample(draws, seed, **kw), dtype=np.float64)
        seconds = time.process_time() - t0
        if out.shape == (draws, len(case.depths)):
            self.root.mkdir(parents=True, exist_ok=True)
            replace_atomically(path, lambda f: np.save(f, out, allow_pickle=False))  # a crash leaves no half-written file
            replace_atomically(path.with_suffix(".json"), lambda f: f.write(json.dumps({"seconds": seconds}).encode()))
        return out

    @staticmethod
    def _read(path: pathlib.Path, shape: tuple) -> tuple | None:
        """``(draws, seconds)`` of a stored file that declares exactly ``shape`` of float64 (checked
        before loading, and again after); ``None`` for a missing, foreign or damaged file (drawn
        again). The seconds: the sidecar's when finite and not negative, else 0."""
        try:
            with open(path, "rb") as f:
                major, _ = np.lib.format.read_magic(f)
                read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                declared, _, dtype = read(f)
            if tuple(declared) != shape or dtype != np.float64:
                return None
            out = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return None
        if out.shape != shape or out.dtype != np.float64:
            return None
        seconds = 0.0
        try:
            side = path.with_suffix(".json")
            if side.stat().st_size < 1000:
                value = json.loads(side.read_text()).get("seconds", 0.0)
                seconds = float(value) if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0 else 0.0
        except (OSError, ValueError, AttributeError):
            pass
        return out, seconds
