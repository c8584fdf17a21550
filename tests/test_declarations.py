"""Declarations checked, not trusted: what a hostile-input run against the registries found
accepted silently is refused in one line naming the object, before any work (the block's shapes,
its residual, a declared linearity; a driver's samples and its declared regularity, grid and coupling;
a declared order's exponent), and a
hypothesis fuzz draws hostile blocks and drivers of a user's own and gives them to the studies."""

import itertools
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import deeplimits as dl
from deeplimits.blocks import Block, register_block, unregister_block
from deeplimits.errors import ParameterError
from deeplimits.paths import Driver, IIDLaw, register_driver, unregister_driver
from deeplimits.studies.law import plan_law
from test_fuzz import cpu_bound, fuzz

_NAMES = itertools.count()


def _one_line(e: ParameterError, *words):
    msg = str(e)
    assert "\n" not in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


def _block(shape="ok", residual="ok", linear=("V",)):
    """A block of one's own, registered under a fresh name: ``shape`` (its declared weight shape),
    ``residual`` (what it returns) and the weights it declares linear."""
    shapes = {"ok": lambda w: (w, w), "zero": lambda w: (0, w), "negative": lambda w: (-w, w),
              "huge": lambda w: (10 ** 6, 10 ** 6), "float": lambda w: (float(w), w), "list": lambda w: [w, w],
              "empty": lambda w: ()}
    outs = {"ok": lambda h, V: torch.tanh(h) @ V.transpose(-1, -2),
            "ints": lambda h, V: (h @ V.transpose(-1, -2)).round().long(),
            "nan": lambda h, V: h * math.nan,
            "shape": lambda h, V: (h @ V.transpose(-1, -2))[..., :1],
            "raises": lambda h, V: 1 / 0,
            "quadratic": lambda h, V: torch.tanh(h) @ (V @ V).transpose(-1, -2),
            "affine": lambda h, V: torch.tanh(h) @ V.transpose(-1, -2) + 1.0,
            "numpy": lambda h, V: (h @ V.transpose(-1, -2)).numpy()}
    name = f"hostile-{next(_NAMES)}"

    class Hostile(Block):
        weights = ("V",)

        def weight_shape(self, n, width):
            return shapes[shape](width)

        def residual(self, h, *, pre=None, V):
            return outs[residual](h, V)

    Hostile.name, Hostile.linear = name, tuple(linear)
    return register_block(Hostile)


def _driver(kind):
    """A driver of one's own, registered under a fresh name, whose samples are ``kind``."""
    name = f"hostile-law-{next(_NAMES)}"

    class Hostile(IIDLaw):
        def from_normal(self, g):
            if kind == "nan":
                return g * math.nan
            if kind == "shape":
                return g[..., :1]
            if kind == "raises":
                raise RuntimeError("no numbers here")
            if kind == "dtype":
                return g.to(torch.float16)
            return g

    Hostile.name = name
    if kind == "not-a-sample":
        Hostile._sample = lambda self, *a: torch.zeros(3)
    return register_driver(Hostile)


@pytest.fixture(autouse=True)
def _clean():
    """Every block and driver a test registers is removed after it."""
    from deeplimits.blocks import registered_blocks
    from deeplimits.paths import registered_drivers

    blocks, drivers = set(registered_blocks()), set(registered_drivers())
    yield
    for name in set(registered_blocks()) - blocks:
        unregister_block(name)
    for name in set(registered_drivers()) - drivers:
        unregister_driver(name)


def test_a_block_declared_linear_but_quadratic_has_no_sde_limit():
    """It used to read 'agrees' under sde (a wrong limit, silently)."""
    cls = _block(residual="quadratic")
    with pytest.raises(ParameterError) as e:
        dl.pair("sde", width=4, arch=cls.name)
    _one_line(e.value, cls.name, "declared linear in 'V'")
    with pytest.raises(ParameterError) as e:
        dl.SDELimit(arch=cls.name)
    _one_line(e.value, cls.name)
    with pytest.raises(ParameterError):
        plan_law(law="uniform", arch=cls.name, depths=[4, 8], fine=32, draws=64)
    affine = _block(residual="affine")  # linear up to a constant: not linear either
    with pytest.raises(ParameterError):
        dl.pair("sde", width=4, arch=affine.name)
    assert dl.pair("sde", width=4, arch=_block().name).theory_rate == 0.5  # an honest one still passes


