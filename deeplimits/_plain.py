"""Results are plain data: one mixin gives every result dataclass its strict-JSON round trip.

``to_dict`` writes every non-finite float (NaN, +-inf) as ``None``, so ``json.dumps(...,
allow_nan=False)`` always succeeds (strict JSON, RFC 8259). ``from_dict`` reads ``None`` back
as NaN in the fields typed ``float``, ``list[float]`` or ``list[list[float]]`` (a missing
number); everywhere else (``float | None`` fields such as a critical beta without a crossing,
dictionaries of records) ``None`` stays ``None``.
"""

from __future__ import annotations

import dataclasses
import json
import math

_FLOATS = {"float": 0, "list[float]": 1, "list[list[float]]": 2}


def strict(x):
    """``x`` (nested dicts, lists, tuples of numbers) with every non-finite float replaced by ``None``."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [strict(v) for v in x]
    return x


def _nan(x, depth: int):
    if depth == 0:
        return math.nan if x is None else x
    return x if x is None else [_nan(v, depth - 1) for v in x]


class PlainData:
    """``to_dict``, ``to_json`` and ``from_dict`` for a result dataclass (``from_dict``
    ignores keys that are not fields, such as derived values written by ``to_dict``)."""

    def to_dict(self) -> dict:
        return strict(dataclasses.asdict(self))

    def to_json(self, **kw) -> str:
        kw.setdefault("allow_nan", False)
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: dict):
        return cls(**cls._fields_of(d))

    @classmethod
    def _fields_of(cls, d: dict, skip: tuple[str, ...] = ()) -> dict:
        """The entries of ``d`` that are fields of ``cls`` (but ``skip``), NaN restored (see above)."""
        fields = {f.name: f.type for f in dataclasses.fields(cls) if f.name not in skip}
        out = {}
        for k, v in d.items():
            if k in fields:
                depth = _FLOATS.get(str(fields[k]).replace("typing.", ""))
                out[k] = v if depth is None else _nan(v, depth)
        return out
