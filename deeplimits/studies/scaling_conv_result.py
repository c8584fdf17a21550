"""The result of the convolutional scaling experiment (docs/weights.md, "Convolutional
networks"): per depth and seed the trained network's accuracy and its kernels' spectral norms
along depth; across depths alpha (``max_k ||delta_k|| ~ L^-alpha``), beta (the cumulative-sum
norm of ``A``, ``~ L^(1 - beta)``) with 95% intervals, and the steps of
:func:`~deeplimits.diagnostics.scaling_exponents` with their verdict for ``A`` and for ``delta``
(Cohen, Cont, Rossier & Xu, ICML 2021, §3.2: the sparse regime, alpha about 0.1, beta about 0).
"""

from __future__ import annotations

import dataclasses
import math

from .result import PlanResult
from .scaling_result import _median, _slope

__all__ = ["ConvScalingResult", "conv_exponents", "PUBLISHED_CONV", "conv_family"]

PUBLISHED_CONV = {"alpha": 0.1, "beta": 0.0, "limit": "sparse (a few layers of constant order carry the weight: "
                                                      "neither smooth nor rough)"}
"""What Cohen et al. (2021, §3.2) report for their ResNet-18-layout networks on CIFAR-10."""
#: the Table-1 quantities of a kernel's record fitted across depths
QUANTITIES = ("max_norm", "increment_norm", "cumsum_norm", "rss", "quadratic_variation")


def conv_family(records: list[dict], name: str) -> list:
    """Per depth, the :class:`~deeplimits.diagnostics.WeightDiagnostics` of kernel ``name`` (the
    median over seeds of each spectral-norm quantity and of ``layers_90``, the fewest blocks
    holding 90% of ``sum_k ||K_k||^2``; increments unscaled, no Hurst index)."""
    from ..diagnostics import WeightDiagnostics

    out = []
    for L in sorted({r["depth"] for r in records}):
        group = [r[name] for r in records if r["depth"] == L]
        q = {k: _median([g[k] for g in group]) for k in QUANTITIES}
        held = _median([_held(g["norms"]) for g in group])
        out.append(WeightDiagnostics(name, L, [], 0.0, q["max_norm"], q["increment_norm"], q["cumsum_norm"], q["rss"],
                                     q["quadratic_variation"], math.nan, math.nan, layers_90=held))
    return out


def conv_exponents(records: list[dict]) -> dict:
    """``exponents``: ``alpha`` and ``beta`` (``{'value', 'ci'}``) and each kernel's fitted
    exponents; ``verdicts``: per kernel (``'A'``, ``'delta'``) the verdict, its reason and
    evidence. Needs two depths or more (else the verdict is ``'neither'``)."""
    from ..diagnostics import scaling_exponents

    depths = sorted({r["depth"] for r in records})
    if len(depths) < 2:
        why = {"hypothesis": "neither", "reason": "fewer than two depths trained", "evidence": []}
        return {"exponents": {}, "verdicts": {"A": why, "delta": dict(why)}}
    out, verdicts = {}, {}
    for name in ("A", "delta"):
        e = scaling_exponents(conv_family(records, name))
        out[name] = e.exponents
        verdicts[name] = {"hypothesis": e.hypothesis, "reason": e.reason, "evidence": e.evidence}
    out["alpha"] = _slope(depths, [_median([r["delta"]["max_norm"] for r in records if r["depth"] == L])
                                   for L in depths])
    out["beta"] = dict(out["A"]["beta"])
    return {"exponents": out, "verdicts": verdicts}


def _held(norms: list) -> float:
    """The fewest blocks holding 90% of the squared norms (:func:`~deeplimits.diagnostics.measures.layers_holding`)."""
    import torch

    from ..diagnostics.measures import layers_holding

    return layers_holding(torch.tensor(norms, dtype=torch.float64).square())


@dataclasses.dataclass
class ConvScalingResult(PlanResult):
    """``records``: per depth and seed the losses, accuracies, epochs, seconds, the training loss
    per epoch (``history``) and per kernel (``A``, ``delta``) its spectral norms along depth and
    Table 1's quantities; ``exponents``: ``alpha``, ``beta`` and each kernel's; ``verdicts``: per
    kernel the verdict of the steps, its reason and evidence."""

    plan: object
    """The experiment it ran (:class:`~.scaling_conv.ConvScalingPlan`)."""
    records: list
    """One per depth and seed (see above)."""
    exponents: dict
    """``alpha``, ``beta`` (``{'value', 'ci'}``, 95% intervals) and each kernel's exponents."""
    verdicts: dict
    """Per kernel: ``hypothesis`` (smooth, rough, sparse or neither), ``reason``, ``evidence``."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""

    shown = {k: k for k in ("dataset", "depths", "width", "stages", "epochs")}

    @property
    def hypothesis(self) -> str:
        """The verdict of the steps on the inner kernels ``A`` (where beta is read)."""
        return self.verdicts["A"]["hypothesis"]

    def report(self) -> str:
        """The protocol, a table per depth and seed, alpha and beta beside the published values,
        the evidence and the verdicts."""
        from ..diagnostics.scaling import evidence_lines, interval

        p = self.plan
        lines = [f"conv residual networks on {p.dataset}: width {p.width}, {p.stages} stage(s), SGD lr {p.lr:g} "
                 f"(cosine), momentum {p.momentum:g}, weight decay {p.weight_decay:g}, batch {p.batch_size}, "
                 f"{p.epochs} epochs, " + (f"crops (padding {p.padding}) and flips" if p.augment else "no crops or flips"),
                 f"{'L':>5} {'seed':>4} {'train acc':>9} {'test acc':>9} {'max|delta|':>10} {'max|A|':>8} "
                 f"{'cumsum A':>9} {'rss A':>8} {'90% A':>6} {'90% delta':>9} {'seconds':>8}"]
        for r in self.records:
            acc = lambda v: "failed" if v is None else f"{v:.4f}"  # noqa: E731
            lines.append(f"{r['depth']:5d} {r['seed']:4d} {acc(r['train_accuracy']):>9} {acc(r['test_accuracy']):>9} "
                         f"{r['delta']['max_norm']:10.4g} {r['A']['max_norm']:8.4g} {r['A']['cumsum_norm']:9.4g} "
                         f"{r['A']['rss']:8.4g} {_held(r['A']['norms']):6.0f} {_held(r['delta']['norms']):9.0f} "
                         f"{r['seconds']:8.1f}")
        e = self.exponents
        for key, what in (("alpha", "max_k ||delta_k|| ~ L^-alpha"), ("beta", "max_k ||sum_{j<=k} A_j|| ~ L^(1-beta)")):
            if key in e:
                lines.append(f"{key} = {e[key]['value']:.3f} {interval(e[key]['ci'])} ({what}; published "
                             f"{PUBLISHED_CONV[key]:g})")
        for name in ("A", "delta"):
            v = self.verdicts[name]
            lines += [f"{name}: evidence (spectral norms along depth)"] + evidence_lines(v["evidence"])
            lines.append(f"{name}: supports {v['hypothesis']} ({v['reason']})")
        lines.append(f"published: {PUBLISHED_CONV['limit']}")
        return "\n".join(lines)
