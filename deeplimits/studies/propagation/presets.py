"""The presets and defaults of the signal-propagation studies (docs/propagation.md), torch-free:
the command line reads them for ``--help``.

* :data:`STABILITY_PRESETS`, :data:`PHASE_PRESETS`: the published protocols (Marion et al.,
  JMLR 2025), used by ``deeplimits stability --preset NAME`` / ``deeplimits phase``;
* :data:`DEFAULT_PRESET`: the preset each command runs without ``--preset``;
* :data:`TASK_BYTES`: the stability study's task budget (its default draws per task);
* :data:`DEFAULTS`: the scalar defaults of ``plan_stability`` and ``plan_phase``; :data:`DELTA` the
  stability study's ``delta``.
"""

from __future__ import annotations

from ..presets import linspace

__all__ = ["STABILITY_PRESETS", "PHASE_PRESETS", "DEFAULT_PRESET", "TASK_BYTES", "DEFAULTS", "DELTA"]

_IID_DEPTHS = [int(x) for x in linspace(10, 1000, 10)]

STABILITY_PRESETS = {
    # every one is a published protocol (Marion et al., JMLR 2025, §4); the inside model is the
    # published h + alpha sigma(W h), without bias (a bias is an option, not a preset)
    # res-3, d = 40, n_in = 64, depths 10..1000, 50 draws
    "iid": dict(arch="res-3", driver="uniform", width=40, n_in=64, depths=_IID_DEPTHS, betas=[0.25, 0.5, 1.0],
                draws=50),
    "smooth": dict(arch="res-3", driver="smooth", width=40, n_in=64, depths=_IID_DEPTHS, betas=[0.5, 1.0, 2.0],
                   draws=50),
    "iid-inside": dict(arch="inside", driver="uniform", width=40, n_in=64, depths=_IID_DEPTHS,
                       betas=[0.25, 0.5, 1.0], draws=50),
    "smooth-inside": dict(arch="inside", driver="smooth", width=40, n_in=64, depths=_IID_DEPTHS,
                          betas=[0.5, 1.0, 2.0], draws=50),
    # the distributions at criticality: beta = 1/2, L = 1000, d = 100, 10^4 draws
    "criticality": dict(arch="res-3", driver="uniform", width=100, n_in=64, depths=[1000], betas=[0.5],
                        draws=10_000, histograms=True),
    "criticality-inside": dict(arch="inside", driver="uniform", width=100, n_in=64, depths=[1000], betas=[0.5],
                               draws=10_000, histograms=True),
}
"""The published stability protocols by name (Marion et al., JMLR 2025, §4)."""

_PHASE_GRID = dict(hursts=[round(h, 6) for h in linspace(0.05, 0.97, 51)],
                   betas=[round(b, 6) for b in linspace(0, 1.3, 70)])

PHASE_PRESETS = {
    # the published protocol: res-3, d = 40, L = 1000, H = 51 values in [0.05, 0.97], beta = 70
    # values in [0, 1.3], 5 weight draws per H with 10 inputs each
    "full": dict(**_PHASE_GRID, arch="res-3", width=40, n_in=64, depth=1000, draws=5, inputs=10),
    # variants (not published): res-1 (V tanh(h), fractional V only), and res-3 at width 100
    "res-1": dict(**_PHASE_GRID, arch="res-1", width=40, n_in=64, depth=1000, draws=5, inputs=10),
    # res-1 beside its corrected network (+ (L^-2beta / 2d) sigma' sigma per layer) on the same weights, at
    # width 4, where the correction's total, L^(1-2H) / (2d), is of order one at L = 1000 (docs/propagation.md)
    "res-1-corrected": dict(**_PHASE_GRID, arch="res-1", width=4, n_in=64, depth=1000, draws=5, inputs=10,
                            corrected=True),
    "d100": dict(**_PHASE_GRID, arch="res-3", width=100, n_in=64, depth=1000, draws=5, inputs=10),
}
"""The published phase-diagram protocols by name (Marion et al., JMLR 2025, §4)."""

DEFAULT_PRESET = {"stability": "iid", "phase": "full"}
"""The preset a command runs without ``--preset``."""

TASK_BYTES = 1 << 30
"""The default draws per task of a stability study: as many as fit in this many bytes of weights and stored
states (part of the spec and the seeds)."""
DEFAULTS = {
    "stability": dict(inputs=1, seed=0, dtype="float32", histograms=False, delta=0.25),
    "phase": dict(seed=0, dtype="float32"),
}
"""The scalar defaults of plan_stability and plan_phase (and of the command line)."""

DELTA = DEFAULTS["stability"]["delta"]
"""The default ``delta`` of the high-probability bounds (each holds with probability ``>= 1 - delta``)."""
