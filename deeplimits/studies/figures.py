"""A committed figure read against today's rules (docs/gallery.md, "What a figure says").

A figure drawn from results carries their JSON and the readings it shows
(:mod:`deeplimits._figure_data`). :func:`figure_results` rebuilds those results from the
package's own result classes (a fixed table: nothing the file names is imported) and
:func:`stale_readings` lists where a reading as drawn differs from the same result read today
(a verdict rule changed since the figure was drawn): the check of tests/test_figures_current.py.
"""

from __future__ import annotations

__all__ = ["figure_results", "stale_readings"]


def _class(kind: str):
    """The package's result class named ``kind`` (``None`` for another name)."""
    from .convergence.result import ConvergenceResult
    from .law.fig2 import Fig2Result
    from .law.result import LawResult
    from .scaling.result import ScalingResult
    from .scaling_conv.result import ConvScalingResult
    from .shapes.result import ShapesResult
    from .trained_limit.result import TrainedLimitResult
    from .transfer.result import TransferResult

    table = {c.__name__: c for c in (ConvergenceResult, LawResult, Fig2Result, TransferResult, TrainedLimitResult,
                                     ScalingResult, ShapesResult, ConvScalingResult)}
    return table.get(kind)


def figure_results(path) -> list[tuple]:
    """``(result or None, readings as drawn)`` of each result the figure at ``path`` was drawn
    from (``[]`` for a figure that carries none; ``None`` where its kind is not a known result
    class or its JSON was too large to carry)."""
    from .._figure_data import read
    from .._user_code import reading_stored
    from ..errors import ParameterError

    data = read(path) or {}
    out = []
    with reading_stored(f"the figure {path}"):
        for entry in data.get("results", []):
            cls = _class(entry.get("kind"))
            try:
                result = cls.from_dict(entry["data"]) if cls is not None and "data" in entry else None
            except (ParameterError, KeyError, TypeError, ValueError):  # a result of an older layout
                result = None
            out.append((result, entry.get("readings", {})))
    return out


def stale_readings(path) -> list[str]:
    """Where the figure at ``path`` shows a reading its result does not give today, one line
    each (``[]``: it reads as drawn)."""
    out = []
    for i, (result, drawn) in enumerate(figure_results(path)):
        if result is None or not hasattr(result, "readings"):
            continue
        today = result.readings()
        if today != drawn:
            out.append(f"{path}: result {i} was drawn reading {drawn}, today it reads {today}")
    return out
