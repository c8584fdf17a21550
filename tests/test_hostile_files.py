"""Files a user points at are data (issue 21): a crafted CIFAR-10 batch never runs its code, an idx
file cannot make the reader decompress more than its header declares, a damaged file is one line
naming it.

The crafted batches are real pickles whose ``__reduce__`` would create a marker file; the test
checks the marker is absent after the library call and after the command. The gzip bomb is
built from one repeated full-flush deflate block (6 GiB of zeros behind a valid MNIST header in
about 6 MiB, built in a fraction of a second); its memory is measured in a fresh interpreter as
the growth of the peak resident set (``ru_maxrss``) across the call.
"""

import gzip
import os
import pickle
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from deeplimits.cli import main
from deeplimits.data import load_dataset
from deeplimits.data.files import MAX_CIFAR_BATCH_BYTES, read_cifar_batch, read_idx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one_line(exc, fn, *args, match=None, **kw):
    with pytest.raises(exc, match=match) as info:
        fn(*args, **kw)
    assert "\n" not in str(info.value), str(info.value)
    return str(info.value)


# -- CIFAR-10 ----------------------------------------------------------------------------------------

class _Payload:
    """Pickles as a call of ``os.system`` creating ``marker`` (what a hostile batch would hold)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


class _PayloadReturningBatch:
    """Pickles as ``eval`` of an expression that creates the marker AND returns a valid batch."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        code = (f"(open({str(self.marker)!r}, 'w').close(), "
                "{b'data': bytes(3072), b'labels': [0]})[1]")
        return eval, (code,)


def py2_batch(data: np.ndarray, labels) -> bytes:
    """A batch exactly as the official files spell it: Python 2 cPickle, protocol 2, the array
    through ``numpy.core.multiarray._reconstruct`` and a ``numpy.dtype('u1')`` with its state."""
    out = (b"\x80\x02}q\x01(U\x04dataq\x02cnumpy.core.multiarray\n_reconstruct\nq\x03cnumpy\nndarray\nq\x04"
           b"K\x00\x85U\x01b\x87Rq\x05(K\x01")
    out += b"M" + struct.pack("<H", data.shape[0]) + b"M" + struct.pack("<H", data.shape[1]) + b"\x86"
    out += (b"cnumpy\ndtype\nq\x06U\x02u1K\x00K\x01\x87Rq\x07(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xff"
            b"K\x00tbI00\n")
    raw = data.tobytes()
    out += b"T" + struct.pack("<I", len(raw)) + raw + b"tbU\x06labelsq\x08]q\t("
    out += b"".join(b"K" + bytes([v]) for v in labels) + b"eU\x0bbatch_labelq\nU\x04testq\x0bu."
    return out


def write_cifar(root, make=lambda data, labels: pickle.dumps({b"data": data, b"labels": labels})):
    directory = root / "cifar-10-batches-py"
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    written = {}
    for i, name in enumerate([f"data_batch_{j}" for j in range(1, 6)] + ["test_batch"]):
        data, labels = rng.integers(0, 256, (2, 3072)).astype(np.uint8), [i % 10, (i + 1) % 10]
        (directory / name).write_bytes(make(data, labels))
        written[name] = (data, labels)
    return written


def test_official_python2_batch_and_every_protocol_load(tmp_path):
    data = np.random.default_rng(1).integers(0, 256, (3, 3072)).astype(np.uint8)
    assert pickle.loads(py2_batch(data, [1, 2, 3]), encoding="bytes")[b"data"].dtype == np.uint8  # a real pickle
    (tmp_path / "b").write_bytes(py2_batch(data, [1, 2, 3]))
    x, y = read_cifar_batch(str(tmp_path / "b"))
    assert (x == data).all() and y.tolist() == [1, 2, 3] and y.dtype == np.int64
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        batch = {b"data": data, b"labels": [4, 5, 6], b"batch_label": b"x", b"filenames": [b"a", b"b", b"c"]}
        (tmp_path / "b").write_bytes(pickle.dumps(batch, protocol=protocol))
        x, y = read_cifar_batch(str(tmp_path / "b"))
        assert (x == data).all() and y.tolist() == [4, 5, 6], protocol
    written = write_cifar(tmp_path / "root", make=py2_batch)
    ds = load_dataset("cifar10", root=tmp_path / "root")
    assert ds.n_train == 10 and ds.y_test.tolist() == written["test_batch"][1]


