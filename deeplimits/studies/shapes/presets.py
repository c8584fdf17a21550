"""The protocol, cases, grids, presets and defaults of the shapes study (docs/shapes.md), torch-free
so that the command line reads them for ``--help`` (:mod:`deeplimits.cli.shapes`).

The protocol is Chaintron, Chizat & Maass's (2026, "ResNets of all shapes and sizes", their released
code): one sample in dimension 3, 15 recorded steps of full-batch gradient descent at base rate 0.1,
``alpha = 1``; embeddings ``W_e``, ``W_u`` coupled across ``D`` (a width-``D`` network uses the first
``D`` rows of one larger draw), ``U``, ``V`` fresh per network.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Protocol", "PROTOCOL", "CASES", "RESIDUALS", "GRID", "PUBLISHED", "PRESETS", "DEFAULT_PRESET",
           "DEFAULTS", "LEVEL", "SWAP_MARGIN", "VERTEX_MARGIN", "MIN_CURVATURE"]


@dataclasses.dataclass(frozen=True)
class Protocol:
    """One training run of the study: the sample, the recorded steps, the base rate and ``alpha``."""

    x: tuple = (0.48000164, -0.13361224, 0.62589632)
    """The input (``|x| = 0.8``)."""
    y: tuple = (0.62789524, 0.26597976, -0.05539644)
    """The target."""
    steps: int = 15
    """Recorded steps ``K``: the network after ``0 .. K - 1`` gradient steps."""
    lr: float = 0.1
    """The base rate ``eta_0`` (with the per-matrix multipliers ``D`` for ``U`` and ``V``)."""
    alpha: float = 1.0
    """The residual scale's numerator: ``h + alpha/(L M) V sigma(U^T h / D)``."""


PROTOCOL = Protocol()
"""The published protocol (their sample drawn from seed 42, ``x`` rescaled to norm 0.8)."""

RESIDUALS = {"LM": "alpha / (L M), rate lr / alpha",
             "sqrtL": "alpha / (sqrt(L) M), rate lr / (alpha sqrt(L))"}
"""The residual scales and the rates that go with them: the protocol's, and the one built to say no to
the L <-> M swap (depth-muP's branch scale ``1/sqrt(L)`` in place of ``1/L``, the rate divided by
``sqrt(L)`` so that the first step moves the output as much: the noise at initialisation is then of
order ``sqrt(D/M)`` whatever ``L``). The literal ``alpha/L`` blows up under the protocol's rates."""

CASES = {
    "linear": dict(activation="identity", residual="LM", embeddings="shared", limit="exact",
                   label="linear activation against the exact limit (the published protocol)"),
    "tanh": dict(activation="tanh", residual="LM", embeddings="shared", limit="reference",
                 label="tanh against the reference network (the largest network of the same seeds; no exact limit)"),
    "sqrt-depth": dict(activation="identity", residual="sqrtL", embeddings="shared", limit="exact",
                       label="built to say no: branch scale alpha/(sqrt(L) M) in place of alpha/(L M), rate / sqrt(L)"),
    "unshared": dict(activation="identity", residual="LM", embeddings="unshared", limit="exact",
                     label="built to say no: every D draws its own embeddings (not coupled across D)"),
}
"""The cases: the activation, the residual scale, whether the embeddings are shared across ``D``, and
what the networks are measured against (``exact``: the limit of
:func:`~deeplimits.studies.shapes.limit.linear_limit`; ``reference``: the largest network)."""

GRID = [10, 13, 17, 23, 30, 40, 53, 70, 93, 123, 163, 216, 285, 378, 499]
"""Their 15-point grid, ``floor(10^linspace(1, log10 500, 15))``, for ``L``, ``M`` and ``D``."""

PUBLISHED = dict(a=0.67, b=0.44, c=0.0, step=5, fit_min=[50, 10, 10], runs=65)
"""Their released fit of the hidden-state error at step 5 (``a = 0.673``, ``b = 0.437``, ``c``
about 0), over the cells with ``L > 50``, ``M > 10``, ``D > 10``, means of 65 runs per cell
(13 embedding draws x 5 draws of ``U``, ``V``)."""

PRESETS = {
    # a grid and seeds that pin a and b within 20%, fitted on the published mask: minutes on 2 cores (docs/shapes.md)
    "cpu": dict(depths=[16, 32, 64, 128], widths=[16, 32, 64, 128], dims=[8, 11, 16, 23, 32, 45, 64, 91, 128],
                seeds=128, fit_min=PUBLISHED["fit_min"]),
    # their grid (their run skipped the widest M) and runs per cell: hundreds of CPU hours; --device cuda
    "published": dict(depths=GRID, widths=GRID[:-1], dims=GRID, seeds=65, fit_min=PUBLISHED["fit_min"]),
    # a first look in seconds (the verdicts need more seeds)
    "quick": dict(depths=[8, 16], widths=[8, 16], dims=[8, 16, 32], seeds=4, fit_min=[4, 4, 4]),
}
"""The command's presets (``deeplimits shapes --preset``)."""

DEFAULT_PRESET = "cpu"
"""The preset the command runs without ``--preset``."""

DEFAULTS = dict(case="linear", steps=PROTOCOL.steps, lr=PROTOCOL.lr, step=PUBLISHED["step"], seed=0, dtype="float64",
                chunk=16)
"""The scalar defaults of :func:`~deeplimits.studies.shapes.study.plan_shapes` (and the command line):
``chunk`` is the most runs per task when none is given (fewer where memory asks)."""

LEVEL = 0.05
"""The level of each one-sided test of the verdicts (their intervals are ``1 - 2 LEVEL``)."""

SWAP_MARGIN = 0.1
"""The L <-> M swap agrees when the interval of ``log(e(L, M, D) / e(M, L, D))`` lies within
``+-SWAP_MARGIN`` (errors equal within about 10%), and disagrees when it lies outside."""

VERTEX_MARGIN = 2.0
"""The U in ``D`` has its minimum near ``sqrt(b/a) sqrt(M L)`` when the interval of the ratio of the
two lies within ``[1/VERTEX_MARGIN, VERTEX_MARGIN]``."""

MIN_CURVATURE = 0.1
"""The error against ``D`` at fixed ``M L`` is U-shaped when the curvature of ``log e`` in ``log D``
(its quadratic coefficient) is above this: half the law's, about 0.2 over a factor 16 of ``D`` around
its minimum (embeddings not shared across ``D`` measure about 0.02)."""
