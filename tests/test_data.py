"""deeplimits.data: every loader, the seeded splits, the batches and the one-line errors (issue 12).

MNIST and CIFAR-10 are read from small files written here in the official formats (idx with
its magic numbers, CIFAR python pickles); nothing is downloaded.
"""

import gzip
import math
import pickle
import random
import struct
import sys

import numpy as np
import pytest
import torch

from deeplimits import data as D
from deeplimits.data import DATASETS, Arrays, batches, bundled, load_dataset, register_dataset, split_indices


def one_line_error(exc_type, fn, *args, match=None, **kwargs):
    with pytest.raises(exc_type, match=match) as info:
        fn(*args, **kwargs)
    assert "\n" not in str(info.value), str(info.value)
    return str(info.value)


# -- the registry and the split -------------------------------------------------------------------

def test_registry_names_and_specs():
    assert tuple(DATASETS) == ("digits", "mnist1d", "synthetic", "mnist", "cifar10")
    assert DATASETS["synthetic"].options == {"n": 1024, "dim": 10, "depth": 100, "angle_start": 1}
    assert DATASETS["mnist"].needs_root and DATASETS["mnist"].official_split
    assert not DATASETS["digits"].needs_root and not DATASETS["digits"].official_split
    assert all(spec.summary for spec in DATASETS.values())


def test_split_indices_disjoint_covering_and_seeded():
    train, test = split_indices(100, 0.25, seed=3)
    assert len(test) == 25 and len(train) == 75
    assert set(train).isdisjoint(test) and sorted(set(train) | set(test)) == list(range(100))
    again = split_indices(100, 0.25, seed=3)
    other = split_indices(100, 0.25, seed=4)
    assert list(train) == list(again[0]) and list(test) == list(again[1])  # integer indices
    assert list(test) != list(other[1])


def test_register_a_new_dataset_in_one_function(monkeypatch):
    monkeypatch.setattr(D.base, "DATASETS", dict(DATASETS))

    @register_dataset("squares")
    def squares(*, seed, n=10):
        """x and x^2."""
        x = np.arange(n, dtype=float)[:, None]
        return Arrays(x, x ** 2, task="regression")

    ds = D.base.load_dataset("squares", n=20, test_fraction=0.5, seed=1)
    assert (ds.n_train, ds.n_test, ds.input_dim, ds.output_dim, ds.n_classes) == (10, 10, 1, 1, None)
    torch.testing.assert_close(ds.y_train, ds.x_train ** 2)
    assert D.base.DATASETS["squares"].summary == "x and x^2."
    one_line_error(ValueError, D.base.load_dataset, "squares", m=3, match="unknown option 'm'.*'n'")

    @register_dataset("broken")
    def broken(*, seed):
        return Arrays(np.zeros((4, 2)), np.array([0, 1, 2, 5]), task="classification", n_classes=3)

    one_line_error(ValueError, D.base.load_dataset, "broken", match=r"labels of 'broken' must lie in \[0, 3\)")


# -- digits -----------------------------------------------------------------------------------------

def test_digits_shapes_values_and_split():
    from sklearn.datasets import load_digits

    ds = load_dataset()  # the default
    assert ds.name == "digits" and ds.task == "classification"
    assert (ds.n_classes, ds.input_dim, ds.output_dim) == (10, 64, 10)
    assert (ds.n_train, ds.n_test) == (1438, 359)
    assert ds.x_train.dtype == torch.float32 and ds.y_train.dtype == torch.int64
    assert ds.x_train.device == torch.device("cpu")
    assert float(ds.x_train.min()) == 0.0 and float(ds.x_train.max()) == 1.0
    assert set(ds.y_train.tolist()) == set(range(10)) and set(ds.y_test.tolist()) == set(range(10))
    x, y = load_digits(return_X_y=True)
    train, test = split_indices(len(x), 0.2, seed=0)
    torch.testing.assert_close(ds.x_train, torch.tensor(x[train] / 16, dtype=torch.float32))
    assert ds.y_test.tolist() == y[test].tolist()  # integer labels
    assert ds.train[0] is ds.x_train and ds.test[1] is ds.y_test
    assert "n_train=1438" in repr(ds)


