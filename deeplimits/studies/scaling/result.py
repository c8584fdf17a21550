"""The result of the scaling experiment (docs/weights.md, "The scaling experiment"): per learning
rate, the family of depths summarised by Cohen, Cont, Rossier & Xu's steps (ICML 2021, §2.3):
alpha from the max norm of ``delta``, beta from the cumulative-sum norm of ``W`` (and, with one
``delta_k`` per layer, ``alpha + beta`` from the cumulative-sum norm of ``|delta_k| W_k``,
their Remark 2.2), the beta-scaled increments (``nu``), the noise part, the root sum of squares
and the loss kept by the trend, weighed into a verdict (:mod:`deeplimits.diagnostics.verdict`);
the same steps on the biases ``b_k`` of the same networks (their Appendix B: :func:`bias_exponents`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar


from .._shared.stats import median, median_records, slope
from ..result import PlanResult, draw_into

__all__ = ["ScalingResult", "family_exponents", "bias_exponents", "PUBLISHED", "PUBLISHED_EMBEDDED", "LOSS_NAMES"]

PUBLISHED = {"tanh": {"alpha": 0.7, "beta": 0.3, "alpha+beta": 1.0, "nu": 0.5,
                      "limit": "smooth (Hypothesis 1, nu = 1/2; the trend keeps the loss)"},
             "relu": {"alpha+beta": 0.8, "alpha+beta_max": 0.8, "released_increments": "0.2 to 0.4",
                      "limit": "rough (Hypothesis 2: beta-scaled increments growing like L^0.2 to L^0.4, bounded "
                               "root sum of squares, denoised loss about ten times the original, delta_k changing "
                               "sign along depth)"}}
"""What Cohen et al. (2021) report for the synthetic task, printed next to the measured values
(ReLU: beta read from ``|delta| A``, which is alpha + beta here; the released code's figure fits
its max norm, and its increments times ``L^0.5``)."""
PUBLISHED_EMBEDDED = {"tanh": {"alpha": 0.7, "beta": 0.2, "limit": "smooth (embedded MNIST)"},
                      "relu": {"alpha+beta": 0.9, "alpha+beta_max": 0.9, "released_increments": "0.2 to 0.4",
                               "limit": "rough (embedded MNIST)"}}
"""The same for the embedded-MNIST experiment, the nearest published values for embedded digits."""

LOSS_NAMES = {"mse": "torch.nn.MSELoss(): the squared error averaged over the batch and the outputs",
              "squared": "half the squared error summed over the outputs, averaged over the batch"}
"""The loss conventions, as the report names them."""


def other_convention(loss: str, value: float, outputs: int) -> tuple[str, float]:
    """``value`` of one loss convention in the other: ``squared = mse * outputs / 2``."""
    return ("squared", value * outputs / 2) if loss == "mse" else ("mse", value * 2 / outputs)


def family_exponents(records: list[dict], dataset: str = "synthetic") -> dict:
    """The exponents and verdict of one learning rate's records (all seeds, two depths or more):
    ``exponents`` (``alpha``, ``beta``, ``alpha+beta`` and, with one ``delta_k`` per layer,
    the released code's statistics of ``|delta_k| W_k``
    (:func:`~deeplimits.diagnostics.scaling.released_statistics`): ``alpha+beta_max`` (minus the
    slope of its max norm), ``released_increments`` (the slope of its increment norm times
    ``L^0.5``, or ``L^0.4`` for ``dataset='digits'``) and ``released_rss``; ``beta_max``,
    ``nu``, ``scaled_increments``, ``ode_rate`` and every diagnostic's slope), ``evidence``,
    ``hypothesis``, ``reason``, ``weights`` (the tensor judged: ``W``, or ``|delta| W``), and
    ``biases`` (:func:`bias_exponents`; ``None`` for records stored before the biases were diagnosed)."""
    from ...diagnostics import WeightDiagnostics, scaling_exponents
    from ...diagnostics.scaling import RELEASED_FACTORS, released_statistics

    depths = sorted({r["depth"] for r in records})
    med = lambda key: [median([r[key] for r in records if r["depth"] == L]) for L in depths]  # noqa: E731
    fields = {f.name for f in dataclasses.fields(WeightDiagnostics)}
    fam = lambda key: [WeightDiagnostics(**{k: v for k, v in d.items() if k in fields})  # noqa: E731
                       for d in median_records(records, key)]
    ratio = med("trend_ratio")[-1]
    per_layer = "effective" in records[0]
    judged = scaling_exponents(fam("effective" if per_layer else "W"), trend_ratio=ratio)
    w = judged if not per_layer else scaling_exponents(fam("W"))
    e = dict(w.exponents)
    e["alpha"] = slope(depths, [median([abs(r["delta"]) for r in records if r["depth"] == L]) for L in depths])  # |delta|
    if per_layer:
        e["alpha+beta"] = dict(judged.exponents["beta"])
        code = released_statistics(fam("effective"), RELEASED_FACTORS[dataset])  # what its ReLU figures fit
        e["alpha+beta_max"], e["released_increments"], e["released_rss"] = (
            code["max_norm"], code["increments"], code["rss"])
    else:
        e["alpha+beta"] = {"value": e["alpha"]["value"] + e["beta"]["value"], "ci": [math.nan, math.nan]}
    e["ode_rate"] = slope(depths, med("ode_distance"))
    return {"lr": records[0]["lr"], "weights": judged.name, "exponents": e, "judged": judged.exponents,
            "evidence": judged.evidence, "hypothesis": judged.hypothesis, "reason": judged.reason,
            "trend_ratio": ratio, "biases": bias_exponents(records, e["alpha"]) if "b" in records[0] else None}


def bias_exponents(records: list[dict], alpha: dict) -> dict:
    """The steps of :func:`family_exponents` on the biases ``b_k`` of the same networks (Cohen et al.,
    ICML 2021, Appendix B: the biases are read as the weights are), given ``alpha`` (the slope of the
    max norm of ``delta``, shared by ``W`` and ``b``): ``beta`` from the cumulative-sum norm of ``b_k``
    (of ``|delta_k| b_k`` with one ``delta_k`` per layer, which then reads ``alpha + beta``), ``nu``
    and every diagnostic's slope, ``alpha+beta``, the evidence and the verdict, ``weights`` (the
    tensor judged: ``b`` or ``|delta| b``)."""
    from ...diagnostics import WeightDiagnostics, scaling_exponents

    fields = {f.name for f in dataclasses.fields(WeightDiagnostics)}
    per_layer = "effective_b" in records[0]
    family = [WeightDiagnostics(**{k: v for k, v in d.items() if k in fields})
              for d in median_records(records, "effective_b" if per_layer else "b")]
    ratio = median([r["trend_ratio"] for r in records if r["depth"] == max(r["depth"] for r in records)])
    judged = scaling_exponents(family, trend_ratio=ratio)
    e = dict(judged.exponents)
    if per_layer:
        e["alpha+beta"] = dict(e["beta"])
    else:
        e["alpha+beta"] = {"value": alpha["value"] + e["beta"]["value"], "ci": [math.nan, math.nan]}
    return {"weights": judged.name, "exponents": e, "evidence": judged.evidence, "hypothesis": judged.hypothesis,
            "reason": judged.reason}


@dataclasses.dataclass
class ScalingResult(PlanResult):
    """``plan`` (its :class:`~deeplimits.studies.scaling.study.ScalingPlan`, whose ``activation``,
    ``delta`` (as ``delta_mode``), ``width`` and ``dataset`` the result shows); per depth, seed and
    learning rate: ``records`` (``epochs``, ``reached``, ``train_loss`` in the ``loss`` convention,
    ``delta``, ``W``: the diagnostics of the trained weights, and with one ``delta_k`` per layer
    ``effective``: those of ``|delta_k| W_k`` and ``delta_sign_changes``, ``trend_ratio``,
    ``ode_distance``); ``families``: per learning rate the exponents, the evidence and the verdict
    (:func:`family_exponents`); ``exponents``, ``hypothesis``, ``reason``: those of the first
    learning rate; ``protocol``: the training protocol in words; ``paths``: ``delta_k`` and three
    entries of ``W_k`` along depth at the deepest depth (seed 0), and its loss after every epoch."""

    plan: object
    """The plan summarised."""
    records: list[dict]
    """One per depth, seed and learning rate (see above)."""
    exponents: dict
    """The exponents of the first learning rate's family, with 95% intervals."""
    hypothesis: str
    """The verdict of the first learning rate's family: smooth, rough, sparse, neither or insufficient evidence."""
    reason: str
    """The evidence for and against it, in words."""
    published: dict
    """Cohen et al.'s values for the same experiment (:data:`PUBLISHED`, :data:`PUBLISHED_EMBEDDED`)."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""
    families: list = dataclasses.field(default_factory=list)
    """Per learning rate: the exponents, the evidence and the verdict."""
    protocol: dict = dataclasses.field(default_factory=dict)
    """The training protocol (:meth:`ScalingPlan.protocol`)."""
    paths: dict = dataclasses.field(default_factory=dict)
    """``delta_k`` and three entries of ``W_k`` along depth at the deepest depth (seed 0), and its loss per epoch."""

    shown: ClassVar[dict] = {"activation": "activation", "delta_mode": "delta", "width": "width", "dataset": "dataset"}
    """The plan's values the result shows (:class:`~deeplimits.studies.result.PlanResult`)."""

    @classmethod
    def plan_of(cls, d: dict):
        """The plan of a result's JSON written before results held their plans: its shown values, its
        protocol, the depths and seeds of its records; what it did not record (``samples``, ``seed``)
        takes the defaults of :func:`~deeplimits.studies.scaling.study.plan_scaling`."""
        from .presets import DEFAULTS

        p = d.get("protocol") or {}
        keys = ("optimizer", "batch_size", "stop_loss", "max_epochs", "init_scale", "dtype", "loss", "delta_init",
                "bias_init", "inputs", "batches", "angle_start", "stop_rule", "init_method", "arch")
        return cls.plan_type(**{k: p[k] for k in keys if k in p}, activation=d["activation"], delta=d["delta_mode"],
                             depths=tuple(sorted({r["depth"] for r in d["records"]})), width=d["width"],
                             seeds=len({r["seed"] for r in d["records"]}), lr=tuple(p.get("lr") or [DEFAULTS["lr"]]),
                             samples=DEFAULTS["samples"], seed=DEFAULTS["seed"], dataset=d.get("dataset", "synthetic"))

    def report(self) -> str:
        """The protocol, a table per depth and configuration, the exponents beside the published
        ones, the evidence and the verdict (:mod:`deeplimits.studies.scaling.report`)."""
        from .report import report

        return report(self)

    def readings(self) -> dict:
        """What its figure shows: per learning rate the verdict of the steps (smooth, rough, sparse, ...)."""
        return {f"lr {f['lr']:g}": f.get("hypothesis") for f in self.families} or {"hypothesis": self.hypothesis}

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`): per
        learning rate and depth, the means over seeds (with their standard errors) of ``delta``, the
        training loss and the trained weights' diagnostics (``W_max_norm``, ...; ``effective_...``
        with one ``delta_k`` per layer)."""
        from .._shared.points import record_means

        diag = ("max_norm", "increment_norm", "cumsum_norm", "rss", "quadratic_variation", "layers_90")
        return record_means("scaling", self.records, ("lr",), ["delta", "train_loss", "epochs"]
                            + [f"{w}.{k}" for w in ("W", "effective") for k in diag])

    def figures(self, out: str) -> list[str]:
        """Draw the scaling figure into the directory ``out`` (``scaling.png``); returns its path."""
        return draw_into(out, [("scaling.png", self.plot)])

    def plot(self, path: str | None = None, *, ax=None):
        """The figures of Cohen et al.'s Figs. 2-6 (:func:`deeplimits.studies.scaling.plots.plot_scaling`):
        six panels, written to ``path`` when given, or drawn into ``ax`` (six Axes)."""
        from .plots import plot_scaling

        return plot_scaling(self, path, ax=ax)
