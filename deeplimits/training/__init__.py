"""Training very deep residual networks whose weights start on a random path in depth.

* :class:`ResidualNetwork`: ``C`` independent configurations of one architecture in every
  parameter (one forward/backward trains them all); :class:`ConvResidualNetwork`: the
  convolutional residual networks of Cohen et al. (ICML 2021, §3.2), batched the same way;
* :func:`init_from_driver` and the ``torch.nn.init``-style :func:`iid_`, :func:`fractional_`,
  :func:`smooth_` read weights off a driver path;
* :class:`BatchedAdam`, :class:`BatchedSGD`: ``torch.optim`` optimisers with one learning rate
  per config (a group's ``lr``, which any ``torch.optim.lr_scheduler`` drives, times per-config
  factors) and a ``finite`` mask that freezes a config whose loss went non-finite;
* :func:`train`: the training loop (an optimiser, a scheduler, callbacks, a per-epoch history;
  data in memory or from a ``DataLoader``).

See docs/training.md.
"""

from .conv import RESNET18, ConvResidualNetwork, conv_layout
from .init import fractional_, iid_, init_from_driver, resolution_for, smooth_
from .modules import DELTA_MODES, ResidualNetwork
from .optim import BatchedAdam, BatchedSGD
from .train import TrainResult, evaluate, train

__all__ = ["ResidualNetwork", "ConvResidualNetwork", "RESNET18", "conv_layout", "DELTA_MODES", "init_from_driver", "resolution_for", "iid_", "fractional_",
           "smooth_", "BatchedAdam", "BatchedSGD", "train", "TrainResult", "evaluate"]
