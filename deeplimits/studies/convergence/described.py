"""What a convergence task keeps of its pair (:func:`~.statistics.describe`), read back as data: a
stored run is read without building its pair, so nothing of a user's own block, law or activation
is imported to read it (docs/sweeps.md, "Files are data"), and a description no task writes is a
damaged store."""

from __future__ import annotations

import math

__all__ = ["described", "description_damage"]


def described(results: list) -> dict | None:
    """The pair's description the tasks kept (:func:`~.statistics.describe`), so that a stored run is
    read without building its pair; ``None`` where a result has none (a store written before they kept
    it, or results computed in this process). A description no task writes is refused (``ValueError``:
    a damaged store), its fields checked as data."""
    kept = [r.get("pair") for r in results]
    if not kept or not all(isinstance(k, dict) for k in kept):
        return None
    for d in kept:
        why = description_damage(d)
        if why:
            raise ValueError(f"a task's description of its pair is not one deeplimits writes: {why}")
    return kept[0]


_TEXT, _FLAG, _NUMBER = (str,), (bool,), (float, int, type(None))
#: each field of a description (:func:`~.statistics.describe`) -> ``(types, required)``, and of its
#: order (:meth:`~deeplimits.orders.StrongOrder.to_dict`, whose terms it checks itself); a number finite
#: and at most 1e3 in size, ``None`` where allowed
_FIELDS = {"regime": (_TEXT, True), "activation": (_TEXT, True), "arch": (_TEXT, True),
           "reference_method": (_TEXT, True), "width": ((int,), True), "corrected": (_FLAG, True),
           "nested_reference": ((bool, type(None)), True), "order": ((dict,), True), "hurst": (_NUMBER, True),
           "ito_correction": (_FLAG, False), **{k: (_NUMBER, False) for k in ("alpha", "beta", "sa", "sb")}}
_ORDER = {"rate": ((float, int), True), "condition": (_TEXT, True), "note": (_TEXT, True),
          "log_power": ((float, int), True), "kind": (_TEXT, True), "next_terms": ((list,), True),
          "constant": (_NUMBER, True), "constant_next": ((list,), True), "constant_source": (_TEXT, True),
          "remainder": ((dict, type(None)), True)}


def description_damage(d: dict) -> str | None:
    """Why ``d`` is not a description a task writes (``None``: it is one)."""
    why = _fields_damage(d, _FIELDS) or _fields_damage(d["order"], _ORDER)
    if why:
        return why
    pairs = d["order"]["constant_next"]
    if len(pairs) > 16 or not all(isinstance(x, list) and len(x) == 2 and all(_number(y) for y in x) for x in pairs):
        return "constant_next is not a list of at most 16 pairs of finite numbers"
    return None


def _number(v) -> bool:
    """A finite number of at most 1e3 in size (not a bool)."""
    return isinstance(v, (float, int)) and not isinstance(v, bool) and math.isfinite(v) and abs(v) <= 1e3


def _fields_damage(d: dict, fields: dict) -> str | None:
    """Why the mapping ``d`` does not hold ``fields`` (``name -> (types, required)``), or ``None``."""
    missing = [k for k, (_, required) in fields.items() if required and k not in d]
    extra = sorted(set(d) - set(fields))
    if missing or extra:
        return f"fields {missing or extra} {'missing' if missing else 'unknown'}"
    for k, v in d.items():
        types = fields[k][0]
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
            return f"{k} is a {type(v).__name__}"
        if isinstance(v, (float, int)) and not isinstance(v, bool) and not _number(v):
            return f"{k} = {v!r:.40} is not a finite number of at most 1e3"
        if isinstance(v, str) and len(v) > 10_000:
            return f"{k} is {len(v)} characters long"
    return None
