"""Random numbers and the seeding scheme of deeplimits (the one place it is defined).

Seeding, from a run's base seed to every number:

1. a run (``--seed S``) is split into tasks (chunks of draws, or one Hurst index of a phase
   diagram); task ``i`` gets :func:`chunk_seed` ``(S, i)``, a 63-bit seed from NumPy's
   ``SeedSequence([S, i])``: independent streams, the same whichever process runs the task;
2. inside a task, a :class:`torch.Generator` seeded with that seed draws everything in a fixed
   order (each weight's sample, then the inputs); a driver sample takes ONE 62-bit seed from it
   (:func:`seed_from`), so the numbers of one weight never depend on the size of another;
3. a sample's blocks (Brownian blocks of fine steps, i.i.d. depths and chunks) use
   :func:`mix_seed` ``(seed, j)`` sub-streams, drawn by :func:`normal` / :func:`uniform`.

Training (deeplimits.training, deeplimits.studies) mixes its seeds here too:

* epoch ``e`` of a training run seeded ``seed`` shuffles its mini-batches with
  :func:`epoch_seed` ``(seed, e)`` ``= seed * 100003 + e`` (below 2^63 for ``seed <=``
  :func:`epoch_seed_limit` ``(epochs)``);
* initialisation ``init`` of a training grid seeded ``seed`` draws its residual weights with
  :func:`chunk_seed` ``(seed, init)`` and its input and output layers with :func:`io_seed`
  ``(seed, init)`` ``= chunk_seed(seed, 2^40 | init)``.

Same seed, same device, same dtype -> same numbers, on any number of threads or workers.

Devices (every sampler, pair and study takes ``device=``; ``None`` is the CPU):

* on the CPU, the numbers are those described here and below, whatever the ``device``
  argument's spelling (``None``, ``'cpu'``, ``torch.device('cpu')``): the NumPy path stays;
* on any other device (``'cuda'``, ``'mps'``), every number is drawn ON that device by a
  :class:`torch.Generator` ``(device=...)`` seeded from the same seeds: a sub-stream
  ``(seed, j)`` of step 3 seeds ``torch.Generator(device).manual_seed(mix_seed(seed, j))``, and
  the draws a task makes directly from its generator of step 2 (inputs, readouts, smooth
  coefficients: :func:`randn`) take one :func:`seed_from` that generator, then draw on the
  device. So same seed + same device -> same numbers, but a device's numbers are not the CPU's
  (another generator): results agree with the CPU's in distribution, not bitwise.

Fast standard normals:

``torch.randn`` is fast in float32 (vectorised, about 4 ns a number here) but slow in
float64 (about 40 ns). For float64, NumPy's ziggurat sampler on PCG64 streams is exact and
twice as fast, and releases the GIL, so fixed-size sub-blocks, each with its own spawned
seed, are filled by a small thread pool. The numbers depend only on the seed, the shape and
the dtype, never on the number of threads.

Fast uniforms (the i.i.d. ``uniform`` and ``rademacher`` laws, the floor of the criticality
protocol): each number is the top bits of a raw 64-bit word of an SFC64 stream, made odd and
centred in integers, so the law is the uniform law on a grid of ``2^24`` (float32) or ``2^53``
(float64) points symmetric about 0: exactly centred, fair signs (:func:`_centred_uniform`).
Earlier versions drew ``Generator.random`` on PCG64 streams from the same seeds (1.6x slower):
results with uniform or Rademacher weights agree with theirs in law, not number by number.
"""

from __future__ import annotations

import contextlib
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

_SUB = 1 << 17  # numbers per sub-stream
_pool: ThreadPoolExecutor | None = None
_NP = {torch.float32: np.float32, torch.float64: np.float64}


def _executor() -> ThreadPoolExecutor:
    """The pool that fills the sub-streams: as many threads as torch had when it was first asked
    for (a later :func:`torch.set_num_threads`, such as :func:`single_threaded_torch`, keeps it)."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(1, torch.get_num_threads()), thread_name_prefix="deeplimits-rng")
    return _pool


#: the largest seed (63 bits: what ``torch.Generator.manual_seed`` and the run store's integers hold)
MAX_SEED = 2 ** 63 - 1
@contextlib.contextmanager
def single_threaded_torch(when: bool = True):
    """Run torch's own operations on one thread inside the block (``when``), the drawing pool
    keeping its threads: small per-layer products gain nothing from intra-op threads, and on a
    shared machine their synchronisation costs many times the arithmetic."""
    old = torch.get_num_threads()
    if not when or old == 1:
        yield
        return
    _executor()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def chunk_seed(seed: int, chunk: int) -> int:
    """The seed of task ``chunk`` of a run seeded ``seed``: independent streams per task,
    the same whichever process computes it."""
    return int(np.random.SeedSequence([seed, chunk]).generate_state(1, np.uint64)[0] >> 1)


#: the stride of :func:`epoch_seed`: epochs of one run never share a seed with another run's
SEED_STRIDE = 100_003


def epoch_seed(seed: int, epoch: int) -> int:
    """The shuffling seed of epoch ``epoch`` of a training run seeded ``seed``:
    ``seed * SEED_STRIDE + epoch``."""
    return seed * SEED_STRIDE + epoch


def epoch_seed_limit(epochs: int) -> int:
    """The largest run seed whose :func:`epoch_seed` of every one of ``epochs`` epochs stays
    below 2^63 (about 9.2e13)."""
    return (MAX_SEED - (epochs - 1)) // SEED_STRIDE


def io_seed(seed: int, init: int) -> int:
    """The seed of the input and output layers of initialisation ``init`` of a training grid
    seeded ``seed``: :func:`chunk_seed` ``(seed, 2^40 | init)``, a stream apart from the
    residual weights' ``chunk_seed(seed, init)``."""
    return chunk_seed(seed, 1 << 40 | init)


