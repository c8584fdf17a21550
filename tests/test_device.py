"""Devices (issue "any device"): every sampler, pair and study takes ``device=``; numbers are drawn
where they are used (docs/convergence.md, "Devices"; the seeding scheme is in deeplimits/_random.py).

The ``device`` fixture runs over the CPU and, when this machine has them, CUDA and MPS; the tests
of an absent device are skipped with the reason. The CPU-only tests at the end always run: the
CPU's numbers are those recorded before devices existed, and a device that cannot hold numbers
(``meta``, or one this machine lacks) is refused with one line before any work.
"""

import math

import pytest
import torch

import deeplimits as dl
from deeplimits import _random
from deeplimits._validate import ResourceError
from deeplimits.studies.convergence import study as C
from deeplimits.studies.propagation import study as PH
from deeplimits.studies.propagation import study as ST
from deeplimits.studies import plan_phase, plan_stability

HAS_CUDA = torch.cuda.is_available()
HAS_MPS = torch.backends.mps.is_available()
DEVICES = ["cpu",
           pytest.param("cuda", marks=pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device on this machine "
                                                                              "(torch.cuda.is_available() is False)")),
           pytest.param("mps", marks=pytest.mark.skipif(not HAS_MPS, reason="no MPS device on this machine "
                                                                            "(torch.backends.mps.is_available() is False)"))]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def dtype_on(device):
    return torch.float32 if device == "mps" else torch.float64  # MPS has no float64


def gen(seed):
    return torch.Generator().manual_seed(seed)


def driver_samples(device, seed=0):
    """One sample of every driver on ``device``, by name."""
    dt = dtype_on(device)
    return {
        "gaussian": dl.IIDDriver("gaussian").sample((3, 3), draws=2, resolution=16, generator=gen(seed), dtype=dt,
                                                    device=device),
        "uniform": dl.IIDDriver("uniform").sample((3,), draws=2, generator=gen(seed), dtype=dt, device=device),
        "rademacher": dl.IIDDriver("rademacher").sample((3, 3), draws=2, generator=gen(seed), dtype=dt,
                                                        device=device),
        "fractional": dl.FractionalDriver(0.7).sample((3, 3), draws=2, resolution=16, generator=gen(seed), dtype=dt,
                                                      device=device),
        "smooth": dl.SmoothDriver(0.2).sample((3, 3), draws=2, generator=gen(seed), dtype=dt, device=device),
    }


# ----------------------------------------------------------------------------------------
# on every available device
# ----------------------------------------------------------------------------------------

def test_samples_live_on_the_device(device):
    for name, s in driver_samples(device).items():
        assert s.device.type == device, name
        assert s.weights(8).device.type == device, name
        if s.rough:
            assert s.increments(8).device.type == device and s.path(8).device.type == device, name
        if s.kind == "smooth":
            assert s.at(0.3).device.type == device and s.at(torch.tensor([0.1, 0.2])).device.type == device
    x = dl.fgn(16, 0.3, (4,), generator=gen(1), dtype=dtype_on(device), device=device)
    assert x.device.type == device and x.shape == (4, 16)


def test_same_seed_same_device_same_numbers(device):
    # the same code path on the same device with the same seed: the same numbers (a tolerance far
    # below any change of seed, which moves the weights by O(1), for kernels that reduce in another order)
    a, b = driver_samples(device, seed=3), driver_samples(device, seed=3)
    for name in a:
        assert torch.allclose(a[name].weights(8), b[name].weights(8), rtol=1e-6, atol=1e-9), name
    p = dl.pair("sde", width=3)
    s1 = p.sample(2, resolution=16, generator=gen(5), dtype=dtype_on(device), device=device)
    s2 = p.sample(2, resolution=16, generator=gen(5), dtype=dtype_on(device), device=device)
    # the same seed twice: equal within a tolerance far below what another seed moves (O(1))
    assert torch.allclose(s1.h0, s2.h0, rtol=1e-6, atol=1e-9)
    assert torch.allclose(s1.weights["V"].increments(16), s2.weights["V"].increments(16), rtol=1e-6, atol=1e-9)
    c = driver_samples(device, seed=4)["gaussian"].weights(8)
    assert (a["gaussian"].weights(8) - c).abs().max() > 1e-2  # another seed: other numbers


