"""The presets of the scaling study of convolutional networks (``deeplimits scaling --arch conv``,
docs/weights.md, "Convolutional networks"), torch-free: the command line reads them for ``--help``;
and what the report reads beside them (:data:`FITTED_ACCURACY`, the published values :data:`PUBLISHED_CONV`)."""

from __future__ import annotations

__all__ = ["CONV_PUBLISHED_DEPTHS", "CONV_SCALING_PRESETS", "FITTED_ACCURACY", "PUBLISHED_CONV"]

#: the depths of the published convolutional family: residual blocks from 8 (two per stage of the
#: ResNet-18 layout) to 120 (the published range is 8 to 121; here multiples of the four stages)
CONV_PUBLISHED_DEPTHS = [8, 12, 16, 24, 32, 48, 64, 88, 120]

CONV_SCALING_PRESETS = {
    # a labelled variant for 2 CPU cores: digits as 8 x 8 images, one stage of 16 channels, depths
    # 4 to 32 blocks, 25 epochs of the published optimiser and schedule at lr 0.02 on mini-batches
    # of 32, no crops or flips (a flipped digit is another figure; with them, or at lr 0.05 and
    # above, networks of 11 to 23 blocks stayed at chance: docs/weights.md, "Convolutional networks")
    "cpu": dict(dataset="digits", width=16, stages=1, depths=[4, 6, 8, 11, 16, 23, 32], lr=0.02, epochs=25,
                batch_size=32, augment=False),
    # Cohen et al. (ICML 2021, §3.2): CIFAR-10 from local files (--root), the ResNet-18 layout (64
    # channels, four stages), SGD lr 0.1, momentum 0.9, weight decay 5e-4, cosine over 200 epochs,
    # crops padded by 4 and flips; for a GPU or a cluster
    "published": dict(dataset="cifar10", width=64, stages=4, depths=CONV_PUBLISHED_DEPTHS, lr=0.1, epochs=200),
}
"""The presets of ``deeplimits scaling --arch conv``."""

FITTED_ACCURACY = 0.9
"""A network whose final training accuracy is below this has not fitted its training data: the
report names it (its kernels stay in the fits, as a dense network stopped by the epoch limit does)."""


PUBLISHED_CONV = {"alpha": 0.1, "beta": 0.0, "limit": "sparse (a few layers of constant order carry the weight: "
                                                      "neither smooth nor rough)"}
"""What Cohen et al. (2021, §3.2) report for their ResNet-18-layout networks on CIFAR-10."""
