"""Training grids (docs/training.md), one study in one package:

* :mod:`~deeplimits.studies.training.study`: the grid of residual networks (``deeplimits train``):
  its plan and run; :mod:`~deeplimits.studies.training.result` its result (and the convolutional
  grid's), :mod:`~deeplimits.studies.training.report` its text, :mod:`~deeplimits.studies.training.plots`
  its figures, :mod:`~deeplimits.studies.training.presets` its presets and defaults;
* :mod:`~deeplimits.studies.training.trained`: its sweep task, the initial weights and the stored
  trained weights (where they live, how to read them back);
* :mod:`~deeplimits.studies.training.conv`: the grid of convolutional networks
  (``deeplimits train --arch conv``, its task ``train-conv``), whose networks and memory model
  :mod:`deeplimits.studies.scaling_conv` borrows;
* :mod:`~deeplimits.studies.training.memory`: the peak bytes of a task of either grid;
* :mod:`~deeplimits.studies.training.rates`: the grid read one learning rate at a time (Marion et
  al.'s §4.2: with a fixed rate the accuracy falls for large beta).

The networks and optimisers themselves are :mod:`deeplimits.training`. Names are resolved on first
access (PEP 562): importing the package imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("TrainPlan", "plan_training", "train_grid", "critical_line"), "study"),
    **dict.fromkeys(("TrainGridResult", "ConvTrainGridResult"), "result"),
    **dict.fromkeys(("plot_train_heatmap", "plot_weight_paths", "plot_accuracy_by_rate"), "plots"),
    **dict.fromkeys(("large_beta_lines",), "report"),
    **dict.fromkeys(("TRAIN_PRESETS", "DEFAULTS", "CONV_DEFAULTS"), "presets"),
    **dict.fromkeys(("train_task", "init_weights", "load_trained", "weights_path", "weight_paths", "weights_damage",
                     "file_sha256", "WEIGHTS_DIR"), "trained"),
    **dict.fromkeys(("ConvTrainPlan", "plan_conv_training", "conv_train_task", "conv_network",
                     "init_conv_weights"), "conv"),
    **dict.fromkeys(("training_bytes", "init_bytes", "conv_training_bytes", "ACTIVATIONS_PER_BLOCK"), "memory"),
    **dict.fromkeys(("accuracy_by_rate",), "rates"),
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
