"""The result of a transfer study: per setting ``(beta, optimiser, variant)`` the loss curves per
depth, the optimal base rate per depth with intervals, its exponent against depth, the loss gaps,
the verdict (:mod:`.fit`) and the coordinate check (:mod:`.coords`) (docs/transfer.md)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..result import PlanResult, draw_into
from .presets import LEVEL, predicted_exponent

__all__ = ["TransferResult", "summarise_setting", "coordinate_slopes"]


def coordinate_slopes(depths, values: list) -> dict:
    """One coordinate quantity: ``values`` per depth, one per seed (``None``: blown up). The mean
    per depth, the slope of ``log`` mean against ``log L`` with its interval (jackknife over the
    seeds finite at every depth, Student t, :func:`~deeplimits.diagnostics.trained_pair.rate_interval`)
    and its reading (:func:`.fit.classify_slope`)."""
    from ...diagnostics.trained_pair import rate_interval
    from .fit import classify_slope

    t = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=np.float64).T  # (seeds, depths)
    keep = t[np.isfinite(t).all(axis=1) & (t > 0).all(axis=1)]
    mean = [float(v) for v in np.nanmean(t, 0)] if np.isfinite(t).any() else [None] * len(depths)
    if len(keep) < 2:
        return {"mean": mean, "slope": None, "ci": [None, None], "reading": "unclear"}
    rate, lo, hi = rate_interval(depths, keep, LEVEL / 2)
    ci = [-hi, -lo]
    return {"mean": mean, "slope": -rate, "ci": ci, "reading": classify_slope(ci)}


def summarise_setting(beta: float, optimizer: str, variant: str, by_depth: dict, lrs) -> dict:
    """One setting's summary from its tasks' results (``{depth: result}``, the depths present)."""
    from .fit import INSUFFICIENT, fit_optima, log_losses, verdict

    depths = sorted(by_depth)
    j = [by_depth[L]["variants"].index(variant) for L in depths]
    tables = [log_losses(by_depth[L]["loss"][v], by_depth[L]["initial_loss"]) for L, v in zip(depths, j)]
    p = by_depth[depths[0]]["exponents"][j[0]]
    row = {"beta": beta, "optimizer": optimizer, "variant": variant, "exponent": p,
           "predicted": predicted_exponent(beta, optimizer), "depths": depths, "lrs": list(lrs),
           "seeds": int(tables[0].shape[1]), "curves": [[float(v) for v in np.exp(t.mean(1))] for t in tables],
           "blown_up": [[sum(x is None for x in r) for r in by_depth[L]["loss"][v]] for L, v in zip(depths, j)],
           "coords": {k: coordinate_slopes(depths, [by_depth[L]["coords"][variant][k] for L in depths])
                      for k in ("h_L", "block")}}
    if len(depths) < 3:
        return {**row, "verdict": INSUFFICIENT, "why": f"{len(depths)} depths (at least 3 are needed)"}
    fit = fit_optima(depths, lrs, tables)
    row.update(fit)
    row["rate_exponent"] = p + fit["slope"]  # the optimal rate itself: base optimum x L^p
    row["verdict"], row["why"] = verdict(fit, depths)
    row["horizons"] = _horizons(by_depth, depths, j, lrs, p)
    if all("roughness" in by_depth[L] for L in depths):  # at the transferred rate's nearest grid point
        i0 = int(round(fit["optimum"][0] - lrs[0]))
        row["roughness"] = coordinate_slopes(depths, [by_depth[L]["roughness"][v][i0] for L, v in zip(depths, j)])
    return row


def _horizons(by_depth: dict, depths, j, lrs, p: float) -> list:
    """The optimum's exponent after each epoch (the training loss after it, on the whole training set:
    after the last, the verdict's own table), where the tasks recorded them: ``[{'epoch', 'slope', 'slope_ci', 'rate_exponent'}, ...]`` (empty: none)."""
    from .fit import fit_optima, log_losses

    if not all("loss_by_epoch" in by_depth[L] for L in depths):
        return []
    out = []
    first = by_depth[depths[0]]  # a result stored before the horizons were named read every epoch
    epochs = first.get("horizon_epochs") or range(1, len(first["loss_by_epoch"]) + 1)
    for e, epoch in enumerate(epochs):
        tables = [log_losses(by_depth[L]["loss_by_epoch"][e][v], by_depth[L]["initial_loss"])
                  for L, v in zip(depths, j)]
        fit = fit_optima(depths, lrs, tables)
        out.append({"epoch": epoch, "slope": fit["slope"], "slope_ci": fit["slope_ci"],
                    "rate_exponent": p + fit["slope"]})
    return out


