"""Property-based fuzz of every public entry point and every command (issue 38).

On top of a valid small configuration, one parameter at a time takes a random BAD value (drawn
by ``hypothesis``: negative, zero, NaN, infinite, huge integers such as 10**12 and 2**63, floats
where integers go, wrong types, empty, decreasing or repeated lists, unknown names, garbage
text), and:

* the library raises :class:`~deeplimits.errors.ParameterError` (or the documented
  :class:`~deeplimits.errors.DamagedFileError` of a file) whose message is one line naming the
  parameter;
* the command exits with status 2 and exactly one line on stderr naming the flag, no
  ``Traceback`` and no ``internal error``, and leaves its working directory empty (outputs
  default to ``runs/...`` there).

Refusals come before any work, so every example is cheap; the examples are seeded
(``derandomize=True``: the same values on every run, never flaky) and a runaway example is
stopped by a CPU-time alarm (``ITIMER_PROF``, CPU seconds: a loaded machine stretches the clock,
not the work) rather than compared with the wall clock. Memory is pinned to 16 GiB so that the
resource refusals do not depend on the machine.
"""

from __future__ import annotations

import math
import os
import re
import signal
import warnings
from decimal import Decimal

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import deeplimits as dl
from deeplimits import _resources as R
from deeplimits.cli import main
from deeplimits.errors import DamagedFileError, ParameterError
from test_bad_inputs import _net, _Toy  # a tiny network and data set (8 + 4 samples of 2 features)

CPU_LIMIT = 30  # CPU seconds for one example (a refusal takes milliseconds): the hang guard
#: examples per parameter of an entry point and per flag of a command; DEEPLIMITS_FUZZ=N multiplies
#: them for a deeper (still seeded) search
DEPTH = int(os.environ.get("DEEPLIMITS_FUZZ", "1"))
EXAMPLES = 10 * DEPTH
CLI_EXAMPLES = 8 * DEPTH


def fuzz(n):
    phases = tuple(Phase) if DEPTH == 1 else (Phase.explicit, Phase.generate)  # a deep search reports, not shrinks
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, phases=phases,
                    suppress_health_check=list(HealthCheck))


class Hung(BaseException):
    """An example that ran past :data:`CPU_LIMIT` CPU seconds (not caught by ``main``)."""


class cpu_bound:
    """Raise :class:`Hung` in the body once it has used :data:`CPU_LIMIT` seconds of CPU time."""

    def __enter__(self):
        def stop(*_):
            raise Hung(f"no refusal within {CPU_LIMIT} CPU seconds")

        self._old = signal.signal(signal.SIGPROF, stop)
        signal.setitimer(signal.ITIMER_PROF, CPU_LIMIT, 1.0)  # again every CPU second, should one be caught

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, self._old)


@pytest.fixture
def machine(monkeypatch):
    monkeypatch.setattr(R, "available_memory", lambda device=None: 16 << 30)


# -- bad values ----------------------------------------------------------------------------------------

NAN, INF = float("nan"), float("inf")
#: values of no numeric type a parameter takes (None is left to the parameters it is bad for)
ODD = st.sampled_from(["4", "", "nan", b"4", [4], [], (), {}, {"a": 1}, object(), 1 + 0j, Decimal("4"),
                       torch.tensor(4), np.array([4]), torch.ones(2), print])
HUGE = st.sampled_from([10 ** 12, 2 ** 63, 2 ** 63 - 1, 2 ** 64 + 1, 10 ** 40, 10 ** 400])
#: huge beyond any limit of a count of draws (10**12 draws of a tiny network are a long but a valid request)
#: integers no parameter takes (a seed of 10**12 is a seed)
BEYOND = st.sampled_from([2 ** 63, 2 ** 64 + 1, 10 ** 40, 10 ** 400])
HUGER = st.sampled_from([10 ** 15, 2 ** 63, 2 ** 63 - 1, 2 ** 64 + 1, 10 ** 40, 10 ** 400])


def bad_int(low=1, high=None, huge=True, none=False):
    """Integers below ``low`` (above ``high``), huge ones (``huge``), floats (any, integral ones too:
    an integer is asked for), booleans, other types; ``None`` when ``none``."""
    out = st.integers(max_value=low - 1) | st.floats() | st.booleans() | ODD
    if high is not None:
        out |= st.integers(min_value=high + 1)
    elif huge:
        out |= {"huger": HUGER, "beyond": BEYOND}.get(huge, HUGE)
    return out | st.none() if none else out


def bad_real(low=None, high=None, low_open=False, high_open=False, none=False):
    """Numbers outside ``[low, high]`` (the open ends included), NaN, infinities, integers too
    large for a float, booleans, other types."""

    def inside(v):
        return (math.isfinite(v) and (low is None or v > low or (v == low and not low_open))
                and (high is None or v < high or (v == high and not high_open)))

    out = (st.floats().filter(lambda v: not inside(v)) | st.sampled_from([NAN, INF, -INF, 10 ** 400, -10 ** 400])
           | st.booleans() | ODD.filter(lambda v: not isinstance(v, Decimal)))
    if low is not None and low > -1e300:
        out |= st.integers(max_value=math.floor(low) - 1)
    if high is not None and high < 1e300:
        out |= st.integers(min_value=math.ceil(high) + 1)
    return out | st.none() if none else out


def bad_name(allowed=(), none=False):
    out = st.text(max_size=12).filter(lambda s: s not in allowed) | st.sampled_from([42, 1.5, b"sde", ["sde"], object()])
    return out | st.none() if none else out


def bad_bool(none=False):
    out = st.sampled_from([1, 0, "yes", "True", 1.0, [], np.bool_(True) if False else "no"])
    return out | st.none() if none else out


BAD_DTYPE = st.sampled_from([torch.float16, torch.int64, torch.bfloat16, "float32", np.float64, float, None, 64])
BAD_DEVICE = st.sampled_from(["tpu", "cuda:99", "meta", "", "cpu:x", 5, 1.5, ["cpu"], "cuda:-1"])
BAD_CALLABLE = st.sampled_from(["x", 5, [print, 1], 1.5])
#: a settings group (deeplimits.studies.settings) given as something else than its group
BAD_GROUP = st.sampled_from([5, "x", {"seed": 1}, [1], 1.5, object(), torch.ones(2, 2)])