@pytest.mark.parametrize("regime,options", [("sde", {}), ("ode", {}), ("fbm", {"hurst": 0.7}),
                                            ("inside-sde", {"beta": 1.0}), ("inside-ode", {"beta": 0.5})])
@pytest.mark.slow
def test_pair_solution_lives_where_h0_does(device, regime, options):
    if device == "mps" and regime in ("ode", "inside-ode"):
        pytest.skip("the adaptive ODE solve needs float64, which MPS lacks")
    p = dl.pair(regime, width=3, **options)
    s = p.sample(2, resolution=16 if p.rough else None, generator=gen(0), dtype=dtype_on(device), device=device)
    assert s.device.type == device
    sol = p.solve(s, 4)
    for x in (sol.times, sol.network, sol.limit, sol.strong_error()):
        assert x.device.type == device
    assert bool(torch.isfinite(sol.strong_error()).all())


def strong_errors(device, draws, seed):
    p = dl.pair("sde", width=4)
    s = p.sample(draws, resolution=64, generator=gen(seed), dtype=dtype_on(device), device=device)
    return p.solve(s, 8).strong_error().flatten().double().cpu()


@pytest.mark.slow
def test_strong_error_on_the_device_agrees_with_the_cpu_in_distribution(device):
    # another device draws other numbers (its own generator), so the per-draw errors differ; their
    # means over 400 independent draws each must agree within 5 standard errors of the difference
    # (a two-sample z-test: a false alarm has probability below 1e-6)
    n = 400
    cpu, dev = strong_errors("cpu", n, seed=11), strong_errors(device, n, seed=12)
    se = math.sqrt(cpu.var().item() / n + dev.var().item() / n)
    assert abs(cpu.mean().item() - dev.mean().item()) < 5 * se


def test_studies_run_on_the_device(device):
    dt = dtype_on(device)
    plan = C.plan_convergence("sde", depths=[4, 8], draws=4, width=3, reference=32, dtype=dt, device=device)
    assert ("device" in plan.to_dict()) == (device != "cpu")
    res = C.run_plan(plan)
    assert all(math.isfinite(e) for e in res.error)
    spec = plan_stability("res-1", "gaussian", width=4, n_in=4, depths=[4, 8], betas=[0.5, 1.0], draws=3, dtype=dt,
                          device=device)
    assert (spec.device or "cpu").startswith(device)
    st = ST.run_stability(spec)
    assert len(st.records) == 4 and all(math.isfinite(r["r_h"]["mean"]) for r in st.records)
    ph = dl.phase_diagram([0.6], [0.5, 1.0], arch="res-1", width=4, n_in=4, depth=30, draws=2, inputs=2, dtype=dt,
                          device=device)
    assert all(math.isfinite(x) for x in ph.log10_rh[0])