def mix_seed(seed: int, stream: int) -> int:
    """A seed for sub-stream ``stream`` of ``seed`` (golden-ratio increments, 63 bits)."""
    return (seed + 0x9E3779B97F4A7C15 * (stream + 1)) % (1 << 63)


def seed_from(generator: torch.Generator | None) -> int:
    """A 62-bit seed drawn from a torch generator (the global one when ``None``), on the
    generator's own device."""
    device = None if generator is None else generator.device
    return int(torch.randint(0, 1 << 62, (1,), generator=generator, device=device))


def _on_cpu(device) -> bool:
    return device is None or torch.device(device).type == "cpu"


def _device_generator(seed: int, device) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(seed)


def randn(shape, generator: torch.Generator | None, dtype: torch.dtype, device=None) -> torch.Tensor:
    """Standard normals drawn from a task's generator (step 2): on the CPU with a CPU generator,
    ``torch.randn(shape, generator=generator)`` itself; elsewhere one :func:`seed_from` the
    generator seeds a generator on ``device`` that draws them there."""
    if _on_cpu(device) and (generator is None or generator.device.type == "cpu"):
        return torch.randn(shape, generator=generator, dtype=dtype)
    g = _device_generator(seed_from(generator), device)
    return torch.randn(shape, generator=g, dtype=dtype, device=device)


#: transparent huge pages are 2 MiB on x86-64 and arm64 (4 KiB pages below them)
_HUGE_PAGE = 1 << 21


