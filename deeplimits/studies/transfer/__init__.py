"""Which residual scaling lets a learning rate transfer across depth (docs/transfer.md), one
study in one package:

* :mod:`~deeplimits.studies.transfer.study`: the plan, its sweep task and the batched grid;
* :mod:`~deeplimits.studies.transfer.conv`: the same on convolutional ResNets (digits, CIFAR-10),
  its coordinate check in :mod:`~deeplimits.studies.transfer.conv_coords`;
* :mod:`~deeplimits.studies.transfer.presets`: the presets, defaults, margins and the predicted
  exponents (torch-free, read by the command line's ``--help``);
* :mod:`~deeplimits.studies.transfer.fit`: the optimum per depth, its exponent and the verdict;
* :mod:`~deeplimits.studies.transfer.coords`: the depth coordinate check;
* :mod:`~deeplimits.studies.transfer.result`: the result and its report;
* :mod:`~deeplimits.studies.transfer.plots`: its figures;
* :mod:`~deeplimits.studies.transfer.memory`: the peak bytes and the time of its tasks;
* :mod:`~deeplimits.studies.transfer.limit`: the limit beside it (the trained-limit test of the
  families at the transferred rate);
* :mod:`~deeplimits.studies.transfer.user`: a user's network factory and data set, and
  :mod:`~deeplimits.studies.transfer.batched`: their grid trained batched by ``torch.func``.

Names are resolved on first access (PEP 562): importing the package, or its presets, imports no torch.
"""

from __future__ import annotations

from ..._lazy import lazy_exports

#: public name -> the submodule that defines it
_WHERE = {
    **dict.fromkeys(("TransferPlan", "plan_transfer", "train_grid"), "study"),
    **dict.fromkeys(("ConvTransferPlan", "plan_conv_transfer", "plan_preset", "train_conv_grid"), "conv"),
    **dict.fromkeys(("PRESETS", "CONV_PRESETS", "DEFAULT_PRESET", "DEFAULTS", "SLOPE_MARGIN", "LOSS_MARGIN",
                     "predicted_exponent"),
                    "presets"),
    **dict.fromkeys(("fit_optima", "verdict"), "fit"),
    "coordinate_check": "coords",
    **dict.fromkeys(("TransferNetwork", "TransferData", "transfer_data"), "user"),
    "train_user_grid": "batched",
    **dict.fromkeys(("TransferResult", "summarise_setting"), "result"),
    **dict.fromkeys(("plot_transfer", "plot_coordinates"), "plots"),
    **dict.fromkeys(("transfer_bytes", "transfer_seconds", "limit_seconds", "limit_bytes", "transfer_task_bytes", "conv_transfer_bytes"),
                    "memory"),
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(globals(), _WHERE)