def test_a_shared_set_is_loaded_once_per_process_and_stays_the_callers_own(monkeypatch):
    """A shared loader (the bundled and generated sets) runs once per set of arguments in a process
    (every task of a study that loads it gets it without reading or generating it again); its
    arrays are read-only and each call's tensors are the caller's own."""
    monkeypatch.setattr(D.base, "DATASETS", dict(DATASETS))
    monkeypatch.setattr(D.base, "_SHARED", {})
    calls = []

    @register_dataset("counted", shared=True)
    def counted(*, seed, n: int = 10):
        calls.append((seed, n))
        return Arrays(np.arange(2.0 * n).reshape(n, 2), np.arange(n) % 2, task="classification", n_classes=2)

    a = load_dataset("counted", seed=1)
    a.x_train.mul_(0)  # the caller's own tensor: the next load is not changed
    b, c = load_dataset("counted", seed=1), load_dataset("counted", seed=1, n=12)
    assert calls == [(1, 10), (1, 12)]
    torch.testing.assert_close(b.x_train, load_dataset("counted", seed=1).x_train, rtol=1e-12, atol=0)
    assert float(b.x_train.abs().sum()) > 0 and c.n_train + c.n_test == 12
    arrays = D.base._SHARED[next(iter(D.base._SHARED))]
    assert not arrays.x.flags.writeable and not arrays.y.flags.writeable
    assert DATASETS["digits"].shared and DATASETS["synthetic"].shared and not DATASETS["mnist"].shared


@pytest.mark.slow
def test_digits_is_read_without_importing_scikit_learn(tmp_path):
    """The digits file of the installed scikit-learn is read as its load_digits reads it, without
    importing scikit-learn (about a second of CPU a process)."""
    import os
    import subprocess

    code = ("import sys; from deeplimits.data.bundled import _digits_file; x, y = _digits_file(); "
            "print(x.shape, y.shape, 'sklearn' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    out = run.stdout
    assert run.returncode == 0, run.stderr[-2000:]
    assert out.split() == ["(1797,", "64)", "(1797,)", "False"]
    from sklearn.datasets import load_digits

    x, y = bundled._digits_file()
    ref = load_digits(return_X_y=True)
    np.testing.assert_allclose(x, ref[0], rtol=1e-12, atol=0)  # pixel values, within rounding
    assert y.tolist() == ref[1].tolist()  # integer labels


def test_digits_reproducible_by_seed_and_dtype():
    a, b = load_dataset("digits", seed=5), load_dataset("digits", seed=5)
    c = load_dataset("digits", seed=6, test_fraction=0.5, dtype=torch.float64, device="cpu")
    torch.testing.assert_close(a.x_train, b.x_train, rtol=1e-12, atol=0)
    assert a.y_test.tolist() == b.y_test.tolist()  # integer labels
    assert a.y_test.tolist() != load_dataset("digits", seed=6).y_test.tolist()  # another split: other labels
    assert c.x_test.dtype == torch.float64 and (c.n_train, c.n_test) == (899, 898)  # round(898.5) = 898


# -- mnist1d ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_mnist1d_generated_locally_without_touching_global_state():
    pytest.importorskip("mnist1d")
    np_state, py_state = np.random.get_state()[1].copy(), random.getstate()
    ds = load_dataset("mnist1d", seed=2)
    assert np.random.get_state()[1].tolist() == np_state.tolist() and random.getstate() == py_state  # integer states
    assert (ds.n_train, ds.n_test, ds.input_dim, ds.output_dim, ds.n_classes) == (4000, 1000, 40, 10, 10)
    assert ds.y_train.dtype == torch.int64 and set(ds.y_test.tolist()) == set(range(10))
    assert torch.isfinite(ds.x_train).all()
    again, other = load_dataset("mnist1d", seed=2), load_dataset("mnist1d", seed=3)
    torch.testing.assert_close(ds.x_test, again.x_test, rtol=1e-6, atol=0)
    assert ds.y_test.tolist() != other.y_test.tolist()  # integer labels


def test_mnist1d_without_the_package_is_one_clear_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "mnist1d", None)
    monkeypatch.setitem(sys.modules, "mnist1d.data", None)
    one_line_error(ImportError, bundled._mnist1d_arrays.__wrapped__, match=r"nothing is downloaded.*deeplimits\[data\]")


# -- synthetic --------------------------------------------------------------------------------------

