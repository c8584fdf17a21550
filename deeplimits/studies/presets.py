"""Default study grids and defaults of the studies, torch-free (the command line reads them to
build its ``--help`` without importing the numerical stack).

* :data:`STABILITY_PRESETS`, :data:`PHASE_PRESETS`: the published protocols (Marion et al.,
  JMLR 2025), used by ``deeplimits stability --preset NAME`` / ``deeplimits phase``;
* :data:`DEFAULT_STUDY`: the convergence study run without a regime (sde, ode, fbm at H = 3/4);
* :data:`STUDY_OPTIONS`: options a regime requires, filled in when none of their group is given;
* :data:`DEFAULTS`: the scalar defaults of each study's plan function (tests/test_cli_thin.py
  checks them against the defaults (:func:`deeplimits.studies.settings.defaults`: the signatures and their
  groups) of ``plan_convergence``, ``plan_stability``, ``plan_phase``,
  ``plan_training``, ``plan_scaling`` and ``weight_diagnostics``);
* :data:`DEFAULT_PRESET`: the preset a command runs without ``--preset``;
* :data:`REFERENCE_REFINEMENT`, :data:`MAX_CHUNK`, :data:`TASK_BYTES`: the default reference
  grid and draws per task of the convergence study, and the stability study's task budget;
  :data:`CONV_GRID`: ``deeplimits weights``' grid for the spectral norms of convolutions.

The command line's ``--help`` prints these (tests/test_layout.py checks that every default it
prints is read from here or from the option declarations, :mod:`deeplimits.options`).
"""

from __future__ import annotations

__all__ = ["linspace", "STABILITY_PRESETS", "PHASE_PRESETS", "TRAIN_PRESETS", "SCALING_PRESETS", "CONV_SCALING_PRESETS", "CPU_DEPTHS", "SHORT_CPU_DEPTHS",
           "geometric_depths", "DEFAULT_STUDY",
           "STUDY_OPTIONS", "DEFAULTS", "DEFAULT_PRESET", "REFERENCE_REFINEMENT", "MAX_CHUNK", "TASK_BYTES",
           "CONV_GRID", "study_options"]


def linspace(start: float, stop: float, count: int) -> list[float]:
    """``count`` evenly spaced values from ``start`` to ``stop``: ``numpy.linspace`` in plain
    Python, value for value (``start + i * step``, the last value ``stop`` exactly)."""
    if count == 1:
        return [float(start)]
    step = (stop - start) / (count - 1)
    values = [start + i * step for i in range(count)]
    values[-1] = stop
    return [float(v) for v in values]


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

def geometric_depths(first: int, last: int) -> list[int]:
    """The published family ``floor(1.2^n)`` for ``n = first..last`` (``n = 13``: 10, ``n = 50``: 9100)."""
    return sorted({int(1.2 ** n) for n in range(first, last + 1)})


#: the depths of the CPU default: floor(1.2^n) from 10 to 850 (about a minute and a half on 2
#: cores; at 10 to 137 the beta-scaled increments do not decay yet, docs/weights.md "Measured")
CPU_DEPTHS = geometric_depths(13, 37)
#: the depths of the other CPU presets (SGD, digits): floor(1.2^n) from 10 to 137
SHORT_CPU_DEPTHS = geometric_depths(13, 27)
_PUBLISHED_DEPTHS = geometric_depths(13, 50)
#: the initialisations of the weights of ``deeplimits scaling``, by the released code's names
#: (``ScalingPlan.init_method``)
INIT_METHODS = ("xavier-depth", "xavier")
#: the released code's depths: its get_depths(min_depth=3, max_depth=1000, base=1.2), floor(1.2^n)
#: from 3 to 850 (1.2^38 > 1000)
RELEASED_DEPTHS = geometric_depths(7, 37)

#: Cohen et al.'s released code (instadeepai/scaling-resnets), run_experiment's defaults with
#: ReLU and one delta_k per layer (delta_type 'multi', delta_k ~ N(0, 1/L^2), the default here):
#: SGD at 5e-3, batches of 50, at most 200 epochs, torch.nn.MSELoss() below 1e-2, 1024 training
#: and 256 test samples, init_method 'xavier' at initial_sd 1e-4 (A ~ N(0, (1e-4/d)^2), b ~
#: N(0, (1e-4/sqrt d)^2)), its training loop (train_final_net: the running loss, patience 5, and
#: the in-place shuffle whose batches collapse to the first), its task (inputs on the sphere,
#: angles 5(k-1)pi/K); docs/weights.md, "The released code's ReLU settings"
RELEASED_RELU = dict(activation="relu", optimizer="sgd", lr=5e-3, batch_size=50, max_epochs=200, loss="mse",
                     stop_loss=1e-2, samples=1280, init_method="xavier", init_scale=1e-4, bias_init="normal",
                     stop_rule="running", batches="collapsed", inputs="sphere", angle_start=0)

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

