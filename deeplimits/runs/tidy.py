"""The records of a run store as a tidy table: one row per observation.

A finished task's result holds scalars, nested lists whose axes its task declares
(``register_task(..., axes=("draw", "depth"))``: the convergence errors of a chunk, one value per
draw and depth) and lists of row dicts (the training records). :func:`tidy_rows` writes one row
per entry of the declared arrays (their coordinates as columns: an axis ``depth`` takes its
values from the task's ``depths`` parameter, an axis without such a list, ``draw`` say, its
index) and one row per row dict; scalars repeat on every row of their task. What fits neither
stays one JSON cell. The task's own fields are ``task_*`` columns, its parameters ``param_*``. :func:`write_csv` writes the rows with the standard library's ``csv``.
"""

from __future__ import annotations

import csv
import itertools
import json
import sys

from .tasks import task_function

__all__ = ["tidy_rows", "write_csv"]

_RECORD = ("key", "fn", "status", "seed", "seconds", "attempts", "error")


def _depth(value) -> int:
    """How many list levels ``value`` has (0 for a scalar), read along first entries."""
    n = 0
    while isinstance(value, list) and value:
        value, n = value[0], n + 1
    return n


def _shape(value, n: int) -> tuple[int, ...]:
    out = []
    for _ in range(n):
        out.append(len(value))
        value = value[0]
    return tuple(out)


def _cell(value):
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def _axes(fn: str) -> tuple[str, ...]:
    try:
        return getattr(task_function(fn), "axes", ())
    except KeyError:  # a task of a module not imported: its result stays JSON
        return ()


def tidy_rows(records) -> list[dict]:
    """``records`` (:meth:`RunStore.records`) as rows of a tidy table (see the module docstring)."""
    rows = []
    for record in records:
        params, result, axes = record["params"], record.get("result"), _axes(record["fn"])
        coords = {a: params.get(a + "s") if isinstance(params.get(a + "s"), list) else None for a in axes}
        base = {f"task_{k}": record.get(k) for k in _RECORD}
        as_axis = {a + "s" for a, values in coords.items() if values is not None}  # a column of its own
        base.update({f"param_{k}": _cell(v) for k, v in params.items() if k not in as_axis})
        if not isinstance(result, dict):
            rows.append(base)
            continue
        arrays = {k: v for k, v in result.items() if axes and _depth(v) == len(axes)}
        tables = {k: v for k, v in result.items() if k not in arrays and isinstance(v, list) and v
                  and all(isinstance(r, dict) for r in v)}
        base.update({k: _cell(v) for k, v in result.items() if k not in arrays and k not in tables})
        if arrays:
            shape = _shape(next(iter(arrays.values())), len(axes))
            for index in itertools.product(*map(range, shape)):
                row = dict(base)
                for a, i in zip(axes, index):
                    row[a] = coords[a][i] if coords[a] is not None else i
                for name, array in arrays.items():
                    value = array
                    for i in index:
                        value = value[i]
                    row[name] = value
                rows.append(row)
        for name, table in tables.items():
            rows.extend({**base, "table": name, **{k: _cell(v) for k, v in r.items()}} for r in table)
        if not arrays and not tables:
            rows.append(base)
    return rows


def write_csv(rows, path, columns=None) -> None:
    """``rows`` (dicts) as CSV at ``path`` (``-``: standard output); ``columns`` (default: in order of
    first appearance)."""
    columns = list(dict.fromkeys(k for r in rows for k in r)) if columns is None else list(columns)

    def write(stream):
        writer = csv.DictWriter(stream, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)

    if path == "-":
        write(sys.stdout)
        sys.stdout.flush()
    else:
        with open(path, "w", newline="") as f:
            write(f)
