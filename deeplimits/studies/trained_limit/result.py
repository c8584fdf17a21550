"""The result of a trained-limit study: per case, the distances of every depth to the reference
before, along and after training, their rates with intervals over seeds, and the verdicts (tests
at level :data:`~deeplimits.diagnostics.trained_pair.LEVEL`) of
:mod:`deeplimits.diagnostics.trained_pair` (docs/trained-limit.md)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...errors import ParameterError
from ..result import PlanResult, draw_into

__all__ = ["TrainedLimitResult", "summarise_case", "case_readings", "QUANTITIES"]

QUANTITIES = {"weight_distance": "max_k ||A^(L)_k - A^(ref)(k/L)||",
              "state_distance": "sup_k ||h^(L)_k - h^(ref)_(k/L)||"}
"""The two measured distances: record key -> what it is."""


def _fit(depths, table: np.ndarray, scale: float) -> dict:
    """Rate (minus the slope of log mean distance against log L) with the bounds of its test over
    seeds, the same over the deepest depths, and the verdict of
    :func:`~deeplimits.diagnostics.trained_pair.rate_test`; ``table`` ``(seeds, depths)`` holds
    the finite seeds only."""
    from ...diagnostics.trained_pair import ZERO, rate_test

    zero = table.size > 0 and float(table.max()) <= ZERO * max(1.0, scale)
    return rate_test(depths, table, zero=zero)


def summarise_case(name: str, case: dict, records: list, depths, reference: int) -> dict:
    """One case's summary from its records (every depth, seed and epoch): per epoch the mean
    distances per depth, their rates, intervals and verdicts; the family verdict after training.
    A seed whose training blew up at some depth (non-finite loss or gradient: the optimiser froze
    it) is left out of the fits and counted in ``finite_seeds``."""
    from ...diagnostics.trained_pair import INSUFFICIENT, family_verdict, reference_slope

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
                  **{k: [f.get(k) for f in fits] for k in ("rate", "ci", "deep_rate", "deep_ci", "verdict", "missing",
                                                          "power")},
                  "deep_depths": fits[0]["deep_depths"]}
    loss = np.array([[key[(L, s, epochs[-1])]["train_loss"] for L in depths] for s in seeds])
    out["train_loss"] = [float(v) for v in np.nanmean(loss, 0)]
    first = np.array([[key[(L, s, epochs[-1])].get("initial_loss") for L in depths] for s in seeds], dtype=float)
    out["initial_loss"] = [float(v) for v in first.mean(0)]  # NaN with mini-batches (not recorded)
    for key, i in (("_before", 0), ("", -1)):
        w, st = out["weight_distance"], out["state_distance"]
        out["verdict" + key] = family_verdict(w["verdict"][i], st["verdict"][i])
        why = [f"{name}: {q['missing'][i]}" for name, q in (("states", st), ("weights", w)) if q["missing"][i]]
        out["missing" + key] = "" if out["verdict" + key] != INSUFFICIENT else (why or [""])[0]
    return out


def case_readings(c: dict) -> dict:
    """A case summary's family verdicts before and after training (``{'before', 'after'}``), read
    again by today's rules (:func:`~deeplimits.diagnostics.trained_pair.limit_verdict`,
    :func:`~deeplimits.diagnostics.trained_pair.family_verdict`) from its stored rates and
    intervals; a reading stored without a rate (a zero distance, too few depths or seeds) is kept."""
    from ...diagnostics.trained_pair import family_verdict, limit_verdict

    def reading(q: dict, i: int) -> str:
        rate = q["rate"][i]
        if rate is None or not math.isfinite(rate):
            return q["verdict"][i]
        return limit_verdict(rate, q["ci"][i], deep_ci=q["deep_ci"][i])

    return {when: family_verdict(reading(c["weight_distance"], i), reading(c["state_distance"], i))
            for when, i in (("before", 0), ("after", -1))}


@dataclasses.dataclass
class TrainedLimitResult(PlanResult):
    """``plan`` (its :class:`~deeplimits.studies.trained_limit.study.TrainedLimitPlan`; :attr:`spec`
    its spec), ``cases`` (one :func:`summarise_case` dict per case) and the compute ``seconds``.
    :meth:`case` finds a case by name; :meth:`report` is the text (:mod:`.report`); :meth:`plot`
    the figure (:func:`deeplimits.studies.trained_limit.plots.plot_trained_limit`)."""

    plan: object
    """The plan summarised."""
    cases: list
    """One summary per case (:func:`summarise_case`)."""
    seconds: float
    """Compute seconds, summed over the sessions of a resumed run."""

    def readings(self) -> dict:
        """What its figure shows, read under today's rules: per case the verdict before and after
        training (:func:`case_readings`)."""
        return {c["case"]: case_readings(c) for c in self.cases}

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`): per
        case, epoch and depth the mean distances to the reference depth over the finite seeds
        (``weight_distance``, ``state_distance``), and per depth the final training loss."""
        from .._shared.points import point, setting

        out = []
        for c in self.cases:
            for i, epoch in enumerate(c["epochs"]):
                where = setting(case=c["case"], epoch=epoch, reference=self.spec["reference"])
                out += [point("trained-limit", where, L, q, v) for q in QUANTITIES
                        for L, v in zip(c["depths"], c[q]["mean"][i])]
            out += [point("trained-limit", setting(case=c["case"], epoch=c["epochs"][-1]), L, "train_loss", v)
                    for L, v in zip(c["depths"], c["train_loss"])]
        return out

    def case(self, name: str) -> dict:
        """The summary of case ``name``."""
        for c in self.cases:
            if c["case"] == name:
                return c
        raise ParameterError("name", f"name must be one of {', '.join(c['case'] for c in self.cases)}, got {name!r}")

    @property
    def method(self) -> str:
        """The training protocol in words (the default, or which labelled variant)."""
        from ...training.family import LR_FORMULA

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
        intervals, the verdicts and the state rate along training, as text (:mod:`.report`)."""
        from .report import report

        return report(self)

    def figures(self, out: str) -> list[str]:
        """Draw the trained limit's figure into the directory ``out`` (``trained-limit.png``);
        returns its path."""
        return draw_into(out, [("trained-limit.png", self.plot)])

    def plot(self, path=None, *, ax=None):
        """The figure of :func:`deeplimits.studies.trained_limit.plots.plot_trained_limit`."""
        from .plots import plot_trained_limit

        return plot_trained_limit(self, path=path, ax=ax)
