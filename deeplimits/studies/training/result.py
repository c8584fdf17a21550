"""The results of a training grid (docs/training.md): its records, the best configuration per
``(H, beta)`` and the stored weights, holding its plan (:class:`~deeplimits.studies.result.PlanResult`),
for the dense networks (:class:`TrainGridResult`) and the convolutional ones (:class:`ConvTrainGridResult`)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from ...errors import ParameterError
from ..result import PlanResult

__all__ = ["TrainGridResult", "ConvTrainGridResult"]


@dataclasses.dataclass
class TrainGridResult(PlanResult):
    """The records of a training grid, holding its plan (:class:`~deeplimits.studies.result.PlanResult`:
    ``dataset``, ``driver``, ``depth``, ``width``, ``arch``, ``epochs`` are the plan's): one record
    per configuration (``driver``, ``hurst``, ``beta``,
    ``lr``, ``seed``, ``train_loss``, ``test_loss``, ``train_accuracy``, ``test_accuracy``
    (``None`` when the configuration blew up or for regression), ``finite``, ``epochs``,
    ``seconds``: the wall time of its chunk divided by the chunk's configurations), ``best``:
    per ``(hurst, beta)`` the configuration with the best test accuracy (for regression the
    lowest test loss) over the learning rates and seeds, with ``line = max(H, 1/2)``, and
    ``weights``: per task, the stored weights file (``weights``, relative to the run directory)
    and its SHA-256 (``weights_sha256``)."""

    plan: object
    """The grid it ran (``dataset``, ``driver``, ``depth``, ``width``, ``arch``, ``epochs`` are read from it)."""
    records: list[dict]
    """One per configuration: ``driver``, ``hurst``, ``beta``, ``lr``, ``seed``, ``train_loss``, ``test_loss``,
    ``train_accuracy``, ``test_accuracy`` (``None`` when it blew up or for regression), ``finite``, ``epochs``,
    ``seconds`` (the wall time of its chunk divided by the chunk's configurations)."""
    best: list[dict]
    """Per ``(hurst, beta)``, the configuration with the best test accuracy (regression: the lowest test loss)
    over the learning rates and seeds, with ``line = max(H, 1/2)``."""
    seconds: float
    """Seconds of work (a resumed run adds those of the tasks finished in earlier sessions)."""
    weights: dict = dataclasses.field(default_factory=dict)
    """Per task, the stored weights file (``weights``, relative to the run directory) and its SHA-256
    (``weights_sha256``)."""

    shown: ClassVar[dict] = {k: k for k in ("dataset", "driver", "depth", "width", "arch", "epochs")}
    """The plan's values the result shows: its JSON name -> the plan's field (see :class:`~deeplimits.studies.result.PlanResult`)."""

    @classmethod
    def plan_of(cls, d: dict):
        """JSON written before results held their plans did not record the grid's settings."""
        raise ParameterError("d", "d has no 'plan' key: a training result written before results held their plan "
                                  "does not record its grid; rebuild it from its run with results_from_store")

    def report(self) -> str:
        """One line per ``(H, beta)``: the best accuracy and its learning rate (:mod:`.report`)."""
        from .report import report

        return report(self)

    def points(self) -> list[dict]:
        """The measured points, one tidy row each (:mod:`~deeplimits.studies._shared.points`): per
        ``(driver, H, beta, lr)`` the means over seeds of the losses and accuracies, with their standard errors."""
        from .._shared.points import record_means

        return record_means(self.plan.study, self.records, ("driver", "hurst", "beta", "lr"),
                            ("train_loss", "test_loss", "train_accuracy", "test_accuracy"), None, self.depth)

    @property
    def classification(self) -> bool:
        """Whether the task is a classification (accuracies recorded), not a regression."""
        return any(r["train_accuracy"] is not None for r in self.records) or not any(
            r["finite"] for r in self.records)

    def plot(self, path: str | None = None, *, ax=None):
        """The heat map of the best test accuracy over ``(H, beta)`` with ``beta = max(H, 1/2)``."""
        from .plots import plot_train_heatmap

        return plot_train_heatmap(self, path, ax=ax)


@dataclasses.dataclass
class ConvTrainGridResult(TrainGridResult):
    """The records of a grid of convolutional networks (as :class:`TrainGridResult`)."""
