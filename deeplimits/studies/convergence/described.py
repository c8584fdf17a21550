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


_TEXT, _FLAG = (str,), (bool,)
#: each field of a description (:func:`~.statistics.describe`) -> ``(types, required)``; a number finite
#: and at most 1e3 in size, ``None`` where allowed
_FIELDS = {"regime": (_TEXT, True), "activation": (_TEXT, True), "arch": (_TEXT, True), "rate_note": (_TEXT, True),
           "reference_method": (_TEXT, True), "constant_source": (_TEXT, True), "width": ((int,), True),
           "corrected": (_FLAG, True), "nested_reference": ((bool, type(None)), True), "order": ((dict,), True),
           "theory_rate": ((float, int), True), "theory_log_power": ((float, int), True),
           "hurst": ((float, int, type(None)), True), "terminal_constant": ((float, int, type(None)), True),
           "constant_next": ((list,), True), "ito_correction": (_FLAG, False),
           **{k: ((float, int, type(None)), False) for k in ("alpha", "beta", "sa", "sb")}}


def description_damage(d: dict) -> str | None:
    """Why ``d`` is not a description a task writes (``None``: it is one)."""
    missing = [k for k, (_, required) in _FIELDS.items() if required and k not in d]
    extra = sorted(set(d) - set(_FIELDS))
    if missing or extra:
        return f"fields {missing or extra} {'missing' if missing else 'unknown'}"
    for k, v in d.items():
        types = _FIELDS[k][0]
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
            return f"{k} is a {type(v).__name__}"
        if isinstance(v, (float, int)) and not isinstance(v, bool) and not (math.isfinite(v) and abs(v) <= 1e3):
            return f"{k} = {v!r:.40} is not a finite number of at most 1e3"
        if isinstance(v, str) and len(v) > 10_000:
            return f"{k} is {len(v)} characters long"
    pairs = d["constant_next"]
    if not all(isinstance(x, list) and len(x) == 2 and all(isinstance(y, (float, int)) and not isinstance(y, bool)
                                                          and math.isfinite(y) and abs(y) <= 1e3 for y in x)
               for x in pairs) or len(pairs) > 16:
        return "constant_next is not a list of at most 16 pairs of finite numbers"
    return None
