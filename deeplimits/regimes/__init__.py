"""The regime registry (docs/mathematics.md, "The implemented regimes" and "Adding a regime").

A regime declares its network, its limit, the law of its weights, its scaling, its strong
order (:class:`StrongOrder`) and its options (:class:`Option`, :mod:`deeplimits.options`);
:func:`pair`, the convergence plans, the command line, the reports, the plots and the
documentation read :data:`REGISTRY`. Importing this package does not import torch.


:func:`regimes_table` renders the registry as the table of docs/mathematics.md.
"""

from .base import (DEPTHS, REGISTRY, Option, Regime, StrongOrder, Term, declarations, get_regime, is_given, pair,
                   regime_names, regimes_table, register_regime, takes)
from .resnet import FBM, ODE, SDE  # noqa: I001 - registration order: sde, ode, fbm, inside-sde, inside-ode, rough
from .inside import InsideODE, InsideSDE
from .rough import Rough

__all__ = ["Regime", "Option", "StrongOrder", "Term", "REGISTRY", "register_regime", "get_regime", "regime_names", "pair",
           "regimes_table", "takes", "declarations", "is_given", "DEPTHS", "SDE", "ODE", "FBM", "InsideSDE", "InsideODE",
           "Rough"]