# ----------------------------------------------------------------------------------------
# CPU only: today's numbers, and refusals before any work
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [None, "cpu", torch.device("cpu"), "cpu:0"])
def test_the_cpu_gives_the_numbers_recorded_before_devices(spelling):
    """Recorded from the code before the device argument existed (the uniform draws: since the
    centred uniform sampler). The draws are NumPy PCG64 / SFC64 and torch CPU streams, exact on every machine; rtol 1e-12 only absorbs the last-bit differences
    the scaling products (``scale / sqrt(resolution)``, the fGn FFT) may have across CPUs."""
    close = lambda a, b: torch.testing.assert_close(torch.tensor(a, dtype=torch.float64),  # noqa: E731
                                                    torch.tensor(b, dtype=torch.float64), rtol=1e-12, atol=1e-15)
    s = dl.pair("sde", width=3).sample(2, resolution=8, generator=gen(7), device=spelling)
    close(s.h0.flatten()[:4].tolist(), [-0.2952460405879651, 1.968547861768932, -1.251400130741154, -1.884067517741636])
    close(s.weights["V"].increments(8)[:3, 0, 0, 0].tolist(),
          [-0.0038513102586632516, -0.15124237332161128, -0.18103158428132587])
    s = dl.pair("ode", width=3).sample(2, generator=gen(7), dtype=torch.float32, device=spelling)
    close(s.h0.flatten()[:3].tolist(), [0.43455952405929565, 1.1890696287155151, -0.5388686060905457])
    # a float32 sum over the spectral modes: the kernel (and its rounding) depends on the CPU and on
    # the memory's alignment, a few float32 ulps (eps = 1.2e-7) apart; a changed law moves it by O(1)
    torch.testing.assert_close(torch.tensor(s.weights["V"].at(0.5)[0, 0].tolist(), dtype=torch.float64),
                               torch.tensor([-0.48567357659339905, 0.3651323914527893, 0.642581045627594],
                                            dtype=torch.float64), rtol=1e-6, atol=1e-7)
    close(dl.fgn(8, 0.7, (2,), generator=gen(7), device=spelling)[0, :3].tolist(),
          [0.17916450606076467, 0.18616571506967855, -1.1076676069053997])
    u = dl.IIDDriver("uniform").sample((3, 3), draws=2, generator=gen(7), device=spelling).weights(4)
    # recorded when the uniform law moved to the centred SFC64 grid (deeplimits._random._centred_uniform)
    close(u[:, 0, 0, 0].tolist(), [-0.32407444426444704, -0.6133470660693059, -0.7069734126540166, -0.4684857150262954])


def test_cpu_specs_do_not_record_a_device():
    assert C.plan_convergence("sde", depths=[4, 8], draws=2, width=3, device="cpu").to_dict() == \
        C.plan_convergence("sde", depths=[4, 8], draws=2, width=3).to_dict()
    kw = dict(width=4, n_in=4, depths=[4], betas=[0.5], draws=2)
    assert plan_stability("res-1", **kw, device=torch.device("cpu")) == plan_stability("res-1", **kw)
    assert "device" not in plan_phase([0.6], [0.5], width=4, n_in=4, depth=20, draws=1, inputs=1, device="cpu").to_dict()


@pytest.fixture
def no_work(monkeypatch):
    """Any random number or study task fails the test: a refusal must come before any work."""
    def fail(*a, **k):
        raise AssertionError("work started before the device was checked")

    for mod, name in [(_random, "normal"), (_random, "uniform"), (_random, "randn"), (_random, "seed_from"),
                      (C, "run_chunk"), (ST, "_run"), (PH, "_run")]:
        monkeypatch.setattr(mod, name, fail)


def entry_points(device):
    """Every public entry point that takes a device, called with ``device``."""
    p = dl.pair("sde", width=3)
    return {
        "Driver.sample": lambda: dl.IIDDriver("gaussian").sample((3, 3), resolution=8, device=device),
        "SmoothDriver.sample": lambda: dl.SmoothDriver().sample((3,), device=device),
        "fgn": lambda: dl.fgn(8, 0.7, device=device),
        "Pair.sample": lambda: p.sample(2, resolution=8, device=device),
        "plan_convergence": lambda: C.plan_convergence("sde", depths=[4, 8], draws=2, width=3, device=device),
        "strong_convergence": lambda: dl.strong_convergence("sde", depths=[4, 8], draws=2, width=3, device=device),
        "plan_stability": lambda: plan_stability("res-1", width=4, n_in=4, depths=[4], betas=[0.5], draws=2,
                                                 device=device),
        "stability": lambda: dl.stability("res-1", width=4, n_in=4, depths=[4], betas=[0.5], draws=2, device=device),
        "plan_phase": lambda: plan_phase([0.6], [0.5], width=4, n_in=4, depth=20, draws=1, inputs=1, device=device),
        "phase_diagram": lambda: dl.phase_diagram([0.6], [0.5], width=4, n_in=4, depth=20, draws=1, inputs=1,
                                                  device=device),
    }


