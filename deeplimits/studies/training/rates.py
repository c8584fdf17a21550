"""The training grid read one learning rate at a time (Marion, Fermanian, Biau & Vert, JMLR 2025,
§4.2; docs/training.md, "One learning rate at a time"): the heat map keeps, per ``(H, beta)``, the
best configuration over the learning rates; the paper also says that with a FIXED learning rate the
accuracy falls for large ``beta`` (the residual branch ``L^-beta V`` moves the output by about
``lr L^(1 - 2 beta)`` per step, docs/transfer.md, so a rate that suits ``beta = 1/2`` is too small at
``beta = 1``). This module reads that claim from the per-rate records of a
:class:`~deeplimits.studies.training.study.TrainGridResult`.

Per learning rate and ``beta``, the cells taken are those on or above the line ``beta >= max(H,
1/2)`` (below it the networks explode: another failure, the heat map's), and the accuracy of a cell
is its mean over seeds; per ``beta``, the mean over ``H`` of the cells and its standard error. The
claim holds for a rate when the accuracy at the largest ``beta`` lies below the best ``beta``'s by more
than :data:`Z` standard errors of the difference.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ParameterError

__all__ = ["accuracy_by_rate", "Z"]

Z = 1.959963984540054
"""Standard errors of the difference beyond which the accuracy at the largest beta counts as lower
(a two-sided 5% test of equal means)."""


def accuracy_by_rate(result) -> list[dict]:
    """Per learning rate of ``result`` (a classification :class:`TrainGridResult`): ``lr``, ``betas``
    (those with a cell on or above the line), ``mean``, ``se`` (over ``H``; ``nan`` with one cell),
    ``cells`` (the ``H`` counted), ``failed`` (configurations that blew up there), ``best_beta``,
    ``drop`` (the best ``beta``'s mean minus the largest ``beta``'s), ``drop_se`` and ``falls`` (whether
    ``drop > Z drop_se``; ``None`` when an ``se`` is not defined)."""
    if not getattr(result, "classification", False):
        raise ParameterError("result", "result must be a training grid of a classification task (it reads test "
                                       "accuracies)")
    line = {(b["hurst"], b["beta"]): b["line"] for b in result.best}  # max(H, 1/2) per cell
    out = []
    for lr in sorted({r["lr"] for r in result.records}):
        cells: dict = {}
        failed: dict = {}
        for r in result.records:
            if r["lr"] != lr or r["beta"] < line[r["hurst"], r["beta"]] - 1e-12:
                continue
            if r["test_accuracy"] is None:
                failed[r["beta"]] = failed.get(r["beta"], 0) + 1
                continue
            cells.setdefault(r["beta"], {}).setdefault(r["hurst"], []).append(r["test_accuracy"])
        betas = sorted(cells)
        if not betas:
            continue
        per = [np.array([np.mean(v) for v in cells[b].values()]) for b in betas]
        mean = [float(x.mean()) for x in per]
        se = [float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan for x in per]
        best = int(np.argmax(mean))
        drop = mean[best] - mean[-1]
        drop_se = math.hypot(se[best], se[-1]) if best != len(betas) - 1 else 0.0
        falls = None if math.isnan(drop_se) else bool(drop > Z * drop_se and drop > 0)
        out.append({"lr": lr, "betas": betas, "mean": mean, "se": se, "cells": [int(x.size) for x in per],
                    "failed": [failed.get(b, 0) for b in betas], "best_beta": betas[best], "drop": drop,
                    "drop_se": drop_se, "falls": falls})
    return out
