"""Weights read off a driver path in depth, for training (docs/training.md, "Initialisers").

* :func:`init_from_driver` fills the per-layer weights of a
  :class:`~deeplimits.training.modules.ResidualNetwork`: one independent path per config and
  per weight tensor (``V``, ``W``, and the ``inside`` bias ``b``).
* :func:`iid_`, :func:`fractional_`, :func:`smooth_` are ``torch.nn.init``-style: they fill the
  ``weight`` of a user's own list of ``L`` ``nn.Linear`` layers (all of one shape ``(out, in)``)
  with the ``L`` layers of one driver sample, layer ``k`` getting ``V^(L)_k``.

Entries have standard deviation ``scale`` (default ``1/sqrt(fan_in)``) at every depth; along
depth they are i.i.d. (``iid_``), unit-variance fractional Gaussian noise of Hurst index ``H``
(``fractional_``) or a smooth RBF Gaussian process read at ``k/L`` (``smooth_``).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from .. import _validate as V_
from ..errors import ParameterError
from ..paths import Driver, FractionalDriver, IIDDriver, SmoothDriver
from ._conv_init import conv_from_driver
from .conv import ConvResidualNetwork
from .modules import ResidualNetwork, _layer_weights

__all__ = ["init_from_driver", "iid_", "fractional_", "smooth_", "resolution_for"]


def resolution_for(driver: Driver, depth: int) -> int | None:
    """The resolution a sample of ``driver`` needs for ``depth`` layers: the smallest power of two
    ``>= depth`` for path drivers (Gaussian i.i.d., fractional), ``None`` for the others."""
    driver, depth = _driver(driver), V_.integer("depth", depth)
    return 1 << (depth - 1).bit_length() if driver.needs_resolution else None


def _driver(driver) -> Driver:
    if not isinstance(driver, Driver):
        raise ParameterError("driver", "driver must be a deeplimits Driver (see make_driver), got "
                                       f"{type(driver).__name__}")
    return driver


@torch.no_grad()
def init_from_driver(module: ResidualNetwork | ConvResidualNetwork, driver: Driver, *, generator: torch.Generator | None = None,
                     scales: dict | None = None, config: int | None = None) -> ResidualNetwork:
    """Read the per-layer weights of ``module`` off independent paths of ``driver``.

    A :class:`~deeplimits.training.ConvResidualNetwork` gets its kernels ``A`` and ``delta``
    this way, one sample per stage (:mod:`._conv_init`; ``scales`` keys ``'A'``, ``'delta'``).

    Each weight tensor (``V``, ``W``; ``b`` only for ``inside``, the ``res-*`` bias stays zero)
    gets its own sample with ``draws = module.configs`` (one path per config and entry) and
    ``resolution`` the next power of two ``>= L`` when the driver needs one.

    Args:
        module: the network to fill (in place; returned).
        driver: e.g. ``make_driver('fractional', hurst=0.7)``.
        generator: a seeded :class:`torch.Generator`.
        scales: entry standard deviation (> 0) per name, e.g. ``{'V': 0.5}``; default
            ``1/sqrt(d)`` for matrices and 1 for the ``inside`` bias (the driver's defaults).
        config: fill only configuration ``config`` (one draw), leaving the others as they are:
            a grid gives each configuration its own driver and generator this way.
    """
    if not isinstance(module, (ResidualNetwork, ConvResidualNetwork)):
        raise ParameterError("module", "module must be a ResidualNetwork or a ConvResidualNetwork, got "
                                       f"{type(module).__name__}")
    driver, generator = _driver(driver), V_.generator(generator)
    if scales is not None and not isinstance(scales, Mapping):
        raise ParameterError("scales", f"scales must be a dict {{name: standard deviation}} or None, got {scales!r}")
    scales = dict(scales or {})
    if isinstance(module, ConvResidualNetwork):
        if config is not None:
            config = V_.integer("config", config, low=0, high=module.configs - 1)
        return conv_from_driver(module, driver, generator, scales, config, resolution_for)
    names = [n for n in module.residual_names() if n in module.block.weights]  # not a res-* network's bias
    for key, value in scales.items():
        V_.choice("scales key", key, names)
        if value is not None:  # None: the driver's default
            V_.real(f"scales[{key!r}]", value, low=0.0, low_open=True)
    if config is not None:
        config = V_.integer("config", config, low=0, high=module.configs - 1)
    res = resolution_for(driver, module.depth)
    samples = {}
    for name in names:
        p = getattr(module, name)
        samples[name] = driver.sample(tuple(p.shape[2:]), draws=module.configs if config is None else 1,
                                      resolution=res, generator=generator, dtype=p.dtype, scale=scales.get(name))
    if config is None:
        return module.load_sample(samples)
    for name, sample in samples.items():
        getattr(module, name)[:, config].copy_(_layer_weights(sample, module.depth)[:, 0])
    return module


def _linear_layers(layers) -> tuple[list, tuple[int, int]]:
    try:
        layers = list(layers)
    except TypeError:
        raise ParameterError("layers", f"layers must be a list of torch.nn.Linear, "
                                       f"got {type(layers).__name__}") from None
    if not layers:
        raise ParameterError("layers", "layers must be a non-empty list of torch.nn.Linear")
    bad = [type(m).__name__ for m in layers if not isinstance(m, torch.nn.Linear)]
    if bad:
        raise ParameterError("layers", f"layers must all be torch.nn.Linear, got {bad[0]}")
    shapes = {tuple(m.weight.shape) for m in layers}
    if len(shapes) > 1:
        raise ParameterError("layers", f"layers must all have one weight shape (out, in), got {sorted(shapes)}")
    dtypes = {m.weight.dtype for m in layers}
    if len(dtypes) > 1:
        raise ParameterError("layers", f"layers must all have one dtype, got {sorted(map(str, dtypes))}")
    V_.dtype(layers[0].weight.dtype, name="layers' dtype")
    return layers, shapes.pop()


@torch.no_grad()
def _fill(layers, driver: Driver, generator, scale):
    layers, shape = _linear_layers(layers)
    V_.generator(generator)
    if scale is not None:
        scale = V_.real("scale", scale, low=0.0, low_open=True)
    depth = len(layers)
    sample = driver.sample(shape, draws=1, resolution=resolution_for(driver, depth), generator=generator,
                           dtype=layers[0].weight.dtype, scale=scale)
    weights = _layer_weights(sample, depth)[:, 0]
    for layer, w in zip(layers, weights.unbind(0)):
        layer.weight.copy_(w)
    return layers


def iid_(layers, law: str = "gaussian", generator: torch.Generator | None = None,
         scale: float | None = None) -> list:
    """i.i.d. weights of law ``'gaussian'``, ``'uniform'`` or ``'rademacher'`` with entry standard
    deviation ``scale`` (default ``1/sqrt(in)``) in the ``weight`` of every layer. Returns the list."""
    return _fill(layers, IIDDriver(law), generator, scale)


def fractional_(layers, hurst: float = 0.7, generator: torch.Generator | None = None,
                scale: float | None = None) -> list:
    """Fractional Gaussian noise of Hurst index ``hurst`` in (0, 1) along the layers (each entry's
    partial sums over depth are a fractional Brownian motion), entry standard deviation ``scale``."""
    return _fill(layers, FractionalDriver(hurst), generator, scale)


def smooth_(layers, length_scale: float | None = None, generator: torch.Generator | None = None,
            scale: float | None = None) -> list:
    """A smooth RBF Gaussian process of ``length_scale`` (default 0.1, in units of the whole depth)
    read at ``k / L``: layer ``k`` gets ``V(k / L)``, entry standard deviation ``scale``."""
    return _fill(layers, SmoothDriver(0.1 if length_scale is None else length_scale), generator, scale)
