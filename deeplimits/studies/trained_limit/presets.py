"""The cases, presets and defaults of the trained-limit study (docs/trained-limit.md), torch-free
so that the command line reads them for ``--help`` (:mod:`deeplimits.cli.trained_limit`)."""

from __future__ import annotations

__all__ = ["CASES", "PRESETS", "DEFAULT_PRESET", "DEFAULTS"]

CASES = {
    "linear": dict(arch="res-1", activation="identity", driver="smooth", beta=1.0, coupled=True, theory=1.0,
                   label="linear res-1, smooth init, beta = 1 (Sander et al. 2022: rate 1)"),
    "res-2": dict(arch="res-2", activation="tanh", driver="smooth", beta=1.0, coupled=True, theory=1.0,
                  label="res-2 tanh, smooth init, beta = 1 (Marion et al. 2024: rate 1)"),
    "res-3": dict(arch="res-3", activation="relu", driver="smooth", beta=1.0, coupled=True, theory=None,
                  label="res-3 (ReLU), smooth init, beta = 1 (ReLU is not smooth: no rate is stated)"),
    "inside": dict(arch="inside", activation="tanh", driver="smooth", beta=1.0, coupled=True, theory=1.0,
                   label="inside h + (1/L) tanh(W h), smooth init (the Euler rate 1)"),
    "iid": dict(arch="res-1", activation="tanh", driver="uniform", beta=0.5, coupled=True, theory=None,
                label="res-1 tanh, i.i.d. uniform init, beta = 1/2 (fresh weights at each depth: no common limit)"),
    "brownian": dict(arch="res-1", activation="tanh", driver="gaussian", beta=0.5, coupled=True, theory=None,
                     label="res-1 tanh, i.i.d. Gaussian init read off one Brownian path, beta = 1/2 (states: an SDE; "
                           "weights: no limit)"),
    "control": dict(arch="res-1", activation="tanh", driver="smooth", beta=1.0, coupled=False, theory=None,
                    label="control: res-1 tanh, a different smooth function at each depth (no common limit)"),
}
"""The cases: what each network is, how its weights start, and the rate the theory states
(``None``: none; the distances should not fall, or no theorem covers the case)."""

PRESETS = {
    # the three cases side by side at depths 8 to 256 against 2048: minutes on 2 cores
    "cpu": dict(cases=["linear", "res-2", "iid", "control"], depths=[8, 16, 32, 64, 128, 256], reference=2048),
    # every case at the cpu preset's depths: res-1/2/3 and the inside model from smooth weights, i.i.d. and Brownian
    "all": dict(cases=list(CASES), depths=[8, 16, 32, 64, 128, 256], reference=2048),
    # a smaller family for a first look: seconds
    "quick": dict(cases=["linear", "iid"], depths=[4, 8, 16, 32], reference=256, width=4, samples=20, epochs=20),
}
"""The command's presets (``deeplimits trained-limit --preset``)."""

DEFAULT_PRESET = "cpu"
"""The preset the command runs without ``--preset``."""

DEFAULTS = dict(width=8, samples=80, seeds=5, epochs=50, lr=0.1, optimizer="sgd", checkpoints=4, seed=0,
                dtype="float64")
"""The scalar defaults of :func:`~deeplimits.studies.trained_limit.study.plan_trained_limit` (and the command line)."""
