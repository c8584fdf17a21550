"""Results are plain data: one mixin gives every result dataclass its JSON round trip."""

from __future__ import annotations

import dataclasses
import json


class PlainData:
    """``to_dict``, ``to_json`` and ``from_dict`` for a result dataclass (``from_dict``
    ignores keys that are not fields, such as derived values written by ``to_dict``)."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: dict):
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in fields})
