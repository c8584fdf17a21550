"""The laws, presets and defaults of the law study (docs/law.md), torch-free so that the command
line reads them for ``--help`` (:mod:`deeplimits.cli.law`)."""

from __future__ import annotations

__all__ = ["LAWS", "METHODS", "PRESETS", "DEFAULT_PRESET", "DEFAULTS", "FIG2", "MARGIN", "FIG2_MARGIN"]

LAWS = {
    "uniform": "uniform on [-sqrt(3/d), sqrt(3/d)]",
    "rademacher": "Rademacher +-1/sqrt(d)",
    "gaussian": "Gaussian N(0, 1/d)",
}
"""The built-in centred weight laws of variance ``1/d``: name -> what it is (any registered i.i.d.
driver with a ``from_normal`` hook is a law of the study too)."""

PRESETS = {
    # depths 4 to 64 against Euler-Maruyama on 64, 128, 256 steps: about 3 minutes on one core
    "cpu": dict(depths=[4, 8, 16, 32, 64], fine=256, draws=1572864),
    # a first look: seconds (the verdict needs more draws)
    "quick": dict(depths=[4, 8, 16, 32], fine=128, draws=65536),
}
"""The command's presets (``deeplimits law --preset``)."""

DEFAULT_PRESET = "cpu"
"""The preset the command runs without ``--preset``."""

METHODS = ("controls", "coupled", "plain")
"""How the weak error is estimated: coupled through one path with the control variates, coupled
alone, or plain Monte Carlo (every network its own weights)."""

DEFAULTS = dict(law="uniform", width=4, chunk=8192, samples=20000, mean=0.0, variance=1.0, method="controls", seed=0,
                dtype="float32", arch="res-1", activation="tanh", decay_power=0.5)
"""The scalar defaults of :func:`~deeplimits.studies.law.study.plan_law` (and the command line);
``decay_power``: the power ``p`` of ``--variance-decay C`` given without it (a variance ``(1 + C
L^-1/2)/d``, a weak error falling like ``L^-1/2``: the wrong rate nearest to the order 1)."""

MARGIN = 0.25
"""The default margin of an ``agrees``: the weak rate within it of 1 (half the distance to 1/2, the
rate a law of the wrong variance shows: docs/law.md, "The fit, the rate and the verdict")."""

FIG2 = dict(width=100, depths=[10, 100, 1000], draws=400, chunk=100)
"""Marion et al.'s Fig. 2 (res-3, uniform weights, beta = 1/2): the width, the depths and the draws
of ``deeplimits law --fig2`` on the CPU (their figure has 10^4 draws)."""

FIG2_MARGIN = 0.05
"""The margin of Fig. 2's ``agrees`` (:mod:`~deeplimits.studies.law.fig2_verdict`): the fraction of the
network's draws below each of the limit's quartiles within it of 1/4, 1/2, 3/4."""