def bad_depths(dyadic=True, huge=True):
    """Depth lists that are no depth list: empty, a bad element, decreasing, repeated, not a list."""
    elem = bad_int(huge=huge)
    lists = [st.just([]), st.lists(elem, min_size=1, max_size=3).map(lambda v: [4] + v),
             st.sampled_from([[8, 4], [4, 4], [4, 8, 8], [16, 8, 4], [[4, 8]], [4, [8]], "4,8", 8, {4: 1}, None])]
    if dyadic:
        lists.append(st.sampled_from([[3, 8], [4, 12], [4, 6], [5, 10]]))
    if huge:
        lists.append(st.sampled_from([[4, 2 ** 62], [4, 10 ** 12], [4, 2 ** 63]]))
    return st.one_of(*lists)


def bad_reals(low=None, high=None, low_open=False, high_open=False, distinct=True, empty_ok=False):
    """Lists of reals with a bad element, empty (unless ``empty_ok``), repeated (``distinct``), or no list."""
    elem = bad_real(low, high, low_open, high_open)
    ok = 0.5 if (low is None or low < 0.5) and (high is None or high > 0.5) else (low + high) / 2
    out = [st.lists(elem, min_size=1, max_size=2).map(lambda v: [ok] + v),
           st.sampled_from(["0.5", 0.5, {0.5: 1}, [[0.5]], None])]
    if not empty_ok:
        out.append(st.just([]))
    if distinct:
        out.append(st.just([ok, ok]))
    return st.one_of(*out)


# -- the library ---------------------------------------------------------------------------------------

def _scheme():
    return dl.EulerMaruyama(lambda t, x: -x, lambda t, x: x[..., None])




REGIMES = ("sde", "ode", "fbm", "inside-sde", "inside-ode", "rough")
ARCHS = ("res-1", "res-2", "res-3", "inside")
#: activation specs that are none: unknown names, bad slopes, modules that hold none (random text has no
#: ':', so that no module of a random name is imported)
BAD_ACT_TEXT = st.sampled_from(["cube", "", "leaky_relu:", "leaky_relu:nan", "tanh:", "os:system", "math:sin", ":",
                                "nosuchmodule_xyz:f", "leaky_relu:inf", "leaky_relu:-1e999"]) | st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz_ .", max_size=10).filter(
    lambda s: s not in ("tanh", "relu", "sigmoid", "identity", "linear", "gelu", "silu", "softplus", "elu", "selu",
                        "sin", "leaky_relu", "swish", "id", "erf", "cos", "exp", "softsign", "mish", "celu",
                        "hardtanh", "logsigmoid", "tanhshrink", "softshrink"))
BAD_ACTIVATION = BAD_ACT_TEXT | st.sampled_from([42, 1.5, [torch.tanh], b"tanh"])
CONVERGENCE = dict(
    regime=bad_name(REGIMES, none=True), depths=bad_depths(), draws=bad_int(), width=bad_int(),
    reference=bad_int() | st.sampled_from([4, 8, 12, 6]), inputs=bad_int(), seed=bad_int(low=0, huge="beyond", none=True),
    dtype=BAD_DTYPE, chunk=bad_int(huge=False), device=BAD_DEVICE, activation=BAD_ACTIVATION,
    arch=bad_name(ARCHS), network=BAD_GROUP, compute=BAD_GROUP, decision=BAD_GROUP,
    margin=bad_real(0, 1, low_open=True), budget=bad_real(0, 1e7, low_open=True),
    driver=bad_name(("gaussian",)))  # the regime 'sde' of the base takes only a Brownian path
CONVERGENCE_BASE = lambda: dict(regime="sde", width=2, depths=[4, 8], draws=2, reference=16)  # noqa: E731
PROPAGATION = dict(arch=bad_name(ARCHS, none=True), activation=BAD_ACTIVATION, width=bad_int(), n_in=bad_int(),
                   draws=bad_int(), inputs=bad_int(), seed=bad_int(low=0, huge="beyond", none=True), dtype=BAD_DTYPE,
                   device=BAD_DEVICE, bias=bad_bool(), network=BAD_GROUP, compute=BAD_GROUP)
STABILITY = dict(PROPAGATION, draws=bad_int(huge="huger"), driver=bad_name(("uniform", "gaussian", "rademacher")), depths=bad_depths(dyadic=False).filter(
                     lambda v: v not in ([8, 4], [16, 8, 4])),  # (sorted: a decreasing list is a list of depths)
                 betas=bad_reals(0, None, distinct=False), histograms=bad_bool(none=True), chunk=bad_int(huge=False),
                 delta=bad_real(0, None, low_open=True))
PHASE = dict(PROPAGATION, hursts=bad_reals(0, 1, True, True, distinct=False).filter(lambda v: v is not None),
             betas=bad_reals(0, None, distinct=False).filter(lambda v: v is not None), depth=bad_int(),
             corrected=bad_bool())
TRAINING = dict(
    dataset=bad_name(("digits", "synthetic", "mnist1d", "moons")), driver=bad_name(("gaussian", "uniform",
                                                                                    "rademacher", "fractional",
                                                                                    "smooth")),
    hursts=bad_reals(0, 1, True, True).filter(lambda v: v is not None) | st.just([0.7]), betas=bad_reals(0, None), lrs=bad_reals(0, None, True),
    seeds=bad_int(), arch=bad_name(ARCHS + ("conv",)), activation=BAD_ACTIVATION, bias=bad_bool(),
    depth=bad_int(), width=bad_int(), epochs=bad_int(), batch_size=bad_int(huge=False),
    optimizer=bad_name(("adam", "sgd")),
    lr_decay_halfway=bad_bool(), stop_loss=bad_real(0, None), length_scale=bad_real(0.05, 100) | st.just(0.5),
    seed=bad_int(low=0, huge="beyond", none=True), dtype=BAD_DTYPE, chunk=bad_int(huge=False), save_weights=bad_bool(),
    root=st.sampled_from(["", 5, "/nonexistent/dir", ["x"]]), device=BAD_DEVICE, grid=BAD_GROUP, network=BAD_GROUP,
    training=BAD_GROUP, compute=BAD_GROUP)
