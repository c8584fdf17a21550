"""The objects a law study runs on, checked before any work (docs/law.md, "Bring your own"):

* the law (:func:`law_of`): a registered i.i.d. driver (``independent``) with a
  :meth:`~deeplimits.paths.Driver.from_normal` hook whose values on standard normals are finite, of
  their shape and dtype (the coupled sample reads the law off the limit's Brownian path);
* the network (:func:`block_of`): a registered block whose residual is linear in every weight,
  verified on random draws (the ``sde`` regime's condition: then the network is a weak Euler
  scheme of the Itô SDE ``dH = g(H, dX)``);
* the test functions (:func:`phis_of`): registered names, :class:`~.phis.TestFunction` s or named
  Python functions, each verified (:func:`~.phis.check_test_function`).

Each refusal is one line naming what is missing.
"""

from __future__ import annotations

import torch

from ...errors import ParameterError

__all__ = ["law_of", "block_of", "phis_of", "iid_laws"]


def iid_laws() -> tuple:
    """The registered drivers the law study accepts by name: the i.i.d. laws with a ``from_normal``
    hook, the package's and any a user registered."""
    from ...paths import Driver, driver_class, registered_drivers

    return tuple(n for n in registered_drivers() if driver_class(n).independent
                 and driver_class(n).from_normal is not Driver.from_normal)


def law_of(law):
    """The driver of ``law`` (a registered name or a :class:`~deeplimits.paths.Driver` whose class
    is registered), checked (module docstring)."""
    from ...paths import Driver, driver_spec, make_driver, registered_drivers
    from ... import _validate as V_

    laws = iid_laws()
    if isinstance(law, Driver):
        drv = law
    elif isinstance(law, str) and law in registered_drivers():  # a driver that is no law: said below, in words
        drv = make_driver(law)
    else:
        drv = make_driver(V_.choice("law", law, laws))
    driver_spec(drv)  # registered: the spec records it by name
    if not drv.independent:
        raise ParameterError("law", f"law {drv.name!r} must be an i.i.d. law (independent = True): the law study "
                                    "compares networks with i.i.d. weights to their Itô limit")
    if not drv.has_from_normal:
        raise ParameterError("law", f"law {drv.name!r} declares no from_normal(g) hook (its entries as a function of "
                                    "standard normals), which the coupled law study needs")
    tails = torch.tensor([-10.0, -8.5, -6.0, -5.0, 0.0, 5.0, 6.0, 8.5, 10.0])  # beyond any normal drawn
    for dtype in (torch.float32, torch.float64):
        g = torch.cat([torch.randn(64, generator=torch.Generator().manual_seed(0), dtype=dtype), tails.to(dtype)])
        _from_normal(drv, g)
    return drv


def _from_normal(drv, g: torch.Tensor) -> None:
    """``drv.from_normal(g)``: finite values of ``g``'s shape and dtype, or a one-line error naming the law."""
    try:
        q = drv.from_normal(g.clone())
    except Exception as e:
        raise ParameterError("law", f"law {drv.name!r}: its from_normal failed on standard normals: "
                                    f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
    if not (isinstance(q, torch.Tensor) and q.shape == g.shape and q.dtype == g.dtype and bool(torch.isfinite(q).all())):
        got = f"{tuple(q.shape)} {q.dtype}" if isinstance(q, torch.Tensor) else type(q).__name__
        raise ParameterError("law", f"law {drv.name!r}: from_normal(g) must return finite values of g's shape and "
                                    f"dtype ({tuple(g.shape)} {g.dtype}), also in the tails (|g| up to 10), got {got}")


def block_of(arch, activation, width: int):
    """The block of ``arch`` (a registered name or block) with ``activation``, whose residual is
    linear in every weight (verified), probed at ``width`` (:meth:`~deeplimits.blocks.Block.check`)."""
    from ...blocks import recorded_block
    from ...regimes import get_regime

    block = recorded_block(arch, activation)
    why = get_regime("sde").accepts(block)
    if why is not None:
        raise ParameterError("arch", f"arch {block.name!r} has no Itô limit for the law study: {why}")
    return block.check(width)


def phis_of(phis, width: int) -> tuple[str, ...]:
    """The names of the test functions ``phis`` (each checked at ``width``; ``None``: the built-in four)."""
    from ... import _validate as V_
    from .phis import DEFAULT_PHIS, TestFunction, check_test_function, test_function

    if phis is None:
        return DEFAULT_PHIS
    items = [phis] if isinstance(phis, (str, TestFunction)) or callable(phis) else V_.sequence("phis", phis, what="a list of test "
                                                                                                   "functions")
    names = [check_test_function(test_function(p), width).name for p in items]
    if not names or len(set(names)) != len(names):
        raise ParameterError("phis", f"phis must be a non-empty list of distinct test functions, got {names}")
    return tuple(names)
