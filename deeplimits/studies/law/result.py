"""The result of a law study (docs/law.md): per test function the weak errors against depth with
standard errors, the reference ``E phi(H_1)`` and its own error, the fitted expansion, its rate and
verdict, the Richardson-extrapolated errors and their order; the joint verdict over the test
functions (one common rate); the distances between laws.

The tasks return sums and cross products of per-draw vectors ``x`` (:meth:`LawResult.layout`):
every estimate below is a linear map of ``x``'s mean, and its standard error comes from ``x``'s
covariance. The weak error of depth ``L`` is ``phi(h_L) - R`` with ``R = 2 phi(H^F) - phi(H^(F/2))``
Richardson's extrapolation of Euler-Maruyama on the grids ``F/2`` and ``F`` (weak order 1, so ``R``
is off by ``O(F^-2)``; that error is estimated as ``(R' - R) / 3`` with ``R'`` the same on ``F/4``
and ``F/2``). With control variates the errors are regressed on them (the optimal linear
combination, fitted on all draws: a bias of order ``1/draws``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..result import PlanResult, draw_into

__all__ = ["LawResult", "weak_estimates", "per_draw_numbers"]


def _layout(spec: dict) -> tuple[int, int, int, bool]:
    """``(test functions, depths, grids, controls)`` of a spec's per-draw vectors."""
    from .phis import DEFAULT_PHIS

    K = len(spec["depths"])
    return len(spec.get("phis") or DEFAULT_PHIS), K, K + 3, bool(spec["controls"])


def per_draw_numbers(spec: dict) -> int:
    """The numbers each draw of a spec gives (its vector ``x``): every test function at the depths'
    networks and the three SDE grids, and with control variates one per test function and depth."""
    P, K, G, controls = _layout(spec)
    return P * G + (P * K if controls else 0)


