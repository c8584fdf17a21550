"""A regime with a driver of one's own (docs/convergence.md, "Bring your own driver"): whether a
registered :class:`~deeplimits.paths.Driver` has the limit a regime's pair measures, read off
the driver's declarations (``coupled``, ``needs_resolution``, ``regularity``, ``gaussian``) and
the kind of its verified samples (:meth:`~deeplimits.paths.Driver.sample_kind`), never its name.

* the ``sde`` regime's Itô limit reads increments of one Brownian path: a coupled path on a fine
  grid, of regularity 1/2, Gaussian, whose samples are ``'brownian'``;
* the ``ode`` regime's neural ODE reads smooth weights at any time: a coupled law of regularity 1
  whose samples are ``'smooth'`` (read ``at(t)``);
* the ``fbm`` regime's Young equation reads one fractional path: a coupled path on a fine grid of
  regularity ``H`` in (1/2, 1), whose samples are ``'fractional'``; its Hurst index is the driver's.

An i.i.d. law (fresh weights at each depth) has no pathwise limit: only a limit in law, the law
study's (``deeplimits law``). Each refusal names the declaration that is missing.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["path_reason", "smooth_reason"]


def _fresh(driver) -> str | None:
    if driver.coupled:
        return None
    return (f"its depths draw fresh weights (coupled=False): no path whose increments every depth reads, so no "
            f"pathwise limit; its limit in law is the law study's (deeplimits law --law {driver.name})")


def path_reason(driver, *, kind: str, regularity: Callable[[float], bool], needs: str, limit: str,
                gaussian: bool = False) -> str | None:
    """Why ``driver`` does not drive a limit that reads one rough path of ``kind`` (``None`` when
    it does): coupled, a path on a fine grid, a ``regularity`` the limit takes (``needs`` says
    which), Gaussian increments when ``gaussian``, and samples of ``kind``."""
    why = _fresh(driver)
    if why is not None:
        return why
    if not driver.needs_resolution:
        return f"it declares no path on a fine grid (needs_resolution=False): the {limit} reads increments of one path"
    if not regularity(float(driver.regularity)):
        return f"its paths have regularity {driver.regularity:g} (its declared regularity): the {limit} needs {needs}"
    if gaussian and not driver.gaussian:
        return f"its increments are not declared Gaussian (gaussian=False): the {limit} is driven by a Brownian path"
    got = driver.sample_kind()
    if got != kind:
        return f"its samples are {got!r} (DriverSample.kind): the {limit} reads a {kind!r} path"
    return None


def smooth_reason(driver, *, kind: str, limit: str) -> str | None:
    """Why ``driver`` does not give the smooth weights ``w(t)`` a neural ODE reads at any time
    (``None`` when it does): coupled, of regularity 1, its samples of ``kind`` (read at any time)."""
    why = _fresh(driver)
    if why is not None:
        return why
    if float(driver.regularity) != 1.0:
        return (f"its paths have regularity {driver.regularity:g} (its declared regularity): the {limit} needs "
                "smooth weights, regularity 1")
    got = driver.sample_kind()
    if got != kind:
        return f"its samples are {got!r} (DriverSample.kind): the {limit} reads a {kind!r} function of depth at any time"
    return None
