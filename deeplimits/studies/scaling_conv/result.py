"""The result of the convolutional scaling experiment (docs/weights.md, "Convolutional
networks"): per depth and seed the trained network's accuracy and its kernels' spectral norms
along depth; across depths alpha (``max_k ||delta_k|| ~ L^-alpha``), beta (the cumulative-sum
norm of ``A``, ``~ L^(1 - beta)``) with 95% intervals, and the steps of
:func:`~deeplimits.diagnostics.scaling_exponents` with their verdict for ``A`` and for ``delta``
(Cohen, Cont, Rossier & Xu, ICML 2021, §3.2: the sparse regime, alpha about 0.1, beta about 0).
"""

from __future__ import annotations

import dataclasses

from ..result import PlanResult, draw_into
from .._shared.stats import median, median_records, slope

__all__ = ["ConvScalingResult", "conv_exponents", "conv_family"]


def conv_family(records: list[dict], name: str) -> list:
    """Per depth, the :class:`~deeplimits.diagnostics.ConvWeightDiagnostics` of kernel ``name``:
    the median over seeds of each number (the per-layer norms: the first seed's)."""
    from ...diagnostics import ConvWeightDiagnostics

    fields = {f.name for f in dataclasses.fields(ConvWeightDiagnostics)}
    return [ConvWeightDiagnostics(**{k: v for k, v in d.items() if k in fields})
            for d in median_records(records, name)]


def conv_exponents(records: list[dict]) -> dict:
    """``exponents``: ``alpha`` (minus the slope of ``max_k ||delta_k||``), ``beta`` (minus that of
    ``max_k ||A_k||``, what Cohen et al. report for convolutional networks), ``beta_cumsum`` (one
    minus that of the cumulative-sum norm of ``A``, step 2), each ``{'value', 'ci'}``, and each
    kernel's fitted exponents; ``verdicts``: per kernel (``'A'``, ``'delta'``) the verdict, its reason and
    evidence. Needs two depths or more (else the verdict is ``'insufficient evidence'``)."""
    from ...diagnostics import scaling_exponents
    from ...diagnostics.verdict import INSUFFICIENT

    depths = sorted({r["depth"] for r in records})
    if len(depths) < 2:
        why = {"hypothesis": INSUFFICIENT, "reason": "fewer than two depths trained", "evidence": []}
        return {"exponents": {}, "verdicts": {"A": why, "delta": dict(why)}}
    out, verdicts = {}, {}
    for name in ("A", "delta"):
        e = scaling_exponents(conv_family(records, name))
        out[name] = e.exponents
        verdicts[name] = {"hypothesis": e.hypothesis, "reason": e.reason, "evidence": e.evidence}
    out["alpha"] = slope(depths, [median([r["delta"]["max_norm"] for r in records if r["depth"] == L])
                                   for L in depths])
    # Cohen et al.'s conv beta (about 0) is the largest inner kernel's: minus the slope of max_k ||A_k||. The
    # cumulative-sum beta of step 2 is about 1 on a sparse family (bounded partial sums), so it is kept apart
    out["beta"] = dict(out["A"]["beta_max"])
    out["beta_cumsum"] = dict(out["A"]["beta"])
    return {"exponents": out, "verdicts": verdicts}


@dataclasses.dataclass
class ConvScalingResult(PlanResult):
    """``records``: per depth and seed the losses, accuracies, epochs, seconds, the training loss
    per epoch (``history``) and per kernel (``A``, ``delta``) its spectral norms along depth and
    Table 1's quantities; ``exponents``: ``alpha``, ``beta`` and each kernel's; ``verdicts``: per
    kernel the verdict of the steps, its reason and evidence."""

    plan: object
    """The experiment it ran (:class:`~.study.ConvScalingPlan`)."""
    records: list
    """One per depth and seed (see above)."""
    exponents: dict
    """``alpha``, ``beta`` (``{'value', 'ci'}``, 95% intervals) and each kernel's exponents."""
    verdicts: dict
    """Per kernel: ``hypothesis`` (smooth, rough, sparse, neither or insufficient evidence), ``reason``, ``evidence``."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""

    shown = {k: k for k in ("dataset", "depths", "width", "stages", "epochs")}

    @property
    def hypothesis(self) -> str:
        """The verdict of the steps on the inner kernels ``A`` (where beta is read)."""
        return self.verdicts["A"]["hypothesis"]

    def readings(self) -> dict:
        """What its figure shows: per kernel drawn (``delta``, ``A``) the verdict of the steps, read
        again from the records by today's rule (:func:`~deeplimits.diagnostics.scaling_exponents`)."""
        from ...diagnostics import scaling_exponents

        live = [r for r in self.records if r["finite"]]
        out = {}
        for name in ("delta", "A"):
            fam = conv_family(live, name)
            out[name] = scaling_exponents(fam).hypothesis if len({d.depth for d in fam}) > 1 else None
        return out

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`): per
        depth, the means over seeds (with their standard errors) of the accuracies and of each
        kernel's diagnostics (``A_max_norm``, ``delta_max_norm``, ...)."""
        from .._shared.points import record_means

        diag = ("max_norm", "increment_norm", "cumsum_norm", "rss", "layers_90")
        return record_means("scaling-conv", self.records, (), ["train_accuracy", "test_accuracy", "train_loss"]
                            + [f"{k}.{d}" for k in ("A", "delta") for d in diag])

    def report(self) -> str:
        """The protocol, a table per depth and seed, alpha and beta beside the published values,
        the evidence and the verdicts (:mod:`.report`)."""
        from .report import report

        return report(self)

    def figures(self, out: str) -> list[str]:
        """Draw Figs. 7-8 of Cohen et al. into the directory ``out`` (``scaling.png``), none when
        every network blew up; returns the paths drawn."""
        return draw_into(out, [("scaling.png", self.plot)] * any(r["finite"] for r in self.records))

    def plot(self, path: str | None = None, *, ax=None):
        """Figs. 7-8 of Cohen et al. (:func:`~deeplimits.studies.scaling_conv.plots.plot_conv_scaling`): the
        spectral norms of ``delta_k`` and ``A_k`` against ``k / L`` per depth, and their max norm,
        root sum of squares and scaled increments against the depth; written to ``path`` when given."""
        from .plots import plot_conv_scaling

        live = [r for r in self.records if r["finite"]]
        return plot_conv_scaling({name: conv_family(live, name) for name in ("delta", "A")}, path, ax=ax,
                                 results=[self])
