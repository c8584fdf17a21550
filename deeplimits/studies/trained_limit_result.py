"""The result of a trained-limit study: per case, the distances of every depth to the reference
before, along and after training, their rates with bootstrap intervals over seeds, and the
verdicts of :mod:`deeplimits.diagnostics.trained_pair` (docs/trained-limit.md)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._plain import PlainData
from ..errors import ParameterError

__all__ = ["TrainedLimitResult", "summarise_case", "QUANTITIES"]

QUANTITIES = {"weight_distance": "max_k ||A^(L)_k - A^(ref)(k/L)||",
              "state_distance": "sup_k ||h^(L)_k - h^(ref)_(k/L)||"}
"""The two measured distances: record key -> what it is."""


def _fit(depths, table: np.ndarray, scale: float) -> dict:
    """Rate (minus the slope of log mean distance against log L) with its 95% bootstrap interval
    over seeds, and its :func:`~deeplimits.diagnostics.trained_pair.limit_verdict`; ``table``
    ``(seeds, depths)`` holds the finite seeds only."""
    from ..diagnostics.trained_pair import ZERO, limit_verdict
    from .fits import bootstrap_fit

    if table.size == 0:
        return {"rate": math.nan, "ci": [math.nan, math.nan], "verdict": "inconclusive"}
    if float(table.max()) <= ZERO * max(1.0, scale):
        return {"rate": math.nan, "ci": [math.nan, math.nan], "verdict": limit_verdict(None, None, zero=True)}
    slope, _, (lo, hi) = bootstrap_fit(np.log(depths), np.maximum(table, 1e-300))
    return {"rate": -slope, "ci": [-hi, -lo], "verdict": limit_verdict(-slope, (-hi, -lo))}


def summarise_case(name: str, case: dict, records: list, depths, reference: int) -> dict:
    """One case's summary from its records (every depth, seed and epoch): per epoch the mean
    distances per depth, their rates, intervals and verdicts; the family verdict after training.
    A seed whose training blew up at some depth (non-finite loss or gradient: the optimiser froze
    it) is left out of the fits and counted in ``finite_seeds``."""
    from ..diagnostics.trained_pair import family_verdict, reference_slope

    depths = sorted(depths)
    epochs = sorted({r["epoch"] for r in records})
    seeds = sorted({r["seed"] for r in records})
    key = {(r["depth"], r["seed"], r["epoch"]): r for r in records}
    scale = max(r["scale"] for r in records)
    out = {"case": name, **{k: case[k] for k in ("label", "arch", "activation", "driver", "beta", "coupled", "theory")},
           "depths": depths, "epochs": epochs, "seeds": len(seeds),
           "times": [next(r["time"] for r in records if r["epoch"] == e) for e in epochs],
           "predicted_slope": None if case["theory"] is None else -reference_slope(depths, reference, case["theory"])}
    cube = {q: np.array([[[key[(L, s, e)][q] for L in depths] for s in seeds] for e in epochs]) for q in QUANTITIES}
    finite = np.isfinite(cube["weight_distance"]).all(axis=(0, 2)) & np.isfinite(cube["state_distance"]).all(axis=(0, 2))
    finite &= np.array([all(key[(L, s, e)].get("finite", True) for L in depths for e in epochs) for s in seeds])
    out["finite_seeds"] = int(finite.sum())
    for q in QUANTITIES:
        fits = [_fit(depths, cube[q][i][finite], scale) for i in range(len(epochs))]
        out[q] = {"mean": [[float(v) for v in cube[q][i][finite].mean(0)] if finite.any() else [math.nan] * len(depths)
                           for i in range(len(epochs))],
                  "rate": [f["rate"] for f in fits], "ci": [f["ci"] for f in fits],
                  "verdict": [f["verdict"] for f in fits]}
    loss = np.array([[key[(L, s, epochs[-1])]["train_loss"] for L in depths] for s in seeds])
    out["train_loss"] = [float(v) for v in np.nanmean(loss, 0)]
    first = np.array([[key[(L, s, epochs[-1])].get("initial_loss") for L in depths] for s in seeds], dtype=float)
    out["initial_loss"] = [float(v) for v in first.mean(0)]  # NaN with mini-batches (not recorded)
    out["verdict_before"] = family_verdict(out["weight_distance"]["verdict"][0], out["state_distance"]["verdict"][0])
    out["verdict"] = family_verdict(out["weight_distance"]["verdict"][-1], out["state_distance"]["verdict"][-1])
    return out


def _rate_text(q: dict, i: int) -> str:
    rate, (lo, hi) = q["rate"][i], q["ci"][i]
    if q["verdict"][i] == "zero":
        return "zero at every depth (one path)"
    if rate is None or not math.isfinite(rate):
        return f"no rate ({q['verdict'][i]})"
    ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and math.isfinite(lo) else ""
    return f"rate {rate:.2f}{ci}: {q['verdict'][i]}"


@dataclasses.dataclass
class TrainedLimitResult(PlainData):
    """``spec`` (the plan), ``cases`` (one :func:`summarise_case` dict per case) and the compute
    ``seconds``. :meth:`case` finds a case by name; :meth:`report` is the text; :meth:`plot`
    the figure (:func:`deeplimits.studies.trained_limit_plots.plot_trained_limit`)."""

    spec: dict
    """The plan's spec (:meth:`~deeplimits.studies.trained_limit.TrainedLimitPlan.to_dict`)."""
    cases: list
    """One summary per case (:func:`summarise_case`)."""
    seconds: float
    """Compute seconds, summed over the sessions of a resumed run."""

    def case(self, name: str) -> dict:
        """The summary of case ``name``."""
        for c in self.cases:
            if c["case"] == name:
                return c
        raise ParameterError("name", f"name must be one of {', '.join(c['case'] for c in self.cases)}, got {name!r}")

    @property
    def method(self) -> str:
        """The training protocol in words (the default, or which labelled variant)."""
        from ..training.family import LR_FORMULA

        s = self.spec
        if s["optimizer"] == "adam":
            how = "Adam (variant)"
        elif s.get("batch_size"):
            how = f"SGD on mini-batches of {s['batch_size']} (variant)"
        else:
            how = "full-batch gradient descent"
        return (f"{how}, {s['epochs']} epochs, lr {s['lr']:g} at depth L: {LR_FORMULA[s['optimizer']]} (training time "
                f"lr x steps), reference depth {s['reference']}, {s['seeds']} seeds, width {s['width']}")

    def report(self) -> str:
        """Per case the distances per depth before and after training, their rates with
        intervals, the verdicts and the state rate along training, as text."""
        lines = [f"trained networks across depths: {self.method}"]
        for c in self.cases:
            lines += self._case_lines(c)
        lines.append(f"{self.seconds:.1f} s")
        return "\n".join(lines)

    @staticmethod
    def _case_lines(c: dict) -> list[str]:
        w, s = c["weight_distance"], c["state_distance"]
        out = [f"{c['case']}: {c['label']}",
               f"{'L':>6} {'|A - A_ref| init':>17} {'trained':>10} {'|h - h_ref| init':>17} {'trained':>10} "
               f"{'train loss':>11}"]
        for j, L in enumerate(c["depths"]):
            out.append(f"{L:6d} {w['mean'][0][j]:17.4g} {w['mean'][-1][j]:10.4g} {s['mean'][0][j]:17.4g} "
                       f"{s['mean'][-1][j]:10.4g} {c['train_loss'][j]:11.4g}")
        pred = "" if c["predicted_slope"] is None else \
            f"; rate {c['theory']:g} against this reference shows as {c['predicted_slope']:.3f}"
        along = ", ".join(f"{t:g}: {r:.2f}" for t, r in zip(c["times"], s["rate"]) if r is not None and math.isfinite(r))
        out += [f"  weights at init: {_rate_text(w, 0)}; trained: {_rate_text(w, -1)}",
                f"  states at init:  {_rate_text(s, 0)}; trained: {_rate_text(s, -1)}{pred}",
                f"  finite seeds {c['finite_seeds']}/{c['seeds']}; verdict at init: {c['verdict_before']}; "
                f"trained: {c['verdict']}"]
        if along:
            out.append(f"  state rate along training (time lr x steps: rate): {along}")
        return out

    def plot(self, path=None, *, ax=None):
        """The figure of :func:`deeplimits.studies.trained_limit_plots.plot_trained_limit`."""
        from .trained_limit_plots import plot_trained_limit

        return plot_trained_limit(self, path=path, ax=ax)
