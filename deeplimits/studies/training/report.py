"""The text report of a training grid (:class:`~.result.TrainGridResult`): what was trained, then
one line per ``(H, beta)``: the best accuracy (or test loss) over the learning rates and seeds, the
line ``beta = max(H, 1/2)`` beside it, its learning rate and how many configurations stayed finite."""

from __future__ import annotations

__all__ = ["report"]


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
    return "\n".join(lines)
