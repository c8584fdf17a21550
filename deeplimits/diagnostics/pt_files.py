"""``.pt`` files read as data, bounded before they allocate (docs/weights.md, "Files are data"):
the one reader of weight files and stored training chunks. Nothing a file names is imported
(``torch.load(weights_only=True)``: tensors and plain containers), and every size it declares is
checked before it is used."""

from __future__ import annotations

import math
import os
import warnings

import torch

from .. import _resources as R_
from ..errors import DamagedFileError, ParameterError

__all__ = ["read_pt", "fits"]


def fits(path: str, nbytes: int, shape) -> None:
    """A tensor of ``nbytes`` read from ``path``, with its float64 copy, fits the memory."""
    need, avail = 3 * nbytes, R_.available_memory()
    if need > avail:
        raise ParameterError("source", f"source: {path} holds an array of shape {tuple(shape)} that needs "
                                       f"~{R_.fmt_bytes(need)} to read and measure; this machine has "
                                       f"{R_.fmt_bytes(avail)} (use a smaller file)")


def read_pt(path: str, *, map_location="cpu", what: str = "a PyTorch file of tensors", prefix: str = ""):
    """The object of the ``.pt`` file ``path``, read as data and bounded before it allocates
    (docs/weights.md, "Files are data"): a zip archive (``torch.save``'s format) is checked first
    (each record's CRC-32 and declared size against the file's), its pickle's opcodes are counted
    (:func:`deeplimits._bounded.scan_pickle`: shared references within a bound proportional to its
    size), it is loaded by ``torch.load(weights_only=True)`` (tensors and plain containers, never
    code), and its containers are walked once per object (:func:`deeplimits._bounded.walk_once`),
    every tensor checked from its metadata (:func:`_pt_tensor`) and all of them together against
    the bytes the file holds. Anything else is a one-line ``DamagedFileError`` naming ``path``
    (``prefix`` before it) and ``what`` it is not; PyTorch's warnings are kept quiet."""
    size = _pt_archive(path, prefix)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # noqa: BLE001 - any unreadable file is one line
        raise DamagedFileError(path, f"{prefix}{path} is not {what} ({type(e).__name__})") from None
    _pt_tensors(obj, path, size, what, prefix)
    return obj


def _pt_archive(path: str, prefix: str = "source: ") -> int:
    """Check a zip archive's records (CRC-32, declared sizes) and count its pickle's opcodes
    before it is loaded; the bytes its records declare (the file's size for the legacy format)."""
    import zipfile

    from .._bounded import PickleBounds, scan_pickle

    size = os.path.getsize(path)
    if not zipfile.is_zipfile(path):
        return size  # the legacy format: torch.load reads and refuses it
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            declared = sum(i.file_size for i in infos)
            if declared > 64 * size + (1 << 20):  # stored records: a declared size, not data
                raise DamagedFileError(path, f"{prefix}{path} declares {R_.fmt_bytes(declared)} of records in a file "
                                             f"of {R_.fmt_bytes(size)}: crafted or damaged")
            bad = z.testzip()
            pickles = [i for i in infos if i.filename.endswith("data.pkl")]
            if bad is None and pickles:
                data = z.read(pickles[0])
                scan_pickle(data, PickleBounds(len(data), "a file of tensors"))
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as e:
        raise DamagedFileError(path, f"{prefix}{path} is a damaged archive ({' '.join(str(e).split())[:100]})") from None
    except ValueError as e:
        if isinstance(e, DamagedFileError):
            raise
        raise DamagedFileError(path, f"{prefix}{path}: {' '.join(str(e).split())[:200]}") from None
    if bad is not None:
        raise DamagedFileError(path, f"{prefix}{path} is damaged: its record {bad} fails its CRC-32 check")
    return declared


def _pt_tensors(obj, path: str, size: int, what: str, prefix: str = "source: ") -> None:
    """Every tensor of a loaded object, at any depth of its dicts, lists and tuples (each container
    walked once however often it is referenced), checked from its metadata before anything is
    copied (:func:`_pt_tensor`), and all of them together within what the file holds."""
    from .._bounded import walk_once

    total = [0]

    def visit(leaf):
        if isinstance(leaf, torch.Tensor):
            total[0] += _pt_tensor(leaf, path, prefix)
            if total[0] > 4 * size + (1 << 20):
                raise DamagedFileError(path, f"{prefix}{path}: its tensors declare more than "
                                             f"{R_.fmt_bytes(4 * size + (1 << 20))} over {R_.fmt_bytes(size)} of "
                                             f"data: views read over and over, not {what}")

    try:
        walk_once(obj, visit, limit=max(size, 1 << 16), what=what)
    except ValueError as e:
        if isinstance(e, (DamagedFileError, ParameterError)):
            raise
        raise DamagedFileError(path, f"{prefix}{path}: {' '.join(str(e).split())[:200]}") from None


def _pt_tensor(t: torch.Tensor, path: str, prefix: str = "source: ") -> int:
    """A tensor read from ``path``: a dense tensor whose numbers lie in its storage, none over
    another, that fits the memory once copied. Its shape, strides and storage offset are checked
    against the storage's size (``untyped_storage().nbytes()``) before any copy: a huge shape over
    one element by stride 0 (``torch.zeros(1).expand(10**5, 10**5)``), any view declaring more bytes
    than its storage holds, or one reaching past its storage is crafted, and refused."""
    try:
        if t.layout != torch.strided or t.is_quantized or t.is_nested:
            raise DamagedFileError(path, f"{prefix}{path} holds a {t.layout} tensor, not a dense tensor of numbers")
        nbytes, offset = t.untyped_storage().nbytes(), t.storage_offset()
        shape, strides, item = tuple(t.shape), tuple(t.stride()), t.element_size()
    except (RuntimeError, NotImplementedError, AttributeError, TypeError) as e:
        raise DamagedFileError(path, f"{prefix}{path} holds a tensor whose layout cannot be read "
                                     f"({type(e).__name__}): not a dense tensor of numbers") from None
    numel = math.prod(shape)
    if numel == 0:
        return 0
    reach = offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1  # elements up to the last one
    if offset < 0 or min(strides, default=0) < 0 or reach * item > nbytes:
        raise DamagedFileError(path, f"{prefix}{path} holds a tensor of shape {shape} (strides {strides}, offset "
                                     f"{offset}) reaching past its storage of {R_.fmt_bytes(nbytes)}: crafted or damaged")
    if numel * item > nbytes:
        raise DamagedFileError(path, f"{prefix}{path} holds a tensor of shape {shape} declaring "
                                     f"{R_.fmt_bytes(numel * item)} over a storage of {R_.fmt_bytes(nbytes)} (strides "
                                     f"{strides}: numbers over each other): a crafted view, refused")
    fits(path, numel * item, shape)
    return numel * item


