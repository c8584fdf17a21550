"""The text report of the scaling study of convolutional networks (:class:`~.result.ConvScalingResult`):
the protocol, a table per depth and seed, alpha and beta beside the published values, the evidence
and the verdicts."""

from __future__ import annotations

from .presets import FITTED_ACCURACY, PUBLISHED_CONV

__all__ = ["report"]


def report(result) -> str:
    """The report of ``result``, as text."""
    from ...diagnostics.scaling import evidence_lines, interval, verdict_line

    p = result.plan
    lines = [f"conv residual networks on {p.dataset}: width {p.width}, {p.stages} stage(s), SGD lr {p.lr:g} "
             f"(cosine), momentum {p.momentum:g}, weight decay {p.weight_decay:g}, batch {p.batch_size}, "
             f"{p.epochs} epochs, " + (f"crops (padding {p.padding}) and flips" if p.augment else "no crops or flips")
             + f"; delta_k initialised with std L^-{p.beta:g} / sqrt(9 c), A_k with He's (this package's "
               "choice: the paper does not state its initialisation)",
             f"{'L':>5} {'seed':>4} {'train acc':>9} {'test acc':>9} {'max|delta|':>10} {'max|A|':>8} "
             f"{'cumsum A':>9} {'rss A':>8} {'90% A':>6} {'90% delta':>9} {'seconds':>8}"]
    for r in result.records:
        acc = lambda v: "failed" if v is None else f"{v:.4f}"  # noqa: E731
        head = f"{r['depth']:5d} {r['seed']:4d} {acc(r['train_accuracy']):>9} {acc(r['test_accuracy']):>9} "
        if r["A"] is None:  # blown up: no diagnostics
            lines.append(head + f"{'blown up: non-finite weights':>56} {r['seconds']:8.1f}")
            continue
        lines.append(head + f"{r['delta']['max_norm']:10.4g} {r['A']['max_norm']:8.4g} {r['A']['cumsum_norm']:9.4g} "
                     f"{r['A']['rss']:8.4g} {r['A']['layers_90']:6.0f} {r['delta']['layers_90']:9.0f} "
                     f"{r['seconds']:8.1f}")
    unfit = sorted({r["depth"] for r in result.records
                    if r["train_accuracy"] is not None and r["train_accuracy"] < FITTED_ACCURACY})
    if unfit:
        lines.append(f"networks below {FITTED_ACCURACY:g} training accuracy at depths {unfit}: they did not fit "
                     "their training data, and their kernels, in the fits below, are those of an unfinished training")
    e = result.exponents
    for key, what in (("alpha", "max_k ||delta_k|| ~ L^-alpha"), ("beta", "max_k ||A_k|| ~ L^-beta"),
                      ("beta_cumsum", "max_k ||sum_{j<=k} A_j|| ~ L^(1-beta); about 1 when a few blocks carry "
                                      "the weight")):
        if key in e:
            lines.append(f"{key} = {e[key]['value']:.3f} {interval(e[key]['ci'])} ({what}"
                         + (f"; published {PUBLISHED_CONV[key]:g})" if key in PUBLISHED_CONV else ")"))
    for name in ("A", "delta"):
        v = result.verdicts[name]
        lines += [f"{name}: evidence (spectral norms along depth)"] + evidence_lines(v["evidence"])
        lines.append(f"{name}: " + verdict_line(v["hypothesis"], v["reason"]))
    lines.append(f"published: {PUBLISHED_CONV['limit']}")
    return "\n".join(lines)