@pytest.mark.parametrize("payload", [_Payload, _PayloadReturningBatch])
def test_crafted_cifar_batch_runs_nothing(tmp_path, payload, monkeypatch, capsys):
    marker = tmp_path / "marker"
    root = tmp_path / "data"
    write_cifar(root)
    (root / "cifar-10-batches-py" / "data_batch_3").write_bytes(pickle.dumps(payload(marker)))
    msg = one_line(ValueError, load_dataset, "cifar10", root=root, match="data_batch_3 is not a CIFAR-10")
    assert "refused without running it" in msg and not marker.exists()
    # inside a valid-looking batch too
    batch = {b"data": np.zeros((1, 3072), np.uint8), b"labels": [0], b"filenames": [payload(marker)]}
    (root / "cifar-10-batches-py" / "data_batch_3").write_bytes(pickle.dumps(batch))
    one_line(ValueError, load_dataset, "cifar10", root=root, match="refused without running it")
    assert not marker.exists()
    # the command checks the data set while planning: exit 2, one line, nothing run or left behind
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code = main(["train", "--dataset", "cifar10", "--root", str(root), "--depth", "2", "--width", "2", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "data_batch_3" in err, err
    assert not marker.exists() and os.listdir(work) == []


@pytest.mark.parametrize("content, match", [
    (b"", "not a CIFAR-10 python batch"),
    (b"garbage", "not a CIFAR-10 python batch"),
    (pickle.dumps({b"data": np.zeros((1, 3072), np.uint8)})[:-5], "not a CIFAR-10 python batch"),  # truncated
    (pickle.dumps({b"data": np.zeros((1, 3072), np.float64), b"labels": [0]}), "not an integer type"),
    (pickle.dumps({b"data": np.zeros((1, 3072), object), b"labels": [0]}), "not an integer type"),
    (pickle.dumps({b"data": np.zeros((1, 3072), np.int64), b"labels": [0]}), "must be a uint8 array"),
    (pickle.dumps({b"data": np.zeros((1, 3072), np.uint8), b"labels": ["a"]}), "list of integers"),
    (pickle.dumps({b"data": np.zeros((1, 3072), np.uint8), b"labels": [0, 1]}), r"\(n, 3072\) with n labels"),
    (pickle.dumps([1, 2]), "expected a dict"),
    (pickle.dumps({b"data": np.int64(3), b"labels": [0]}), "never holds"),  # numpy scalars are not allowed
])
def test_damaged_or_foreign_cifar_batches_are_one_line(tmp_path, content, match):
    (tmp_path / "b").write_bytes(content)
    msg = one_line(ValueError, read_cifar_batch, str(tmp_path / "b"), match=match)
    assert str(tmp_path / "b") in msg


def test_cifar_labels_out_of_range_and_oversized_batch(tmp_path):
    write_cifar(tmp_path)
    bad = {b"data": np.zeros((2, 3072), np.uint8), b"labels": [0, 10]}
    (tmp_path / "cifar-10-batches-py" / "test_batch").write_bytes(pickle.dumps(bad))
    one_line(ValueError, load_dataset, "cifar10", root=tmp_path, match=r"test_batch: labels must lie in 0..9")
    big = tmp_path / "cifar-10-batches-py" / "data_batch_1"
    with open(big, "wb") as f:
        f.truncate(MAX_CIFAR_BATCH_BYTES + 1)  # sparse: nothing is written
    one_line(ValueError, read_cifar_batch, str(big), match="more than the")


def test_cifar_binary_batches(tmp_path):
    directory = tmp_path / "cifar-10-batches-bin"
    directory.mkdir()
    rng = np.random.default_rng(2)
    tables = {}
    for name in [f"data_batch_{j}" for j in range(1, 6)] + ["test_batch"]:
        table = rng.integers(0, 256, (3, 3073)).astype(np.uint8)
        table[:, 0] %= 10
        (directory / (name + ".bin")).write_bytes(table.tobytes())
        tables[name] = table
    ds = load_dataset("cifar10", root=tmp_path)
    assert ds.n_train == 15 and ds.y_test.tolist() == tables["test_batch"][:, 0].tolist()
    np.testing.assert_allclose(ds.x_test.numpy(), tables["test_batch"][:, 1:] / 255.0, rtol=1e-6)
    (directory / "test_batch.bin").write_bytes(b"\x00" * 3000)
    one_line(ValueError, load_dataset, "cifar10", root=tmp_path, match="not a CIFAR-10 binary batch")


# -- idx files -----------------------------------------------------------------------------------------

def idx_header(*dims) -> bytes:
    return bytes([0, 0, 0x08, len(dims)]) + struct.pack(">" + "I" * len(dims), *dims)


def gzip_bomb(path, header: bytes, gib: int = 6):
    """``header`` followed by ``gib`` GiB of zeros, gzipped, in about 1 MiB per GiB: one full-flush
    deflate block of 64 MiB of zeros repeated (a full flush resets the compressor, so the block
    is the same every time). The trailer is left off: a reader that stops in time never reaches it."""
    block_mib = 64
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(bytes(block_mib << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + head)
        for _ in range(gib * 1024 // block_mib):
            f.write(block)
    return os.path.getsize(path)


@pytest.mark.slow
def test_gzip_bomb_is_refused_in_little_memory(tmp_path):
    size = gzip_bomb(tmp_path / "bomb.gz", idx_header(60000, 28, 28))
    assert size < 8 << 20
    with gzip.open(tmp_path / "bomb.gz") as f:  # it does expand: far more than the header declares
        assert len(f.read(100 << 20)) == 100 << 20
    script = (
        "import resource, sys\n"
        "from deeplimits.data.files import read_idx\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        "    read_idx(sys.argv[1], 3)\n"
        "except ValueError as e:\n"
        "    print('REFUSED', e)\n"
        "print('GROWTH_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "bomb.gz")], capture_output=True, text=True,
                         timeout=1800, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}).stdout
    assert "REFUSED" in out and "more data than its header says" in out, out
    growth_mb = int(out.split("GROWTH_KB")[1]) / 1024
    assert growth_mb < 200, growth_mb  # the declared 47 MB are read, then one byte too many: refused


def test_idx_header_declaring_too_much_is_refused_before_reading(tmp_path):
    path = tmp_path / "big-idx3-ubyte.gz"
    gzip_bomb(path, idx_header(1_000_000, 280, 280), gib=1)
    msg = one_line(ValueError, read_idx, str(path), 3, match="declares 78400000000 bytes")
    assert str(path) in msg


@pytest.mark.parametrize("damage", ["truncated", "corrupt", "not gzip"])
def test_damaged_gzip_is_one_line(tmp_path, damage):
    good = gzip.compress(idx_header(5) + bytes(range(5)))
    raw = {"truncated": good[:-12], "corrupt": good[:12] + bytes(len(good) - 12), "not gzip": b"hello world"}[damage]
    (tmp_path / "labels.gz").write_bytes(raw)
    msg = one_line(ValueError, read_idx, str(tmp_path / "labels.gz"), 1)
    assert str(tmp_path / "labels.gz") in msg and ("damaged" in msg or "holds" in msg), msg


# -- trained weights beside a run store ----------------------------------------------------------------

TRAIN = ["train", "--driver", "fractional", "--hursts", "0.3", "--betas", "0.5,1", "--lrs", "1e-2", "--depth", "8",
         "--width", "6", "--epochs", "1", "--quiet", "--json", "-"]


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A finished two-chunk training run (one chunk per beta) and its JSON result."""
    import json

    out = tmp_path_factory.mktemp("trained") / "run"
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(TRAIN + ["--out", str(out)]) == 0
    return out, json.loads(buf.getvalue())


def _damage(path, how, other):
    import shutil

    import torch

    if how == "garbage":
        path.write_bytes(os.urandom(4096))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "another tensor":
        torch.save({"x": torch.zeros(3)}, path)
    elif how == "another chunk":
        shutil.copyfile(other, path)
    elif how == "missing":
        path.unlink()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["garbage", "truncated", "empty", "another tensor", "another chunk", "missing"])
def test_damaged_weights_are_named_and_recomputed_to_the_same_numbers(trained_run, tmp_path, how, capsys):
    import json
    import shutil

    from deeplimits.runs import RunStore
    from deeplimits.studies import load_trained

    first_out, first = trained_run
    out = tmp_path / "run"
    shutil.copytree(first_out, out)
    files = sorted((out / "weights").iterdir())
    assert len(files) == 2
    victim = files[0]
    _damage(victim, how, files[1])
    capsys.readouterr()
    # runs plot redraws what it can and names the file it leaves out, in one line
    assert main(["runs", "plot", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and victim.name in err[0] and "run the same train command" in err[0], err
    # the same command finds the damage, says so in one line, and trains that chunk again
    assert main(TRAIN + ["--out", str(out)]) == 0
    captured = capsys.readouterr()
    err = [line for line in captured.err.splitlines() if line.startswith("deeplimits")]  # (the report is there too)
    assert len(err) == 1 and victim.name in err[0] and "computing its task" in err[0], err
    again = json.loads(captured.out)
    for a, b in zip(again["records"], first["records"], strict=True):
        for k, v in a.items():
            if isinstance(v, float) and k != "seconds":  # the same seeds through the same code: the same numbers
                assert v == pytest.approx(b[k], rel=1e-12, abs=1e-12), (k, a, b)
            elif k != "seconds":
                assert v == b[k], (k, a, b)
    with RunStore(out, create=False) as store:
        stored = store.results()
    for key, res in stored.items():
        net, _ = load_trained(out / res["weights"], sha256=res["weights_sha256"])
        assert net.depth == 8
    assert main(TRAIN + ["--out", str(out)]) == 0  # intact now: nothing said, nothing trained
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("deeplimits")]


@pytest.mark.slow  # trains a grid (its fixture)
def test_load_trained_of_a_damaged_file_is_one_line(trained_run, tmp_path):
    from deeplimits.studies import load_trained

    src = sorted((trained_run[0] / "weights").iterdir())[0]
    bad = tmp_path / "bad.pt"
    bad.write_bytes(src.read_bytes()[:100])
    msg = one_line(ValueError, load_trained, bad, match="is not a stored training chunk")
    assert str(bad) in msg
    one_line(ValueError, load_trained, src, sha256="0" * 64, match="SHA-256 is not the one recorded")


# -- the run store: a NULL checksum is damage; a damaged store exits 1 -----------------------------------

def test_a_null_checksum_is_damage_and_is_recomputed(tmp_path):
    import sqlite3

    import sweep_tasks  # noqa: F401 - registers the test task functions
    from deeplimits.runs import RunStore, Task, run_sweep

    tasks = [Task(f"t{i}", "test-draws", {"n": 5}, 100 + i) for i in range(3)]
    want = run_sweep(tasks, None)
    with RunStore(tmp_path, {"d": 1}) as store:
        run_sweep(tasks, store)
    db = sqlite3.connect(tmp_path / "run.sqlite")
    db.execute("UPDATE tasks SET result = '[1.0, 2.0]', checksum = NULL WHERE key = 't1'")  # tampered and unsealed
    db.commit()
    db.close()
    with RunStore(tmp_path, create=False) as store:
        assert store.integrity() == {"verified": 2, "unverified": 0, "damaged": ["t1"]}
        assert "t1" not in store.results()
    with RunStore(tmp_path, {"d": 1}) as store:
        assert run_sweep(tasks, store) == want  # recomputed, not used
        assert store.integrity() == {"verified": 3, "unverified": 0, "damaged": []}


def _store_damage(run, how):
    import json
    import sqlite3

    path = run / "run.sqlite"
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:3000])
        return
    if how == "garbage":
        raw = bytearray(path.read_bytes())
        raw[100:4000] = os.urandom(3900)
        path.write_bytes(bytes(raw))
        return
    db = sqlite3.connect(path)
    sql = {"dropped table": "DROP TABLE tasks",
           "unknown schema": "UPDATE meta SET value = '99' WHERE key = 'schema'",
           "spec not JSON": "UPDATE meta SET value = '{\"regime\": ' WHERE key = 'spec'"}[how]
    db.execute(sql)
    db.commit()
    db.close()
    json.dumps(how)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["truncated", "garbage", "dropped table", "unknown schema", "spec not JSON"])
def test_a_damaged_store_exits_1_in_one_line_wherever_it_is_met(tmp_path, how, capsys, monkeypatch):
    import shutil

    monkeypatch.chdir(tmp_path)
    argv = ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8", "--draws", "2", "--quiet"]
    assert main(argv + ["--out", "good"]) == 0
    shutil.copytree("good", "bad")
    _store_damage(tmp_path / "bad", how)
    capsys.readouterr()
    for cmd in (["runs", "show", "bad"], ["runs", "plot", "bad"], ["runs", "export", "bad", "--json", "x.json"],
                argv + ["--out", "bad"]):
        assert main(cmd) == 1, cmd
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "run.sqlite" in err[0], (cmd, err)
    assert not os.path.exists("x.json")


def _flip_record(src, dst, name_part="data/", at=64, n=256):
    """A copy of the .pt archive ``src`` with ``n`` bytes of its first data record inverted."""
    import zipfile

    raw = bytearray(open(src, "rb").read())
    with zipfile.ZipFile(src) as z:
        info = next(i for i in z.infolist() if name_part in i.filename)
    off = info.header_offset + 30 + len(info.filename) + len(info.extra) + at
    for i in range(off, off + n):
        raw[i] ^= 0xFF
    open(dst, "wb").write(bytes(raw))


def test_crafted_weight_files_are_refused_before_they_are_read_as_numbers(tmp_path):
    # issue 38: a huge stride-0 view over one element, a .npy declaring more than it holds, 256
    # inverted bytes in a .pt's data: one line each, nothing allocated, never numbers from damage
    import struct

    import torch

    from deeplimits.diagnostics import load_weights
    from deeplimits.errors import DamagedFileError, ParameterError

    torch.save(torch.zeros(1).expand(10 ** 6, 10 ** 6), tmp_path / "stride0.pt")
    with pytest.raises(DamagedFileError, match="declaring 3.64 TiB over a storage of 4 B .*a crafted view"):
        load_weights(str(tmp_path / "stride0.pt"))
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }"
    header += " " * (118 - len(header)) + "\n"
    (tmp_path / "huge.npy").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    with pytest.raises(DamagedFileError, match="declares an array of shape .* but holds 0 B of data"):
        load_weights(str(tmp_path / "huge.npy"))
    torch.save(torch.randn(20, 4, 4, generator=torch.Generator().manual_seed(0)), tmp_path / "ok.pt")
    assert load_weights(str(tmp_path / "ok.pt"))["A"].shape == (20, 4, 4)
    _flip_record(tmp_path / "ok.pt", tmp_path / "flip.pt")
    with pytest.raises(DamagedFileError, match="fails its CRC-32 check"):
        load_weights(str(tmp_path / "flip.pt"))


# -- crafted .pt weight files (issue 38): data, checked from the tensors' metadata before any copy -------

class _View:
    """Pickles as the tensor ``torch.save`` would write for a view ``(offset, size, stride)`` of
    ``storage``, whatever the bounds (``set_`` on a real tensor would refuse some of them)."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride)

    def __reduce_ex__(self, protocol):
        import collections

        import torch

        return torch._utils._rebuild_tensor_v2, (*self.args, False, collections.OrderedDict())


def _dense_chunk(**state):
    """A training chunk as ``deeplimits train`` stores it (``chunk_output``), entries of ``state_dict``
    replaced by ``state`` (``None``: removed)."""
    from deeplimits.training import ResidualNetwork

    net = ResidualNetwork("res-1", 4, 3, 2, 2, configs=2)
    sd = {**net.state_dict(), **state}
    return {"module": net.get_config(), "configs": [{}, {}], "state_dict": {k: v for k, v in sd.items() if v is not None}}


def _conv_chunk(state=None, **config):
    from deeplimits.training import ConvResidualNetwork

    net = ConvResidualNetwork((1, 8, 8), 2, [1, 1], stem=2, channels=(2, 3), strides=(1, 2), configs=2)
    sd = net.state_dict() if state is None else state
    return {"module": {**net.get_config(), **config}, "configs": [{}, {}], "state_dict": sd}


def _crafted():
    """name -> (object to torch.save, a needle of the refusal)."""
    import torch

    big = torch.zeros(1)
    ten = torch.arange(10.0)
    return {
        # (a) numbers over each other: stride 0 over one element, huge or moderate (1.4 GiB would fit)
        "stride-0 huge": (big.expand(10 ** 5, 10 ** 5), "a crafted view"),
        "stride-0 1.4 GiB": (big.expand(19_000, 20_000), "a crafted view"),
        "stride-0 in a state_dict": ({f"layers.{k}.weight": big.expand(6000, 6000) for k in range(3)}, "a crafted view"),
        "stride-0 in a chunk": (_dense_chunk(V=torch.zeros(1, 1, 1, 1).expand(4, 2, 3000, 3000)), "a crafted view"),
        "overlapping rows": (ten.as_strided((8, 3), (1, 1)), "a crafted view"),
        "stride-0 in a nested list": ({"x": [[big.expand(10 ** 6, 10 ** 4)]]}, "a crafted view"),
        # (b) past the storage: an offset or an extent beyond it (torch.load refuses these itself, as
        # "not a PyTorch file of tensors"; load_weights checks the bounds again from the metadata)
        "offset past the storage": (_View(ten._typed_storage(), 8, (5,), (1,)), "w.pt"),
        "extent past the storage": (_View(ten._typed_storage(), 0, (4, 4), (4, 1)), "w.pt"),
        "huge offset": (_View(ten._typed_storage(), 2 ** 40, (3,), (1,)), "w.pt"),
        # (c) shapes and types the file's kind does not have
        "1-D V in a chunk": (_dense_chunk(V=torch.ones(4)), "entry 'V' has shape (4,)"),
        "0-D W in a chunk": (_dense_chunk(W=torch.tensor(1.0)), "entry 'W' has shape ()"),
        "no layer weights in a chunk": (_dense_chunk(V=None, W=None, b=None), "holds none of the per-layer weights"),
        "state_dict a list": ({"module": {}, "state_dict": [torch.ones(3)]}, "its state_dict is a list"),
        "a string for a tensor": (_dense_chunk(V="weights"), "not a dict of named tensors"),
        "conv: no stem": (_conv_chunk(stem=None), "not a convolutional network's chunk"),
        "conv: negative channels": (_conv_chunk(channels=[2, -3]), "channels must be an integer >= 1"),
        "conv: huge blocks": (_conv_chunk(blocks=[10 ** 12, 1]), "declares 1000000000001 blocks"),
        "conv: negative blocks": (_conv_chunk(blocks=[-1, 3]), "blocks must be an integer >= 1"),
        "conv: 2**63 channels": (_conv_chunk(channels=[2, 2 ** 63]), "channels must be an integer"),
        "conv: a string image shape": (_conv_chunk(image_shape="1,8,8"), "image_shape"),
        "conv: 1-D kernels": (_conv_chunk(state={"blocks.0.A": torch.ones(3), "blocks.0.delta": torch.ones(3),
                                                 "blocks.1.A": torch.ones(3), "blocks.1.delta": torch.ones(3)}),
                              "must be (C, c_out, c_in, kh, kw)"),
        "conv: kernels missing": (_conv_chunk(state={"blocks.0.A": torch.ones(2, 2, 2, 3, 3),
                                                     "blocks.1.A": torch.ones(2, 3, 2, 3, 3)}), "KeyError"),
        "integer keys": ({0: torch.ones(3), 1: torch.ones(3), 2: torch.ones(3)}, "keys are not all names"),
        "deeply nested": (functools.reduce(lambda o, _: [o], range(40), torch.ones(3)), "nests its containers"),
        "a sparse tensor": (torch.eye(4).to_sparse(), "not a dense tensor"),
    }


import functools  # noqa: E402 - used by _crafted above

CRAFTED = list(_crafted())


def _refused_file(path, needle):
    """``load_weights`` refuses ``path`` in one line naming it; ``deeplimits weights`` exits 2 in one line."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from deeplimits.diagnostics import load_weights
    from deeplimits.errors import DamagedFileError, ParameterError

    with pytest.raises((DamagedFileError, ParameterError)) as info:
        load_weights(str(path))
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg and needle in msg, msg
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["weights", str(path)])
    err = err.getvalue()
    assert code == 2 and len(err.splitlines()) == 1 and str(path) in err, err
    assert "Traceback" not in err and "internal error" not in err and out.getvalue() == "", err


@pytest.mark.parametrize("name", CRAFTED)
@pytest.mark.slow
def test_crafted_pt_files_are_refused_in_one_line(tmp_path, monkeypatch, name):
    import torch

    obj, needle = _crafted()[name]
    path = tmp_path / "w.pt"
    torch.save(obj, path)
    monkeypatch.chdir(tmp_path)
    _refused_file(path, needle)
    assert sorted(os.listdir(tmp_path)) == ["w.pt"]


def test_valid_chunks_still_load(tmp_path):
    import torch

    from deeplimits.diagnostics import ConvKernels, load_weights

    torch.save(_dense_chunk(), tmp_path / "dense.pt")
    got = load_weights(str(tmp_path / "dense.pt"))
    assert set(got) == {"V[0]", "V[1]"} and got["V[0]"].shape == (4, 3, 3)
    torch.save(_conv_chunk(), tmp_path / "conv.pt")
    got = load_weights(str(tmp_path / "conv.pt"))
    assert set(got) == {"blocks.*.A[0]", "blocks.*.A[1]", "blocks.*.delta[0]", "blocks.*.delta[1]"}
    assert all(isinstance(v, ConvKernels) for v in got.values())
    view = torch.arange(30.0).reshape(10, 3)[2:7]  # a view saved with its whole storage: fine
    torch.save(view.t(), tmp_path / "view.pt")
    torch.testing.assert_close(load_weights(str(tmp_path / "view.pt"))["A"], view.t())


@pytest.mark.slow
def test_crafted_views_are_refused_without_allocating(tmp_path):
    """The 1.4 GiB stride-0 view (which would fit in memory) and the 37 GiB one are refused with
    the peak resident set growing by far less than either (measured in a fresh interpreter)."""
    import torch

    torch.save(torch.zeros(1).expand(19_000, 20_000), tmp_path / "mid.pt")
    torch.save(torch.zeros(1).expand(10 ** 5, 10 ** 5), tmp_path / "huge.pt")
    script = (
        "import resource, sys\n"
        "import torch\n"
        "from deeplimits.diagnostics import load_weights\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        load_weights(p)\n"
        "    except ValueError as e:\n"
        "        print('REFUSED', e)\n"
        "print('GROWTH_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "mid.pt"), str(tmp_path / "huge.pt")],
                         capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT}).stdout
    assert out.count("REFUSED") == 2 and out.count("a crafted view") == 2, out
    assert int(out.split("GROWTH_KB")[1]) / 1024 < 200, out  # the views would take 1.4 GiB and 37 GiB


def _zip_damage(src, dst, where):
    """A copy of the .pt archive ``src`` with 256 bytes inverted in its data record, its pickle
    record or its central directory, or its central directory declaring huge record sizes."""
    import struct
    import zipfile

    raw = bytearray(open(src, "rb").read())
    with zipfile.ZipFile(src) as z:
        infos = z.infolist()
    eocd = raw.rfind(b"PK\x05\x06")
    cd_size, cd_start = struct.unpack("<II", raw[eocd + 12:eocd + 20])
    if where in ("data", "pickle"):
        info = next(i for i in infos if ("/data/" in i.filename if where == "data" else i.filename.endswith("data.pkl")))
        start = info.header_offset + 30 + len(info.filename) + len(info.extra)
        mid = start + max(0, (info.file_size - 256) // 2)
        span = range(mid, mid + min(256, info.file_size))
    elif where == "central directory":
        mid = cd_start + max(0, (cd_size - 256) // 2)
        span = range(mid, mid + min(256, cd_size))
    else:  # huge sizes: every central-directory entry declares 4 GiB - 16 uncompressed bytes
        span = ()
        at = cd_start
        while raw[at:at + 4] == b"PK\x01\x02":
            raw[at + 24:at + 28] = struct.pack("<I", 0xFFFFFFF0)
            n, m, k = struct.unpack("<HHH", raw[at + 28:at + 34])
            at += 46 + n + m + k
    for i in span:
        raw[i] ^= 0xFF
    open(dst, "wb").write(bytes(raw))


@pytest.mark.parametrize("where", ["data", "pickle", "central directory", "huge sizes"])
def test_damaged_pt_archives_never_give_numbers(tmp_path, monkeypatch, where):
    import torch

    torch.save(torch.randn(2000, 4, generator=torch.Generator().manual_seed(0)), tmp_path / "ok.pt")
    _zip_damage(tmp_path / "ok.pt", tmp_path / "w.pt", where)
    monkeypatch.chdir(tmp_path)
    _refused_file(tmp_path / "w.pt", "")
    assert sorted(os.listdir(tmp_path)) == ["ok.pt", "w.pt"]
