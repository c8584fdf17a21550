"""MNIST and CIFAR-10 read from files the user already has (nothing is ever downloaded).

The layout is torchvision's, so a directory filled by ``torchvision.datasets.MNIST(root,
download=True)`` or ``CIFAR10(root, download=True)`` works as it is:

* MNIST: the idx files ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
  ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte`` (each optionally ``.gz``) in
  ``root/MNIST/raw/``;
* CIFAR-10: the python batches ``data_batch_1`` .. ``data_batch_5`` and ``test_batch`` in
  ``root/cifar-10-batches-py/`` (pickled dicts with ``b'data'``, uint8 of shape ``(n, 3072)``,
  and ``b'labels'``), or the binary batches ``data_batch_1.bin`` .. ``data_batch_5.bin`` and
  ``test_batch.bin`` in ``root/cifar-10-batches-bin/`` (records of one label byte and 3072
  pixel bytes).

Files are data, never code (docs/data.md, "Files are data"): a python batch is read by a
restricted unpickler that admits only what a CIFAR-10 batch holds (dicts, lists, numbers,
bytes and integer numpy arrays, rebuilt here from their raw bytes: no numpy or other global is
ever called with the file's arguments), and anything else is refused in one line before it
runs. Each file's size is bounded before it is read (:data:`MAX_CIFAR_BATCH_BYTES`,
:data:`MAX_IDX_BYTES`); an idx file's header is read and checked first, and a gzipped one is
decompressed only up to the size its header declares (a decompression bomb stops there).

The files are read directly (torchvision is not needed). Images are flattened (MNIST
row-major, 784 features; CIFAR-10 channel-major R, G, B, 3072 features) and scaled to
[0, 1]; the official train/test splits are kept.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import pickle
import zlib

import numpy as np

from ..errors import DamagedFileError, MissingDataError
from .base import Arrays, register_dataset

MNIST_DIR = os.path.join("MNIST", "raw")
MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
               "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
CIFAR10_DIR = "cifar-10-batches-py"
CIFAR10_BIN_DIR = "cifar-10-batches-bin"
CIFAR10_FILES = tuple(f"data_batch_{i}" for i in range(1, 6)) + ("test_batch",)
CIFAR10_FEATURES = 3072
IDX_UBYTE = 0x08  # the idx type code of unsigned bytes
#: the largest data an idx file may declare (5 x the MNIST training images, 47 MB)
MAX_IDX_BYTES = 256 << 20
#: the largest CIFAR-10 batch file read (a python batch of 10000 images is 31 MB)
MAX_CIFAR_BATCH_BYTES = 64 << 20
_READ_BLOCK = 1 << 20


def _missing(dataset: str, directory: str, expected, missing) -> MissingDataError:
    return MissingDataError(
        f"root must hold the files of the data set: {dataset!r} needs {', '.join(expected)} in {directory}; missing: "
        f"{', '.join(missing)} "
        "(nothing is downloaded: copy the files there, see docs/data.md)")


def _find_mnist(directory: str) -> list[str]:
    found, missing = [], []
    for name in MNIST_FILES:
        paths = [os.path.join(directory, name + ext) for ext in ("", ".gz")]
        hit = [p for p in paths if os.path.isfile(p)]
        (found.append(hit[0]) if hit else missing.append(name))
    if missing:
        raise _missing("mnist", directory, [f + "[.gz]" for f in MNIST_FILES], missing)
    return found


def _read_exactly(f, n: int, path: str, what: str) -> bytes:
    """``n`` bytes of ``f`` read in blocks (a damaged stream is one line naming ``path``)."""
    parts, left = [], n
    try:
        while left:
            block = f.read(min(left, _READ_BLOCK))
            if not block:
                break
            parts.append(block)
            left -= len(block)
    except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise DamagedFileError(path, f"{path} is damaged: cannot read its {what} ({type(e).__name__}: {e})") from None
    data = b"".join(parts)
    if len(data) != n:
        raise DamagedFileError(path, f"{path} holds {len(data)} bytes of {what}, its header says {n}")
    return data


def _at_end(f, path: str, n: int) -> None:
    try:
        extra = f.read(1)
    except (OSError, EOFError, zlib.error) as e:
        raise DamagedFileError(path, f"{path} is damaged after its {n} bytes of data "
                                     f"({type(e).__name__}: {e})") from None
    if extra:
        raise DamagedFileError(path, f"{path} holds more data than its header says ({n} bytes): not an idx file of "
                                     "that shape")


def read_idx(path: str, ndim: int, *, max_bytes: int = MAX_IDX_BYTES) -> np.ndarray:
    """The array of unsigned bytes stored in the idx file ``path`` (optionally gzipped), which
    must have ``ndim`` dimensions (magic number ``0x0000 08 0<ndim>``, big-endian sizes).

    The header is read and checked first: data declared larger than ``max_bytes`` is refused
    before anything else is read, and a gzipped file is decompressed only up to the declared
    size (more data than declared, or a truncated or corrupt stream, is a one-line
    ``ValueError`` naming the file)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        head = _read_exactly(f, 4, path, "magic number")
        if head != bytes([0, 0, IDX_UBYTE, ndim]):
            raise DamagedFileError(path, f"{path} is not an idx file of unsigned bytes with {ndim} dimensions "
                                         f"(magic number {head.hex() or 'missing'}, expected 000008{ndim:02x})")
        dims = tuple(int(v) for v in np.frombuffer(_read_exactly(f, 4 * ndim, path, "header"), dtype=">u4"))
        n = math.prod(dims)
        if n > max_bytes:
            raise DamagedFileError(path, f"{path} declares {n} bytes of data {dims}, more than the {max_bytes} an idx "
                                         "file may hold here (not an MNIST file)")
        body = np.frombuffer(_read_exactly(f, n, path, "data"), dtype=np.uint8)
        _at_end(f, path, n)
    return body.reshape(dims)


