"""The presets and defaults of the scaling study (docs/weights.md, "The scaling experiment"),
torch-free: the command line reads them for ``--help``.

* :data:`SCALING_PRESETS`: Cohen et al.'s protocols by name (``deeplimits scaling --preset``), at
  the depth families :data:`CPU_DEPTHS`, :data:`SHORT_CPU_DEPTHS`, :data:`RELEASED_DEPTHS`;
* :data:`DEFAULT_PRESET`: the preset the command runs without ``--preset``;
* :data:`ARCH`: the published block; :data:`INIT_METHODS`: the initialisations, by the released code's names;
* :data:`DEFAULTS`: the scalar defaults of :func:`~.study.plan_scaling`.
"""

from __future__ import annotations

from ..presets import geometric_depths

__all__ = ["ARCH", "CPU_DEPTHS", "SHORT_CPU_DEPTHS", "INIT_METHODS", "RELEASED_DEPTHS", "RELEASED_RELU",
           "SCALING_PRESETS", "DEFAULT_PRESET", "DEFAULTS"]

ARCH = "inside"
"""The block of the published experiment, ``h + delta_k sigma(W_k h + b_k)`` (a plan of another
registered block records it as ``arch``)."""

CPU_DEPTHS = geometric_depths(13, 37)
"""The depths of the CPU default: floor(1.2^n) from 10 to 850 (about a minute and a half on 2 cores; at 10
to 137 the beta-scaled increments do not decay yet, docs/weights.md "Measured")."""
SHORT_CPU_DEPTHS = geometric_depths(13, 27)
"""The depths of the other CPU presets (SGD, digits): floor(1.2^n) from 10 to 137."""
_PUBLISHED_DEPTHS = geometric_depths(13, 50)
INIT_METHODS = ("xavier-depth", "xavier")
"""The initialisations of the weights of ``deeplimits scaling``, by the released code's names
(``ScalingPlan.init_method``)."""
RELEASED_DEPTHS = geometric_depths(7, 37)
"""The released code's depths: its get_depths(min_depth=3, max_depth=1000, base=1.2), floor(1.2^n) from 3 to
850 (1.2^38 > 1000)."""

RELEASED_RELU = dict(activation="relu", optimizer="sgd", lr=5e-3, batch_size=50, max_epochs=200, loss="mse",
                     stop_loss=1e-2, samples=1280, init_method="xavier", init_scale=1e-4, bias_init="normal",
                     stop_rule="running", batches="collapsed", inputs="sphere", angle_start=0)
"""Cohen et al.'s released code (instadeepai/scaling-resnets), run_experiment's defaults with ReLU and one
delta_k per layer (delta_type 'multi', delta_k ~ N(0, 1/L^2), the default here): SGD at 5e-3, batches of 50,
at most 200 epochs, torch.nn.MSELoss() below 1e-2, 1024 training and 256 test samples, init_method 'xavier'
at initial_sd 1e-4 (A ~ N(0, (1e-4/d)^2), b ~ N(0, (1e-4/sqrt d)^2)), its training loop (train_final_net:
the running loss, patience 5, and the in-place shuffle whose batches collapse to the first), its task
(inputs on the sphere, angles 5(k-1)pi/K); docs/weights.md, "The released code's ReLU settings"."""

SCALING_PRESETS = {
    # Cohen et al. (ICML 2021), the published code's protocol (the defaults: tanh, one shared delta,
    # Adam at 1e-2, MSE below 1e-3, batches of 32) at the CPU depths
    "cpu": dict(depths=CPU_DEPTHS),
    # Cohen et al.'s second setup, ReLU with one delta_k per layer, the published code's protocol
    # (delta_k ~ N(0, 1/L^2), random signs: with delta_k = 1/L ReLU stays at MSE 0.036) at the
    # CPU depths (docs/weights.md, "Measured")
    "relu": dict(activation="relu", depths=CPU_DEPTHS),
    # the paper's text: SGD with a constant rate (what reaches the threshold at every depth: docs/weights.md)
    "cpu-sgd": dict(optimizer="sgd", lr=0.1, dtype="float64", depths=SHORT_CPU_DEPTHS),
    # digits through a fixed random embedding to d = 25 (as Cohen et al. embed MNIST), MSE to 0.01
    "digits": dict(dataset="digits", width=25, stop_loss=0.01, depths=SHORT_CPU_DEPTHS),
    # the published family: depths floor(1.2^n) from 10 to about 10^4 (a cluster or a GPU), Adam, and SGD
    "published": dict(depths=_PUBLISHED_DEPTHS),
    "published-relu": dict(activation="relu", depths=_PUBLISHED_DEPTHS),
    "published-sgd": dict(optimizer="sgd", lr=0.1, dtype="float64", depths=_PUBLISHED_DEPTHS),
    # the released code's own ReLU settings (RELEASED_RELU) at its depths, 3 to 850, and to 9100
    "released-relu": dict(**RELEASED_RELU, depths=RELEASED_DEPTHS),
    "released-relu-9100": dict(**RELEASED_RELU, depths=geometric_depths(7, 50)),
}
"""Cohen et al.'s protocols by name."""

DEFAULT_PRESET = "cpu"
"""The preset the command runs without ``--preset``."""

DEFAULTS = dict(dataset="synthetic", activation="tanh", width=10, seeds=1, optimizer="adam", lr=1e-2, batch_size=32,
                loss="mse", stop_loss=1e-3, max_epochs=300, init_scale=0.01, init_method="xavier-depth",
                bias_init="zero", inputs="cube", angle_start=1, batches="shuffled", stop_rule="evaluated",
                samples=1024, seed=0, dtype="float32")
"""The scalar defaults of plan_scaling (and of the command line)."""
