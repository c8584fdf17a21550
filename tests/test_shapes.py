"""The shapes study (docs/shapes.md): the exact limit against exact facts and the authors' solver, the
batched networks against a plain transcription and autograd, the law's fit and the verdicts on
synthetic errors of known truth, the plan's checks, and a small study end to end."""

import importlib.util
import json
import math
import pathlib

import numpy as np
import pytest
import torch

from deeplimits.errors import ParameterError
from deeplimits.studies.shapes.presets import PRESETS, PROTOCOL, Protocol
from deeplimits.studies.shapes.fit import fit_with_intervals, law_value, resamples
from deeplimits.studies.shapes.limit import linear_limit
from deeplimits.studies.shapes.network import draw_weights, exact_targets, train_shapes
from deeplimits.studies.shapes.study import plan_shapes
from deeplimits.studies.shapes.verdicts import AGREES, DISAGREES, INSUFFICIENT, swap_test, ushape_test

ROOT = pathlib.Path(__file__).resolve().parents[1]
X, Y = np.array(PROTOCOL.x), np.array(PROTOCOL.y)
#: the limit's outputs after 5 and 14 steps and its loss after 0, 5, 14 (docs/shapes.md)
OUT5 = [0.33457141, 0.14172623, -0.02951777]
OUT14 = [0.60150025, 0.25479870, -0.05306773]
LOSS = {0: 0.23403322, 5: 0.05107376, 14: 0.00041357}
#: the authors' released kernel solver (CorrelationGenerator, num_s = 100, rtol 1e-5) on the same protocol
AUTHORS = {5: [0.33457156, 0.14172629, -0.02951778], 14: [0.60150096, 0.25479900, -0.05306779]}