@pytest.mark.parametrize("bad,message", [
    ("meta", "device: 'meta' holds no data"),
    (torch.device("meta"), "device: 'meta' holds no data"),
    ("gpu", "device: 'gpu' is not a device"),
    (3, "device must be a device name"),
    pytest.param("cuda", "device: 'cuda' is not available on this machine (torch.cuda.is_available() is False)",
                 marks=pytest.mark.skipif(HAS_CUDA, reason="this machine has CUDA")),
    pytest.param("cuda:7", "device: 'cuda:7' is not available on this machine",
                 marks=pytest.mark.skipif(torch.cuda.device_count() > 7, reason="this machine has 8 CUDA devices")),
    pytest.param("mps", "device: 'mps' is not available on this machine (torch.backends.mps.is_available() is False)",
                 marks=pytest.mark.skipif(HAS_MPS, reason="this machine has MPS")),
])
def test_a_device_that_cannot_hold_numbers_is_refused_before_any_work(no_work, bad, message):
    for name, call in entry_points(bad).items():
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value).startswith(message), (name, str(e.value))
        assert "\n" not in str(e.value), name


# ----------------------------------------------------------------------------------------
# the non-CPU drawing path, exercised here by routing the CPU through it
# ----------------------------------------------------------------------------------------

@pytest.fixture
def device_path(monkeypatch):
    """Route every draw through the path a non-CPU device takes (a torch.Generator on the
    device seeded from the same seeds), on the CPU: the logic that CUDA and MPS run, checked on
    any machine."""
    monkeypatch.setattr(_random, "_on_cpu", lambda device: False)


def test_the_device_path_gives_its_own_numbers_same_seed_same_numbers(device_path):
    a, b = driver_samples("cpu", seed=3), driver_samples("cpu", seed=3)
    for name in a:  # one code path, one seed: the same numbers, within a tolerance far below a seed's change
        assert torch.allclose(a[name].weights(8), b[name].weights(8), rtol=1e-6, atol=1e-9), name
    expected = [-0.0038513102586632516, -0.15124237332161128, -0.18103158428132587]  # the NumPy path's
    s = dl.pair("sde", width=3).sample(2, resolution=8, generator=gen(7))
    assert not torch.allclose(s.weights["V"].increments(8)[:3, 0, 0, 0], torch.tensor(expected, dtype=torch.float64))


@pytest.mark.slow
def test_the_device_path_agrees_with_the_cpu_path_in_distribution(monkeypatch):
    # as on a real device: 400 draws of each path, means within 5 standard errors of the difference
    n = 400
    cpu = strong_errors("cpu", n, seed=11)
    monkeypatch.setattr(_random, "_on_cpu", lambda device: False)
    dev = strong_errors("cpu", n, seed=11)
    se = math.sqrt(cpu.var().item() / n + dev.var().item() / n)
    assert abs(cpu.mean().item() - dev.mean().item()) < 5 * se


def test_the_studies_run_through_the_device_path(device_path):
    test_studies_run_on_the_device("cpu")
    test_pair_solution_lives_where_h0_does("cpu", "inside-sde", {"beta": 1.0})


def test_float64_on_mps_is_refused_in_one_line(monkeypatch, no_work):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)  # as on a Mac
    for name, call in entry_points("mps").items():
        if name in ("plan_stability", "stability", "plan_phase", "phase_diagram"):
            continue  # float32 by default: not refused
        with pytest.raises(ValueError, match=r"^device: 'mps' has no float64; use dtype=torch.float32 on it$"):
            call()
    with pytest.raises(ValueError, match="'mps' has no float64"):
        plan_stability("res-1", width=4, n_in=4, depths=[4], betas=[0.5], draws=2, dtype=torch.float64, device="mps")