SCALING = dict(
    dataset=bad_name(("synthetic", "digits", "cifar10")), activation=bad_name(("tanh", "relu")),
    delta=bad_name(("shared", "per-layer")), depths=bad_depths(dyadic=False).filter(
        lambda v: v not in ([8, 4], [16, 8, 4])) | st.just([8]), width=bad_int(),  # (sorted)
    seeds=bad_int(), optimizer=bad_name(("adam", "sgd")),
    lr=bad_reals(0, None, True, empty_ok=False).filter(lambda v: v != 0.5),  # (a number is one rate)
    batch_size=bad_int(huge=False), loss=bad_name(("mse", "squared")), stop_loss=bad_real(0, None, True),
    max_epochs=bad_int(), init_scale=bad_real(0, None), init_method=bad_name(("xavier-depth", "xavier")),
    delta_init=bad_name(("constant", "normal")), bias_init=bad_name(("zero", "normal")),
    inputs=bad_name(("cube", "sphere")), angle_start=bad_int(low=0, high=1, huge=False),
    batches=bad_name(("shuffled", "published", "collapsed")), stop_rule=bad_name(("evaluated", "running")),
    samples=bad_int(low=3), seed=bad_int(low=0, huge="beyond", none=True), dtype=BAD_DTYPE.filter(lambda v: v != "float32"),
    device=BAD_DEVICE, network=BAD_GROUP, training=BAD_GROUP, protocol=BAD_GROUP,
    compute=BAD_GROUP)  # (a preset names its dtype)
CONV = dict(image_shape=st.sampled_from([(3, 8), (0, 8, 8), (3, -8, 8), (3, 8, 8, 8), "3,8,8", 3, None, (3, 8.0, 8),
                                         (3, 2 ** 63, 8), (10 ** 12, 8, 8), []]),
            classes=bad_int(), blocks=bad_int(huge=True) | st.sampled_from([[1], [1, 1, 1], [0, 0], [1, -1], "1"]),
            stem=bad_int(), channels=st.sampled_from([[], [4], [4, 8, 16], [0, 8], [4, -8], [4, 2 ** 63], "4,8",
                                                      [4.5, 8], None, [[4], 8]]),
            strides=st.sampled_from([[], [1], [1, 2, 2], [0, 2], [1, -2], [1, 2.0], None, "1,2", [1, 2 ** 63]]),
            configs=bad_int(), beta=bad_real(0, None), dtype=BAD_DTYPE, device=BAD_DEVICE)
CONV_BASE = lambda: dict(image_shape=(3, 8, 8), classes=2, blocks=[1, 1], stem=4, channels=(4, 8),  # noqa: E731
                         strides=(1, 2))
LR = bad_real(0, None, True).filter(lambda v: v != [4])  # (one rate per configuration: [4] is a rate)
FIT_BASE = lambda: dict(depths=[8, 16, 32, 64], error=[0.1, 0.07, 0.05, 0.035], terms=[dl.Term(0.5)],  # noqa: E731
                        stderr=[0.01, 0.007, 0.005, 0.0035])