def _images_labels(images_path: str, labels_path: str) -> tuple[np.ndarray, np.ndarray]:
    images, labels = read_idx(images_path, 3), read_idx(labels_path, 1)
    if len(images) != len(labels):
        raise DamagedFileError(images_path, f"{images_path} holds {len(images)} images but {labels_path} {len(labels)} "
                                            "labels")
    return images.reshape(len(images), -1) / 255.0, labels.astype(np.int64)


@register_dataset("mnist", official_split=True)
def mnist(*, root: str, seed: int) -> Arrays:
    """MNIST from the user's idx files in root/MNIST/raw: 60000 + 10000 images, 784 features in [0, 1], 10 classes."""
    paths = _find_mnist(os.path.join(root, MNIST_DIR))
    x, y = _images_labels(paths[0], paths[1])
    x_test, y_test = _images_labels(paths[2], paths[3])
    return Arrays(x, y, task="classification", n_classes=10, x_test=x_test, y_test=y_test)


# -- CIFAR-10 python batches: a restricted unpickler -------------------------------------------------

class _DType:
    """A numpy dtype named in a pickle: only integer types, built here from their name."""

    def __init__(self, spec, align=0, copy=0, *_):
        name = spec.decode("ascii", "replace") if isinstance(spec, (bytes, bytearray)) else spec
        if not isinstance(name, str) or len(name) > 4:
            raise pickle.UnpicklingError(f"dtype {spec!r} is not an integer type")
        try:
            self.dtype = np.dtype(name)
        except TypeError:
            raise pickle.UnpicklingError(f"dtype {spec!r} is not an integer type") from None
        if self.dtype.kind not in "biu":
            raise pickle.UnpicklingError(f"dtype {spec!r} is not an integer type")

    def __setstate__(self, state):
        """The pickled state of a plain dtype: ``(version, byte order, None, None, None, -1, -1, flags)``."""
        if not isinstance(state, tuple) or len(state) < 2 or state[1] not in ("|", "<", ">", b"|", b"<", b">"):
            raise pickle.UnpicklingError("dtype state is not that of a plain integer type")
        order = state[1].decode() if isinstance(state[1], bytes) else state[1]
        if any(s is not None for s in state[2:5]):
            raise pickle.UnpicklingError("dtype state with fields or subarrays is not allowed")
        if order != "|":
            self.dtype = self.dtype.newbyteorder(order)


class _Array:
    """A numpy array named in a pickle, rebuilt by :meth:`__setstate__` from its raw bytes (each
    copy charged to the file's :class:`~deeplimits._bounded.PickleBounds`)."""

    def __init__(self, bounds):
        self.array, self.bounds = None, bounds

    def __setstate__(self, state):
        """``(version, shape, dtype, fortran_order, raw bytes)``: an integer array of that shape."""
        if not isinstance(state, tuple) or len(state) != 5:
            raise pickle.UnpicklingError("array state is not (version, shape, dtype, order, data)")
        _, shape, dtype, fortran, raw = state
        self.array = _from_bytes(self.bounds, raw, dtype, shape, "F" if fortran else "C")


