"""The settings, presets, defaults and margins of the learning-rate transfer study
(docs/transfer.md), torch-free so that the command line reads them for ``--help``
(:mod:`deeplimits.cli.transfer`).

The heuristic under test (docs/transfer.md): with the residual branch multiplied by ``L^-beta``,
the learning rate of the residual blocks that keeps one step of order one scales as
``L^(2 beta - 1)`` with SGD and as ``L^(beta - 1)`` with Adam (:func:`predicted_exponent`).
"""

from __future__ import annotations

__all__ = ["COORD_SAMPLES", "horizon_epochs", "by_setting", "OPTIMIZERS", "VARIANTS", "PRESETS", "CONV_PRESETS",
           "DEFAULT_PRESET", "DEFAULTS",
           "SLOPE_MARGIN", "LOSS_MARGIN",
           "LEVEL", "predicted_exponent", "exponent_of", "settings"]

OPTIMIZERS = ("sgd", "adam")
"""The optimisers compared: plain mini-batch SGD and Adam, one rate per configuration."""

VARIANTS = ("rescaled", "not-rescaled")
"""How the rate of the residual blocks follows the depth: ``base L^p`` with ``p`` the predicted
exponent, or ``base`` alone (``p = 0``: the same as rescaled where the prediction is 0)."""

SLOPE_MARGIN = 0.25
"""``transfers`` needs the interval of the optimum's exponent within ``[-SLOPE_MARGIN, SLOPE_MARGIN]``:
over a depth range of a factor 16 (four octaves) that is at most one grid step (a factor 2 of
the rate) of movement of the optimum, the resolution of the grid."""

LOSS_MARGIN = 0.2
"""``transfers`` needs the final loss at the transferred rate (the smallest depth's optimum,
rescaled) within 20% of each depth's own optimal loss (upper bound of its interval)."""

LEVEL = 0.1
"""Two-sided error of the intervals (90%): the equivalence test behind ``transfers`` (two one-sided
tests at 5% each) and the one-sided test at 5% behind ``does not transfer``."""

PRESETS = {
    # tiny: seconds; for tests and a first look (the verdicts need more seeds)
    "quick": dict(depths=[2, 4, 8, 16, 32], width=8, seeds=3, lrs=[-6, 4], epochs=1, samples=256),
    # the MLP ResNet on the bundled digits: minutes of CPU on 2 cores (docs/transfer.md)
    "cpu": dict(depths=[4, 8, 16, 32, 64, 128], width=16, seeds=8, lrs=[-8, 6], epochs=3, samples=1437),
}
"""The command's presets (``deeplimits transfer --preset``)."""

CONV_PRESETS = {
    # convolutional ResNets on digits as 8 x 8 images (one stage): seconds; for tests
    "conv-quick": dict(dataset="digits", depths=[2, 4, 8], width=4, seeds=2, lrs=[-4, 0], epochs=2, samples=128,
                       batch_size=32, stages=1),
    # the same on 2 CPU cores: minutes (docs/transfer.md)
    "conv": dict(dataset="digits", depths=[2, 4, 8, 16], width=8, seeds=2, lrs=[-5, 1], epochs=3, samples=256,
                 batch_size=32, stages=1),
    # Bordelon et al. (ICLR 2024) Fig. 1's setting: CIFAR-10 ResNets read from --root; for a GPU or a cluster
    "published": dict(dataset="cifar10", depths=[3, 6, 12, 24, 48], width=16, seeds=3, lrs=[-10, 2], epochs=20,
                      samples=None, batch_size=128, stages=3, chunk=1),
}
"""The presets of convolutional residual networks (``deeplimits transfer --preset``;
:func:`~deeplimits.studies.transfer.conv.plan_conv_transfer`): ``depths`` counts the residual
blocks over ``stages`` stages, ``width`` the first stage's channels, ``chunk`` the seeds per task."""

DEFAULT_PRESET = "cpu"
"""The preset the command runs without ``--preset``."""

COORD_SAMPLES = 128
"""The training inputs the coordinate check trains and measures on (its full batch)."""

DEFAULTS = dict(betas=[0.0, 0.5, 1.0], optimizers=list(OPTIMIZERS), batch_size=64, coord_steps=5, seed=0,
                dtype="float32", arch="res-1", activation="tanh")
"""The defaults of :func:`~deeplimits.studies.transfer.study.plan_transfer` the presets leave alone."""


def predicted_exponent(beta: float, optimizer: str) -> float:
    """The exponent ``p`` of the heuristic rate ``lr ∝ L^p`` of the residual blocks: ``2 beta - 1``
    with SGD, ``beta - 1`` with Adam (docs/transfer.md)."""
    return 2.0 * beta - 1.0 if optimizer == "sgd" else beta - 1.0


def horizon_epochs(epochs: int) -> list[int]:
    """The epochs (from 1) after which the optimum is read again, the last ``epochs`` itself (the
    verdict's own): every epoch up to 8, else the quarters of the training (how the optimum moves
    with the number of steps: at least three horizons where there are three epochs)."""
    if epochs <= 8:
        return list(range(1, epochs + 1))
    return sorted({-(-epochs * q // 4) for q in (1, 2, 3, 4)})


def by_setting(flat: list, variants: int, rates: int, seeds: int) -> list:
    """A task's per-configuration values (variant-major, then rate, then seed) as variants x rates x seeds."""
    return [[flat[(v * rates + i) * seeds:(v * rates + i + 1) * seeds] for i in range(rates)] for v in range(variants)]


def exponent_of(beta: float, optimizer: str, variant: str) -> float:
    """The exponent applied by ``variant``: the predicted one, or 0 (not rescaled)."""
    return predicted_exponent(beta, optimizer) if variant == "rescaled" else 0.0


def settings(betas, optimizers) -> list[tuple[float, str, str]]:
    """``(beta, optimizer, variant)`` of a study: both variants where the prediction is not 0,
    the rescaled one alone where it is (there the two are the same runs)."""
    return [(b, o, v) for b in betas for o in optimizers for v in VARIANTS
            if v == "rescaled" or predicted_exponent(b, o) != 0.0]