def _library():
    """name -> (function, valid small arguments, {parameter: strategy of bad values}, refusals allowed)."""
    from deeplimits.studies import fit_rate
    from deeplimits.training import ConvResidualNetwork

    floats4 = lambda lo=None: bad_reals(lo, None, distinct=False)  # noqa: E731
    return {
        "pair": (dl.pair, lambda: dict(regime="sde", width=2),
                 dict(regime=bad_name(REGIMES), width=bad_int(huge=False), activation=BAD_ACTIVATION, arch=bad_name(ARCHS),
                      driver=bad_name(("gaussian",))), ()),
        "strong_convergence": (dl.strong_convergence, CONVERGENCE_BASE, {**CONVERGENCE, "progress": BAD_CALLABLE,
                                                                          "execution": BAD_GROUP}, ()),
        "plan_convergence": (dl.plan_convergence, CONVERGENCE_BASE, CONVERGENCE, ()),
        "strong_order": (dl.strong_order, lambda: dict(scheme=_scheme(), x0=[1.0], depths=[4, 8], draws=2,
                                                        reference=16),
                         dict(scheme=st.sampled_from([None, "euler-maruyama", print, 5, object()]),
                              x0=st.sampled_from([[], [NAN], [INF], "x", None, [1.0, "x"], torch.ones(0),
                                                  [10 ** 400], np.array([[NAN]])]),
                              noise=bad_int(), depths=bad_depths(), draws=bad_int(),
                              reference=bad_int() | st.sampled_from([4, 8, 12]),
                              exact=BAD_CALLABLE, reference_scheme=BAD_CALLABLE,
                              order=st.sampled_from(["0.5", 0.5, object(), [0.5]]),
                              hurst=bad_real(0, 1, True, True), seed=bad_int(low=0, huge="beyond", none=True), dtype=BAD_DTYPE,
                              chunk=bad_int(huge=False), device=BAD_DEVICE, progress=BAD_CALLABLE,
                              execution=BAD_GROUP, compute=BAD_GROUP, decision=BAD_GROUP,
                              margin=bad_real(0, 1, low_open=True), budget=bad_real(0, 1e7, low_open=True)), ()),
        "fit_expansion": (dl.fit_expansion, FIT_BASE,
                          dict(depths=st.sampled_from([[], [16, 8, 32, 64], [8, 8, 32, 64], [0, 16, 32, 64],
                                                       [8, 16, 32, NAN], [8, 16, 32, INF], "8,16", None, 8,
                                                       [[8, 16, 32, 64]], [8, 16, 32, "64"], [8, 16, 32, 10 ** 400]]),
                               error=floats4(0) | st.sampled_from([[0.1, 0.07, 0.05, 0.0], [0.1, 0.07, 0.05, -1.0],
                                                                   [0.1, 0.07, 0.05], np.ones((2, 2)), [1, 1, 1, NAN]]),
                               terms=st.sampled_from([[], None, "0.5", [0.5], dl.Term(0.5), [dl.Term(0.5), "x"], 5,
                                                      ]),
                               stderr=st.sampled_from([None, [0.01] * 3, [0.01, 0.01, 0.01, 0.0], [0.01, 0.01, 0.01, NAN],
                                                       "x", 0.01, [[0.01] * 4]]),
                               cov=st.sampled_from([np.eye(3), -np.eye(4), np.full((4, 4), NAN), "x", 5,
                                                    np.ones((4, 4)) - 2 * np.eye(4), [[1, 2], [3, 4]], np.eye(4)[None]]),
                               reference=bad_int(huge=False) | st.sampled_from([8, 64, 64.0, True]),
                               slope=st.sampled_from([(0.5,), (0.5, NAN, 1.0), "x", 0.5, (0.5, 0.4, 0.6, 0.7)]),
                               level=bad_real(0, 1, True, True), remainder=st.sampled_from([0.5, "x", [dl.Term(1.0)]]),
                               margin=bad_real(0, 1, low_open=True),
                               equivalence_level=bad_real(0, 0.5, True, True), draws=st.sampled_from([0, -3, 1.5, "x"])),
                          ()),
        "plan_stability": (dl.plan_stability, lambda: dict(width=2, n_in=2, depths=[2, 4], betas=[0.5], draws=2),
                           STABILITY, ()),
        "plan_phase": (dl.plan_phase, lambda: dict(hursts=[0.6], betas=[0.5], width=2, n_in=2, depth=4, draws=1,
                                                   inputs=1), PHASE, ()),
        "plan_training": (dl.plan_training, lambda: dict(depth=4, width=3, epochs=1), TRAINING, ()),
        "plan_scaling": (dl.plan_scaling, lambda: dict(depths=[4, 8], max_epochs=1), SCALING, ()),
        "ResNet": (dl.ResNet, dict, dict(arch=bad_name(("res-1", "res-2", "res-3")), activation=BAD_ACTIVATION,
                                         beta=bad_real(0, None)), ()),
        "ModifiedEulerResNet": (dl.ModifiedEulerResNet, dict,
                                dict(activation=BAD_ACTIVATION, hurst=bad_real(1 / 3, 1, True, True),
                                     scale=bad_real(0, None, True)), ()),
        "ODELimit": (dl.ODELimit, dict, dict(arch=bad_name(("res-1", "res-2", "res-3")), activation=BAD_ACTIVATION,
                                             rtol=bad_real(0, None, True), atol=bad_real(0, None, True)), ()),
        "YoungLimit": (dl.YoungLimit, dict, dict(activation=BAD_ACTIVATION, hurst=bad_real(0.5, 1, True, True)), ()),
        "RoughLimit": (dl.RoughLimit, dict, dict(activation=BAD_ACTIVATION, hurst=bad_real(1 / 3, 0.5, True, True),
                                                 width=bad_int(huge=False)), ()),
        "ResidualNetwork": (dl.ResidualNetwork, lambda: dict(arch="res-1", depth=4, width=3, in_features=2,
                                                             out_features=2),
                            dict(arch=bad_name(ARCHS, none=True), depth=bad_int(), width=bad_int(), in_features=bad_int(),
                                 out_features=bad_int(), configs=bad_int(), beta=bad_real(0, None),
                                 activation=BAD_ACTIVATION, bias=bad_bool(), dtype=BAD_DTYPE, device=BAD_DEVICE,
                                 delta=st.sampled_from(["shared", "per-layer", "global", 5, [1.0], True])), ()),
        "ConvResidualNetwork": (ConvResidualNetwork, CONV_BASE, CONV, ()),
        "train": (dl.train, lambda: dict(module=_net(), data=_Toy(), epochs=1),
                  dict(module=st.sampled_from([None, "net", torch.nn.Linear(2, 2), 5]),
                       data=st.sampled_from([None, "digits", 5, [], _Toy(x_train=torch.full((8, 2), NAN)),
                                             _Toy(y_train=torch.full((8,), 7)), _Toy(x_train=torch.ones(8, 3)),
                                             _Toy(x_train=torch.ones(0, 2), y_train=torch.zeros(0, dtype=torch.int64)),
                                             _Toy(y_train=torch.arange(7) % 2)]),
                       optimizer=bad_name(("adam", "sgd")), lr=LR, epochs=bad_int(),
                       batch_size=bad_int(huge=False), loss=bad_name(("cross_entropy", "mse", "squared"), none=False),
                       lr_decay_halfway=bad_bool(), scheduler_interval=bad_name(("epoch", "batch")),
                       stop_loss=bad_real(0, None), seed=bad_int(low=0, huge="beyond", none=True), callbacks=BAD_CALLABLE,
                       progress=BAD_CALLABLE, training=BAD_GROUP,
                       test_data=st.sampled_from(["x", 5, _Toy(x_test=torch.ones(4, 5))])), ()),
        "load_weights": (dl.load_weights, lambda: dict(source=torch.randn(8, 3)),
                         dict(source=st.sampled_from([None, 5, 1.5, True, "", "/nonexistent/w.pt", "w.txt",
                                                      torch.zeros(0), torch.tensor(1.0), torch.ones(4, 3) * 1j,
                                                      np.array(["a", "b"]), torch.ones(4, 3, dtype=torch.bool),
                                                      torch.ones(2, 3, device="meta")]),
                              depth=bad_int(huge=False)), (DamagedFileError,)),
        "weight_diagnostics": (dl.weight_diagnostics, lambda: dict(A=torch.randn(8, 3)),
                               dict(A=st.sampled_from([None, "A", 5, torch.zeros(0, 3), torch.ones(2, 3),
                                                       torch.full((8, 3), NAN), torch.ones(8, 3) * 1j, [[1.0] * 3] * 8,
                                                       torch.ones(8, 3, device="meta")]),
                                    beta=bad_real(), name=st.sampled_from([5, None, b"A", ["A"]])), ()),
        "make_driver": (dl.make_driver, lambda: dict(name="fractional", hurst=0.7),
                        dict(name=bad_name(("fractional", "gaussian", "uniform", "rademacher", "smooth")),
                             hurst=bad_real(0, 1, True, True, none=True),
                             length_scale=bad_real(0.05, 100)), ()),
        "fgn": (dl.fgn, lambda: dict(n=8, hurst=0.7), dict(n=bad_int(), hurst=bad_real(0, 1, True, True),
                                                           size=st.sampled_from([-1, 0, (2, 0), (2, -1), 1.5, "x",
                                                                                 (10 ** 12,), (2 ** 63,), [[2]]]),
                                                           generator=st.sampled_from([5, "x", np.random.default_rng(0)]),
                                                           dtype=BAD_DTYPE, device=BAD_DEVICE), ()),
        "FractionalDriver": (dl.FractionalDriver, lambda: dict(hurst=0.7), dict(hurst=bad_real(0, 1, True, True)), ()),
        "SmoothDriver": (dl.SmoothDriver, dict, dict(length_scale=bad_real(0.05, 100)), ()),
        "IIDDriver": (dl.IIDDriver, dict, dict(law=bad_name(("gaussian", "uniform", "rademacher"))), ()),
        "activation": (dl.activation, lambda: dict(spec="tanh"), dict(spec=BAD_ACTIVATION), ()),
        "load_dataset": (dl.load_dataset, lambda: dict(name="digits"),
                         dict(name=bad_name(("digits", "synthetic", "mnist1d", "moons")),
                              seed=bad_int(low=0, huge="beyond", none=True), test_fraction=bad_real(0, 1, True, True),
                              device=BAD_DEVICE, dtype=BAD_DTYPE), ()),
        "fit_rate": (fit_rate, lambda: dict(depths=[4, 8], errors=np.ones((3, 2))),
                     dict(depths=st.sampled_from([[], [0, 8], [-4, 8], [NAN, 8], "4,8", 8, None, [[4, 8]], {4: 1},
                                                  [4, INF], [4, 10 ** 400]]),
                          errors=st.sampled_from([np.ones((3, 3)), np.full((3, 2), NAN), "x", np.ones((0, 2)),
                                                  -np.ones((3, 2)), None, [[1, 1]] * 3 + [[1]]]),
                          n_boot=bad_int(), seed=bad_int(low=0, huge="beyond", none=True), level=bad_real(0, 1, True, True)), ()),
        "init_from_driver": (dl.init_from_driver, lambda: dict(module=_net(), driver=dl.make_driver("gaussian")),
                             dict(module=st.sampled_from([None, "net", torch.nn.Linear(2, 2)]),
                                  driver=st.sampled_from([None, "gaussian", 5]),
                                  generator=st.sampled_from([5, "x", np.random.default_rng(0)]),
                                  scales=st.sampled_from(["x", 5, {"nosuch": 1.0}, {"A": NAN}, {"A": -1.0}, [1.0]]),
                                  config=bad_int(low=0, high=0, huge=False)), ()),
        "BatchedAdam": (dl.BatchedAdam, lambda: dict(params=_net().parameters()),
                        dict(lr=LR, betas=st.sampled_from([(0.9,), (1.0, 0.999), (NAN, 0.9),
                                                                                 "x", (-0.1, 0.9), 0.9]),
                             eps=bad_real(0, None, True), weight_decay=bad_real(0, None),
                             axis=bad_int(low=0, huge=True) | st.just(-1)), ()),
        "BatchedSGD": (dl.BatchedSGD, lambda: dict(params=_net().parameters()),
                       dict(lr=LR), ()),
    }


