"""Plan-time resource estimates: every study is sized before any work, and refused at once
(:class:`~deeplimits._validate.ResourceError`) when one task cannot fit in memory or the run
has too many tasks or sequential steps to finish.

The estimates are arithmetic on the sizes (no allocation), so a refusal takes microseconds
whatever the request. Bytes are counted from what the code holds at its peak: weight samples
(``layers x draws x entries``), stored hidden states (``draws x columns x width`` per layer),
fGn temporaries (:func:`fgn_bytes`) and streamed blocks.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Callable, Sequence

from .errors import ResourceError

__all__ = ["Estimate", "available_memory", "fmt_bytes", "fgn_bytes", "fgn_batch_pairs", "FGN_BATCH", "require_memory", "require_count",
           "fit_chunk", "MAX_TASKS", "MAX_STEPS", "MAX_CONFIGS", "MAX_TRAIN_STEPS", "KEPT_NUMBER_BYTES",
           "require_kept"]

#: at most this many tasks (chunks of draws, Hurst indices) in one run
MAX_TASKS = 1_000_000
#: at most this many sequential steps (layers or fine grid steps) in one task
MAX_STEPS = 1 << 26
#: at most this many trained networks (configurations) in one run: each is a record in the run
#: store and in the result, and an entry of its task (together about 1 KiB of memory each)
MAX_CONFIGS = 1_000_000
#: at most this many layer passes in one training task (one pass: a mini-batch forward and
#: backward through one layer, counted ``epochs x batches per epoch x depth``): 2^28 = 2.7e8,
#: about 11 hours at the ~150 us per pass measured on a 2-core CPU (res-1 at d = 30, batch 128,
#: or the inside model at d = 10, batch 32); the largest preset task (``scaling --preset
#: published``: 300 epochs x 26 batches x 9100 layers = 7.1e7) is a quarter of it
MAX_TRAIN_STEPS = 1 << 28
#: the bytes one number a result keeps costs at its peak: in the task's JSON text, in the store, as a
#: Python float in a list and in a float64 array, each at once while a result is summarised
KEPT_NUMBER_BYTES = 64


@dataclasses.dataclass(frozen=True)
class Estimate:
    """What a planned study needs: ``peak_bytes`` of memory for its largest task (``chunk``
    draws, or trained configurations: ``unit``), its number of ``tasks`` and of ``networks``
    evaluated (draws x depths [x betas x Hurst indices]) or trained, ``steps``: the sequential
    steps of one task (layer passes of a training task), and ``available``: the machine's
    memory in bytes (:func:`available_memory`)."""

    peak_bytes: int
    tasks: int
    networks: int
    chunk: int
    steps: int
    available: int
    unit: str = "draw"

    def __str__(self) -> str:
        return (f"~{fmt_bytes(self.peak_bytes)} per task of {self.chunk} {self.unit}{'s' * (self.chunk != 1)}, "
                f"{self.tasks} task{'s' * (self.tasks != 1)}, {self.networks} networks "
                f"(this machine has {fmt_bytes(self.available)})")


def available_memory(device=None) -> int:
    """Bytes of memory a task may use: the machine's physical memory (``SC_PAGE_SIZE *
    SC_PHYS_PAGES``) on the CPU; free device memory (``torch.cuda.mem_get_info``) for a CUDA
    device."""
    if device is not None and str(device).startswith("cuda"):
        import torch

        return int(torch.cuda.mem_get_info(device)[0])
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8 << 30


def fmt_bytes(n: float) -> str:
    """``n`` bytes with a binary unit, three significant digits (``'149 GiB'``)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 1024 or unit == "EiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} EiB"  # pragma: no cover


#: real numbers of complex white noise per sub-batch of :func:`~deeplimits.paths.fgn` on the CPU in
#: float64 (2 MiB): its FFTs are done a sub-batch of pairs of paths at a time, in reused buffers
FGN_BATCH = 1 << 18