def _maps(spec: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The linear maps of ``x``: the weak errors ``(P K, D)``, the two Richardson references
    ``(2 P, D)`` (``F/4, F/2`` then ``F/2, F``) and the indices of the control variates."""
    P, K, G, controls = _layout(spec)
    D = per_draw_numbers(spec)
    A, R = np.zeros((P * K, D)), np.zeros((2 * P, D))
    for p in range(P):
        base = p * G
        for j in range(K):
            A[p * K + j, base + j] = 1.0
            A[p * K + j, base + K + 2] -= 2.0
            A[p * K + j, base + K + 1] += 1.0
        R[p, base + K + 1], R[p, base + K] = 2.0, -1.0
        R[P + p, base + K + 2], R[P + p, base + K + 1] = 2.0, -1.0
    return A, R, np.arange(P * G, D)


def weak_estimates(spec: dict, n: int, total: np.ndarray, outer: np.ndarray) -> dict:
    """The estimates of a study from the sums ``total`` and cross products ``outer`` of ``n`` draws:
    ``error`` ``(P K)`` and its covariance ``cov`` (of the mean), the per-draw variances ``variance``
    (with the controls), ``raw_variance`` (coupled, no controls) and ``plain_variance`` (independent
    networks and SDE: plain Monte Carlo), and the references ``references`` ``(2 P)`` with ``reference_cov``."""
    m = total / n
    C = outer / n - np.outer(m, m)
    A, R, ci = _maps(spec)
    e, S = A @ m, A @ C @ A.T
    raw = np.diag(S).copy()
    if len(ci):
        Cec, Cc = A @ C[:, ci], C[np.ix_(ci, ci)]
        B = Cec @ np.linalg.pinv(Cc)
        e, S = e - B @ m[ci], S - B @ Cec.T
    P, K, G, _ = _layout(spec)
    plain = np.array([C[p * G + j, p * G + j] + R[P + p] @ C @ R[P + p] for p in range(P) for j in range(K)])
    return {"error": e, "cov": S / n, "variance": np.diag(S), "raw_variance": raw, "plain_variance": plain,
            "references": R @ m, "reference_cov": R @ C @ R.T / n}


def _phi_summary(name: str, p: int, est: dict, depths, K: int, P: int, reading: dict) -> dict:
    from .fit import fit_power, fit_weak

    sl = slice(p * K, (p + 1) * K)
    e, cov = est["error"][sl], est["cov"][sl, sl]
    n_rich = K - 1
    T = np.zeros((n_rich, K))
    for j in range(n_rich):
        T[j, j + 1], T[j, j] = 2.0, -1.0  # 2 e(2L) - e(L)
    rich, rcov = T @ e, T @ cov @ T.T
    rc = est["reference_cov"]
    ref_err = (est["references"][p] - est["references"][P + p]) / 3
    ref_err_se = math.sqrt(max(rc[p, p] + rc[P + p, P + p] - 2 * rc[p, P + p], 0.0)) / 3
    return {"phi": name, "error": e.tolist(), "se": np.sqrt(np.diag(cov)).tolist(),
            "variance": est["variance"][sl].tolist(), "raw_variance": est["raw_variance"][sl].tolist(),
            "plain_variance": est["plain_variance"][sl].tolist(), "fit": fit_weak(depths, e, cov, **reading),
            "richardson": {"depths": list(depths[:-1]), "error": rich.tolist(), "se": np.sqrt(np.diag(rcov)).tolist(),
                           **fit_power(depths[:-1], rich, rcov)},
            "reference": float(est["references"][P + p]), "reference_se": math.sqrt(max(rc[P + p, P + p], 0.0)),
            "reference_error": float(ref_err), "reference_error_se": ref_err_se}


@dataclasses.dataclass
class LawResult(PlanResult):
    """``plan`` (its :class:`~deeplimits.studies.law.study.LawPlan`; :attr:`spec` its spec),
    ``draws``, ``seconds``, one summary per test function (``phis``), the ``joint`` fit and its
    ``verdict``, the ``distances`` between laws. :meth:`report` is the text, :meth:`figures` draws
    ``law.png``."""

    plan: object
    """The plan summarised (:class:`~deeplimits.studies.law.study.LawPlan`)."""
    draws: int
    """Draws summarised (all the plan's, or those finished)."""
    seconds: float
    """Compute seconds, summed over the sessions of a resumed run."""
    phis: list
    """Per test function: errors, standard errors, variances per draw, fit, Richardson, reference."""
    joint: dict
    """The fit of every test function at once with a common leading exponent (:func:`~.fit.fit_weak`),
    with its input: ``error`` (the test functions' errors, concatenated) and ``cov`` (their covariance)."""
    verdict: str
    """The joint fit's verdict (:data:`~.fit.VERDICTS`)."""
    distances: dict
    """:func:`~.distances.law_distances` of the kept norm ratios."""

    @classmethod
    def from_tasks(cls, plan, results: list, seconds: float) -> "LawResult":
        """The result of ``plan``'s finished tasks (their results, in order)."""
        from .distances import law_distances
        from .fit import MARGIN, fit_weak
        from .phis import DEFAULT_PHIS

        spec = plan.to_dict()
        n = sum(r["n"] for r in results)
        total = np.sum([np.asarray(r["sum"]) for r in results], axis=0)
        outer = np.sum([np.asarray(r["outer"]) for r in results], axis=0)
        est = weak_estimates(spec, n, total, outer)
        P, K, _, _ = _layout(spec)
        depths = list(spec["depths"])
        reading = {"margin": spec.get("margin") or MARGIN, "draws": n}  # the equivalence test's margin and size
        phis = [_phi_summary(name, p, est, depths, K, P, reading)
                for p, name in enumerate(spec.get("phis") or DEFAULT_PHIS)]
        joint = {**fit_weak(depths, est["error"], est["cov"], **reading), "error": est["error"].tolist(),
                 "cov": est["cov"].tolist()}
        ratios = np.concatenate([np.asarray(r["ratios"], dtype=float) for r in results])
        return cls(plan, n, seconds, phis, joint, joint["verdict"], law_distances(ratios, depths, seed=spec["seed"]))

    def report(self) -> str:
        """The weak errors, the fits, the verdicts and the distances, as text."""
        from .report import report_lines

        return "\n".join(report_lines(self))

    def readings(self) -> dict:
        """What its figure shows, read under today's rules: the joint fit's verdict, refitted from
        the stored errors and their covariance (:func:`~.fit.fit_weak`)."""
        from .fit import MARGIN, fit_weak

        j = self.joint
        fit = fit_weak(list(self.spec["depths"]), np.asarray(j["error"]), np.asarray(j["cov"]),
                       margin=self.spec.get("margin") or MARGIN, draws=self.draws)
        return {"verdict": fit["verdict"]}

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`): per
        test function and depth the weak error and Richardson's ``2 e(2L) - e(L)`` with their
        standard errors; per depth the distances ``w1`` and ``ks`` of ``|h_L|/|h_0|`` to the SDE's
        law with their 95% intervals."""
        from .._shared.points import point, setting
        from .phis import phi_text

        out, depths = [], self.spec["depths"]
        for q in self.phis:
            where = setting(law=self.spec["law"], phi=phi_text(q["phi"]))
            out += [point("law", where, L, "weak_error", v, se) for L, v, se in zip(depths, q["error"], q["se"])]
            rich = q["richardson"]
            out += [point("law", where, L, "richardson_error", v, se)
                    for L, v, se in zip(depths, rich["error"], rich["se"])]
        d, where = self.distances, setting(law=self.spec["law"], of="|h_L|/|h_0|")
        for key in ("w1", "ks"):
            out += [point("law", where, L, key, v, ci=ci) for L, v, ci in zip(d["depths"], d[key], d[key + "_ci"])]
        return out

    def figures(self, out: str) -> list[str]:
        """Draw the study's figure into the directory ``out`` (``law.png``); returns its path."""
        return draw_into(out, [("law.png", self.plot)])

    def plot(self, path=None, *, ax=None):
        """The figure of :func:`deeplimits.studies.law.plots.plot_law`."""
        from .plots import plot_law

        return plot_law(self, path=path, ax=ax)