def recursion(x, K=100):
    """The Cohen et al. recursion, one sample, plain Python floats (float64)."""
    z = list(x)
    for k in range(1, K + 1):
        s, c = math.sin(5 * k * math.pi / K), math.cos(5 * k * math.pi / K)
        z = [zi + K ** -0.5 * math.tanh(s * zi + c) for zi in z]
    norm = math.sqrt(sum(zi * zi for zi in z))
    return [zi / norm for zi in z]


@pytest.mark.slow
def test_synthetic_targets_follow_the_recursion():
    ds = load_dataset("synthetic", n=200, seed=1, dtype=torch.float64)
    assert ds.task == "regression" and ds.n_classes is None
    assert (ds.n_train, ds.n_test, ds.input_dim, ds.output_dim) == (160, 40, 10, 10)
    assert ds.y_train.dtype == torch.float64 and ds.x_train.abs().max() <= 1
    for x, y in [(ds.x_train[0], ds.y_train[0]), (ds.x_train[7], ds.y_train[7]), (ds.x_test[3], ds.y_test[3])]:
        assert np.allclose(y.numpy(), recursion(x.tolist()), rtol=0, atol=1e-13)
    norms = torch.cat([ds.y_train, ds.y_test]).norm(dim=1)
    assert torch.allclose(norms, torch.ones_like(norms), rtol=0, atol=1e-14)


def test_synthetic_options_seeds_and_float32():
    ds = load_dataset("synthetic", n=50, dim=3, depth=7, test_fraction=0.2, seed=4)
    assert (ds.n_train, ds.n_test, ds.input_dim, ds.output_dim) == (40, 10, 3, 3)
    assert ds.y_test.dtype == torch.float32
    assert np.allclose(ds.y_test[0].numpy(), recursion(ds.x_test[0].double().tolist(), K=7), atol=1e-6)
    torch.testing.assert_close(ds.x_test, load_dataset("synthetic", n=50, dim=3, depth=7, seed=4).x_test,
                               rtol=1e-6, atol=0)
    other = load_dataset("synthetic", n=50, dim=3, depth=7, seed=5).x_test
    assert not torch.allclose(ds.x_test, other, rtol=1e-3, atol=1e-3)  # another seed: other inputs, far beyond rounding
    assert load_dataset("synthetic").x_train.shape == (819, 10)  # n = 1024 by default


# -- mnist and cifar10 from files -------------------------------------------------------------------

def idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(">" + "I" * array.ndim, *array.shape)
    return header + array.astype(np.uint8).tobytes()


def write_mnist(root, n_train=6, n_test=3, gz=False):
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    arrays = {"train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28)),
              "train-labels-idx1-ubyte": np.arange(n_train) % 10,
              "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28)),
              "t10k-labels-idx1-ubyte": (np.arange(n_test) * 3) % 10}
    for name, a in arrays.items():
        if gz:
            (raw / (name + ".gz")).write_bytes(gzip.compress(idx_bytes(a)))
        else:
            (raw / name).write_bytes(idx_bytes(a))
    return arrays


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_from_idx_files(tmp_path, gz):
    arrays = write_mnist(tmp_path, gz=gz)
    ds = load_dataset("mnist", root=tmp_path, dtype=torch.float64)
    assert (ds.n_train, ds.n_test, ds.input_dim, ds.output_dim, ds.n_classes) == (6, 3, 784, 10, 10)
    images = arrays["train-images-idx3-ubyte"]
    torch.testing.assert_close(ds.x_train, torch.tensor(images.reshape(6, 784) / 255.0))  # official order, row-major
    assert ds.y_train.tolist() == [0, 1, 2, 3, 4, 5] and ds.y_test.tolist() == [0, 3, 6]
    assert ds.y_test.dtype == torch.int64 and ds.x_test.max() <= 1