LIBRARY = _library()
_ROWS = [pytest.param(name, param, id=f"{name}-{param}") for name, (_, _, params, _) in LIBRARY.items()
         for param in params]


#: a parameter named as the library names that value everywhere else
ALIAS = {"spec": "activation", "name": "driver"}


def _refused(fn, kwargs, param, also=()):
    """``fn(**kwargs)`` raises a one-line ParameterError (or one of ``also``) naming ``param``."""
    value = kwargs[param]
    where = f"{getattr(fn, '__name__', fn)}({param}={value!r:.60})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with cpu_bound():
                fn(**kwargs)
        except (ParameterError, *also) as e:
            msg = str(e)
            assert "\n" not in msg, f"{where}: a message of several lines: {msg!r}"
            said = ALIAS.get(param, param) if fn in (dl.activation, dl.make_driver) else param
            assert re.search(rf"(?<![A-Za-z_]){re.escape(said)}(?![A-Za-z_])", msg) or (
                getattr(e, "param", None) == param and "source" in msg), f"{where}: the message does not name {param}: {msg}"
            return
        except Hung:
            pytest.fail(f"{where}: no refusal within {CPU_LIMIT} CPU seconds")
        except BaseException as e:  # noqa: BLE001 - a raw error is what the fuzz looks for
            pytest.fail(f"{where}: {type(e).__name__}: {' '.join(str(e).split())[:300]}")
    pytest.fail(f"{where}: accepted")


@pytest.mark.slow
@pytest.mark.parametrize("name,param", _ROWS)
def test_library_refuses_bad_values(name, param, tmp_path, monkeypatch, machine):
    fn, base, params, also = LIBRARY[name]
    monkeypatch.chdir(tmp_path)

    @fuzz(EXAMPLES)
    @given(value=params[param])
    def check(value):
        _refused(fn, {**base(), param: value}, param, also)
        assert os.listdir(tmp_path) == [], f"{name}({param}={value!r:.60}) left {os.listdir(tmp_path)}"

    check()


def test_every_public_parameter_is_fuzzed():
    """Every parameter of the fuzzed entry points has a strategy (or is a documented exception)."""
    import inspect

    skip = {"strong_convergence": {"paths"}, "plan_convergence": {"paths"}, "strong_order": {"paths"},
            "train": {"scheduler"}, "stability": set(), "load_dataset": {"root"},
            "init_from_driver": set(), "BatchedAdam": {"params"}, "BatchedSGD": {"params", "momentum", "weight_decay",
                                                                                 "nesterov", "axis", "dampening"},
            "plan_stability": set(), "plan_phase": set()}
    for name, (fn, _, params, _) in LIBRARY.items():
        sig = inspect.signature(fn)
        for p, spec in sig.parameters.items():
            if spec.kind in (spec.VAR_POSITIONAL, spec.VAR_KEYWORD) or p in skip.get(name, ()):
                continue
            assert p in params, f"{name}({p}=...) is not fuzzed"


# -- the command line ----------------------------------------------------------------------------------

def bad_text(valid=lambda s: False):
    """Garbage flag values: any text (no NUL, which no shell can pass) that ``valid`` refuses."""
    return st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                   max_size=12).filter(lambda s: not valid(s))


_INT = re.compile(r"^\s*[+-]?[0-9]+\s*$")


def cli_int(low=1, huge=True, high=None):
    """Integer flag values that are refused: below ``low``, at least 2^63 (or huge), not digits."""
    out = (st.integers(max_value=low - 1).map(str) | st.integers(min_value=2 ** 63).map(str)
           | st.floats().map(repr) | st.sampled_from(["", " ", "1e3", "0x10", "1_000", "\u0664", "4.", "4,8", "inf"])
           | bad_text(_INT.match))
    if huge:
        out |= st.sampled_from(([str(10 ** 12)] if huge != "huger" else [str(10 ** 15)]) + [str(2 ** 62), "1" + "0" * 30])
    if high is not None:
        out |= st.integers(min_value=high + 1, max_value=2 ** 70).map(str)
    return out


def _float(s):
    try:
        return float(s)
    except ValueError:
        return None


