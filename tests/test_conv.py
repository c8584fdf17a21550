"""Convolutional residual networks (issue 32): the block of Cohen, Cont, Rossier & Xu (ICML 2021,
§3.2) against an explicit computation with ``torch.nn.functional.conv2d``, the initialisation
from a driver along depth, the seeded crops and flips, ``train_conv`` and bad inputs."""

import math

import pytest
import torch
import torch.nn.functional as F

from deeplimits.data.augment import augmented_batches, crop_flip, default_padding
from deeplimits.paths import make_driver
from deeplimits.training import RESNET18, ConvResidualNetwork, conv_layout, init_from_driver
from deeplimits.training.conv_train import train_conv

F64 = torch.float64


def _reference(net, x, c):
    """Configuration ``c`` of ``net`` computed block by block with ungrouped convolutions:
    h_0 = ReLU(S * x), h_{k+1} = ReLU(skip + delta_k * ReLU(A_k * h_k)), skip = h_k or F_k * h_k,
    average pooling, linear head."""
    h = torch.relu(F.conv2d(x, net.stem[c], padding=1))
    for (cin, cout, stride, _), b in zip(net.layout, net.blocks):
        inner = torch.relu(F.conv2d(h, b.A[c], stride=stride, padding=1))
        branch = F.conv2d(inner, b.delta[c], padding=1)
        skip = h if b.F is None else F.conv2d(h, b.F[c], stride=stride)
        assert (b.F is None) == (cin == cout and stride == 1)  # a shortcut only where the shape changes
        h = torch.relu(skip + branch)
    return h.mean((-2, -1)) @ net.head[c] + net.head_bias[c]


def test_forward_shapes_and_the_block_equation():
    g = torch.Generator().manual_seed(0)
    net = ConvResidualNetwork((3, 9, 7), 5, [2, 1], stem=4, channels=(4, 6), strides=(1, 2), configs=3, dtype=F64)
    net.reset_parameters(g)
    with torch.no_grad():
        net.head_bias.normal_(generator=g)
    x = torch.randn(6, 3, 9, 7, generator=g, dtype=F64)
    out = net(x)
    assert out.shape == (3, 6, 5) and net.depth == 3
    # flattened channel-major inputs: the same images (a view; compared to float64 rounding, not bitwise)
    torch.testing.assert_close(out, net(x.flatten(1)), rtol=1e-12, atol=1e-12)
    assert net.input_sizes() == [(9, 7), (9, 7), (9, 7), (5, 4)]
    for c in range(3):  # grouped (batched) convolutions against one network at a time: rounding only
        torch.testing.assert_close(out[c], _reference(net, x, c), rtol=1e-12, atol=1e-12)
    # the configurations are independent: the gradient of config 1's output leaves config 0 alone
    out[1].sum().backward()
    assert net.blocks[0].A.grad[0].abs().max() == 0 and net.blocks[0].A.grad[1].abs().max() > 0


