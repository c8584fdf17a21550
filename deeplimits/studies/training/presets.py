"""The presets and defaults of the training grids (docs/training.md), torch-free: the command line
reads them for ``--help``.

* :data:`TRAIN_PRESETS`: the (H, beta) heat maps of ``deeplimits train --preset NAME``;
* :data:`DEFAULTS`, :data:`CONV_DEFAULTS`: the scalar defaults of ``plan_training`` and of
  ``plan_conv_training``.
"""

from __future__ import annotations

from ..presets import linspace

__all__ = ["TRAIN_PRESETS", "DEFAULTS", "CONV_DEFAULTS"]

_NINE = [round(v, 6) for v in linspace(0.1, 0.9, 10)]

TRAIN_PRESETS = {
    # ReLU: with tanh the residual branch is bounded and beta = 0.1 does not explode at L = 1000
    # the heat map on a laptop CPU in minutes: digits, L = 1000, 5 x 5 (H, beta) x 3 learning rates
    "quick": dict(dataset="digits", driver="fractional", activation="relu", hursts=[0.1, 0.3, 0.5, 0.7, 0.9],
                  betas=[0.1, 0.3, 0.5, 0.7, 0.9], lrs=[1e-3, 1e-2, 1e-1], depth=1000, width=30, epochs=10),
    # the heat map on digits at the published size: 10 x 10 (H, beta) x 5 learning rates
    "digits": dict(dataset="digits", driver="fractional", activation="relu", hursts=_NINE, betas=_NINE,
                   lrs=[1e-4, 1e-3, 1e-2, 1e-1, 1.0], depth=1000, width=30, epochs=10),
    # Marion et al. (JMLR 2025, §4.2): res-1 with bias, d = 30, L = 1000, 10 epochs, batch 128,
    # MNIST and CIFAR-10 from local files (--root); meant for a GPU or a cluster
    "published": dict(dataset="mnist", driver="fractional", activation="relu", hursts=_NINE, betas=_NINE,
                      lrs=[1e-4, 1e-3, 1e-2, 1e-1, 1.0], depth=1000, width=30, epochs=10),
    "published-cifar10": dict(dataset="cifar10", driver="fractional", activation="relu", hursts=_NINE, betas=_NINE,
                              lrs=[1e-4, 1e-3, 1e-2, 1e-1, 1.0], depth=1000, width=30, epochs=10),
}
"""The training grids by name."""

DEFAULTS = dict(dataset="digits", driver="gaussian", betas=[0.5], lrs=[1e-2], seeds=1, arch="res-1", bias=True,
                depth=64, width=30, epochs=10, batch_size=128, optimizer="adam", lr_decay_halfway=True,
                save_weights=True, seed=0, dtype="float32")
"""The scalar defaults of plan_training (and of the command line)."""
CONV_DEFAULTS = dict(lrs=[0.1], depth=8, width=16, epochs=10)
"""The scalar defaults of plan_conv_training (the others are those of plan_training)."""