def _from_bytes(bounds, raw, dtype, shape, order="C") -> np.ndarray:
    if not isinstance(dtype, _DType):
        raise pickle.UnpicklingError("array dtype is not an integer type")
    if isinstance(raw, pickle.PickleBuffer):
        raw = raw.raw()
    if isinstance(raw, str):  # a python-2 batch read with another encoding
        bounds.charge(len(raw))
        raw = raw.encode("latin-1")
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise pickle.UnpicklingError("array data is not bytes")
    if (not isinstance(shape, tuple) or len(shape) > 4
            or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s for s in shape)):
        raise pickle.UnpicklingError(f"array shape {shape!r} is not a tuple of sizes")
    if math.prod(shape) * dtype.dtype.itemsize != len(raw):
        raise pickle.UnpicklingError(f"array of shape {shape} and dtype {dtype.dtype} does not match its "
                                     f"{len(raw)} bytes")
    bounds.charge(len(raw))
    order = order.decode() if isinstance(order, bytes) else order
    return np.frombuffer(bytes(raw), dtype=dtype.dtype).reshape(shape, order="F" if order == "F" else "C").copy()


def _latin1(bounds, text, encoding="latin1"):
    """How pickle protocols < 3 spell bytes: ``_codecs.encode(text, 'latin1')``, nothing else."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode is allowed only for bytes spelled in latin-1")
    bounds.charge(len(text))
    return text.encode("latin-1")


class _CifarUnpickler(pickle.Unpickler):
    """The only globals a CIFAR-10 batch may name (numpy 1 and numpy 2 module names), each built
    here and charged to the file's bounds; nothing else is found."""

    def __init__(self, file, bounds, **kw):
        super().__init__(file, **kw)
        self.bounds = bounds

    def find_class(self, module, name):
        b = self.bounds

        def frombuffer(buffer, dtype, shape, order="C"):  # numpy's pickle protocol-5 constructor
            arr = _Array(b)
            arr.array = _from_bytes(b, buffer, dtype, shape, order)
            return arr

        allowed = {"_reconstruct": lambda cls, shape, dtype_code: _Array(b), "_frombuffer": frombuffer,
                   "ndarray": lambda *_: _Array(b), "dtype": _DType, "encode": lambda *a: _latin1(b, *a)}
        where = {"numpy.core.multiarray": ("_reconstruct",), "numpy._core.multiarray": ("_reconstruct",),
                 "numpy.core.numeric": ("_frombuffer",), "numpy._core.numeric": ("_frombuffer",),
                 "numpy": ("ndarray", "dtype"), "_codecs": ("encode",)}
        if name not in where.get(module, ()):
            raise pickle.UnpicklingError(f"it names {module}.{name}, which a CIFAR-10 batch never holds "
                                         "(refused without running it)")
        return allowed[name]

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent references are not allowed")


def _batch(obj) -> dict:
    """The dict of a CIFAR-10 batch as loaded, each rebuilt :class:`_Array` replaced by its array:
    its values are arrays, bytes, text, numbers or flat lists of them (nothing nested deeper, so
    no reference graph is ever walked or copied)."""
    if not isinstance(obj, dict):
        return obj  # refused by the caller: not a dict with b'data' and b'labels'
    out = {}
    for key, value in obj.items():
        if isinstance(value, _Array):
            if value.array is None:
                raise pickle.UnpicklingError("an array without its data")
            value = value.array
        elif isinstance(value, list):
            if not all(isinstance(v, (int, bytes, str)) and not isinstance(v, bool) for v in value):
                raise pickle.UnpicklingError(f"its entry {key!r} is a list of other than numbers and names")
        elif not isinstance(value, (bytes, str, int)):
            raise pickle.UnpicklingError(f"its entry {key!r} is a {type(value).__name__}, which a batch never holds")
        out[key] = value
    return out


def _bounded_bytes(path: str, limit: int, what: str) -> bytes:
    size = os.path.getsize(path)
    if size > limit:
        raise DamagedFileError(path, f"{path} has {size} bytes, more than the {limit} a {what} may have")
    with open(path, "rb") as f:
        return f.read(limit + 1)


