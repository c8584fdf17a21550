"""PyTorch habits with an answer (issue 39): ``torch.func.vmap`` over a network, ``train`` given
``(train_loader, test_loader)``, and ``torch.load`` of a saved network (docs/faq.md)."""

import io

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import deeplimits as dl
from deeplimits.errors import ParameterError


@pytest.mark.parametrize("arch", ["res-1", "res-2", "inside"])
def test_vmap_over_a_residual_network_is_the_loop(arch):
    """``ResidualNetwork`` runs under ``torch.func.vmap`` (its fused stacks give way to plain
    autograd there): the batched result is the one of each slice, and so are per-sample gradients."""
    torch.manual_seed(0)
    net = dl.ResidualNetwork(arch, 3, 4, 2, 2, dtype=torch.float64)
    xs = torch.randn(5, 3, 2, dtype=torch.float64)
    assert torch.allclose(torch.func.vmap(net)(xs), torch.stack([net(x) for x in xs]))
    params = dict(net.named_parameters())

    def loss(p, x):
        return torch.func.functional_call(net, p, (x.unsqueeze(0),)).square().sum()

    per_sample = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(params, xs[:, 0])
    for i in range(3):
        one = torch.func.grad(loss)(params, xs[i, 0])
        assert all(torch.allclose(per_sample[k][i], one[k]) for k in one)


def test_vmap_over_resnet_is_refused_in_one_line():
    net = dl.ResNet("res-1")
    V = torch.randn(4, 2, 3, 3, dtype=torch.float64)
    with pytest.raises(ParameterError, match="ResNet does not run under torch.func.vmap .* it batches already: give "
                                             r"the draws as the first axis of h0") as e:
        torch.func.vmap(lambda h: net(h, V=V).states)(torch.randn(5, 2, 3, dtype=torch.float64))
    assert "\n" not in str(e.value) and e.value.param == "h0"
    assert net(torch.randn(2, 3, dtype=torch.float64), V=V).states.shape == (5, 2, 3)  # outside vmap: as before


def _loader(n=12):
    g = torch.Generator().manual_seed(0)
    return DataLoader(TensorDataset(torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g)),
                      batch_size=4)


@pytest.mark.parametrize("pair", [lambda a, b: (a, b), lambda a, b: [a, b], lambda a, b: (list(a), list(b))])
def test_train_given_train_and_test_loaders_points_at_test_data(pair):
    net = dl.ResidualNetwork("res-1", 2, 4, 4, 3)
    with pytest.raises(ParameterError, match=r"data must be the training mini-batches alone, got a pair .*: pass the "
                                             r"test batches as test_data=, train\(net, train_loader, "
                                             r"test_data=test_loader\)") as e:
        dl.train(net, pair(_loader(), _loader()), epochs=1)
    assert "\n" not in str(e.value) and e.value.param == "data"


def test_two_mini_batches_in_a_list_still_train():
    """A list of two ``(x, y)`` batches is mini-batch data, not a (train, test) pair."""
    net = dl.ResidualNetwork("res-1", 2, 4, 4, 3)
    batches = list(_loader(8))
    assert len(batches) == 2
    result = dl.train(net, batches, epochs=1, test_data=_loader(4))
    assert len(result.history) == 1


def test_a_whole_saved_network_loads_back(tmp_path):
    """The state dict (``weights_only`` safe) into a network built with the same arguments; the
    whole module only with ``weights_only=False`` (it unpickles code: trusted files only)."""
    torch.manual_seed(0)
    net = dl.ResidualNetwork("res-2", 3, 4, 2, 2, configs=2)
    x = torch.randn(5, 2)
    torch.save(net.state_dict(), tmp_path / "net.pt")
    again = dl.ResidualNetwork("res-2", 3, 4, 2, 2, configs=2)
    again.load_state_dict(torch.load(tmp_path / "net.pt"))  # weights_only=True, the default
    torch.testing.assert_close(again(x), net(x), rtol=1e-6, atol=1e-7)  # the same weights, read back
    torch.save(net, tmp_path / "whole.pt")
    with pytest.raises(Exception, match="weights_only"):
        torch.load(tmp_path / "whole.pt")
    whole = torch.load(tmp_path / "whole.pt", weights_only=False)
    assert isinstance(whole, dl.ResidualNetwork)
    torch.testing.assert_close(whole(x), net(x), rtol=1e-6, atol=1e-7)
