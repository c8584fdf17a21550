"""From per-draw errors to a strong-error result: the errors' JSON form in a task's result, their
means, standard errors and covariance over the finite draws, the power-law rate with its
bootstrap interval, and the result's fields (docs/mathematics.md, "Strong error")."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..._plain import strict
from ...orders import StrongOrder, next_pairs
from ...pairs import InsidePair, Pair
from . import spec as S_
from ..fits import resamples_for
from ..strong_error import fit_rate
from .result import ConvergenceResult

__all__ = ["summarise", "describe", "error_statistics", "encode_errors", "decode_errors"]

#: fields of a result that the inside regimes fill in from their pair (``alpha = 1 - beta`` for inside-ode)
_INSIDE_FIELDS = ("alpha", "beta", "sa", "sb", "ito_correction")
_RESULT_FIELDS = frozenset(f.name for f in dataclasses.fields(ConvergenceResult))


def encode_errors(a: np.ndarray) -> list:
    """Per-draw errors as strict JSON: a blown-up draw's non-finite error is ``None``
    (read back as NaN by :func:`decode_errors`; :func:`summarise` excludes either)."""
    return strict(a.tolist())


def decode_errors(x) -> np.ndarray:
    """Per-draw errors from a task result (``None``, or ``Infinity`` in older stores, is non-finite)."""
    return np.asarray(x, dtype=np.float64)


def describe(p: Pair, reference) -> dict:
    """The fields of a result that come from the pair measured against ``reference``, not from the
    draws, as plain JSON, its declared order whole under ``'order'``: what each stored task keeps, so
    that a stored run is read without building its pair (a block, law or activation of a user's own
    is never imported to read it: docs/sweeps.md, "Files are data")."""
    net = p.network
    d = dict(regime=p.regime, hurst=p.hurst, width=p.width, activation=net.activation.name, arch=net.arch,
             corrected=type(net).__name__ == "ModifiedEulerResNet", reference_method=p.limit.reference_text(reference),
             nested_reference=False if p.limit.exact is not None else None, order=p.order.to_dict())
    if isinstance(p, InsidePair):
        d.update({k: getattr(p, k) for k in _INSIDE_FIELDS})
    return d


def summarise(p: Pair | dict, depths, reference, max_err: np.ndarray, term_err: np.ndarray, *, inputs, seed,
              dtype, seconds, options: dict | None = None) -> ConvergenceResult:
    """Combine per-draw errors into estimates, standard errors and the fitted rate; ``p``: the pair,
    or its :func:`describe` (as a stored task keeps it). ``options`` (a plan's, as recorded) go into
    the result's fields of the same name, the others into its ``options``; the inside regimes'
    fields are their pair's (``alpha = 1 - beta`` for inside-ode)."""
    d = dict(p) if isinstance(p, dict) else describe(p, reference)
    order = StrongOrder.from_dict(d.pop("order"))
    inside = {k: d.pop(k) for k in _INSIDE_FIELDS if k in d}  # the pair's, over the options of the same name
    return ConvergenceResult(
        **d, inputs=inputs, reference=reference, seed=seed, dtype=str(dtype).replace("torch.", ""), seconds=seconds,
        theory_rate=order.rate, rate_note=order.note, theory_log_power=order.log_power,
        terminal_constant=order.constant, constant_next=[list(x) for x in next_pairs(order.constant_next)],
        constant_source=order.constant_source, **error_statistics(depths, max_err, term_err, seed, order),
        **{**_result_options(options or {}), **inside})


def error_statistics(depths, max_err: np.ndarray, term_err: np.ndarray, seed: int, order, n_boot: int = 2000,
                     endpoint_tol: float | None = None) -> dict:
    """The fields of a result computed from per-draw errors ``(draws, len(depths))``: the means,
    standard errors and covariance of the mean errors over the finite draws, the power-law rate
    with its bootstrap interval (``n_boot`` resamples, or, given ``endpoint_tol``, at most that
    many: those that pin its endpoints to ``endpoint_tol``, :func:`~deeplimits.studies.fits.resamples_for`),
    the counts, and the declared expansion of ``order``."""
    with np.errstate(all="ignore"):  # a blown-up draw is counted, not warned about
        return _statistics(depths, max_err, term_err, seed, order, n_boot, endpoint_tol)


def _statistics(depths, max_err, term_err, seed, order, n_boot, endpoint_tol) -> dict:
    ok = np.isfinite(max_err).all(1) & np.isfinite(term_err).all(1)
    e, t = max_err[ok], term_err[ok]
    n, nan = len(e), [math.nan] * len(depths)
    if endpoint_tol is not None and n:
        n_boot = resamples_for(np.log(np.asarray(depths, dtype=np.float64)), e, n_boot, endpoint_tol)
    se = lambda x: (x.std(0, ddof=1) / math.sqrt(n)).tolist() if n > 1 else nan  # noqa: E731
    rate, ci = fit_rate(depths, e, seed=seed, n_boot=n_boot) if n else (math.nan, (math.nan, math.nan))
    cov = (np.atleast_2d(np.cov(e, rowvar=False)) / n).tolist() if n > 1 else None
    return dict(draws=int(len(max_err)), depths=list(depths), error=e.mean(0).tolist() if n else nan,
                stderr=se(e), terminal_error=t.mean(0).tolist() if n else nan, terminal_stderr=se(t),
                rate=rate, rate_ci=list(ci), nonfinite=int((~ok).sum()), error_cov=cov,
                expansion=[dataclasses.asdict(x) for x in order.expansion],
                remainder=dataclasses.asdict(order.omitted))


def _result_options(options: dict) -> dict:
    """The fields of a result set by the regime's options (see :func:`summarise`)."""
    out = {k: v for k, v in options.items() if k in _RESULT_FIELDS and k not in S_.EVERY_SPEC}
    extra = {k: v for k, v in options.items() if k not in _RESULT_FIELDS and v is not None}
    return {**out, "options": extra} if extra else out
