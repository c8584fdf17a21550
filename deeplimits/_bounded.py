"""Readers of files a user points at, bounded before they allocate (docs/data.md, "Files are
data"): a pickle's opcodes are counted before it is loaded (its shared references, its declared
bytes), what its loader builds is charged to a budget proportional to the file's size, and the
loaded object is walked once per object (a graph of shared references costs its size, not the
number of its paths). Past a bound the reader stops with one line saying which bound.
"""

from __future__ import annotations

import pickletools

__all__ = ["PickleBounds", "scan_pickle", "walk_once", "MAX_NESTING"]

#: the deepest nesting of dicts, lists and tuples a data file may hold (a state_dict is one level,
#: a training chunk two, a CIFAR-10 batch two)
MAX_NESTING = 16

_GETS = frozenset({"GET", "BINGET", "LONG_BINGET"})
_BYTES = frozenset({"BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8", "BINSTRING", "SHORT_BINSTRING",
                    "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8", "STRING", "UNICODE"})


class PickleBounds:
    """The bounds of one pickle of ``size`` bytes: at most :attr:`shared` shared references (memo
    reads; a legitimate file spends about 20 bytes per reference, a reference graph 2), and at most
    :attr:`bytes` bytes built from its data by the loader's constructors (:meth:`charge`: the data
    is at most ``size`` bytes; each copy of it counts again)."""

    #: legitimate files spend 20 bytes or more per shared reference (measured on torch.save of
    #: state dicts of 1000 tensors); a graph of references built to hang a walk spends 2
    BYTES_PER_SHARED = 4
    #: what a loader may build from a file of ``size`` bytes: the data once, a copy and a margin
    COPIES = 3

    def __init__(self, size: int, what: str):
        self.size, self.what = int(size), what
        self.shared = 1024 + self.size // self.BYTES_PER_SHARED
        self.bytes = self.COPIES * self.size + (1 << 20)
        self.built = 0

    def charge(self, nbytes: int) -> None:
        """Count ``nbytes`` built by a constructor; past :attr:`bytes`, a one-line ``ValueError``."""
        self.built += int(nbytes)
        if self.built > self.bytes:
            raise ValueError(f"its objects build more than {self.bytes} bytes from a file of {self.size}: shared "
                             f"references copied over and over, not {self.what}")


def scan_pickle(data: bytes, bounds: PickleBounds) -> None:
    """Count the opcodes of the pickle ``data`` before it is loaded: its shared references (memo
    reads) within ``bounds.shared``, and the bytes its strings declare within the file (a
    one-line ``ValueError`` otherwise; a malformed pickle is a ``ValueError`` too)."""
    shared = declared = 0
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name in _GETS:
                shared += 1
                if shared > bounds.shared:
                    raise ValueError(f"it holds more than {bounds.shared} shared references in {bounds.size} bytes: a "
                                     f"graph of references, not {bounds.what}")
            elif op.name in _BYTES and arg is not None:
                declared += len(arg)
    except ValueError:
        raise
    except Exception as e:  # noqa: BLE001 - a malformed pickle (pickletools raises several kinds)
        raise ValueError(f"it is not a readable pickle ({type(e).__name__}: {' '.join(str(e).split())[:100]})") \
            from None
    if declared > len(data):
        raise ValueError(f"its strings declare {declared} bytes in a file of {len(data)}: not {bounds.what}")


def walk_once(obj, visit, *, limit: int, what: str) -> int:
    """Call ``visit(leaf)`` once for every object of ``obj`` that is not a dict, list or tuple,
    walking each container once however many times it is referenced (iteratively: no recursion
    limit), at most :data:`MAX_NESTING` deep and over at most ``limit`` entries in all (a one-line
    ``ValueError`` past either). Returns the number of entries walked."""
    seen: set[int] = set()
    stack = [(obj, 0)]
    walked = 0
    while stack:
        item, depth = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (dict, list, tuple)):
            if depth >= MAX_NESTING:
                raise ValueError(f"it nests its containers more than {MAX_NESTING} deep: not {what}")
            entries = list(item.values()) if isinstance(item, dict) else list(item)
            walked += len(entries)
            if walked > limit:
                raise ValueError(f"its containers hold more than {limit} entries: not {what}")
            stack.extend((e, depth + 1) for e in entries)
        else:
            visit(item)
    return walked
