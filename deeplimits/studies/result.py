"""One result convention for every study: a result holds its plan. A study's result keeps the
:class:`~.plan.Plan` of what it summarises in its ``plan`` field (never a copy of the plan's fields,
never a bare spec dict), and :attr:`PlanResult.spec` is that plan's spec (:meth:`~.plan.Plan.to_dict`,
what a run store records), the same property on every result.

Each result class names in :attr:`PlanResult.shown` the plan's fields it shows: they are read
as attributes of the result (``result.width`` is ``result.plan.width``) and written at the top
level of :meth:`~PlanResult.to_dict` under the names the result's JSON has always used (so the
JSON of a seeded run is unchanged, tests/test_golden.py), beside ``'plan'``, the plan's own
spec. :meth:`~PlanResult.from_dict` reads the plan from ``'plan'``, from ``'spec'`` (the JSON of
the results that held their plan's spec, law, transfer, trained limit), or rebuilds it from the
top level for JSON written before results held their plans (:meth:`~PlanResult.plan_of`).
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

    @property
    def spec(self) -> dict | None:
        """The plan's spec (:meth:`~.plan.Plan.to_dict`: what a run store records and compares;
        ``None`` for a result without a plan)."""
        plan = self.__dict__.get("plan")
        return None if plan is None else plan.to_dict()

    def to_dict(self) -> dict:
        """The plan's values under their JSON names, the result's own fields, and ``'plan'``."""
        own = {f.name: copy.deepcopy(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "plan"}
        return strict({**{k: getattr(self, k) for k in self.shown}, **own, "plan": self.spec})

    @classmethod
    def from_dict(cls, d: dict):
        """The result of ``d`` (written by :meth:`to_dict`, by a result that held its plan's spec
        under ``'spec'``, or before results held their plans)."""
        if "plan_type" not in vars(cls):  # set beside the plan class: import the modules of the studies' plans
            from . import _register_plans

            _register_plans()
        spec = d.get("plan", d.get("spec"))
        plan = cls.plan_of_spec(spec) if isinstance(spec, dict) else cls.plan_of(d)
        return cls(plan=plan, **cls._fields_of(d, skip=("plan", "spec")))

    @classmethod
    def plan_of_spec(cls, spec: dict):
        """The plan of a stored spec: :attr:`plan_type`'s, or the registered plan class of the
        spec's ``'study'`` (a result shared by two studies, e.g. the dense and convolutional transfer)."""
        study = getattr(cls.plan_type, "study", None)
        if spec.get("study", study) == study:
            return cls.plan_type.from_dict(spec)
        from . import plan_from_dict

        return plan_from_dict(spec)

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