#: the depths of the published convolutional family: residual blocks from 8 (two per stage of the
#: ResNet-18 layout) to 120 (the published range is 8 to 121; here multiples of the four stages)
CONV_PUBLISHED_DEPTHS = [8, 12, 16, 24, 32, 48, 64, 88, 120]

CONV_SCALING_PRESETS = {
    # a labelled variant for 2 CPU cores: digits as 8 x 8 images, one stage of 16 channels, depths
    # 4 to 32 blocks, 25 epochs of the published optimiser and schedule at lr 0.02 on mini-batches
    # of 32, no crops or flips (a flipped digit is another figure; with them, or at lr 0.05 and
    # above, networks of 11 to 23 blocks stayed at chance: docs/weights.md, "Convolutional networks")
    "cpu": dict(dataset="digits", width=16, stages=1, depths=[4, 6, 8, 11, 16, 23, 32], lr=0.02, epochs=25,
                batch_size=32, augment=False),
    # Cohen et al. (ICML 2021, §3.2): CIFAR-10 from local files (--root), the ResNet-18 layout (64
    # channels, four stages), SGD lr 0.1, momentum 0.9, weight decay 5e-4, cosine over 200 epochs,
    # crops padded by 4 and flips; for a GPU or a cluster
    "published": dict(dataset="cifar10", width=64, stages=4, depths=CONV_PUBLISHED_DEPTHS, lr=0.1, epochs=200),
}
"""The presets of ``deeplimits scaling --arch conv``."""

#: regime -> (a group of options, the defaults used when none of the group is given)
STUDY_OPTIONS = {
    "fbm": (("hurst",), {"hurst": 0.75}),
    "rough": (("hurst",), {"hurst": 0.4}),
    "inside-ode": (("alpha", "beta"), {"beta": 0.5}),
}

#: the convergence study without a regime: (regime, options) in order
DEFAULT_STUDY = (("sde", {}), ("ode", {}), ("fbm", STUDY_OPTIONS["fbm"][1]))

#: the preset a command runs without ``--preset``
DEFAULT_PRESET = {"stability": "iid", "phase": "full", "scaling": "cpu"}

#: the default reference grid of a convergence study with rough weights: this many times the
#: largest depth (part of the spec, hence of the store key)
REFERENCE_REFINEMENT = 16
#: the default draws per task of a convergence study, at most (part of the spec and the seeds)
MAX_CHUNK = 64
#: the default draws per task of a stability study: as many as fit in this many bytes of weights
#: and stored states (part of the spec and the seeds)
TASK_BYTES = 1 << 30
#: ``deeplimits weights``: the N x N grid of the spectral norms of convolution kernels when the
#: source gives none (docs/weights.md: within 2% of the norm on the infinite grid for 3x3 kernels)
CONV_GRID = 16

#: the scalar defaults of the plan functions (and of the command line)
DEFAULTS = {
    "convergence": dict(inputs=1, seed=0, dtype="float64"),
    "stability": dict(inputs=1, seed=0, dtype="float32", histograms=False, delta=0.25),
    "phase": dict(seed=0, dtype="float32"),
    "train": dict(dataset="digits", driver="gaussian", betas=[0.5], lrs=[1e-2], seeds=1, arch="res-1", bias=True,
                  depth=64, width=30, epochs=10, batch_size=128, optimizer="adam", lr_decay_halfway=True,
                  save_weights=True, seed=0, dtype="float32"),
    "scaling": dict(dataset="synthetic", activation="tanh", width=10, seeds=1, optimizer="adam", lr=1e-2, batch_size=32,
                    loss="mse", stop_loss=1e-3, max_epochs=300, init_scale=0.01, init_method="xavier-depth",
                    bias_init="zero", inputs="cube",
                    angle_start=1, batches="shuffled", stop_rule="evaluated", samples=1024, seed=0, dtype="float32"),
    "weights": dict(beta=0.0),
    "train-conv": dict(lrs=[0.1], depth=8, width=16, epochs=10),
    "order": dict(noise=1, depths=[8, 16, 32, 64, 128, 256, 512], draws=256, seed=0, dtype="float64", tables=200, pool_factor=None),
}


def study_options(regime: str, options: dict) -> dict:
    """``options`` of a convergence study of ``regime`` with the defaults of
    :data:`STUDY_OPTIONS` filled in when none of their group is given."""
    group, defaults = STUDY_OPTIONS.get(regime, ((), {}))
    if group and all(options.get(name) is None for name in group):
        return {**options, **defaults}
    return dict(options)