def fgn_batch_pairs(n: int, pairs: int, sub_batched: bool) -> int:
    """Pairs of paths per FFT of :func:`~deeplimits.paths.fgn` for ``n`` points: all of them, or
    (``sub_batched``: the CPU in float64, drawn by sub-streams) as many as fill :data:`FGN_BATCH`."""
    return max(1, min(pairs, FGN_BATCH // (4 * n))) if sub_batched else pairs


def fgn_bytes(n: int, paths: int, item: int, *, sub_batched: bool = False) -> int:
    """Peak bytes of :func:`~deeplimits.paths.fgn` for ``paths`` paths of ``n`` points.

    The circulant eigenvalues take about ``120 n`` bytes (float64 autocovariance, its
    length-``2n`` complex FFT and the square root, ``2n`` numbers kept); the output takes
    ``n`` numbers per path. The white noise and its FFT are two reused buffers of ``4n`` real
    numbers per pair of paths of a sub-batch (:func:`fgn_batch_pairs`); without sub-batches
    (another device or float32) the noise is first drawn whole and copied in: ``12 n`` numbers
    per pair.
    """
    pairs = (paths + 1) // 2
    transient = 8 * n * fgn_batch_pairs(n, pairs, True) if sub_batched else 12 * n * pairs
    return 120 * n + item * (n * paths + 2 * n + transient)


def require_memory(needed: int, what: str, knobs: Sequence[str], *, device=None) -> None:
    """Raise :class:`ResourceError` when ``needed`` bytes exceed :func:`available_memory`.
    ``what`` describes the request (``'per draw at width=1000, depths up to 20000'``)."""
    avail = available_memory(device)
    if needed > avail:
        raise ResourceError(f"needs ~{fmt_bytes(needed)} {what}; {_has(device)} {fmt_bytes(avail)} "
                            f"(lower {_or(knobs)})", needed=needed, available=avail, knobs=knobs)


def require_kept(numbers: int, what: str, knobs: Sequence[str]) -> None:
    """Raise :class:`ResourceError` when the ``numbers`` a result keeps (per-draw errors, ratios)
    do not fit the machine's memory at :data:`KEPT_NUMBER_BYTES` each: refused before the work
    that would end in an allocation no machine holds."""
    require_memory(KEPT_NUMBER_BYTES * numbers, f"to keep the {numbers:.3g} numbers {what}", knobs)


def require_count(count: int, limit: int, what: str, knobs: Sequence[str]) -> None:
    """Raise :class:`ResourceError` when ``count`` (of tasks, steps, ...) exceeds ``limit``."""
    if count > limit:
        raise ResourceError(f"{what}: {count:.3g} exceeds the limit of {limit:.3g} (lower {_or(knobs)})",
                            needed=count, available=limit, knobs=knobs)


def fit_chunk(peak: Callable[[int], int], draws: int, chunk: int | None, default: int, what: str,
              knobs: Sequence[str], *, device=None, unit: str = "draw") -> int:
    """Draws per task: ``chunk`` when given (refused if ``peak(chunk)`` does not fit), else
    ``default`` lowered until ``peak`` fits in :func:`available_memory` of ``device`` (refused
    when even one draw does not fit). ``peak(n)`` is the peak bytes of a task of ``n`` draws,
    increasing in ``n``; ``unit``: what a draw is called in the messages (``'configuration'``)."""
    avail = available_memory(device)
    if chunk is not None:
        need = peak(chunk)
        if need > avail:
            one = peak(1)
            fits = 0 if one > avail else _largest(peak, chunk, avail)
            hint = f" (at most {fits} {unit}s per chunk fit)" if fits else ""
            raise ResourceError(f"needs ~{fmt_bytes(need)} per task of chunk={chunk} {unit}s {what}; {_has(device)} "
                                f"{fmt_bytes(avail)}{hint} (lower chunk or {_or(knobs)})", needed=need,
                                available=avail, knobs=("chunk", *knobs))
        return chunk
    one = peak(1)
    if one > avail:
        raise ResourceError(f"needs ~{fmt_bytes(one)} per {unit} {what}; {_has(device)} {fmt_bytes(avail)} "
                            f"(lower {_or(knobs)})", needed=one, available=avail, knobs=knobs)
    default = max(1, min(draws, default))
    return default if peak(default) <= avail else _largest(peak, default, avail)


def _largest(peak, high: int, avail: int) -> int:
    """The largest ``n`` in ``[1, high]`` with ``peak(n) <= avail`` (``peak(1)`` fits)."""
    lo, hi = 1, high
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if peak(mid) <= avail else (lo, mid - 1)
    return lo


def tasks_of(draws: int, chunk: int) -> int:
    return -(-draws // chunk)


def _has(device) -> str:
    """Whose memory a refusal speaks of: this machine's, or a CUDA device's free memory."""
    return f"device {str(device)!r} has free" if device is not None and str(device).startswith("cuda") \
        else "this machine has"


def _or(knobs: Sequence[str]) -> str:
    knobs = list(knobs)
    return knobs[0] if len(knobs) == 1 else ", ".join(knobs[:-1]) + " or " + knobs[-1]


def prod(xs) -> int:
    return math.prod(xs)
