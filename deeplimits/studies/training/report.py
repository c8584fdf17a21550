"""The text report of a training grid (:class:`~.result.TrainGridResult`): what was trained, then
one line per ``(H, beta)``: the best accuracy (or test loss) over the learning rates and seeds, the
line ``beta = max(H, 1/2)`` beside it, its learning rate and how many configurations stayed finite."""

from __future__ import annotations

from .rates import accuracy_by_rate

__all__ = ["report", "large_beta_lines"]


def report(result) -> str:
    """The report of ``result``, as text."""
    score = "test_accuracy" if result.classification else "test_loss"
    lines = [f"{result.arch}, {result.driver} weights, d={result.width}, L={result.depth}, {result.dataset}, "
             f"{result.epochs} epochs: best {score.replace('_', ' ')} over {len(result.records)} configurations",
             f"{'H':>6} {'beta':>6} {'line':>6} {'best':>8} {'lr':>8}  finite/configs"]
    for b in result.best:
        h = "-" if b["hurst"] is None else f"{b['hurst']:.3g}"
        v = "failed" if b[score] is None else f"{b[score]:.4f}"
        lr = "-" if b["lr"] is None else f"{b['lr']:.0e}"
        lines.append(f"{h:>6} {b['beta']:6.3g} {b['line']:6.3g} {v:>8} {lr:>8}  {b['finite']}/{b['configs']}")
    if result.classification:  # Marion et al.'s §4.2 claim, read from the per-rate records
        lines += large_beta_lines(result)
    return "\n".join(lines)


def large_beta_lines(result) -> list[str]:
    """The report of :func:`accuracy_by_rate`: one line per learning rate."""
    lines = ["with one learning rate at a time (cells on or above beta = max(H, 1/2), mean over H): does the "
             "accuracy fall for large beta (Marion et al., §4.2)?"]
    for rec in accuracy_by_rate(result):
        if rec["falls"] is None:
            verdict = "undecided (one cell per beta: no standard error)"
        elif rec["falls"]:
            verdict = "falls"
        else:
            verdict = "does not fall" if rec["best_beta"] == rec["betas"][-1] else "no significant fall"
        lines.append(f"  lr {rec['lr']:g}: best at beta {rec['best_beta']:g} ({max(rec['mean']):.3f}), at beta "
                     f"{rec['betas'][-1]:g} {rec['mean'][-1]:.3f}: drop {rec['drop']:.3f} +- {rec['drop_se']:.3f} "
                     f"-> {verdict}")
    return lines
