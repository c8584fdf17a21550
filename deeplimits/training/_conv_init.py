"""The kernels of a :class:`~deeplimits.training.conv.ConvResidualNetwork` read off driver paths
in depth (docs/training.md, "Convolutional networks"): within each stage, ``A_k`` and
``delta_k`` are the consecutive layers of one driver sample (one path per configuration and
kernel entry), as the dense networks' ``V_k``, ``W_k`` are the layers of theirs.

A stage's first block may take fewer input channels (``c_in < c_out`` where the channels
double): its ``A`` is the first ``c_in`` input channels of the path's first layer, so every
entry's law along depth is the driver's. Entries have one standard deviation per stage:
``sqrt(2 / (9 c_out))`` for ``A`` (He's, the inner blocks' fan-in) and ``L^-beta / sqrt(9
c_out)`` for ``delta`` (:meth:`~deeplimits.training.conv.ConvResidualNetwork.initial_std`),
unless ``scales`` gives another.
"""

from __future__ import annotations

import torch

from .. import _validate as V_
from .conv import ConvResidualNetwork
from .modules import _layer_weights

__all__ = ["conv_from_driver", "CONV_DRIVEN"]

#: the kernels read off a driver
CONV_DRIVEN = ("A", "delta")


@torch.no_grad()
def conv_from_driver(module: ConvResidualNetwork, driver, generator, scales: dict, config: int | None,
                     resolution_for) -> ConvResidualNetwork:
    """Fill ``A`` and ``delta`` of every block of ``module`` (all configurations, or only
    ``config``) from independent samples of ``driver``, one per stage and kernel name."""
    for key, value in scales.items():
        V_.choice("scales key", key, CONV_DRIVEN)
        if value is not None:
            V_.real(f"scales[{key!r}]", value, low=0.0, low_open=True)
    draws = module.configs if config is None else 1
    for stage in module.stage_blocks():
        n, cout = len(stage), module.layout[stage[0]][1]
        cin = max(module.layout[k][0] for k in stage)
        for name in CONV_DRIVEN:
            shape = (cout, max(cin, cout) if name == "A" else cout, 3, 3)
            last = getattr(module.blocks[stage[-1]], name)
            scale = scales.get(name) or module.initial_std(f"blocks.{stage[-1]}.{name}", last)
            sample = driver.sample(shape, draws=draws, resolution=resolution_for(driver, n), generator=generator,
                                   dtype=last.dtype, scale=scale)
            layers = _layer_weights(sample, n).to(last.device)  # (n, draws, *shape)
            for j, k in enumerate(stage):
                p = getattr(module.blocks[k], name)
                w = layers[j, :, :, :p.shape[2]]
                if config is None:
                    p.copy_(w)
                else:
                    p[config].copy_(w[0])
    return module