def cli_real(low=None, high=None, low_open=False, high_open=False):
    def valid(s):
        v = _float(s.strip())
        return v is not None and math.isfinite(v) and (low is None or v > low or (v == low and not low_open)) and (
            high is None or v < high or (v == high and not high_open))

    return (st.floats().map(repr) | st.integers(min_value=-10 ** 400, max_value=10 ** 400).map(str)
            | st.sampled_from(["nan", "inf", "-inf", "1e999", "", "0x1p3", "1,2"]) | bad_text()).filter(
        lambda s: not valid(s))


def cli_list(kind, low=None, high=None, dyadic=False, distinct=True, low_open=False, huge=True):
    """List flag values that are refused: empty, a bad element, decreasing, repeated, bad ranges."""
    elem = (cli_int(low=1 if low is None else low, huge=huge) if kind is int
            else cli_real(low, high, low_open, high_open=high is not None)).filter(lambda s: "," not in s)
    ok = "4" if kind is int else ("0.5" if (high is None or high > 0.5) and (low is None or low < 0.5) else "0.7")
    fixed = ["", ",", ",,", f"{ok},", f",{ok}", "4:8:0", "4:8:-1", "4:8:1000000000", "1:1e999:3", "4;8", "[4,8]",
             "4:8", "4:8:3:5", "nan:1:3", "-1e308:1e308:3"]
    if kind is int:
        fixed += ["8,4", "4,4", "4,8,8", "0,4", "-4,8", "4,8.5"]
        if dyadic:
            fixed += ["4,12", "3", "4,6", "4:8:3"]
    if distinct:
        fixed.append(f"{ok},{ok}")
    return st.sampled_from(fixed) | elem | st.tuples(st.just(ok), elem).map(",".join)


def cli_path(kind="file", suffix=".json"):
    """Output paths that are refused: empty, under /proc, through a file; a file's also a directory or
    two missing directories (a run directory is made with its parents, as ``runs/NAME`` is)."""
    return st.sampled_from(["", "/proc/nonexistent/x" + suffix, "{FILE}/x" + suffix, "/dev/null/x" + suffix]
                           + (["{DIR}", "/", "typo/deeper/x" + suffix] if kind == "file" else ["/dev/null", "{FILE}"]))


def cli_choice(choices):
    return bad_text(lambda s: s in choices)


BOOL = bad_text()  # as --flag=VALUE: a boolean flag takes no value
COMMON = {"--seed": cli_int(low=0, huge=False), "--dtype": cli_choice(("float32", "float64")),
          "--device": st.sampled_from(["tpu", "cuda:99", "meta", "", "cuda:x", "cpu:0:1", "cuda:-1", "gpu", "mps:1"])
          | bad_text(lambda s: s.strip() in ("cpu", "cuda", "mps") or re.match(r"^\s*(cpu|cuda|mps)(:\d+)?\s*$", s)),
          "--json": cli_path(), "--quiet": BOOL}
RUNNING = {"--out": cli_path("dir"), "--workers": cli_int(huge=False) | st.sampled_from(["100000", "1000000000"]),
           "--scheduler": st.sampled_from(["", "notanaddress", "tcp://host:port", "tcp://127.0.0.1:0",
                                           "tcp://127.0.0.1:99999", "tcp://:1", "://", "tcp://[::1"]),
           "--timeout": cli_real()}  # --timeout without --workers is refused whatever its value
ACT = BAD_ACT_TEXT
#: a user's object given as MODULE:NAME (deeplimits.cli.user): a module that does not import, a name it does not
#: hold, an object of another kind (a number, a function where a class goes), text of no such form
USER = st.sampled_from(["nosuchmodule_q:X", "math:nosuch", "math:pi", "math:sqrt", "os:sep", "::", "a:b:c", ":X",
                        "math:", "1x:Y", "math:pi.real"]) | bad_text(lambda s: ":" not in s)

CONV_CMD = ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8", "--draws", "2", "--reference", "16"]
ORDER_CMD = ["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--depths", "4,8", "--reference", "16",
             "--draws", "2"]
STAB_CMD = ["stability", "--width", "2", "--n-in", "2", "--depths", "2,4", "--betas", "0.5", "--draws", "2"]
PHASE_CMD = ["phase", "--hursts", "0.6", "--betas", "0.5", "--width", "2", "--n-in", "2", "--depth", "4", "--draws", "1",
             "--inputs", "1"]
TRAIN_CMD = ["train", "--depth", "4", "--width", "3", "--epochs", "1"]
SCALE_CMD = ["scaling", "--depths", "4,8", "--max-epochs", "1", "--samples", "16"]
SCONV_CMD = ["scaling", "--arch", "conv", "--depths", "4,8", "--width", "4", "--epochs", "1"]
TF_CMD = ["transfer", "--preset", "quick", "--depths", "2,4,8", "--lrs=-1,1", "--seeds", "2", "--width", "2",
          "--samples", "16", "--betas", "1", "--optimizer", "adam"]
TFC_CMD = ["transfer", "--preset", "conv-quick", "--depths", "2,4,8", "--lrs=-1,1", "--seeds", "2", "--width", "2",
           "--samples", "16", "--betas", "1", "--optimizer", "adam"]
TL_CMD = ["trained-limit", "--preset", "quick", "--depths", "2,4", "--reference", "8", "--epochs", "1"]
WEIGHTS_CMD = ["weights", "{OK}"]
LAW_CMD = ["law", "--preset", "quick", "--depths", "4,8", "--fine", "32", "--draws", "400"]

