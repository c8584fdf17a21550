"""Where a convergence spec records a regime's options, read from their declarations
(:class:`deeplimits.options.Option`, ``Regime.options``, ``Regime.spec_options``). Torch-free.

A spec (what a run store records and compares, hence its key) holds

* ``hurst`` and ``corrected`` in every spec (the options of the first regimes, before the
  others were declared): for a regime that does not take them, their neutral values;
* the regime's :meth:`~deeplimits.regimes.Regime.spec_fields` as fields, with their resolved
  values (defaults filled in): every declared option of a regime added since, ``alpha``,
  ``beta``, ``sa``, ``sb``, ``ito_correction`` for the inside regimes;
* its other options under ``'options'`` when given (``length_scale`` of the built-in regimes).

So the specs, and the store keys, of the built-in regimes are the ones written before the
options were declared (tests/golden/SPECS.json).
"""

from __future__ import annotations

from ...errors import ParameterError
from ...regimes import REGISTRY, declarations, get_regime, is_given

__all__ = ["EVERY_SPEC", "top_fields", "neutral", "record", "split", "join"]

#: options recorded in every convergence spec
EVERY_SPEC = ("hurst", "corrected")


def neutral(name: str):
    """The value of option ``name`` that means "not given" (``None``, or a boolean's default)."""
    return next((o.neutral for o in declarations().get(name, {}).values()), None)


def top_fields(regime: str) -> tuple[str, ...]:
    """The options a spec of ``regime`` records as fields."""
    own = get_regime(regime).spec_fields()
    return EVERY_SPEC + tuple(k for k in own if k not in EVERY_SPEC)


def record(regime: str, resolved: dict, options: dict) -> dict:
    """The options a plan of ``regime`` records: its fields with their ``resolved`` values, and
    the other ``options`` that were given."""
    top = top_fields(regime)
    out = {k: resolved.get(k, neutral(k)) for k in top}
    out.update({k: v for k, v in options.items() if k not in top and is_given(k, v)})
    return out


def split(regime: str, options: dict) -> tuple[dict, dict]:
    """``options`` (as recorded) as ``(spec fields, the rest under 'options')``."""
    top = top_fields(regime)
    return {k: v for k, v in options.items() if k in top}, {k: v for k, v in options.items() if k not in top}


def join(spec: dict, fields: set) -> tuple[dict, dict]:
    """A spec as ``(the plan's own fields, the options as recorded)``; a key that is neither a
    field nor an option of a registered regime is an error."""
    own = {k: v for k, v in spec.items() if k in fields and k != "options"}
    options = {k: v for k, v in spec.items() if k not in fields}
    regime = spec.get("regime")
    if regime in REGISTRY:
        unknown = sorted(set(options) - set(top_fields(regime)))
        if unknown:
            raise ParameterError("spec", f"not a convergence spec of regime {regime!r}: unknown keys {unknown}")
    return own, {**options, **dict(spec.get("options") or {})}