def test_mnist_missing_files_and_bad_magic(tmp_path):
    msg = one_line_error(FileNotFoundError, load_dataset, "mnist", root=tmp_path)
    assert str(tmp_path / "MNIST" / "raw") in msg and "t10k-labels-idx1-ubyte" in msg and "nothing is downloaded" in msg
    write_mnist(tmp_path)
    (tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte").unlink()
    msg = one_line_error(FileNotFoundError, load_dataset, "mnist", root=str(tmp_path))
    assert msg.split("missing: ")[1].startswith("t10k-labels-idx1-ubyte (")
    bad = tmp_path / "MNIST" / "raw" / "t10k-labels-idx1-ubyte"
    bad.write_bytes(idx_bytes(np.zeros((3, 2))))  # 2 dimensions where labels have 1
    one_line_error(ValueError, load_dataset, "mnist", root=tmp_path, match="not an idx file.*expected 00000801")
    bad.write_bytes(idx_bytes(np.zeros(3))[:-1])
    one_line_error(ValueError, load_dataset, "mnist", root=tmp_path, match="holds 2 bytes of data")
    bad.write_bytes(idx_bytes(np.zeros(2)))
    one_line_error(ValueError, load_dataset, "mnist", root=tmp_path, match="3 images but .* 2 labels")


def write_cifar(root, per_batch=2, n_test=3):
    directory = root / "cifar-10-batches-py"
    directory.mkdir(parents=True)
    rng = np.random.default_rng(1)
    batches_ = {}
    for i, name in enumerate([f"data_batch_{j}" for j in range(1, 6)] + ["test_batch"]):
        n = n_test if name == "test_batch" else per_batch
        d = {b"data": rng.integers(0, 256, (n, 3072)).astype(np.uint8), b"labels": [(i + k) % 10 for k in range(n)],
             b"batch_label": name.encode()}
        (directory / name).write_bytes(pickle.dumps(d))
        batches_[name] = d
    return batches_


def test_cifar10_from_pickles(tmp_path):
    written = write_cifar(tmp_path)
    ds = load_dataset("cifar10", root=tmp_path)
    assert (ds.n_train, ds.n_test, ds.input_dim, ds.output_dim, ds.n_classes) == (10, 3, 3072, 10, 10)
    assert ds.x_train.dtype == torch.float32 and ds.y_train.dtype == torch.int64
    expected = np.concatenate([written[f"data_batch_{j}"][b"data"] for j in range(1, 6)]) / 255.0
    torch.testing.assert_close(ds.x_train, torch.tensor(expected, dtype=torch.float32))  # batches 1..5 in order
    assert ds.y_train.tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5] and ds.y_test.tolist() == [5, 6, 7]


def test_cifar10_missing_and_damaged_files(tmp_path):
    msg = one_line_error(FileNotFoundError, load_dataset, "cifar10", root=tmp_path)
    assert str(tmp_path / "cifar-10-batches-py") in msg and "data_batch_5" in msg and "test_batch" in msg
    assert "nothing is downloaded" in msg
    write_cifar(tmp_path)
    test_batch = tmp_path / "cifar-10-batches-py" / "test_batch"
    test_batch.write_bytes(b"not a pickle")
    one_line_error(ValueError, load_dataset, "cifar10", root=tmp_path, match="test_batch is not a CIFAR-10 python")
    test_batch.write_bytes(pickle.dumps({b"data": np.zeros((2, 10), np.uint8), b"labels": [0, 1]}))
    one_line_error(ValueError, load_dataset, "cifar10", root=tmp_path, match=r"must have shape \(n, 3072\)")
    test_batch.write_bytes(pickle.dumps({"data": 1}))
    one_line_error(ValueError, load_dataset, "cifar10", root=tmp_path, match="expected a dict with b'data'")


# -- batches ----------------------------------------------------------------------------------------

def test_batches_cover_the_split_once_per_epoch():
    x = torch.arange(23, dtype=torch.float32)[:, None].repeat(1, 2)
    y = torch.arange(23)
    out = list(batches((x, y), 5, seed=1))
    assert [len(b[1]) for b in out] == [5, 5, 5, 5, 3]
    seen = torch.cat([b[1] for b in out])
    assert sorted(seen.tolist()) == list(range(23)) and seen.tolist() != list(range(23))
    # the labels are integers: compared as lists (x's first column, 0.0 to 22.0, read back as integers)
    assert all(bx[:, 0].round().long().tolist() == by.tolist() for bx, by in out)  # x and y stay paired
    assert seen.tolist() == torch.cat([b[1] for b in batches((x, y), 5, seed=1)]).tolist()  # same seed, same order
    assert seen.tolist() != torch.cat([b[1] for b in batches((x, y), 5, seed=2)]).tolist()
    g = torch.Generator().manual_seed(0)
    first, second = (torch.cat([b[1] for b in batches((x, y), 4, generator=g)]) for _ in range(2))
    assert first.tolist() != second.tolist() and sorted(second.tolist()) == list(range(23))  # g advances
    assert torch.cat([b[1] for b in batches((x, y), 4, shuffle=False)]).tolist() == list(range(23))
    assert [len(b[1]) for b in batches((x, y), 5, drop_last=True)] == [5, 5, 5, 5]