CLI = {
    "convergence": (CONV_CMD, {
        "--regime": cli_choice(REGIMES), "--width": cli_int(), "--activation": ACT,
        "--arch": cli_choice(ARCHS), "--depths": cli_list(int, dyadic=True), "--draws": cli_int(),
        "--inputs": cli_int(), "--reference": cli_int() | st.sampled_from(["4", "8", "12"]), "--chunk": cli_int(huge=False),
        "--length-scale": cli_real(), "--hurst": cli_real(), "--beta": cli_real(), "--sa": cli_real(),
        "--sb": cli_real(), "--alpha": cli_real(), "--corrected": BOOL, "--no-ito-correction": BOOL,
        "--block": USER, "--no-correction": BOOL, **COMMON, **RUNNING}),
    "order": (ORDER_CMD, {
        "--scheme": cli_choice(("euler-maruyama", "milstein", "heun", "modified-euler", "torchsde-euler",
                                "torchsde-milstein")) | USER,
        "--problem": cli_choice(("linear-sde", "linear-stratonovich", "sde-regime", "linear-young", "ou", "sin-cos")),
        "--width": cli_real(), "--hurst": cli_real(),  # apply to other problems only
        "--noise-kind": cli_choice(("general", "commutative", "diagonal", "additive")),
        "--depths": cli_list(int, dyadic=True), "--draws": cli_int(),
        "--reference": cli_int() | st.sampled_from(["4", "8", "12", "24"]), "--calibrate": BOOL,
        "--cases": bad_text(), "--tables": cli_real(), "--pool-factor": cli_real(),  # apply to --calibrate only
        "--budget-tables": cli_real(),
        **COMMON, "--out": RUNNING["--out"]}),
    "stability": (STAB_CMD, {
        "--preset": cli_choice(("criticality", "criticality-inside", "iid", "iid-inside", "smooth", "smooth-inside")),
        "--arch": cli_choice(ARCHS), "--activation": ACT, "--width": cli_int(), "--n-in": cli_int(),
        "--bias": BOOL, "--driver": cli_choice(("uniform", "gaussian", "rademacher", "fractional", "smooth")) | USER,
        "--hurst": cli_real(), "--length-scale": cli_real(), "--depths": cli_list(int, distinct=True),
        "--betas": cli_list(float, 0, distinct=False), "--draws": cli_int(huge="huger"), "--inputs": cli_int(),
        "--histograms": BOOL, "--chunk": cli_int(huge=False), "--delta": cli_real(0, low_open=True),
        "--figures": BOOL, "--block": USER, **COMMON, **RUNNING}),
    "phase": (PHASE_CMD, {
        "--preset": cli_choice(("d100", "full", "res-1", "res-1-corrected")), "--arch": cli_choice(ARCHS),
        "--activation": ACT, "--corrected": BOOL,
        "--width": cli_int(), "--n-in": cli_int(), "--bias": BOOL, "--hursts": cli_list(float, 0, 1, low_open=True),
        "--betas": cli_list(float, 0), "--depth": cli_int(), "--draws": cli_int(), "--inputs": cli_int(),
        "--figures": BOOL, "--block": USER, **COMMON, **RUNNING}),
    "train": (TRAIN_CMD, {
        "--preset": cli_choice(("quick", "digits", "published", "published-cifar10")),
        "--dataset": cli_choice(("digits", "synthetic", "mnist1d", "moons")), "--root": bad_text(),
        "--driver": cli_choice(("uniform", "gaussian", "rademacher", "fractional", "smooth")) | USER,
        "--hursts": bad_text(), "--length-scale": cli_real(),  # apply to other drivers only
        "--betas": cli_list(float, 0), "--lrs": cli_list(float, 0, low_open=True), "--seeds": cli_int(),
        "--arch": cli_choice(ARCHS + ("conv",)), "--block": USER, "--activation": ACT, "--bias": BOOL, "--depth": cli_int(),
        "--width": cli_int(), "--epochs": cli_int(), "--batch-size": cli_int(huge=False),
        "--optimizer": cli_choice(("adam", "sgd")), "--lr-decay-halfway": BOOL, "--stop-loss": cli_real(0),
        "--chunk": cli_int(huge=False), "--save-weights": BOOL, **COMMON, **RUNNING}),
    "scaling": (SCALE_CMD, {
        "--preset": cli_choice(("cpu", "relu", "cpu-sgd", "digits", "published", "published-relu", "published-sgd",
                                "released-relu", "released-relu-9100")),
        "--dataset": cli_choice(("synthetic", "digits", "cifar10")), "--activation": cli_choice(("tanh", "relu")),
        "--delta": cli_choice(("shared", "per-layer")), "--depths": cli_list(int) | st.just("8"),
        "--width": cli_int(), "--seeds": cli_int(), "--optimizer": cli_choice(("adam", "sgd")),
        "--lr": cli_list(float, 0, low_open=True), "--batch-size": cli_int(), "--loss": cli_choice(("mse", "squared")),
        "--stop-loss": cli_real(0, low_open=True), "--max-epochs": cli_int(), "--init-scale": cli_real(0),
        "--init-method": cli_choice(("xavier-depth", "xavier")), "--delta-init": cli_choice(("constant", "normal")),
        "--bias-init": cli_choice(("zero", "normal")), "--batches": cli_choice(("shuffled", "published", "collapsed")),
        "--stop-rule": cli_choice(("evaluated", "running")), "--inputs": cli_choice(("cube", "sphere")),
        "--angle-start": cli_choice(("0", "1")), "--samples": cli_int(low=2), "--ablation": BOOL,
        "--arch": cli_choice(("inside", "conv")), "--root": bad_text(), "--epochs": bad_text(),
        **COMMON, **RUNNING}),
    "scaling-conv": (SCONV_CMD, {
        "--preset": cli_choice(("cpu", "digits", "published")), "--dataset": cli_choice(("digits", "cifar10")),
        "--depths": cli_list(int) | st.sampled_from(["8", "4,6", "2,4", "3,4"]), "--width": cli_int(),
        "--seeds": cli_int(), "--lr": cli_list(float, 0, low_open=True) | st.just("0.1,0.2"),
        "--batch-size": cli_int(), "--epochs": cli_int(), "--samples": cli_int(low=2),
        "--root": st.sampled_from(["", "{FILE}", "/nonexistent/root"]), "--optimizer": cli_choice(("adam", "sgd")),
        **COMMON, **RUNNING}),
    "trained-limit": (TL_CMD, {
        "--preset": cli_choice(("cpu", "all", "quick")), "--cases": bad_text(),
        "--depths": cli_list(int, dyadic=True), "--reference": cli_int() | st.sampled_from(["2", "4", "6", "12"]),
        "--width": cli_int(), "--samples": cli_int(), "--seeds": cli_int(), "--chunk": cli_int(huge=False),
        "--epochs": cli_int(), "--lr": cli_real(0, low_open=True), "--optimizer": cli_choice(("sgd", "adam")),
        "--batch-size": cli_int(), "--checkpoints": cli_int(), "--length-scale": cli_real(0.05, 100),
        **COMMON, **RUNNING}),
    "transfer": (TF_CMD, {
        "--preset": cli_choice(("quick", "cpu")), "--betas": cli_list(float, 0, 2),
        "--optimizer": cli_choice(("sgd", "adam")), "--depths": cli_list(int),
        "--lrs": st.sampled_from(["", "x", "1", "2,1", "1,2", "1,2,3", "-41,0", "0,41", "1.5,3", "nan,1", "0:1:2"]),
        "--seeds": cli_int(low=2), "--width": cli_int(), "--epochs": cli_int(), "--samples": cli_int(low=2),
        "--batch-size": cli_int(), "--limit": cli_int(low=9, high=1 << 16), "--root": bad_text(),
        "--chunk": cli_int(), "--block": USER, **COMMON, **RUNNING}),
    "transfer-conv": (TFC_CMD, {
        "--preset": cli_choice(("conv-quick", "conv", "published")), "--betas": cli_list(float, 0, 2),
        "--optimizer": cli_choice(("sgd", "adam")), "--depths": cli_list(int),
        "--lrs": st.sampled_from(["", "x", "1", "2,1", "1,2", "1,2,3", "-41,0", "0,41", "1.5,3", "nan,1", "0:1:2"]),
        "--seeds": cli_int(low=2), "--width": cli_int(), "--epochs": cli_int(), "--samples": cli_int(low=2),
        "--batch-size": cli_int(), "--root": st.sampled_from(["", "{FILE}", "/nonexistent/root"]),
        "--chunk": cli_int() | st.sampled_from(["3", "100"]), "--limit": cli_int() | st.just("16"),
        **COMMON, **RUNNING}),
    "law": (LAW_CMD, {
        "--preset": cli_choice(("cpu", "quick")), "--law": cli_choice(("uniform", "rademacher", "gaussian")) | USER,
        "--block": USER, "--phi": USER, "--activation": ACT,
        "--depths": cli_list(int, dyadic=True), "--fine": cli_int() | st.sampled_from(["8", "16", "24", "48"]),
        "--draws": cli_int(), "--width": cli_int(high=1000), "--chunk": cli_int(huge=False),
        "--samples": cli_int(low=2) | st.sampled_from(["65", "1000"]), "--mean": cli_real(-10, 10),
        "--variance": cli_real(0, 100, low_open=True), "--plain": BOOL, "--controls": BOOL, "--fig2": BOOL, "--margin": cli_real(0, 1, low_open=True),
        **COMMON, **RUNNING}),
    "weights": (WEIGHTS_CMD, {
        "--beta": st.sampled_from(["nan", "inf", "-inf", "1e300", "1e999", "", "x", "0x1p3", "1,2"]),
        "--grid": cli_int(), "--out": cli_path("dir"), "--json": cli_path(),
        "PATH": st.sampled_from(["nothere.npy", "{FILE}", "{DIR}", "{EMPTY}", "", "/proc/nonexistent.pt", "{RUN}",
                                 "/dev/null", "{NAN}", "{TWO}", "{CPLX}", "{GARBAGE}", "{STRIDE0}", "{LIST}"])}),
    "runs": (["runs", "show", "{RUN}"], {
        "ACTION": cli_choice(("list", "show", "export", "plot")),
        "TARGET": st.sampled_from(["nothere", "{FILE}", "{DIR}", "", "/proc/nonexistent", "/dev/null", "{EMPTY}"]),
        "--csv": cli_path(suffix=".csv"), "--json": cli_path()}),
}
_CLI_ROWS = [pytest.param(cmd, f, id=f"{cmd}{f}") for cmd, (_, flags) in CLI.items() for f in flags]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Paths outside the working directory: a regular file, a directory, a finished run and weight files."""
    d = tmp_path_factory.mktemp("fuzz-files")
    (d / "afile").write_text("keep me\n")
    (d / "adir").mkdir()
    np.save(d / "ok.npy", np.random.default_rng(0).normal(size=(8, 3)))
    np.save(d / "nan.npy", np.full((4, 3), np.nan))
    np.save(d / "two.npy", np.ones((2, 3)))
    np.save(d / "cplx.npy", np.ones((4, 3)) * 1j)
    (d / "empty.npy").write_bytes(b"")
    (d / "garbage.pt").write_bytes(os.urandom(2048))
    torch.save(torch.zeros(1).expand(10 ** 5, 10 ** 5), d / "stride0.pt")
    torch.save([torch.ones(3)] * 4, d / "list.pt")
    run = d / "run"
    assert main(CONV_CMD + ["--out", str(run), "--quiet"]) == 0
    return {"{FILE}": str(d / "afile"), "{DIR}": str(d / "adir"), "{OK}": str(d / "ok.npy"),
            "{NAN}": str(d / "nan.npy"), "{TWO}": str(d / "two.npy"), "{CPLX}": str(d / "cplx.npy"),
            "{EMPTY}": str(d / "empty.npy"), "{GARBAGE}": str(d / "garbage.pt"), "{STRIDE0}": str(d / "stride0.pt"),
            "{LIST}": str(d / "list.pt"), "{RUN}": str(run)}


def _argv(cmd, flag, value, files):
    base, _ = CLI[cmd]
    fill = lambda s: re.sub(r"\{[A-Z0-9]+\}", lambda m: files.get(m.group(0), m.group(0)), s)  # noqa: E731
    base = [fill(a) for a in base]
    value = fill(value)
    if flag == "PATH":
        return base[:1] + [value]
    if flag == "ACTION":
        return ["runs", value, base[2]]
    if flag == "TARGET":
        return ["runs", "show", value]
    return base + [f"{flag}={value}"]


@pytest.mark.slow
@pytest.mark.parametrize("cmd,flag", _CLI_ROWS)
def test_command_refuses_bad_values(cmd, flag, tmp_path, monkeypatch, capsys, files, machine):
    monkeypatch.chdir(tmp_path)
    name = flag.lstrip("-").lower()

    @fuzz(CLI_EXAMPLES)
    @given(value=CLI[cmd][1][flag])
    def check(value):
        argv = _argv(cmd, flag, value, files)
        capsys.readouterr()
        try:
            with cpu_bound():
                rc = main(argv)
        except Hung:
            pytest.fail(f"deeplimits {' '.join(argv)}: no refusal within {CPU_LIMIT} CPU seconds")
        err = capsys.readouterr().err
        shown = f"deeplimits {' '.join(map(repr, argv))}"
        assert rc == 2, f"{shown}: exit {rc}, stderr {err!r}"
        assert "Traceback" not in err and "internal error" not in err, f"{shown}: {err}"
        lines = err.splitlines()
        assert len(lines) == 1 and err.endswith("\n"), f"{shown}: {err!r}"
        if flag.startswith("--"):  # the line names the flag (or the parameter it sets)
            assert flag in lines[0] or name.replace("-", "_") in lines[0] or name in lines[0], f"{shown}: {err}"
        assert os.listdir(tmp_path) == [], f"{shown} left {os.listdir(tmp_path)}"

    check()