def test_plans_on_cuda_are_sized_by_its_free_memory(monkeypatch):
    """The plans are arithmetic (no CUDA work), so a CUDA device with 64 MiB free is simulated:
    the chunks shrink to fit it, where the CPU's RAM takes the default chunk."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    asked = []
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda d=None: asked.append(d) or (64 << 20, 8 << 30))
    kw = dict(depths=[8, 16], draws=64, width=16, reference=256)
    cpu, cuda = C.plan_convergence("sde", **kw), C.plan_convergence("sde", **kw, device="cuda")
    assert cuda.to_dict()["device"] == "cuda" and cuda.chunk < cpu.chunk and asked
    skw = dict(width=40, n_in=8, depths=[100], betas=[0.5], draws=50)
    spec = plan_stability("res-3", **skw, device="cuda")
    assert spec.to_dict()["device"] == "cuda" and spec.chunk < plan_stability("res-3", **skw).chunk
    with pytest.raises(ResourceError, match="device .cuda. has free 64 MiB"):
        plan_phase([0.6], [0.5], width=40, n_in=8, depth=1000, draws=5, inputs=10, device="cuda")


def test_weights_or_inputs_on_another_device_than_h0_are_one_clear_error():
    """The meta device stands for "another device" here: the check compares devices before any
    arithmetic, so no numbers are needed."""
    net = dl.ResNet("res-1", beta=0.5)
    h0 = torch.zeros(2, 1, 3, dtype=torch.float64)
    V = torch.zeros(4, 2, 3, 3, dtype=torch.float64, device="meta")
    with pytest.raises(ValueError, match=r"^V must be on the device of h0 \(cpu\), got meta$"):
        net.forward(h0, V)
    with pytest.raises(ValueError, match=r"^V must be on the device of h0 \(cpu\), got meta$"):
        list(net.iterate(h0, iter([V]), depth=4))
    p = dl.pair("sde", width=3)
    s = p.sample(2, resolution=8, generator=gen(0))
    with pytest.raises(ValueError, match=r"^h0 must be on the sample's device \(cpu\), got meta$"):
        p.solve(s, 4, h0=torch.zeros(2, 1, 3, dtype=torch.float64, device="meta"))


def test_samples_move_with_to_and_keep_their_numbers():
    """Issue 28: ``.to()`` on driver and pair samples. A sample drawn lazily from a seed keeps
    drawing where it was drawn (its numbers depend on the device), so moving it keeps them."""
    g = lambda: torch.Generator().manual_seed(7)  # noqa: E731
    for drv in (dl.IIDDriver("gaussian"), dl.IIDDriver("uniform"), dl.FractionalDriver(0.7), dl.SmoothDriver(0.2)):
        res = 16 if drv.needs_resolution else None
        s = drv.sample((3, 3), draws=2, resolution=res, generator=g(), dtype=torch.float64)
        moved = s.to("cpu")
        assert moved is not s and moved.device == torch.device("cpu")
        torch.testing.assert_close(moved.weights(16), s.weights(16), rtol=0, atol=0)
    p = dl.pair("sde", width=3)
    sample = p.sample(2, resolution=32, generator=g())
    again = sample.to("cpu")
    torch.testing.assert_close(p.solve(again, 8).network, p.solve(sample, 8).network, rtol=0, atol=0)
    with pytest.raises(ValueError, match="device"):
        sample.to("nosuch")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_samples_moved_to_cuda_keep_their_numbers():
    g = lambda: torch.Generator().manual_seed(7)  # noqa: E731
    for drv in (dl.IIDDriver("gaussian"), dl.IIDDriver("uniform"), dl.FractionalDriver(0.7), dl.SmoothDriver(0.2)):
        s = drv.sample((3, 3), draws=2, resolution=16 if drv.needs_resolution else None, generator=g(),
                       dtype=torch.float64)
        on = s.to("cuda")
        assert on.weights(16).device.type == "cuda"
        # the same numbers; smooth values are computed on the device (rounding of its cos/sin)
        torch.testing.assert_close(on.weights(16).cpu(), s.weights(16), rtol=1e-12, atol=1e-12)
