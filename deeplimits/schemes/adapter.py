"""One step of a torchsde solver as a one-step map (docs/schemes.md): the solver reads the
increment it is given from a Brownian-motion object, so it runs on the package's coupled path."""

from __future__ import annotations

from ..orders import StrongOrder, Term
from .base import Scheme
from ..errors import ParameterError

__all__ = ["TorchsdeScheme"]

#: (method, noise type) -> strong order of torchsde's solver (torchsde's own ``strong_order``
#: attribute, with the order of the Stratonovich methods on non-commutative noise)
_METHODS = ("euler", "milstein", "heun", "midpoint", "euler_heun")
_COMMUTATIVE = ("diagonal", "scalar", "additive")


def _rate(method: str, noise_type: str) -> float:
    if method == "euler":
        return 1.0 if noise_type == "additive" else 0.5
    return 1.0 if noise_type in _COMMUTATIVE else 0.5


class _Increment:
    """A torchsde Brownian motion that returns the increment of the current step, whatever
    times it is asked for (the solver asks once per step, for ``(t0, t1)``)."""

    levy_area_approximation = "none"

    def __init__(self):
        self.value = None

    def __call__(self, ta, tb=None, return_U=False, return_A=False):
        if return_U or return_A:
            raise ParameterError("method", "the coupled path has no Lévy area: use method 'euler', 'milstein', 'heun', "
                             "'midpoint' or 'euler_heun'")
        return self.value

    @property
    def shape(self):
        return self.value.shape

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def device(self):
        return self.value.device


class TorchsdeScheme(Scheme):
    """One step of ``torchsde.sdeint(sde, ..., method=method)`` over the increment it is given.

    ``sde`` is a torchsde SDE (``noise_type``, ``sde_type``, ``f``, ``g`` or ``g_prod``, ...);
    ``method`` one of ``'euler'``, ``'milstein'``, ``'heun'``, ``'midpoint'``, ``'euler_heun'``
    (the fixed-step methods without extra state or Lévy area). The declared order is the
    solver's (1/2 or 1), a fluctuation followed by the next half order, unless ``order`` is given.
    """

    def __init__(self, sde, method: str = "euler", *, order: StrongOrder | None = None, options: dict | None = None):
        if method not in _METHODS:
            raise ParameterError("method", f"method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}")
        for attr in ("noise_type", "sde_type"):
            if not hasattr(sde, attr):
                raise ParameterError("sde", f"sde must be a torchsde SDE with a {attr} attribute, got {sde!r}")
        self.sde, self.method, self.options = sde, method, dict(options or {})
        self.name = f"torchsde-{method}"
        """``torchsde-METHOD``."""
        rate = _rate(method, sde.noise_type)
        self.order = order or StrongOrder(rate, f"{sde.noise_type} noise", f"torchsde {method} on {sde.noise_type} "
                                          f"{sde.sde_type} noise: strong order {rate:g}",
                                          kind="fluctuation" if rate == 0.5 else "mixed",
                                          next_terms=(Term(rate + 0.5), Term(rate + 1.0)))
        """The solver's declared order (or the one given)."""
        self._bm, self._solver = _Increment(), None

    def _build(self, h, dt):
        from torchsde._core import methods
        from torchsde._core.sdeint import check_contract

        ts = h.new_tensor([0.0, float(dt)])
        sde, _, _, _, method, options = check_contract(self.sde, h, ts, self._bm, self.method, False, self.options,
                                                       None, False)
        self._solver = methods.select(method=method, sde_type=sde.sde_type)(
            sde=sde, bm=self._bm, dt=dt, adaptive=False, rtol=1e-5, atol=1e-4, dt_min=1e-5, options=options)

    def step(self, h, increment, t, dt):
        self._bm.value = increment
        if self._solver is None:
            self._build(h, dt)
        out, _ = self._solver.step(h.new_tensor(t), h.new_tensor(t + dt), h, ())
        return out.detach()  # a gradient-based Milstein step leaves a graph behind
