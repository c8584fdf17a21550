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

__all__ = ["ConvScalingResult", "conv_exponents", "PUBLISHED_CONV", "conv_family"]

FITTED_ACCURACY = 0.9
"""A network whose final training accuracy is below this has not fitted its training data: the
report names it (its kernels stay in the fits, as a dense network stopped by the epoch limit does)."""

PUBLISHED_CONV = {"alpha": 0.1, "beta": 0.0, "limit": "sparse (a few layers of constant order carry the weight: "
                                                      "neither smooth nor rough)"}
"""What Cohen et al. (2021, §3.2) report for their ResNet-18-layout networks on CIFAR-10."""


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
        the evidence and the verdicts."""
        from ...diagnostics.scaling import evidence_lines, interval, verdict_line

        p = self.plan
        lines = [f"conv residual networks on {p.dataset}: width {p.width}, {p.stages} stage(s), SGD lr {p.lr:g} "
                 f"(cosine), momentum {p.momentum:g}, weight decay {p.weight_decay:g}, batch {p.batch_size}, "
                 f"{p.epochs} epochs, " + (f"crops (padding {p.padding}) and flips" if p.augment else "no crops or flips")
                 + f"; delta_k initialised with std L^-{p.beta:g} / sqrt(9 c), A_k with He's (this package's "
                   "choice: the paper does not state its initialisation)",
                 f"{'L':>5} {'seed':>4} {'train acc':>9} {'test acc':>9} {'max|delta|':>10} {'max|A|':>8} "
                 f"{'cumsum A':>9} {'rss A':>8} {'90% A':>6} {'90% delta':>9} {'seconds':>8}"]
        for r in self.records:
            acc = lambda v: "failed" if v is None else f"{v:.4f}"  # noqa: E731
            head = f"{r['depth']:5d} {r['seed']:4d} {acc(r['train_accuracy']):>9} {acc(r['test_accuracy']):>9} "
            if r["A"] is None:  # blown up: no diagnostics
                lines.append(head + f"{'blown up: non-finite weights':>56} {r['seconds']:8.1f}")
                continue
            lines.append(head + f"{r['delta']['max_norm']:10.4g} {r['A']['max_norm']:8.4g} {r['A']['cumsum_norm']:9.4g} "
                         f"{r['A']['rss']:8.4g} {r['A']['layers_90']:6.0f} {r['delta']['layers_90']:9.0f} "
                         f"{r['seconds']:8.1f}")
        unfit = sorted({r["depth"] for r in self.records
                        if r["train_accuracy"] is not None and r["train_accuracy"] < FITTED_ACCURACY})
        if unfit:
            lines.append(f"networks below {FITTED_ACCURACY:g} training accuracy at depths {unfit}: they did not fit "
                         "their training data, and their kernels, in the fits below, are those of an unfinished training")
        e = self.exponents
        for key, what in (("alpha", "max_k ||delta_k|| ~ L^-alpha"), ("beta", "max_k ||A_k|| ~ L^-beta"),
                          ("beta_cumsum", "max_k ||sum_{j<=k} A_j|| ~ L^(1-beta); about 1 when a few blocks carry "
                                          "the weight")):
            if key in e:
                lines.append(f"{key} = {e[key]['value']:.3f} {interval(e[key]['ci'])} ({what}"
                             + (f"; published {PUBLISHED_CONV[key]:g})" if key in PUBLISHED_CONV else ")"))
        for name in ("A", "delta"):
            v = self.verdicts[name]
            lines += [f"{name}: evidence (spectral norms along depth)"] + evidence_lines(v["evidence"])
            lines.append(f"{name}: " + verdict_line(v["hypothesis"], v["reason"]))
        lines.append(f"published: {PUBLISHED_CONV['limit']}")
        return "\n".join(lines)

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
        return plot_conv_scaling({name: conv_family(live, name) for name in ("delta", "A")}, path, ax=ax)
