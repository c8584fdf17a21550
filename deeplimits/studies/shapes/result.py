"""The result of a shapes study (docs/shapes.md): per cell ``(L, M, D)`` the hidden-state and output
errors at every recorded step with standard errors over runs, the mean outputs and losses; the limit
(or reference) they are measured against; the fitted laws with intervals; and the two verdicts."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..result import PlanResult, draw_into

__all__ = ["ShapesResult", "merge_cells", "cell_summary"]


def merge_cells(tasks: list, results: list) -> dict:
    """``{(L, M, D): record}``: the task records of every cell joined over the chunks of runs (in run
    order): per-run lists concatenated, sums added."""
    out: dict = {}
    order = sorted(range(len(tasks)), key=lambda i: (tasks[i].params["first_run"], tasks[i].params["depth"]))
    for i in order:
        L, first = tasks[i].params["depth"], tasks[i].params["first_run"]
        for c in results[i]["cells"]:
            key, ids = (L, c["M"], c["D"]), list(range(first, first + len(c["finite"])))
            if key not in out:
                out[key] = {**{k: (list(v) if isinstance(v, list) else v) for k, v in c.items()}, "run_ids": ids}
                continue
            rec = out[key]
            rec["run_ids"] = rec["run_ids"] + ids
            for k in ("finite", "hidden", "output_error"):
                rec[k] = rec[k] + c[k]
            for k in ("outputs_sum", "outputs_sq", "loss_sum"):
                rec[k] = (np.asarray(rec[k]) + np.asarray(c[k])).tolist()
    return out


def _mean_se(rows: list, finite: list) -> tuple[list, list]:
    a = np.array([r for r, ok in zip(rows, finite) if ok], dtype=np.float64).reshape(-1, len(rows[0]) if rows else 0)
    if len(a) == 0:
        return [math.nan] * a.shape[1], [math.nan] * a.shape[1]
    se = a.std(axis=0, ddof=1) / math.sqrt(len(a)) if len(a) > 1 else np.full(a.shape[1], math.nan)
    return a.mean(axis=0).tolist(), se.tolist()


def cell_summary(key: tuple, rec: dict, step: int) -> dict:
    """One cell's summary: ``L``, ``M``, ``D``, ``runs``, ``finite`` (runs that did not blow up), the
    mean and standard error over the finite runs of the hidden and output errors at every step
    (``hidden``, ``hidden_se``, ``output``, ``output_se``), the mean outputs with their standard
    errors and the mean loss at every step, and ``values`` / ``output_values``: each run's errors at
    ``step`` (NaN where it blew up), which the fits and verdicts read."""
    L, M, D = key
    n = int(sum(rec["finite"]))
    hidden, hidden_se = _mean_se(rec["hidden"], rec["finite"])
    output, output_se = _mean_se(rec["output_error"], rec["finite"])
    s, sq = np.asarray(rec["outputs_sum"]), np.asarray(rec["outputs_sq"])
    mean = s / n if n else s * math.nan
    var = (sq - n * mean ** 2) / (n - 1) if n > 1 else mean * math.nan
    return {"L": L, "M": M, "D": D, "runs": len(rec["finite"]), "finite": n, "run_ids": rec["run_ids"],
            "hidden": hidden, "hidden_se": hidden_se,
            "output": output, "output_se": output_se, "outputs": mean.tolist(),
            "outputs_se": np.sqrt(np.maximum(var, 0.0) / max(n, 1)).tolist(),
            "loss": (np.asarray(rec["loss_sum"]) / n if n else np.full(len(rec["loss_sum"]), math.nan)).tolist(),
            "values": [row[step] if ok else math.nan for row, ok in zip(rec["hidden"], rec["finite"])],
            "output_values": [row[step] if ok else math.nan for row, ok in zip(rec["output_error"], rec["finite"])]}


def _limit(spec: dict, results: list) -> dict:
    """What the networks are measured against: the exact limit's outputs and losses at every step and
    its measured tolerance, or the reference network's shape and mean outputs."""
    from .presets import CASES, Protocol
    from .limit import linear_limit

    if CASES[spec["case"]]["limit"] == "reference":
        ref = [r for res in results for r in (res.get("reference_outputs") or [])]
        mean = np.mean(np.array(ref), axis=0).tolist() if ref else []
        return {"kind": "reference", "shape": spec.get("reference"), "outputs": mean,
                "loss": [0.5 * float(np.sum((np.asarray(o) - np.asarray(Protocol().y)) ** 2)) for o in mean]}
    p = Protocol(steps=spec["steps"], lr=spec["lr"])
    lim = linear_limit(p.x, p.y, steps=p.steps, lr=p.lr, alpha=p.alpha)
    return {"kind": "exact", "outputs": lim.outputs.tolist(), "loss": lim.loss.tolist(), "tolerance": lim.tolerance,
            "nodes": len(lim.nodes)}


def _restore(x, key: str = ""):
    """``x`` with every ``None`` read as NaN, but a ``pooled`` that is ``None``."""
    if isinstance(x, dict):
        return {k: v if (k == "pooled" and v is None) else _restore(v, k) for k, v in x.items()}
    if isinstance(x, list):
        return [_restore(v) for v in x]
    return math.nan if x is None else x


