"""Stored draws of the calibration (``python benchmarks/calibration_table.py --pools DIR``): a
case's per-draw errors cost almost all of its calibration's time (an fBm regime's 51,200 draws
about 25 minutes of CPU, its 1,200 verdicts about 20 s), and they do not depend on the verdict's
rule. A store keeps every sample a calibration draws, keyed by the case, the draws, the seed and
the code that draws them, so that a changed rule is measured again on the same draws in seconds.

The key's code part is the SHA-256 of every module of the package except the verdict's own
(the whole modules of :data:`~.sized.RULE`, and the command line and the plots): an edited engine
draws again; an edited verdict reads the stored draws. A stored file is data: it is read with
``numpy.load(allow_pickle=False)`` after its declared shape is checked against the request."""

from __future__ import annotations

import functools
import hashlib
import json
import pathlib
import time

import numpy as np

__all__ = ["PoolStore", "engine_fingerprint"]

_PKG = pathlib.Path(__file__).resolve().parents[2]
#: the modules that do not draw errors: the verdict's (whole modules of RULE), the command line, the plots,
#: the calibration's reading of its draws (the seeds and counts it asks for are in the key)
_SKIP = ("cli/", "plots.py", "_figures.py", "_figure_data.py", "studies/timing.py",
         *(f"studies/scheme_order/{m}.py" for m in ("pools", "report", "plots", "calibration", "sized", "result")))


@functools.lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """The code that draws a case's errors: SHA-256 (16 hex digits) of the package's modules except
    the verdict's and those that draw nothing (module docstring)."""
    from .sized import RULE

    rule = {p.replace(".", "/") + ".py" for p in RULE if ":" not in p}
    h = hashlib.sha256()
    for path in sorted(_PKG.rglob("*.py")):
        rel = path.relative_to(_PKG).as_posix()
        if rel in rule or rel.startswith(_SKIP):
            continue
        h.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


class PoolStore:
    """A directory of stored samples: :meth:`sample` returns the stored draws of a request, or draws
    them and stores them with the CPU seconds they took (:attr:`reused_seconds` adds them up for
    the draws read back, so a calibration still reports what its draws cost)."""

    def __init__(self, root) -> None:
        self.root = pathlib.Path(root)
        self.hits = self.misses = 0
        self.reused_seconds = 0.0

    def key(self, case, draws: int, seed: int) -> str:
        """The file name of a request: the case, its depths and declared order, the draws, the seed
        and the engine's code."""
        ident = json.dumps([case.name, list(case.depths), case.order.expansion_text, case.reference, int(draws),
                            int(seed), engine_fingerprint()])
        slug = "".join(c if c.isalnum() or c in "-." else "_" for c in case.name)
        return f"{slug}-{hashlib.sha256(ident.encode()).hexdigest()[:16]}.npy"

    def sample(self, case, draws: int, seed: int, **kw) -> np.ndarray:
        """``case.sample(draws, seed, **kw)``, from the store when it holds it."""
        path = self.root / self.key(case, draws, seed)
        if path.exists():
            with open(path, "rb") as f:
                major, _ = np.lib.format.read_magic(f)
                read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
                shape, _, dtype = read(f)
            if len(shape) == 2 and shape[0] <= draws and shape[1] == len(case.depths) and dtype == np.float64:
                self.hits += 1
                seconds = path.with_suffix(".json")
                if seconds.exists() and seconds.stat().st_size < 1000:
                    self.reused_seconds += float(json.loads(seconds.read_text()).get("seconds", 0.0))
                return np.load(path, allow_pickle=False)
        self.misses += 1
        t0 = time.process_time()
        out = np.asarray(case.sample(draws, seed, **kw), dtype=np.float64)
        self.root.mkdir(parents=True, exist_ok=True)
        path.with_suffix(".json").write_text(json.dumps({"seconds": time.process_time() - t0}))
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, out, allow_pickle=False)
        tmp.replace(path)  # a crash leaves no half-written pool
        return out