def test_resnet18_layout_and_its_parameter_count():
    lay = conv_layout(8, 64)
    assert (lay["stem"], lay["channels"], lay["strides"], lay["blocks"]) == (
        RESNET18["stem"], RESNET18["channels"], RESNET18["strides"], (2, 2, 2, 2))
    from deeplimits.training.conv import conv_parameter_count

    n = conv_parameter_count((3, 32, 32), 10, (2, 2, 2, 2), 64, (64, 128, 256, 512), (1, 2, 2, 2))
    # ResNet-18 without batch norm: 11,164,352 convolution weights + 5,130 of the head (torchvision's
    # resnet18 has 11,689,512 with its 9,600 batch-norm numbers and a 7x7 stem of 9,408 and 1000 classes)
    stem, head = 64 * 3 * 9, 512 * 10 + 10
    blocks = (2 * 2 * 64 * 64 * 9 + sum(c * c // 2 * 9 + c * c * 9 + c * c // 2 + c * c * 9 * 2 for c in (128, 256, 512)))
    assert n == stem + head + blocks
    small = ConvResidualNetwork((1, 8, 8), 10, lay["blocks"], stem=4, channels=(4, 8, 16, 32), strides=(1, 2, 2, 2))
    assert sum(p.numel() for p in small.parameters()) == conv_parameter_count((1, 8, 8), 10, (2, 2, 2, 2), 4,
                                                                             (4, 8, 16, 32), (1, 2, 2, 2))


def _lag_correlation(kernels, lag=1):
    """The correlation of the kernels' entries at blocks k and k + lag, over entries, configurations and k."""
    z = torch.stack(kernels).flatten(1).to(F64)  # (L, entries)
    a, b = z[:-lag].flatten(), z[lag:].flatten()
    return float(((a - a.mean()) * (b - b.mean())).mean() / (a.std() * b.std()))


def test_initialisation_from_a_driver_has_the_drivers_law_along_depth():
    C, width = 4, 16
    net = ConvResidualNetwork((1, 8, 8), 10, [16], stem=width, channels=[width], strides=[1], configs=C, beta=0.5)
    init_from_driver(net, make_driver("gaussian"), generator=torch.Generator().manual_seed(1))
    A = [a.clone() for a in net.kernels("A")]  # copies: the kernels' storage is re-initialised below
    n = A[0].numel()  # entries per block: 4 x 16 x 16 x 9 = 9216
    # i.i.d. Gaussian along depth: variance 2 / (9 c) at every block (the sample variance of n
    # Gaussians has relative sd sqrt(2 / n) = 1.5%: 5 sd), no correlation between blocks (sd of
    # the correlation estimate over the 15 x n pairs 1 / sqrt(15 n) = 0.0027: 5 sd is 0.014)
    for k in range(16):
        assert float(A[k].var()) == pytest.approx(2 / (9 * width), rel=5 * math.sqrt(2 / n))
    assert abs(_lag_correlation(A)) < 0.014
    deltas = net.kernels("delta")
    assert float(torch.stack(deltas).var()) == pytest.approx(16 ** -1 / (9 * width), rel=5 * math.sqrt(2 / (16 * n)))
    # fractional Gaussian noise at H = 0.9: lag-1 correlation 2^(2H - 1) - 1 = 0.7411 along depth
    # (the increments of one fBm path per entry; sd of the estimate below 0.01 here, tolerance 0.05)
    init_from_driver(net, make_driver("fractional", 0.9), generator=torch.Generator().manual_seed(2))
    assert _lag_correlation(net.kernels("A")) == pytest.approx(2 ** 0.8 - 1, abs=0.05)
    assert _lag_correlation(net.kernels("delta")) == pytest.approx(2 ** 0.8 - 1, abs=0.05)
    # and the i.i.d. draw says no correlation where the fractional one has it (the test can fail)
    assert abs(_lag_correlation(A) - (2 ** 0.8 - 1)) > 0.5


def test_driver_init_of_a_stage_that_doubles_its_channels_and_one_config():
    net = ConvResidualNetwork((1, 8, 8), 10, [1, 3], stem=4, channels=(4, 8), strides=(1, 2), configs=2, dtype=F64)
    before = [p.detach().clone() for p in net.parameters()]
    init_from_driver(net, make_driver("gaussian"), generator=torch.Generator().manual_seed(3), config=1)
    for p, q in zip(net.parameters(), before):
        torch.testing.assert_close(p[0], q[0])  # config 0 untouched
    # the stage's first block reads the first c_in = 4 input channels of the path's first layer: the
    # same draw as a network whose stage starts at 8 channels reads in full
    g = torch.Generator().manual_seed(3)
    twin = ConvResidualNetwork((1, 8, 8), 10, [1, 3], stem=8, channels=(8, 8), strides=(1, 2), configs=1, dtype=F64)
    init_from_driver(twin, make_driver("gaussian"), generator=g)
    torch.testing.assert_close(net.blocks[1].A[1], twin.blocks[1].A[0, :, :4], rtol=1e-12, atol=0)
    torch.testing.assert_close(net.blocks[2].A[1], twin.blocks[2].A[0], rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="scales key must be one of 'A', 'delta'"):
        init_from_driver(net, make_driver("gaussian"), scales={"W": 1.0})


def test_crops_and_flips_against_the_explicit_crop():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(64, 2, 5, 6, generator=g, dtype=F64)
    out = crop_flip(x, (2, 5, 6), padding=2, generator=torch.Generator().manual_seed(5))
    # the same draws, read back: offsets (n, 2) then flips (n,)
    g2 = torch.Generator().manual_seed(5)
    offsets = torch.randint(0, 5, (64, 2), generator=g2)
    mirror = torch.rand(64, generator=g2) < 0.5
    padded = F.pad(x, (2, 2, 2, 2))
    for i in range(64):
        r, c = offsets[i].tolist()
        crop = padded[i, :, r:r + 5, c:c + 6]
        torch.testing.assert_close(out[i], crop.flip(-1) if mirror[i] else crop, rtol=1e-12, atol=1e-12)
    assert 10 < int(mirror.sum()) < 54 and set(offsets.flatten().tolist()) == {0, 1, 2, 3, 4}
    torch.testing.assert_close(crop_flip(x.flatten(1), (2, 5, 6), padding=2, generator=torch.Generator().manual_seed(5)),
                               out.flatten(1), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(crop_flip(x, (2, 5, 6), padding=0, flip=False), x, rtol=1e-12, atol=1e-12)  # nothing drawn changes nothing
    first = [b[0] for b in augmented_batches((x, torch.arange(64)), 16, (2, 5, 6), seed=7)]
    again = [b[0] for b in augmented_batches((x, torch.arange(64)), 16, (2, 5, 6), seed=7)]
    assert len(first) == len(again) == 4
    for a, b in zip(first, again):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    # the epoch's order is batches(seed=7)'s, its draws a stream of their own: chunk_seed(7, 1)
    from deeplimits._random import chunk_seed
    from deeplimits.data import batches

    plain = next(iter(batches((x, torch.arange(64)), 16, seed=7)))[0]
    own = torch.Generator().manual_seed(chunk_seed(7, 1))
    torch.testing.assert_close(first[0], crop_flip(plain, (2, 5, 6), padding=4, generator=own), rtol=1e-12, atol=1e-12)
    assert (default_padding((3, 32, 32)), default_padding((1, 8, 8)), default_padding((1, 28, 28))) == (4, 1, 4)


@pytest.mark.slow
def test_train_conv_follows_the_cosine_schedule_per_configuration():
    from deeplimits.data import load_dataset

    data = load_dataset("digits", seed=0)
    net = ConvResidualNetwork((1, 8, 8), 10, [1], stem=4, channels=[4], strides=[1], configs=2)
    net.reset_parameters(torch.Generator().manual_seed(0))
    start = [p.detach().clone() for p in net.parameters()]
    res = train_conv(net, data, lr=[0.05, 0.0125], epochs=3, batch_size=256, padding=1, seed=3, weight_decay=0.0)
    for e, h in enumerate(res.history):  # cosine: lr (1 + cos(pi e / 3)) / 2, one lr per configuration
        assert h["lr"] == pytest.approx([r * (1 + math.cos(math.pi * e / 3)) / 2 for r in (0.05, 0.0125)], rel=1e-12)
    moved = [float((p.detach() - q)[c].abs().max()) for p, q in zip(net.parameters(), start) for c in (0, 1)]
    assert all(m > 0 for m in moved) and all(r["finite"] for r in res.records)
    assert set(res.records[0]) == {"train_loss", "test_loss", "train_accuracy", "test_accuracy", "finite"}
    # a configuration at a negligible rate stays where it was (its steps round to 0), the other moves
    again = ConvResidualNetwork((1, 8, 8), 10, [1], stem=4, channels=[4], strides=[1], configs=2)
    first = {n: p.detach().clone() for n, p in again.named_parameters()}
    train_conv(again, data, lr=[0.05, 1e-300], epochs=1, batch_size=512, augment=False, weight_decay=0.0)
    for n, p in again.named_parameters():
        torch.testing.assert_close(p[1], first[n][1], rtol=1e-6, atol=1e-12, msg=n)
        assert float((p[0] - first[n][0]).abs().max()) > 1e-6, n


@pytest.mark.parametrize("kw, match", [
    (dict(image_shape=(1, 8)), "image_shape must be"),
    (dict(strides=(1,)), "strides must give one stride per stage"),
    (dict(blocks=[1, 2]), "blocks must give one count per stage"),
    (dict(beta=-1.0), "beta must lie in"),
    (dict(configs=0), "configs must be an integer >= 1"),
])
def test_bad_arguments_are_one_line_errors(kw, match):
    args = dict(image_shape=(1, 8, 8), classes=10, blocks=1, stem=4, channels=(4, 8, 16), strides=(1, 2, 2))
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        ConvResidualNetwork(args.pop("image_shape"), args.pop("classes"), **args)


def test_bad_inputs_to_the_network_and_the_training():
    from deeplimits.data import load_dataset

    net = ConvResidualNetwork((1, 8, 8), 10, 1, stem=4, channels=(4,), strides=(1,))
    with pytest.raises(ValueError, match=r"x must have shape \(batch, 64\) or \(batch, 1, 8, 8\)"):
        net(torch.zeros(2, 63))
    with pytest.raises(ValueError, match="depth must be a multiple of the 4 stages"):
        conv_layout(6, 8)
    with pytest.raises(ValueError, match="image_shape and classes among them"):  # a damaged stored config
        ConvResidualNetwork.from_config({"classes": 10})
    assert ConvResidualNetwork.from_config(net.get_config()).get_config() == net.get_config()
    data = load_dataset("digits", seed=0)
    with pytest.raises(ValueError, match="momentum must lie in"):
        train_conv(net, data, momentum=1.0, epochs=1)
    with pytest.raises(ValueError, match="module must be a ConvResidualNetwork"):
        train_conv(torch.nn.Linear(2, 2), data)
    wrong = ConvResidualNetwork((3, 8, 8), 10, 1, stem=4, channels=(4,), strides=(1,))
    with pytest.raises(ValueError, match=r"x must have shape \(batch, 192\)"):
        train_conv(wrong, data, epochs=1)
    with pytest.raises(ValueError, match="padding must be an integer >= 0"):
        crop_flip(torch.zeros(2, 64), (1, 8, 8), padding=-1)


def test_a_billion_blocks_are_refused_before_any_list_is_built():
    # issue 38: the layout of 4e9 blocks was listed (and the process killed) before the size check
    import time

    from deeplimits.errors import ResourceError
    from deeplimits.training import ConvResidualNetwork

    t0 = time.process_time()
    with pytest.raises(ResourceError, match="for the parameters of 1 convolutional network"):
        ConvResidualNetwork((3, 32, 32), 10, blocks=10 ** 9)
    assert time.process_time() - t0 < 1.0