def _plain():
    spec = importlib.util.spec_from_file_location("shapes_plain", ROOT / "benchmarks" / "shapes_plain.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.train_plain


def test_the_limit_meets_exact_facts():
    lim = linear_limit(X, Y, steps=15, lr=0.1)
    assert np.abs(lim.outputs[0]).max() == 0.0
    assert np.allclose(lim.outputs[1], 2 * 0.1 * (X @ X) * Y, rtol=1e-12, atol=1e-14)  # one step: the kernel 2|x|^2
    assert lim.loss[0] == pytest.approx(0.5 * Y @ Y, rel=1e-14)
    gh, gb = lim.kernels(np.linspace(0, 1, 7))
    assert np.allclose(gh[:, 0, 0], X @ X, rtol=1e-12) and np.allclose(gb[:, 0, 0], Y @ Y, rtol=1e-12)
    assert np.allclose(gh, gh.transpose(0, 2, 1), atol=1e-14)  # Gram matrices of the coefficient paths


def test_the_limit_values_of_the_docs_two_ways():
    """The kernel ODEs solved here, the same values the docs print; and the authors' own solver within its
    tolerance. (The third way, a very large finite network, is tests/test_shapes_slow.py.)"""
    lim = linear_limit(X, Y, steps=15, lr=0.1)
    assert np.allclose(lim.outputs[5], OUT5, atol=1e-8) and np.allclose(lim.outputs[14], OUT14, atol=1e-8)
    assert all(lim.loss[k] == pytest.approx(v, abs=1e-8) for k, v in LOSS.items())
    for k, v in AUTHORS.items():
        assert np.abs(lim.outputs[k] - v).max() < 2e-6


def test_the_limit_tolerance_is_measured_and_far_below_the_errors():
    """Two tolerances, two node counts: the paths differ by far less than the smallest error of the
    published grid (about 0.04 at (499, 499, 499))."""
    coarse, fine = linear_limit(X, Y, steps=15, lr=0.1, tol=1e-3), linear_limit(X, Y, steps=15, lr=0.1, tol=1e-12)
    assert len(coarse.nodes) < len(fine.nodes) and coarse.tolerance <= 1e-3 and fine.tolerance <= 1e-12 * 10
    s = np.linspace(0, 1, 201)
    assert np.abs(coarse.coefficients(s) - fine.coefficients(s)).max() < 1e-6
    with pytest.raises(ParameterError, match="tol must be in"):
        linear_limit(X, Y, steps=15, lr=0.1, tol=0.5)


def _batch(Ms, Ds, L, seed=0, dtype=torch.float64):
    g = np.random.default_rng(seed)
    E = torch.zeros(len(Ms), max(Ds), 6, dtype=dtype)
    for b, D in enumerate(Ds):
        E[b, :D] = torch.as_tensor(g.standard_normal((D, 6)), dtype=dtype)
    return E, [100 + b for b in range(len(Ms))]


@pytest.mark.parametrize("activation", ["identity", "tanh"])
def test_the_batch_is_the_plain_one_network_code(activation):
    """A padded batch of three shapes trains exactly as the plain transcription of the released code."""
    L, Ms, Ds = 5, [4, 7, 3], [6, 3, 8]
    E, seeds = _batch(Ms, Ds, L)
    U, V = draw_weights(L, Ms, Ds, seeds, torch.float64, "cpu")
    out = train_shapes(L, Ms, Ds, E, seeds, protocol=PROTOCOL, activation=activation, keep_states=True)
    plain = _plain()
    for b, (M, D) in enumerate(zip(Ms, Ds)):
        u, v = (W[b, :, :D, :M].permute(1, 2, 0).numpy().copy() for W in (U, V))
        f, h = plain(u, v, E[b, :D, :3].numpy(), E[b, :D, 3:].numpy(), X, Y, tanh=activation == "tanh")
        assert np.allclose(out["outputs"][:, b].numpy(), f, rtol=1e-10, atol=1e-12)
        assert np.allclose(out["states"][:, :, b, :D].numpy(), h, rtol=1e-10, atol=1e-12)
        assert (out["states"][:, :, b, D:] == 0).all()  # the padding stays zero


def test_a_step_is_gradient_descent_with_the_protocols_multipliers():
    """U and V move by -lr D L M / alpha^2 times the gradient of |f - y|^2 / 2 (the multipliers D on the
    gradient in the network's own 1/(L M) normalisation)."""
    L, M, D = 3, 4, 5
    E, seeds = _batch([M], [D], L)
    U, V = draw_weights(L, [M], [D], seeds, torch.float64, "cpu")
    u, v = U[0].clone().requires_grad_(), V[0].clone().requires_grad_()
    h = E[0, :, :3] @ torch.tensor(X)
    for layer in range(L):
        h = h + v[layer] @ (u[layer].T @ h / D) / (L * M)
    loss = 0.5 * ((E[0, :, 3:].T @ h / D - torch.tensor(Y)) ** 2).sum()
    loss.backward()
    two = Protocol(steps=2)
    before = train_shapes(L, [M], [D], E, seeds, protocol=two, keep_states=True)["states"]
    # the recorded states after one step, rebuilt from the weights after one gradient step
    lr = two.lr * D * L * M
    u1, v1 = (u - lr * u.grad).detach(), (v - lr * v.grad).detach()
    h = E[0, :, :3] @ torch.tensor(X)
    states = [h]
    for layer in range(L):
        h = h + v1[layer] @ (u1[layer].T @ h / D) / (L * M)
        states.append(h)
    assert torch.allclose(before[1, :, 0], torch.stack(states), rtol=1e-10, atol=1e-12)


def test_a_slot_trains_the_same_alone_or_padded_in_a_batch():
    L = 4
    E, seeds = _batch([3, 9], [5, 11], L)
    both = train_shapes(L, [3, 9], [5, 11], E, seeds, protocol=PROTOCOL)
    alone = train_shapes(L, [3], [5], E[:1, :5], seeds[:1], protocol=PROTOCOL)
    assert torch.allclose(both["outputs"][:, 0], alone["outputs"][:, 0], rtol=1e-10, atol=1e-13)


def test_the_hidden_error_is_max_over_layers_of_the_mean_over_coordinates():
    L, Ms, Ds = 6, [5, 5], [4, 7]
    E, seeds = _batch(Ms, Ds, L)
    lim = linear_limit(X, Y, steps=15, lr=0.1)
    out = train_shapes(L, Ms, Ds, E, seeds, protocol=PROTOCOL, targets=exact_targets(lim, L, E), keep_states=True)
    for b, D in enumerate(Ds):
        H = lim.paths(E[b, :D].numpy(), np.arange(L + 1) / L)  # (K, L + 1, D)
        want = np.abs(out["states"][:, :, b, :D].numpy() - H).mean(axis=2).max(axis=1)
        assert np.allclose(out["hidden"][:, b].numpy(), want, rtol=1e-10)


def _law_table(a, b, runs, seed, noise=0.1):
    """Cells of the cpu grid with per-run errors ``law x exp(noise N(0, 1) shared by run + noise N(0, 1)/2)``."""
    rng = np.random.default_rng(seed)
    L, M, D = (np.array(v, dtype=float) for v in zip(*[(l, m, d) for l in (64, 128) for m in (16, 32, 64, 128)
                                                        for d in (16, 32, 64, 128)]))
    e = law_value("hidden", [a, b, 0.0], L, M, D)[:, None]
    run = rng.normal(0, noise, (1, runs))
    return {"L": L, "M": M, "D": D, "values": e * np.exp(run + rng.normal(0, noise / 2, (len(L), runs)))}


def test_the_law_is_recovered_within_its_intervals():
    covered = 0
    for seed in range(10):
        t = _law_table(0.6, 0.35, 24, seed)
        fit = fit_with_intervals("hidden", t, resamples(24, 200, seed))
        (lo_a, hi_a), (lo_b, hi_b) = fit["intervals"][:2]
        covered += (lo_a <= 0.6 <= hi_a) and (lo_b <= 0.35 <= hi_b)
        assert fit["params"][0] == pytest.approx(0.6, rel=0.15) and fit["params"][1] == pytest.approx(0.35, rel=0.3)
    assert covered >= 7  # two 95% intervals: both hold about 90% of the time


@pytest.mark.parametrize("shift, verdict", [(0.0, AGREES), (0.4, DISAGREES), (0.1, INSUFFICIENT)])
def test_the_swap_test(shift, verdict):
    rng = np.random.default_rng(1)
    base = np.exp(rng.normal(0, 0.3, 40))  # a run's embeddings move both cells alike
    first = base * np.exp(rng.normal(0, 0.05, 40) + shift)
    second = base * np.exp(rng.normal(0, 0.05, 40))
    t = swap_test(first, second)
    assert t["verdict"] == verdict, t
    assert 0 <= t["power_agree"] <= 1 and 0 <= t["power_disagree"] <= 1
    assert swap_test(first[:2], second[:2])["verdict"] == INSUFFICIENT


def test_the_swap_test_says_no_more_than_its_level_on_equal_errors():
    """500 tables of equal cells (a run's spread as measured, 0.2 in log): 'disagrees' at most the level."""
    rng = np.random.default_rng(2)
    wrong = sum(swap_test(*np.exp(rng.normal(0, 0.2, (2, 16))))["verdict"] == DISAGREES for _ in range(500))
    assert wrong <= 500 * 0.05


def _ushape(a, b, ML, D, runs, seed, flat=False, b_data=None):
    rng = np.random.default_rng(seed)
    e = np.full(len(D), 0.3) if flat else np.sqrt(a * D / ML + (b if b_data is None else b_data) / D)
    values = e[:, None] * np.exp(rng.normal(0, 0.1, (1, runs)) + rng.normal(0, 0.05, (len(D), runs)))
    idx = resamples(runs, 200, seed)
    boot = np.tile([a, b, 0.0], (len(idx), 1)) * np.exp(rng.normal(0, 0.03, (len(idx), 1)))
    return ushape_test(D, values, idx, boot, ML)


def test_the_ushape_test_agrees_on_the_law_and_says_no_to_a_flat_curve():
    D = np.array([8, 16, 32, 64, 128, 256], dtype=float)
    assert _ushape(0.6, 0.35, 4096, D, 16, 0)["verdict"] == AGREES
    assert _ushape(0.6, 0.35, 4096, D, 16, 0, flat=True)["verdict"] == DISAGREES
    wide = np.geomspace(8, 4096, 10)
    moved = _ushape(0.6, 0.35, 4096, wide, 16, 0, b_data=0.35 * 16)  # the data's minimum 4 D* from the law's
    assert moved["verdict"] == DISAGREES and moved["shift"] == pytest.approx(math.log(4), abs=0.3)


@pytest.mark.parametrize("kw, param", [
    (dict(case="nope"), "case"), (dict(depths=[0]), "depths"), (dict(widths=[8, 8]), "widths"),
    (dict(dims=[5000]), "dims"), (dict(seeds=0), "seeds"), (dict(steps=1), "steps"), (dict(step=15), "step"),
    (dict(lr=-1.0), "lr"), (dict(fit_min=[1, 2]), "fit_min"), (dict(fit_min=[4096, 0, 0]), "fit_min"),
    (dict(chunk=0), "chunk")])
def test_bad_input_is_one_line_naming_the_parameter(kw, param):
    with pytest.raises(ParameterError) as e:
        plan_shapes(**kw)
    assert e.value.param == param and "\n" not in str(e.value)


@pytest.mark.slow
def test_a_quick_study_end_to_end(tmp_path):
    plan = plan_shapes(**PRESETS["quick"])
    result = plan.run()
    text = result.report()
    assert text.splitlines()[1].startswith("L <-> M swap") and "exact limit" in text
    assert len(result.cells) == 12 and all(c["finite"] == c["runs"] == 4 for c in result.cells)
    assert result.limit["outputs"][5] == pytest.approx(OUT5, abs=1e-8)
    again = type(result).from_dict(json.loads(result.to_json()))
    assert again.report() == text
    assert result.figures(str(tmp_path)) == [str(tmp_path / "shapes.png")] and (tmp_path / "shapes.png").exists()
    # the figure carries its verdicts, read again by today's rules (issue 56)
    from deeplimits.studies.figures import figure_results, stale_readings

    readings = {"swap": result.swap["verdict"], "ushape": result.ushape["verdict"]}
    assert again.readings() == readings and stale_readings(tmp_path / "shapes.png") == []
    [(carried, drawn)] = figure_results(tmp_path / "shapes.png")
    assert drawn == readings and carried.readings() == readings
    split = plan_shapes(**{**PRESETS["quick"], "chunk": 3}).run()  # other chunks: the same runs
    for c, d in zip(result.cells, split.cells):
        assert np.allclose(c["values"], d["values"], rtol=1e-9)


def test_the_tanh_case_reads_the_largest_network_of_the_same_runs():
    result = plan_shapes(**{**PRESETS["quick"], "case": "tanh"}).run()
    assert result.limit["kind"] == "reference" and result.limit["shape"] == [16, 16, 32]
    assert result.cell(16, 16, 32)["hidden"] == [0.0] * 15  # the reference itself
    assert all(c["hidden"][5] > 0 for c in result.cells if (c["L"], c["M"], c["D"]) != (16, 16, 32))
    assert "reference network (16, 16, 32) (tanh: no exact limit" in result.report()


def test_the_calibration_table_reads_its_counts():
    from deeplimits.studies.shapes.calibration import CalibrationResult

    case = {"verdict": "swap", "case": "linear", "correct": True, "counts": {"agrees": 9, "insufficient evidence": 1},
            "disagrees": 0.0, "agrees": 0.9, "intervals": {"disagrees": [0.0, 0.28], "agrees": [0.6, 0.98]},
            "power_agree": 0.8, "power_disagree": 0.9}
    text = CalibrationResult({"studies": 10, "seeds": 16, "seed": 0}, [case]).report()
    assert "swap     linear     size        0.000 [0.000, 0.280]    0.900 [0.600, 0.980]  0.80, 0.90" in text


def test_a_training_step_holds_little_beyond_its_parameters():
    """The memory model of one (499, 499, 499) network (measured in benchmarks/RESULTS.md)."""
    from deeplimits.studies.shapes.memory import step_bytes

    params = 2 * 499 ** 3 * 4
    assert step_bytes(499, 1, 499, 499, 4, padded=False) <= 1.01 * params


def test_a_partly_finished_run_summarises_its_finished_tasks():
    """A stored run with one chunk of runs missing (tasks of two depths done for the first chunk, of one
    for the second): the cells hold the runs they have, the swap pairs runs by their ids."""
    from deeplimits.studies.shapes.task import depth_task

    plan = plan_shapes(**{**PRESETS["quick"], "chunk": 2})
    tasks = plan.tasks()
    done = [t for t in tasks if t.params["first_run"] == 0 or t.params["depth"] == 8]
    result = plan.summarise(done, [depth_task(t.params, t.seed) for t in done])
    assert {c["runs"] for c in result.cells if c["L"] == 8} == {4} and {c["runs"] for c in result.cells
                                                                     if c["L"] == 16} == {2}
    assert all(t["runs"] == 2 for t in result.swap["tests"])


@pytest.mark.slow
def test_a_result_with_blown_up_runs_reports_and_reads_back():
    """A study where every run blows up (a rate far too large): counted, reported, NaN read back from JSON;
    with a linear activation the diverging limit is refused before any work."""
    with pytest.raises(ParameterError, match="the limit's training diverges at lr 10 over 15 steps") as e:
        plan_shapes(**{**PRESETS["quick"], "lr": 10.0})
    assert e.value.param == "lr"
    result = plan_shapes(**{**PRESETS["quick"], "lr": 10.0, "case": "tanh"}).run()
    blown = [i for i, c in enumerate(result.cells) if c["finite"] == 0]
    assert blown and "runs blew up (left out)" in result.report()
    again = type(result).from_dict(json.loads(result.to_json()))
    assert math.isnan(again.cells[blown[0]]["hidden"][5]) and again.report() == result.report()


def test_a_task_reports_its_networks_as_its_batches_finish():
    from deeplimits.studies.shapes.task import depth_task

    plan = plan_shapes(**PRESETS["quick"])
    task, seen = plan.tasks()[0], []
    depth_task(task.params, task.seed, progress=seen.append)
    assert len(seen) >= 1 and sum(seen) == plan.progress_units(task) == 4 * 2 * 3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_the_networks_train_on_a_cuda_device_as_the_plain_code_does():
    """On a GPU the weights are the CPU's numbers (drawn there and copied: a run is the same on every
    device, as benchmarks/gpu_check.py compares it); trained there, the batch is the plain transcription
    run on those weights."""
    L, Ms, Ds = 5, [4, 7], [6, 3]
    E, seeds = _batch(Ms, Ds, L)
    Ec = E.cuda()
    U, V = draw_weights(L, Ms, Ds, seeds, torch.float64, "cuda")
    for W, Wc in zip((U, V), draw_weights(L, Ms, Ds, seeds, torch.float64, "cpu")):
        assert W.device.type == "cuda"
        torch.testing.assert_close(W.cpu(), Wc)  # the same numbers (another sample would differ by O(1))
    out = train_shapes(L, Ms, Ds, Ec, seeds, protocol=PROTOCOL, keep_states=True)
    assert out["outputs"].device.type == "cuda"
    plain = _plain()
    for b, (M, D) in enumerate(zip(Ms, Ds)):
        u, v = (W[b, :, :D, :M].permute(1, 2, 0).cpu().numpy().copy() for W in (U, V))
        f, _ = plain(u, v, E[b, :D, :3].numpy(), E[b, :D, 3:].numpy(), X, Y)
        assert np.allclose(out["outputs"][:, b].cpu().numpy(), f, rtol=1e-9, atol=1e-12)