def _empty(n: int, np_dtype) -> np.ndarray:
    """``np.empty(n)``, starting on a 2 MiB boundary when it spans at least two huge pages.

    NumPy asks the kernel for transparent huge pages on arrays of 4 MiB and more
    (``madvise``), but only a huge page's worth of aligned memory can be one: on an unaligned
    array most of the first touch is 4 KiB page faults, each zeroing its page in the kernel
    (measured: 30% of the criticality study's CPU time). Aligned, a block of freshly drawn
    weights costs a fault per 2 MiB; the unused head of the allocation is never touched."""
    item = np.dtype(np_dtype).itemsize
    if n * item < 2 * _HUGE_PAGE:
        return np.empty(n, dtype=np_dtype)
    raw = np.empty(n + _HUGE_PAGE // item, dtype=np_dtype)
    start = (-raw.ctypes.data % _HUGE_PAGE) // item
    return raw[start:start + n]


def empty(shape, dtype: torch.dtype, device=None) -> torch.Tensor:
    """An uninitialised tensor of ``shape``; on the CPU starting on a huge page (:func:`_empty`):
    the buffers that are filled again and again (fGn, blocks of increments) fault in 2 MiB at a time."""
    if not _on_cpu(device):
        return torch.empty(shape, dtype=dtype, device=device)
    return torch.from_numpy(_empty(math.prod(shape), _NP[dtype])).view(shape)


def _fill(n: int, seed: int, np_dtype, draw) -> np.ndarray:
    """``n`` numbers drawn by ``draw(seed_sequence, out)`` on fixed-size sub-streams spawned from ``seed``."""
    return _fill_range(_empty(n, np_dtype), seed, 0, n, draw)


def _fill_range(out: np.ndarray, seed: int, start: int, total: int, draw) -> np.ndarray:
    """``out`` <- numbers ``start .. start + out.size`` of the ``total`` that :func:`_fill` draws
    from ``seed``: sub-stream ``i`` is the ``i``-th child ``SeedSequence(seed).spawn`` gives
    (``spawn_key=(i,)``); only those that the range touches are drawn, a sub-stream cut by the
    range's ends in full into a scratch array, so the numbers are :func:`_fill`'s whatever the range."""
    stop = start + out.size
    first, last = start // _SUB, -(-stop // _SUB)

    def fill(i):
        seq = np.random.SeedSequence(seed, spawn_key=(i,))
        lo, hi = i * _SUB, min((i + 1) * _SUB, total)
        if start <= lo and hi <= stop:
            draw(seq, out[lo - start:hi - start])
            return
        scratch = np.empty(hi - lo, dtype=out.dtype)
        draw(seq, scratch)
        a, b = max(lo, start), min(hi, stop)
        out[a - start:b - start] = scratch[a - lo:b - lo]

    if last - first <= 1 or _executor()._max_workers == 1:
        for i in range(first, last):
            fill(i)
    else:
        list(_executor().map(fill, range(first, last)))
    return out


#: significand bits (with the implicit one) of the float types: a uniform draw takes this many random bits
_BITS = {np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def _centred_uniform(seq: np.random.SeedSequence, out: np.ndarray, half: float) -> None:
    """``out`` <- i.i.d. uniform on the ``2^p`` points ``half * (2j + 1 - 2^p) / 2^p``,
    ``0 <= j < 2^p``, of ``(-half, half)`` (``p`` the significand bits of ``out``'s dtype: 24 for
    float32, 53 for float64), from the raw 64-bit words of an SFC64 stream (two float32 draws a word).

    The grid is symmetric about 0, so the law is exactly centred and its signs are fair coins;
    its variance is ``half^2 (1 - 4^-p) / 3``. Each number is the top ``p`` bits of a word, made
    odd and centred in integers (exact), converted exactly and scaled once: about 1.25 ns a
    float32 number against 2.0 ns for ``Generator.random`` plus the affine map."""
    p = _BITS[out.dtype]
    words = np.random.SFC64(seq).random_raw(-(-out.size // 2) if p == 24 else out.size)
    u = words.view(np.uint32)[:out.size] if p == 24 else words
    u >>= u.dtype.type(8 * u.itemsize - p - 1)  # the top p + 1 bits: 2j + (a coin)
    u |= u.dtype.type(1)  # 2j + 1
    t = u.view(np.int32 if p == 24 else np.int64)
    t -= 1 << p
    np.multiply(t, out.dtype.type(half / float(1 << p)), out=out, dtype=out.dtype, casting="unsafe")


def uniform(shape, seed: int, dtype: torch.dtype, low: float, high: float, device=None) -> torch.Tensor:
    """I.i.d. uniform on ``(low, high)``, a function of ``(seed, shape, dtype, device)``: on the CPU
    the centred grid of :func:`_centred_uniform` (exact to the dtype's resolution, 1.6x the speed
    of NumPy's ``Generator.random``); on another device ``torch.rand`` there (module docstring)."""
    if not _on_cpu(device):
        u = torch.rand(shape, generator=_device_generator(seed, device), dtype=dtype, device=device)
        return u.mul_(high - low).add_(low)
    half, mid = (high - low) / 2, (high + low) / 2

    def draw(seq, out):
        _centred_uniform(seq, out, half)
        if mid:
            out += mid

    return torch.from_numpy(_fill(math.prod(shape), seed, _NP[dtype], draw)).reshape(shape)


def _standard_normal(seq, out) -> None:
    np.random.Generator(np.random.PCG64(seq)).standard_normal(out=out, dtype=out.dtype)


def normal(shape, seed: int, dtype: torch.dtype, device=None, out: torch.Tensor | None = None) -> torch.Tensor:
    """A tensor of ``shape`` with i.i.d. N(0, 1) entries, a function of ``(seed, shape, dtype,
    device)``, drawn on ``device`` (the CPU by default), into ``out`` (a contiguous tensor of
    ``shape``: the same numbers, no new memory) when given."""
    if not _on_cpu(device):
        return torch.randn(shape, generator=_device_generator(seed, device), dtype=dtype, device=device, out=out)
    if dtype == torch.float32:
        return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype, out=out)
    if out is not None:
        _fill_range(out.numpy().reshape(-1), seed, 0, math.prod(shape), _standard_normal)
        return out
    return torch.from_numpy(_fill(math.prod(shape), seed, _NP[dtype], _standard_normal)).reshape(shape)


def normal_rows(shape, seed: int, dtype: torch.dtype, rows: tuple[int, int], device=None,
                out: torch.Tensor | None = None) -> torch.Tensor:
    """Rows ``rows[0]:rows[1]`` (along dim 0) of :func:`normal` ``(shape, seed, dtype, device)``, the
    same numbers, into ``out`` (a contiguous tensor of those rows' shape) when given. Every row is
    drawn in place; on the CPU in float64 only the sub-streams that the rows touch are drawn;
    otherwise the whole tensor is drawn and sliced (then copied into ``out``)."""
    r0, r1 = rows
    if out is not None and (r0, r1) == (0, shape[0]):  # every row: drawn in place (float32 too)
        return normal(shape, seed, dtype, device, out=out)
    if not (_on_cpu(device) and dtype == torch.float64):
        x = normal(shape, seed, dtype, device)[r0:r1]
        return x if out is None else out.copy_(x)
    row = math.prod(shape[1:])
    arr = _empty((r1 - r0) * row, _NP[dtype]) if out is None else out.numpy().reshape(-1)
    _fill_range(arr, seed, r0 * row, math.prod(shape), _standard_normal)
    return torch.from_numpy(arr).reshape(r1 - r0, *shape[1:]) if out is None else out
