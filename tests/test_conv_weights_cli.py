"""Convolution kernels from where they live (issue 32): state_dicts and saved tensors built here,
a deeplimits-style convolutional module, ``deeplimits weights`` on them (spectral norms on
``--grid``, the verdict including sparse), and the figure of Figs. 7-8."""

import json
import math

import pytest
import torch

from deeplimits.cli import main
from deeplimits.diagnostics import ConvKernels, conv_weight_diagnostics, load_weights

G = lambda s: torch.Generator().manual_seed(s)  # noqa: E731


def _state_dict(seed=0):
    """A two-stage network's kernels: three 4 -> 4 layers, a 4 -> 8 transition, two 8 -> 8 layers
    (``layers.k.conv.weight``), and a per-layer bias that is not a kernel."""
    g = G(seed)
    shapes = [(4, 4, 3, 3)] * 3 + [(8, 4, 3, 3)] + [(8, 8, 3, 3)] * 2
    sd = {f"layers.{k}.conv.weight": torch.randn(*s, generator=g) for k, s in enumerate(shapes)}
    sd.update({f"layers.{k}.bias": torch.randn(s[0], generator=g) for k, s in enumerate(shapes)})
    return sd


@pytest.mark.slow
def test_a_state_dict_of_kernels_in_stages(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the run directory (runs/weights-<hash>) is made there
    sd = _state_dict()
    found = load_weights(sd_path := _save(tmp_path / "net.pt", sd))
    conv = found["layers.*.conv.weight"]
    assert isinstance(conv, ConvKernels) and conv.input_sizes is None
    assert [tuple(s.shape) for s in conv.stages] == [(3, 4, 4, 3, 3), (1, 8, 4, 3, 3), (2, 8, 8, 3, 3)]
    torch.testing.assert_close(conv.stages[2][1], sd["layers.5.conv.weight"], rtol=1e-12, atol=1e-12)
    assert main(["weights", str(sd_path), "--json", "-"]) == 0
    recs = {r["name"]: r for r in json.loads(capsys.readouterr().out)["tensors"]}
    assert set(recs) == {"layers.*.conv.weight"}  # the biases change shape without being kernels: left out
    rec = recs["layers.*.conv.weight"]
    want = conv_weight_diagnostics(conv.stages, 16)  # the documented default grid
    assert rec["input_size"] == [[16, 16]] * 3 and rec["stage_layers"] == [3, 1, 2] and rec["depth"] == 6
    for key in ("max_norm", "increment_norm", "cumsum_norm", "rss", "layers_90"):
        assert rec[key] == pytest.approx(getattr(want, key), rel=1e-12), key


def _save(path, obj):
    torch.save(obj, path)
    return path


def test_a_saved_tensor_of_kernels_with_grid(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the run directory (runs/weights-<hash>) is made there
    K = torch.randn(5, 3, 3, 3, 3, generator=G(1), dtype=torch.float64)
    p = _save(tmp_path / "k.pt", K)
    assert main(["weights", str(p), "--grid", "8", "--json", "-"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)["tensors"]
    assert rec["input_size"] == [[8, 8]]
    assert rec["max_norm"] == pytest.approx(conv_weight_diagnostics(K, 8).max_norm, rel=1e-12)
    assert main(["weights", str(p), "--grid", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("deeplimits weights: --grid") and "kernels' size" in err and "\n" not in err
    assert main(["weights", str(tmp_path / "absent.pt"), "--grid", "0"]) == 2  # refused before any file is read
    assert capsys.readouterr().err.strip() == "deeplimits weights: --grid must be an integer >= 1, got 0"


def _sparse(L, seed=0):
    """Three O(1) kernels at depth fractions 0.2, 0.5, 0.8 among kernels of 1% of their weight."""
    K = torch.randn(3, 4, 4, 3, 3, generator=G(100), dtype=torch.float64)
    A = 0.01 * K.norm() / math.sqrt(L * 144) * torch.randn(L, 4, 4, 3, 3, generator=G(L + seed), dtype=torch.float64)
    for j, f in enumerate((0.2, 0.5, 0.8)):
        A[int(f * L)] += K[j]
    return A


@pytest.mark.slow
def test_the_verdict_of_saved_state_dicts_at_several_depths(tmp_path, capsys):
    """state_dicts of one stage at depths 16 to 128: the verdict sparse, and the figure."""
    paths = [str(_save(tmp_path / f"L{L}.pt", {f"blocks.{k}.conv.weight": a for k, a in enumerate(_sparse(L))}))
             for L in (16, 32, 64, 128)]
    png = tmp_path / "out" / "weights.png"
    assert main(["weights", *paths, "--grid", "8", "--json", "-", "--out", str(tmp_path / "out")]) == 0
    out = json.loads(capsys.readouterr().out)
    h = out["hypothesis"]["blocks.*.conv.weight"]
    assert h["supports"] == "sparse", h["reason"]
    assert out["exponents"]["blocks.*.conv.weight"]["layers_90"]["value"] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class _ConvNet(torch.nn.Module):
    """The interface of a deeplimits convolutional network that load_weights reads: ``arch``,
    ``kernels(name)`` (per block, configuration axis first) and ``input_sizes()``."""

    arch = "conv"

    def __init__(self):
        super().__init__()
        # blocks 0-1: 2 -> 2 channels on 8x8; block 2: 2 -> 4, stride 2; block 3: 4 -> 4 on 4x4; two configurations
        shapes = [(2, 2, 2), (2, 2, 2), (2, 4, 2), (2, 4, 4)]
        self.A = [torch.randn(C, o, i, 3, 3, generator=G(k)) for k, (C, o, i) in enumerate(shapes)]
        self.delta = [torch.randn(C, o, o, 3, 3, generator=G(10 + k)) for k, (C, o, _) in enumerate(shapes)]

    def kernels(self, name):
        return getattr(self, name)

    def input_sizes(self):
        return [(8, 8), (8, 8), (8, 8), (4, 4), (4, 4)]


def test_a_deeplimits_conv_module_gives_its_grids():
    found = load_weights(_ConvNet())
    assert set(found) == {f"blocks.*.{n}[{c}]" for n in ("A", "delta") for c in (0, 1)}
    A1, d0 = found["blocks.*.A[1]"], found["blocks.*.delta[0]"]
    assert [tuple(s.shape) for s in A1.stages] == [(2, 2, 2, 3, 3), (1, 4, 2, 3, 3), (1, 4, 4, 3, 3)]
    assert A1.input_sizes == [(8, 8), (8, 8), (4, 4)]  # block 2's A acts on its 8x8 input
    assert [tuple(s.shape) for s in d0.stages] == [(2, 2, 2, 3, 3), (2, 4, 4, 3, 3)]
    assert d0.input_sizes == [(8, 8), (4, 4)]  # delta acts on the block's output grid: block 2's is 4x4
    torch.testing.assert_close(A1.stages[0][1], _ConvNet().A[1][1], rtol=0, atol=1e-12)
    assert conv_weight_diagnostics(A1).input_size == [[8, 8], [8, 8], [4, 4]]


def test_a_conv_networks_state_dict_has_the_configuration_axis_first():
    net = _ConvNet()
    sd = {f"blocks.{k}.A": a for k, a in enumerate(net.A)}
    found = load_weights(_Holder(sd))
    assert set(found) == {"blocks.*.A[0]", "blocks.*.A[1]"}
    torch.testing.assert_close(found["blocks.*.A[1]"].stages[1][0], net.A[2][1], rtol=0, atol=1e-12)


class _Holder(torch.nn.Module):
    """A module whose state_dict is the given one (as a ConvResidualNetwork's blocks.k.A)."""

    def __init__(self, sd):
        super().__init__()
        self.blocks = torch.nn.ModuleList()
        for k in range(len(sd)):
            m = torch.nn.Module()
            m.register_buffer("A", sd[f"blocks.{k}.A"])
            self.blocks.append(m)


@pytest.mark.slow
def test_plot_conv_scaling_writes_a_png_and_checks_its_input(tmp_path):
    from deeplimits.errors import ParameterError
    from deeplimits.studies.scaling_conv.plots import plot_conv_scaling

    fams = {"A": [conv_weight_diagnostics([_sparse(L)[: L // 2], _sparse(L)[L // 2:]], 8, name="A") for L in (8, 16, 32)],
            "delta": [conv_weight_diagnostics(_sparse(L, 1), 8, name="delta") for L in (8, 16, 32)]}
    fig = plot_conv_scaling(fams, tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    titles = [a.get_title() for a in fig.axes]
    assert "Fig. 7: A along depth" in titles and any(t.startswith("Fig. 8: delta, beta") for t in titles)
    with pytest.raises(ParameterError, match="families") as e:
        plot_conv_scaling({"A": [1, 2]})
    assert e.value.param == "families"
    with pytest.raises(ParameterError, match="families"):
        plot_conv_scaling([])


def test_a_stored_conv_chunk_is_read_on_its_networks_grids(tmp_path):
    """A ``train --arch conv`` chunk (state_dict + config) gives the same kernels on the same grids as
    the module itself; a grid smaller than the kernels (the 4-stage layout on 8 x 8 digits ends at
    2 x 2 and 1 x 1) is read two pixels larger, where the circular norm bounds the zero-padded one."""
    from deeplimits.diagnostics import conv_spectral_norms
    from deeplimits.training.conv import ConvResidualNetwork

    torch.manual_seed(0)
    net = ConvResidualNetwork((1, 8, 8), 10, [1, 1, 1, 1], stem=2, channels=[2, 2, 2, 2], strides=[1, 2, 2, 2])
    assert net.input_sizes() == [(8, 8), (8, 8), (4, 4), (2, 2), (1, 1)]
    torch.save({"state_dict": net.state_dict(), "module": net.get_config()}, tmp_path / "chunk.pt")
    from_module, from_chunk = load_weights(net), load_weights(str(tmp_path / "chunk.pt"))
    assert set(from_module) == set(from_chunk)
    for key, k in from_module.items():
        assert from_chunk[key].input_sizes == k.input_sizes
        assert len(from_chunk[key].stages) == len(k.stages)
        for a, b in zip(from_chunk[key].stages, k.stages):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-12)
    delta = from_module["blocks.*.delta[0]"]
    assert delta.input_sizes == [(8, 8), (4, 4), (4, 4), (3, 3)]  # outputs 8, 4, then 2 -> 4 and 1 -> 3
    got = conv_weight_diagnostics(delta, name="delta").max_norm
    want = max(conv_spectral_norms(s.double(), g).max().item() for s, g in zip(delta.stages, delta.input_sizes))
    assert got == pytest.approx(want, rel=1e-6)