def _fits_and_verdicts(spec: dict, cells: list) -> tuple:
    """``(law, output_law, swap, ushape)`` of ``cells``: the laws fitted on the cells above the plan's
    ``fit_min`` (the tanh reference left out) and the verdicts."""
    from .fit import cell_table, envelope, fit_with_intervals, resamples
    from .verdicts import swap_tests, ushape_tests

    mask = spec["fit_min"]
    ref = tuple(spec.get("reference") or ())  # the reference network itself: zero error by construction
    inside = [c for c in cells if c["L"] > mask[0] and c["M"] > mask[1] and c["D"] > mask[2]
              and (c["L"], c["M"], c["D"]) != ref]
    table = cell_table(inside, "values")
    idx = resamples(table["values"].shape[1] if table["values"].size else 1, seed=spec["seed"])
    law = fit_with_intervals("hidden", table, idx)
    out_law = fit_with_intervals("output", cell_table(inside, "output_values"), idx)
    swap, ushape = swap_tests(inside), ushape_tests(inside, law, idx)
    law.pop("boot"), out_law.pop("boot")
    law.update(mask=list(mask), step=spec["step"], envelope=envelope(*law["params"][:2]))
    out_law.update(mask=list(mask), step=spec["step"])
    return law, out_law, swap, ushape


@dataclasses.dataclass
class ShapesResult(PlanResult):
    """``plan`` (its :class:`~deeplimits.studies.shapes.study.ShapesPlan`; :attr:`spec` its spec),
    ``cells`` (one :func:`cell_summary` each), ``limit``, the fits ``law`` and ``output_law``, the
    verdicts ``swap`` and ``ushape``, the compute ``seconds``. :meth:`report` is the text; :meth:`plot`
    the figure (:func:`deeplimits.studies.shapes.plots.plot_shapes`)."""

    plan: object
    """The plan summarised (:class:`~deeplimits.studies.shapes.study.ShapesPlan`)."""
    cells: list
    """One summary per cell (:func:`cell_summary`)."""
    limit: dict
    """What the networks are measured against (the exact limit's outputs and losses, or the reference's)."""
    law: dict
    """The hidden-state law fitted at the plan's step (:func:`~.fit.fit_with_intervals`), its envelope."""
    output_law: dict
    """The output law fitted the same way."""
    swap: dict
    """The L <-> M swap verdict (:func:`~.verdicts.swap_tests`)."""
    ushape: dict
    """The U-in-D verdict (:func:`~.verdicts.ushape_tests`)."""
    seconds: float
    """Compute seconds, summed over the sessions of a resumed run."""

    @classmethod
    def from_tasks(cls, plan, tasks: list, results: list, seconds: float) -> "ShapesResult":
        """Summarise ``plan``'s finished tasks: cells, limit, laws (fitted on the cells above the plan's
        ``fit_min``, the tanh reference left out) and verdicts."""
        spec = plan.to_dict()
        cells = [cell_summary(k, r, spec["step"]) for k, r in sorted(merge_cells(tasks, results).items())]
        return cls(plan, cells, _limit(spec, results), *_fits_and_verdicts(spec, cells), seconds)

    @classmethod
    def from_dict(cls, d: dict) -> "ShapesResult":
        """The result of :meth:`to_dict`'s JSON (its plan under ``'plan'``, or its spec under ``'spec'``):
        every number written as ``null`` (not finite) read back as NaN (a U-shape verdict without slices
        keeps its ``pooled`` ``None``)."""
        restored = ("cells", "limit", "law", "output_law", "swap", "ushape")
        return super().from_dict({k: _restore(v) if k in restored else v for k, v in d.items()})

    def readings(self) -> dict:
        """What its figure shows, read by today's rules: the swap and U-shape verdicts, tested again
        on the stored cells (:mod:`deeplimits.studies.figures`)."""
        swap, ushape = _fits_and_verdicts(self.spec, self.cells)[2:]
        return {"swap": swap["verdict"], "ushape": ushape["verdict"]}

    def cell(self, L: int, M: int, D: int) -> dict:
        """The summary of cell ``(L, M, D)``."""
        from ...errors import ParameterError

        for c in self.cells:
            if (c["L"], c["M"], c["D"]) == (L, M, D):
                return c
        raise ParameterError("cell", f"cell ({L}, {M}, {D}) is not in the grid")

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`): per
        cell ``(L, M, D)`` and recorded step ``k`` (the setting ``width=M, dim=D, step=k``, the
        depth ``L``), the mean over the finite runs of the hidden-state error ``hidden_error`` and
        of the output error ``output_error``, with their standard errors."""
        from .._shared.points import point, setting

        out = []
        for c in self.cells:
            for k in range(len(c["hidden"])):
                where = setting(width=c["M"], dim=c["D"], step=k)
                out += [point("shapes", where, c["L"], q, c[key][k], c[key + "_se"][k])
                        for q, key in (("hidden_error", "hidden"), ("output_error", "output"))]
        return out

    def report(self) -> str:
        """The verdicts first, then the law, the limit and the table, as text (:mod:`.report`)."""
        from .report import report_lines

        return "\n".join(report_lines(self))

    def figures(self, out: str) -> list[str]:
        """Draw the study's figure into the directory ``out`` (``shapes.png``); returns its path."""
        return draw_into(out, [("shapes.png", self.plot)])

    def plot(self, path=None, *, ax=None):
        """The figure of :func:`deeplimits.studies.shapes.plots.plot_shapes`."""
        from .plots import plot_shapes

        return plot_shapes(self, path=path, ax=ax)
