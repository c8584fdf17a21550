"""The regime registry (docs/mathematics.md, "The implemented regimes" and "Adding a regime").

A regime declares its network, its limit, the law of its weights, its scaling and its strong
order (:class:`StrongOrder`); :func:`pair`, the command line, the reports, the plots and the
documentation read :data:`REGISTRY`. Importing this package does not import torch.


:func:`regimes_table` renders the registry as the table of docs/mathematics.md.
"""

from .base import REGISTRY, Regime, StrongOrder, get_regime, pair, regime_names, regimes_table, register_regime
from .resnet import FBM, ODE, SDE  # noqa: I001 - registration order: sde, ode, fbm, inside-sde, inside-ode
from .inside import InsideODE, InsideSDE

__all__ = ["Regime", "StrongOrder", "REGISTRY", "register_regime", "get_regime", "regime_names", "pair", "regimes_table",
           "SDE", "ODE", "FBM", "InsideSDE", "InsideODE"]