@dataclasses.dataclass
class TransferResult(PlanResult):
    """``plan`` (its :class:`~deeplimits.studies.transfer.study.TransferPlan`, or the convolutional
    one; :attr:`spec` its spec), ``settings`` (one :func:`summarise_setting` dict per ``(beta,
    optimiser, variant)``) and the compute ``seconds``. :meth:`report` is the text (:mod:`.report`);
    :meth:`figures` draws the loss curves and the coordinate check (:mod:`.plots`)."""

    plan: object
    """The plan summarised."""
    settings: list
    """One summary per ``(beta, optimiser, variant)`` (:func:`summarise_setting`)."""
    seconds: float
    """Compute seconds, summed over the sessions of a resumed run."""

    def setting(self, beta: float, optimizer: str, variant: str = "rescaled") -> dict:
        """The summary of one setting (``KeyError`` if the study has none)."""
        for s in self.settings:
            if (s["beta"], s["optimizer"], s["variant"]) == (beta, optimizer, variant):
                return s
        raise KeyError((beta, optimizer, variant))

    def report(self) -> str:
        """Per setting the optimal base rate per depth, its exponent with the interval beside the
        prediction, the loss gaps, the verdict and the coordinate check, as text (:mod:`.report`)."""
        from .report import report

        return report(self)

    def readings(self) -> dict:
        """What its figures show, read under today's rules: per setting the verdict of its stored
        optima and loss gaps (:func:`.fit.verdict`) and, with the limit beside it, its family's
        verdicts before and after training (:func:`~deeplimits.studies.trained_limit.result.case_readings`)."""
        from ..trained_limit.result import case_readings
        from .fit import INSUFFICIENT, verdict

        out = {}
        for r in self.settings:
            name = f"beta {r['beta']:g}, {r['optimizer']}, {r['variant']}"
            out[name] = verdict(r, r["depths"])[0] if "optimum" in r else INSUFFICIENT
            if "limit" in r:  # the family of the limit beside it, before and after training
                out[f"{name}: limit"] = case_readings(r["limit"]["family"])
        return out

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`), per
        setting and depth: the final training loss at each base rate (its geometric mean over
        seeds; the rate in the setting), the optimal base rate and the optimal rate itself (``log2``,
        90% bootstrap intervals), the loss gap at the transferred rate and the coordinate check's means."""
        from .points import transfer_points

        return transfer_points(self)

    def figures(self, out: str) -> list[str]:
        """Draw ``transfer.png`` (loss against base rate), ``optimum.png`` (the optimal rate against
        depth), ``coordinates.png`` and, with the limit beside it, ``limit.png``
        (:func:`.limit.plot_limit`) into ``out``; their paths."""
        from .limit import plot_limit

        drawn = [("transfer.png", self.plot), ("optimum.png", self.plot_optimum), ("coordinates.png", self.plot_coordinates)]
        if any("limit" in s for s in self.settings):
            drawn.append(("limit.png", lambda path: plot_limit(self, path)))
        return draw_into(out, drawn)

    def plot(self, path=None, *, ax=None):
        """The loss curves (:func:`~deeplimits.studies.transfer.plots.plot_transfer`)."""
        from .plots import plot_transfer

        return plot_transfer(self, path=path, ax=ax)

    def plot_optimum(self, path=None, *, ax=None):
        """The optimal rate against depth (:func:`~deeplimits.studies.transfer.plots.plot_optimum`)."""
        from .plots import plot_optimum

        return plot_optimum(self, path=path, ax=ax)

    def plot_coordinates(self, path=None, *, ax=None):
        """The coordinate check (:func:`~deeplimits.studies.transfer.plots.plot_coordinates`)."""
        from .plots import plot_coordinates

        return plot_coordinates(self, path=path, ax=ax)
