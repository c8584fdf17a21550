"""What a figure shows, written into the figure (docs/gallery.md, "What a figure says"): a PNG
drawn from results carries, in one compressed text chunk (``zTXt``, keyword :data:`KEY`), the JSON
of those results and their readings (verdicts) as drawn.

A test then reads a committed figure and compares its readings with what the same results give
under today's rules, and its plans with what its command plans today, without recomputing
anything (tests/test_figures_current.py). Reading a figure is reading data: nothing it names is
imported (the results are rebuilt by :mod:`deeplimits.studies.figures` from a fixed table of
the package's own result classes).
"""

from __future__ import annotations

import json
import struct
import zlib

from .errors import DamagedFileError

__all__ = ["KEY", "embed", "read", "figure_data", "save"]

KEY = b"deeplimits"
"""The keyword of the text chunk."""
#: the most bytes a chunk's JSON may inflate to when read (a figure's results are kilobytes)
MAX_BYTES = 64 * 2 ** 20
#: the largest result (its JSON, in bytes) a figure carries whole; a larger one carries its readings alone
FIGURE_RESULT_BYTES = 2 ** 20
_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _chunks(png: bytes):
    """``(kind, data, start)`` of every chunk of ``png`` (a
    :class:`~deeplimits.errors.DamagedFileError` when it is not a PNG)."""
    if not png.startswith(_SIGNATURE):
        raise DamagedFileError("not a PNG file")
    at = len(_SIGNATURE)
    while at + 8 <= len(png):
        n, kind = struct.unpack(">I", png[at:at + 4])[0], png[at + 4:at + 8]
        if at + 12 + n > len(png):
            raise DamagedFileError("a truncated PNG chunk")
        yield kind, png[at + 8:at + 8 + n], at
        at += 12 + n


def embed(png: bytes, data: dict) -> bytes:
    """``png`` with ``data`` (strict JSON) in a ``zTXt`` chunk before its end (a chunk written
    before under :data:`KEY` is replaced)."""
    text = json.dumps(data, sort_keys=True, allow_nan=False, separators=(",", ":")).encode()
    chunk = _chunk(b"zTXt", KEY + b"\x00\x00" + zlib.compress(text, 9))
    out, end = bytearray(png[:len(_SIGNATURE)]), None
    for kind, body, start in _chunks(png):
        if kind == b"zTXt" and body.startswith(KEY + b"\x00"):
            continue
        if kind == b"IEND":
            end = start
            out += chunk
        out += png[start:start + 12 + len(body)]
    if end is None:
        raise DamagedFileError("a PNG without its IEND chunk")
    return bytes(out)


def read(path) -> dict | None:
    """The data :func:`embed` wrote into the PNG at ``path`` (``None`` when it has none;
    a :class:`~deeplimits.errors.DamagedFileError` when the file is not a PNG or the chunk cannot be read)."""
    with open(path, "rb") as f:
        png = f.read()
    for kind, body, _ in _chunks(png):
        if kind == b"zTXt" and body.startswith(KEY + b"\x00"):
            inflate = zlib.decompressobj()
            text = inflate.decompress(body[len(KEY) + 2:], MAX_BYTES)
            if inflate.unconsumed_tail:
                raise DamagedFileError(f"{path}: the figure's data inflate to more than {MAX_BYTES} bytes")
            data = json.loads(text)
            if not isinstance(data, dict):
                raise DamagedFileError(f"{path}: the figure's data are not a JSON object")
            return data
    return None


def figure_data(results) -> dict:
    """What a figure drawn from ``results`` carries: per result its class (``kind``), its
    ``readings()`` (the verdicts the figure shows; empty for a result without any) and its JSON
    (``data``, when at most :data:`FIGURE_RESULT_BYTES`)."""
    from ._plain import strict

    out = []
    for r in results:
        if not hasattr(r, "to_dict"):  # not a result: carried by no figure
            continue
        data = strict(r.to_dict())  # a non-finite number as null, as the result's JSON file has it
        entry = {"kind": type(r).__name__, "readings": strict(r.readings()) if hasattr(r, "readings") else {}}
        if len(json.dumps(data, allow_nan=False)) <= FIGURE_RESULT_BYTES:
            entry["data"] = data
        out.append(entry)
    return {"results": out}


def save(fig, path, results, dpi: int) -> None:
    """Write the matplotlib figure ``fig`` at ``path``: a PNG drawn from ``results`` carries their
    :func:`figure_data`."""
    import io
    import os

    if not (results and isinstance(path, (str, os.PathLike)) and os.fspath(path).lower().endswith(".png")):
        fig.savefig(path, dpi=dpi)
        return
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    png = embed(buf.getvalue(), figure_data(results))
    with open(path, "wb") as f:
        f.write(png)
