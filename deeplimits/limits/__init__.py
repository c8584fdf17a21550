"""Continuous-time limits of residual networks, docs/mathematics.md, "The implemented regimes".

* :class:`SDELimit` — Itô SDE ``dH = dX sigma(H)`` driven by the scaled Brownian matrix path
  ``X = B / sqrt(d)`` (general noise, ``d^2`` channels), solved with torchsde on the finest
  grid of the same Brownian sample. The diffusion is only ever applied as a matrix–vector
  product (``g_prod``); the ``d x d^2`` diffusion matrix is never formed.
* :class:`ODELimit` — neural ODE ``dH = V(t) g(H, W(t)) dt`` with smooth weights evaluated
  between grid points, solved adaptively with torchdiffeq; :meth:`ODELimit.picard` is an
  independent Picard-iteration (Chebyshev collocation) solve to cross-check it.
* :class:`YoungLimit` — Young equation ``dH = dX sigma(H)`` driven by a fractional Brownian
  matrix path (H > 1/2), solved by the modified Euler scheme on the finest grid.
* :class:`RoughLimit` — the rough equation ``dH = dX sigma(H)`` driven by a fractional Brownian
  matrix path with 1/3 < H < 1/2, solved exactly (``d = 1``, identity or tanh: Doss-Sussmann) or by
  the corrected (Liu-Tindel) scheme on the finest grid.
* :class:`InsideSDELimit` — the Itô SDE ``dH = dX^A H + dX^b + (1/2) sigma''(0) (s_A^2 |H|^2 +
  s_b^2) 1 dt (+ smooth drift)`` of the inside network with Brownian weights, solved by
  Euler–Maruyama on the finest grid of the same Brownian paths.
* :class:`InsideODELimit` — the linear ODE ``dH = (A(t) H + b(t)) dt`` of the inside network with
  smooth weights, solved adaptively with torchdiffeq (Picard cross-check as for the ODE).

Every ``solve`` returns the limit on the grid ``k / depth`` as ``(depth + 1, draws, inputs, width)``.
"""


from .base import Limit, grid
from .inside import DEFAULT_SA, DEFAULT_SB, InsideSDELimit, InsideSDEScheme
from .ode import InsideODELimit, ODELimit
from .sde import GridBrownian, SDELimit
from .rough import RoughLimit
from .young import YoungLimit

__all__ = ["SDELimit", "ODELimit", "YoungLimit", "RoughLimit", "GridBrownian", "InsideSDELimit", "InsideSDEScheme", "InsideODELimit",
           "DEFAULT_SA", "DEFAULT_SB", "grid", "Limit"]