@pytest.mark.parametrize("shape", ["zero", "negative", "huge", "float", "list", "empty"])
def test_weight_shapes_are_checked_before_anything_is_allocated(shape):
    cls = _block(shape=shape)
    for regime in ("ode", "sde"):
        with pytest.raises(ParameterError) as e:
            dl.pair(regime, width=4, arch=cls.name)
        _one_line(e.value, cls.name, "weight")
    with pytest.raises(ParameterError) as e:
        dl.plan_stability(cls.name, width=4, n_in=2, depths=[2, 4], draws=2)
    _one_line(e.value, cls.name)


@pytest.mark.parametrize("residual", ["ints", "nan", "shape", "raises", "numpy"])
def test_a_residual_of_the_wrong_kind_is_refused_in_one_line(residual):
    """A residual of integers used to hang the ode study (over 60 s of CPU): now refused at once."""
    cls = _block(residual=residual, linear=())
    with cpu_bound():
        with pytest.raises(ParameterError) as e:
            dl.plan_convergence("ode", arch=cls.name, width=3, depths=[4, 8], draws=2)
    _one_line(e.value, cls.name, "residual")
    with pytest.raises(ParameterError):
        dl.plan_training(arch=cls.name, depth=2, width=3, epochs=1)


@pytest.mark.parametrize("kind", ["nan", "shape", "raises", "dtype", "not-a-sample"])
def test_a_driver_whose_samples_are_wrong_is_refused(kind):
    cls = _driver(kind)
    with pytest.raises(ParameterError) as e:
        dl.plan_stability("res-1", cls.name, width=3, n_in=2, depths=[2, 4], draws=2)
    _one_line(e.value, cls.name)
    with pytest.raises(ParameterError) as e:
        dl.plan_training("digits", cls.name, depth=2, width=3, epochs=1)
    _one_line(e.value, cls.name)


def test_a_sample_of_the_wrong_shape_is_refused_when_drawn():
    class Liar(Driver):
        name, regularity = "liar", 0.5

        def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
            return dl.IIDDriver("uniform").sample((2,), draws=draws, dtype=dtype)

    with pytest.raises(ParameterError) as e:
        Liar().sample((3, 3), draws=2)
    _one_line(e.value, "liar", "shape (3, 3)")


def _path_liar(lie):
    """A registered path driver of one's own (tests/user_models.py) whose declarations lie: ``lie``
    says which (its regularity, a coupling across depths, network weights that are not its path)."""
    import user_models as U

    base = U.Waves if lie in ("regularity-smooth", "left-points") else U.LevyBridge
    attrs = {"name": f"liar-{lie}-{next(_NAMES)}"}
    if lie == "regularity-smooth":
        attrs["regularity"] = 0.5
    elif lie == "regularity-path":
        attrs["regularity"] = 0.7
    elif lie == "rough":
        attrs["needs_resolution"], attrs["sample_bytes"] = False, lambda self, *a, **k: 1 << 20

        def _sample(self, shape, draws, resolution, generator, dtype, scale, device):  # a path without its grid
            return U.LevyBridge._sample(self, shape, draws, 4, generator, dtype, scale, device)
        attrs["_sample"] = _sample
    elif lie == "uncoupled":
        class Fresh(U.HeldPath):  # fresh increments at each depth, declared coupled
            def iter_increments(self, depth, **kw):
                g = torch.Generator().manual_seed(depth)
                yield torch.randn((depth, self.draws, *self.shape), generator=g, dtype=self.dtype) / depth ** 0.5

        def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
            s = U.LevyBridge._sample(self, shape, draws, resolution, generator, dtype, scale, device)
            return Fresh(shape, draws, dtype, scale, resolution, s.fine, "brownian", 0.5)
        attrs["_sample"] = _sample
    elif lie == "left-points":
        class Left(U.WavesSample):  # the network reads V((k - 1) / L), the limit V(t)
            def iter_weights(self, depth):
                yield self.at(torch.arange(depth, dtype=torch.float64).to(self.dtype) / depth)

        def _sample(self, shape, draws, resolution, generator, dtype, scale, device):
            s = U.Waves._sample(self, shape, draws, resolution, generator, dtype, scale, device)
            return Left(shape, draws, dtype, scale, s.coef, s.omega)
        attrs["_sample"] = _sample
    return register_driver(type(f"Liar{lie.title()}", (base,), attrs))