def test_batches_of_a_dataset_split():
    ds = load_dataset("synthetic", n=30, test_fraction=0.5)
    assert sum(len(xb) for xb, _ in batches(ds.train, 4, seed=0)) == 15


@pytest.mark.parametrize("args, kwargs, match", [
    (((torch.zeros(3),), 2), {}, "split must be a pair"),
    (((torch.zeros(3), torch.zeros(4)), 2), {}, "split must be a pair"),
    (((torch.zeros(3), torch.zeros(3)), 0), {}, "batch_size must be an integer >= 1, got 0"),
    (((torch.zeros(3), torch.zeros(3)), 2.0), {}, "batch_size must be an integer >= 1"),
    (((torch.zeros(3), torch.zeros(3)), 2), {"seed": 1, "generator": torch.Generator()}, "seed or generator"),
    (((torch.zeros(3), torch.zeros(3)), 2), {"seed": -1}, "seed must be an integer in"),
    (((torch.zeros(3), torch.zeros(3)), 2), {"generator": 3}, "generator must be a torch.Generator"),
    (((torch.zeros(3), torch.zeros(3)), 2), {"shuffle": 1}, "shuffle must be True or False"),
    (((torch.zeros(3), torch.zeros(3)), 2), {"drop_last": "no"}, "drop_last must be True or False"),
])
def test_batches_bad_arguments(args, kwargs, match):
    one_line_error(ValueError, batches, *args, match=match, **kwargs)  # raised at the call, not when iterated


# -- bad arguments of load_dataset ------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs, match", [
    (("cifar100",), {}, "name must be one of 'digits', 'mnist1d', 'synthetic', 'mnist', 'cifar10'; got 'cifar100'"),
    ((None,), {}, "name must be one of"),
    (("digits",), {"seed": -1}, "seed must be an integer in"),
    (("digits",), {"seed": 1.5}, "seed must be an integer in"),
    (("digits",), {"test_fraction": 0.0}, r"test_fraction must lie in \(0.0, 1.0\), got 0.0"),
    (("digits",), {"test_fraction": 1.2}, r"test_fraction must lie in \(0.0, 1.0\)"),
    (("digits",), {"test_fraction": "a"}, "test_fraction must be a finite real number"),
    (("synthetic",), {"n": 10, "test_fraction": 0.01}, "leaves an empty train or test split of 10 samples"),
    (("mnist",), {"root": "/x", "test_fraction": 0.1}, "test_fraction must be None for dataset 'mnist'"),
    (("digits",), {"dtype": torch.float16}, "dtype must be torch.float32 or torch.float64"),
    (("digits",), {"device": "gpu7"}, "device: 'gpu7' is not a device"),
    (("digits",), {"n": 10}, "unknown option 'n' for dataset 'digits'; its options: none"),
    (("synthetic",), {"size": 10}, "unknown option 'size' for dataset 'synthetic'; its options: 'n', 'dim', 'depth'"),
    (("synthetic",), {"n": 1}, r"n must be an integer in \[2, 10000000\], got 1"),
    (("synthetic",), {"dim": 0}, r"dim must be an integer in \[1, 10000\], got 0"),
    (("synthetic",), {"depth": 2.5}, "depth must be an integer"),
    (("mnist",), {}, "root is required for dataset 'mnist'"),
    (("cifar10",), {"root": ""}, "root must be a non-empty path"),
    (("cifar10",), {"root": 3}, "root must be a path"),
])
def test_load_dataset_bad_arguments(args, kwargs, match):
    one_line_error(ValueError, load_dataset, *args, match=match, **kwargs)


def test_root_is_ignored_by_sets_without_files(tmp_path):
    assert load_dataset("synthetic", n=10, root=tmp_path / "nowhere").n_train == 8


def test_missing_files_are_a_parameter_error_naming_root(tmp_path):
    # issue 38: a missing root is refused as the package refuses any argument (and is still a
    # FileNotFoundError, for code that catches that)
    from deeplimits.errors import MissingDataError, ParameterError

    with pytest.raises(MissingDataError) as info:
        load_dataset("mnist", root=tmp_path / "nowhere")
    assert isinstance(info.value, ParameterError) and isinstance(info.value, FileNotFoundError)
    assert info.value.param == "root" and str(info.value).startswith("root must hold the files")