def read_cifar_batch(path: str) -> tuple[np.ndarray, np.ndarray]:
    """``(data, labels)`` of one CIFAR-10 python batch: uint8 ``(n, 3072)`` and int64 ``(n,)``.

    Read by a restricted unpickler (module docstring), bounded before it allocates: its opcodes
    are counted first (shared references within a bound proportional to its size), every array or
    bytes it builds is charged to a budget of a few times its size, and its dict may hold arrays,
    bytes and flat lists only. A file that names anything but what a CIFAR-10 batch holds, or
    passes a bound, is refused before it runs, in one line naming the file."""
    from .._bounded import PickleBounds, scan_pickle

    raw = _bounded_bytes(path, MAX_CIFAR_BATCH_BYTES, "CIFAR-10 batch")
    try:
        bounds = PickleBounds(len(raw), "a CIFAR-10 batch")
        scan_pickle(raw, bounds)
        d = _batch(_CifarUnpickler(io.BytesIO(raw), bounds, encoding="bytes").load())
    except Exception as e:  # noqa: BLE001 - a damaged, foreign or hostile file: one line naming it
        raise DamagedFileError(path, f"{path} is not a CIFAR-10 python batch ({type(e).__name__}: "
                                     f"{' '.join(str(e).split())})"
                                     ) from None
    if not isinstance(d, dict) or b"data" not in d or b"labels" not in d:
        raise DamagedFileError(path, f"{path} is not a CIFAR-10 batch: expected a dict with b'data' and b'labels'")
    data, labels = d[b"data"], d[b"labels"]
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8:
        raise DamagedFileError(path, f"{path}: b'data' must be a uint8 array, got {type(data).__name__} "
                                     f"{getattr(data, 'dtype', '')}".rstrip())
    try:
        labels = np.asarray(labels, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise DamagedFileError(path, f"{path}: b'labels' must be a list of integers") from None
    if data.ndim != 2 or data.shape[1] != CIFAR10_FEATURES or labels.ndim != 1 or len(labels) != len(data):
        raise DamagedFileError(path, f"{path}: b'data' must have shape (n, 3072) with n labels, "
                                     f"got {data.shape} and {labels.size} labels")
    return data, labels


def read_cifar_binary(path: str) -> tuple[np.ndarray, np.ndarray]:
    """``(data, labels)`` of one CIFAR-10 binary batch: records of 1 label byte + 3072 pixel bytes."""
    raw = _bounded_bytes(path, MAX_CIFAR_BATCH_BYTES, "CIFAR-10 batch")
    record = 1 + CIFAR10_FEATURES
    if not raw or len(raw) % record:
        raise DamagedFileError(path, f"{path} is not a CIFAR-10 binary batch: {len(raw)} bytes is not a positive "
                                     f"multiple of {record} (one label byte and 3072 pixels per image)")
    table = np.frombuffer(raw, dtype=np.uint8).reshape(-1, record)
    return table[:, 1:].copy(), table[:, 0].astype(np.int64)


def _cifar_files(root: str) -> tuple[list[str], callable]:
    """The six batch files and their reader: the python batches, else the binary ones."""
    py, binary = os.path.join(root, CIFAR10_DIR), os.path.join(root, CIFAR10_BIN_DIR)
    for directory, ext, reader in ((py, "", read_cifar_batch), (binary, ".bin", read_cifar_binary)):
        if os.path.isdir(directory):
            missing = [f + ext for f in CIFAR10_FILES if not os.path.isfile(os.path.join(directory, f + ext))]
            if missing:
                raise _missing("cifar10", directory, [f + ext for f in CIFAR10_FILES], missing)
            return [os.path.join(directory, f + ext) for f in CIFAR10_FILES], reader
    raise _missing("cifar10", py, CIFAR10_FILES, CIFAR10_FILES)


@register_dataset("cifar10", official_split=True)
def cifar10(*, root: str, seed: int) -> Arrays:
    """CIFAR-10 from the user's batches in root/cifar-10-batches-py (or -bin): 50000 + 10000 images, 3072 features."""
    paths, reader = _cifar_files(root)
    parts = [reader(p) for p in paths]
    for p, (_, labels) in zip(paths, parts):
        if len(labels) and (labels.min() < 0 or labels.max() > 9):
            raise DamagedFileError(p, f"{p}: labels must lie in 0..9, got [{labels.min()}, {labels.max()}]")
    x = np.concatenate([p[0] for p in parts[:5]]) / 255.0
    y = np.concatenate([p[1] for p in parts[:5]])
    return Arrays(x, y, task="classification", n_classes=10, x_test=parts[5][0] / 255.0, y_test=parts[5][1])