@pytest.mark.parametrize("lie,words", [
    ("regularity-smooth", ("declares regularity 0.5", "1.0")),
    ("regularity-path", ("declares regularity 0.7", "0.5")),
    ("rough", ("needs_resolution=False", "rough=True")),
    ("uncoupled", ("coupled=True", "depth-2 increments")),
    ("left-points", ("at(k / 4)",)),
])
def test_a_path_driver_whose_declarations_lie_is_refused(lie, words):
    """A driver of one's own whose declared regularity, grid or coupling is not what its samples do
    would give a convergence study a wrong limit, silently: refused in one line naming it."""
    cls = _path_liar(lie)
    regime = "ode" if lie in ("regularity-smooth", "left-points") else "sde"
    with pytest.raises(ParameterError) as e:
        dl.plan_convergence(regime, driver=cls.name, width=3, depths=[4, 8], draws=2)
    _one_line(e.value, cls.name, *words)
    assert e.value.param == "driver"


@pytest.mark.parametrize("rate", [-1, 1e308, math.nan, math.inf, 8.5, "0.5", True])
def test_a_declared_order_outside_a_sane_range_is_refused(rate):
    with pytest.raises(ParameterError) as e:
        dl.StrongOrder(rate, "", "")
    _one_line(e.value, "rate")
    with pytest.raises(ParameterError):
        dl.Term(-20.0)
    with pytest.raises(ParameterError):
        dl.StrongOrder(0.5, "", "", log_power=-1.0)
    with pytest.raises(ParameterError):  # a later term's log power may be negative (L^-1 (log L)^-1/2), within [-4, 4]
        dl.Term(1.0, -4.5)
    assert dl.Term(1.0, -0.5).text == "L^-1 (log L)^-1/2" and dl.Term(1.0, -0.5).law(1.0) == math.inf
    assert dl.StrongOrder(0.0, "", "").rate == 0.0 and dl.StrongOrder(8, "", "").rate == 8.0


# -- the fuzz: hostile blocks and drivers of a user's own, given to the studies -------------------

_ENTRY = {
    "pair-sde": lambda b, d: dl.pair("sde", width=3, arch=b),
    "pair-ode": lambda b, d: dl.pair("ode", width=3, arch=b),
    "stability": lambda b, d: dl.plan_stability(b, d, width=3, n_in=2, depths=[2, 4], draws=2),
    "phase": lambda b, d: dl.plan_phase([0.6], [0.5], arch=b, width=3, n_in=2, depth=4, draws=1, inputs=1),
    "training": lambda b, d: dl.plan_training("digits", d, arch=b, depth=2, width=3, epochs=1),
    "law": lambda b, d: plan_law(law=d, arch=b, depths=[4, 8], fine=32, draws=512),  # (at least 10 per number of a draw)
}
_USES_DRIVER = ("stability", "training", "law")


@pytest.mark.slow
@fuzz(60)
@given(shape=st.sampled_from(["ok", "zero", "negative", "huge", "float", "list", "empty"]),
       residual=st.sampled_from(["ok", "ints", "nan", "shape", "raises", "quadratic", "affine", "numpy"]),
       law=st.sampled_from(["ok", "nan", "shape", "raises", "dtype", "not-a-sample"]),
       entry=st.sampled_from(sorted(_ENTRY)))
def test_hostile_user_blocks_and_drivers_are_refused_in_one_line(shape, residual, law, entry):
    """Any hostile part a study reads is refused in one line naming the block or the driver; a
    study given honest ones accepts them (the quadratic and affine residuals are hostile only
    where a linearity is relied on: sde and the law study)."""
    cls, drv = _block(shape=shape, residual=residual), _driver(law)
    reads_linearity = entry in ("pair-sde", "law")
    hostile = (shape != "ok" or residual not in ("ok", "quadratic", "affine")
               or (reads_linearity and residual != "ok") or (entry in _USES_DRIVER and law != "ok"))
    try:
        with cpu_bound():
            _ENTRY[entry](cls.name, drv.name)
    except ParameterError as e:
        assert hostile, f"{entry} refused an honest block and driver: {e}"
        _one_line(e, )
        assert cls.name in str(e) or drv.name in str(e), str(e)
    else:
        assert not hostile, f"{entry} accepted shape={shape}, residual={residual}, law={law}"
    finally:
        unregister_block(cls.name)
        unregister_driver(drv.name)
