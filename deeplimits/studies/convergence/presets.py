"""The presets and defaults of the strong-error study (docs/convergence.md), torch-free: the
command line reads them for ``--help``.

* :data:`DEFAULT_STUDY`: the study run without a regime (sde, ode, fbm at H = 3/4);
* :data:`STUDY_OPTIONS`: options a regime requires, filled in when none of their group is given;
* :data:`REFERENCE_REFINEMENT`, :data:`MAX_CHUNK`: the default reference grid and draws per task;
* :data:`DEFAULTS`: the scalar defaults of :func:`~.study.plan_convergence` (and of the command line).
"""

from __future__ import annotations

__all__ = ["DEFAULT_STUDY", "STUDY_OPTIONS", "REFERENCE_REFINEMENT", "MAX_CHUNK", "DEFAULTS", "study_options"]

STUDY_OPTIONS = {
    "fbm": (("hurst",), {"hurst": 0.75}),
    "rough": (("hurst",), {"hurst": 0.4}),
    "inside-ode": (("alpha", "beta"), {"beta": 0.5}),
}
"""Regime -> (a group of options, the defaults used when none of the group is given)."""

DEFAULT_STUDY = (("sde", {}), ("ode", {}), ("fbm", STUDY_OPTIONS["fbm"][1]))
"""The convergence study without a regime: (regime, options) in order."""

REFERENCE_REFINEMENT = 16
"""The default reference grid of a convergence study with rough weights: this many times the largest depth
(part of the spec, hence of the store key)."""
MAX_CHUNK = 64
"""The default draws per task of a convergence study, at most (part of the spec and the seeds)."""
DEFAULTS = dict(inputs=1, seed=0, dtype="float64")
"""The scalar defaults of plan_convergence (and of the command line)."""


def study_options(regime: str, options: dict) -> dict:
    """``options`` of a convergence study of ``regime`` with the defaults of
    :data:`STUDY_OPTIONS` filled in when none of their group is given."""
    group, defaults = STUDY_OPTIONS.get(regime, ((), {}))
    if group and all(options.get(name) is None for name in group):
        return {**options, **defaults}
    return dict(options)
