"""Results hold their plan: a study's result keeps the :class:`~.plan.Plan` of what it
summarises in its ``plan`` field instead of re-declaring the plan's fields.

Each result class names in :attr:`PlanResult.shown` the plan's fields it shows: they are read
as attributes of the result (``result.width`` is ``result.plan.width``) and written at the top
level of :meth:`~PlanResult.to_dict` under the names the result's JSON has always used (so the
JSON of a seeded run is unchanged, tests/test_golden.py), beside ``'plan'``, the plan's own
spec. :meth:`~PlanResult.from_dict` reads the plan from ``'plan'``, or rebuilds it from the top
level for JSON written before results held their plans (:meth:`~PlanResult.plan_of`).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import ClassVar

from .._plain import PlainData, strict

__all__ = ["PlanResult", "draw_into"]


class PlanResult(PlainData):
    """A result dataclass with a field ``plan`` (subclasses set :attr:`plan_type`, :attr:`shown`)."""

    plan_type: ClassVar[type]
    """The plan class of the results' plans."""
    shown: ClassVar[dict[str, str | None]] = {}
    """The JSON name of each plan value the result shows -> the plan's field (``None``: a property
    of the result computes it from the plan)."""

    def __getattr__(self, name: str):
        field = type(self).shown.get(name)
        if field is not None and "plan" in self.__dict__:
            value = getattr(self.__dict__["plan"], field)
            return list(value) if isinstance(value, tuple) else value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def to_dict(self) -> dict:
        """The plan's values under their JSON names, the result's own fields, and ``'plan'``."""
        own = {f.name: copy.deepcopy(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "plan"}
        return strict({**{k: getattr(self, k) for k in self.shown}, **own, "plan": self.plan.to_dict()})

    @classmethod
    def from_dict(cls, d: dict):
        """The result of ``d`` (written by :meth:`to_dict`, or before results held their plans)."""
        plan = cls.plan_type.from_dict(d["plan"]) if "plan" in d else cls.plan_of(d)
        return cls(plan=plan, **cls._fields_of(d, skip=("plan",)))

    @classmethod
    def plan_of(cls, d: dict):
        """The plan of a result's JSON written before results held their plans: its shown values
        under the plan's names (a subclass adds what such JSON did not record)."""
        return cls.plan_type.from_dict({field: d[k] for k, field in cls.shown.items() if field and k in d})


def draw_into(out: str, figures) -> list[str]:
    """Draw each ``(file name, draw)`` of ``figures`` into the directory ``out`` (``draw(path)``,
    a result's ``plot``); returns the paths drawn (what a result's ``figures(out)`` returns)."""
    import os

    paths = [os.path.join(out, name) for name, _ in figures]
    for path, (_, draw) in zip(paths, figures):
        draw(path)
    return paths
