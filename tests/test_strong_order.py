"""strong_order: any one-step map on the coupled driver path (issue 29). Each scheme's declared
expansion must fit its measured errors (a chi-square test at level 0.01) with its leading term
detected, and a wrong declaration must not: a scheme is tested against the truth, exact
solutions where there are some. Sizes: 512 to 1024 draws give standard errors of 2-3% per depth,
so a local slope between depths 64 and 128 has a 95% interval of about +-0.05."""

import math

import numpy as np
import pytest
import torch

import deeplimits as dl
from deeplimits.orders import StrongOrder, Term
from deeplimits.schemes.problems import linear_sde, linear_young, regime_noise, scheme_on
from deeplimits.schemes.sde import derivatives_along

DEPTHS = [8, 16, 32, 64, 128]
LEVEL = 0.01


def order_of(rate, kind="fluctuation"):
    return StrongOrder(rate, "declared by the test", "", kind=kind, next_terms=(Term(rate + 0.5),))


def accepted(r, rate):
    """The declared expansion fits, its leading term is the declared rate and is detected, and the
    95% profile interval of the leading exponent holds the rate. (That interval is wide over four
    or five depths, too wide for an agreement: ``insufficient evidence``; the power of the check is
    in the wrong declarations being refused.)"""
    f = r.fit
    assert f.rate == rate and f.pvalue >= LEVEL and r.verdict != "disagrees", r.report()
    assert f.coefficient_ci[0][0] > 0, r.report()
    lo, hi = f.exponent_ci
    assert lo <= rate <= hi, r.report()


@pytest.fixture(scope="module")
def gbm():
    return linear_sde(0.1, 0.5)


def run(scheme, problem, **kw):
    kw = {**dict(depths=DEPTHS, draws=1024, reference=2048, exact=problem.exact, seed=3), **kw}
    return dl.strong_order(scheme, [1.0] * problem.d, noise=problem.m, **kw)


def test_euler_maruyama_has_order_one_half(gbm):
    em, _ = scheme_on("euler-maruyama", "linear-sde")  # dX = 0.1 X dt + 0.5 X dW, with its error constant
    r = run(em, gbm)
    accepted(r, 0.5)
    # L^1/2 E|X_1 - h_L| -> e^0.1 0.5^2 / sqrt(pi) = 0.1559 (Kurtz & Protter); the exact reference is not nested.
    # Per-draw CV of |X_1 B'| is about 1.3: 1024 draws give a 4% standard error
    c = r.normalised_terminal()
    assert c["theory"] == pytest.approx(math.exp(0.1) * 0.25 / math.sqrt(math.pi))
    assert abs(c["value"] - c["theory"]) <= 3 * c["stderr"], r.report()
    assert r.regime == "scheme" and r.label == "euler-maruyama (d=1, 1 noise channel)"
    assert "the exact solution" in r.report()
    # declared order 1: the errors are not a L^-1 + b L^-3/2
    wrong = run(dl.Scheme.of(em, order_of(1.0), name="em-as-order-1"), gbm)
    assert wrong.verdict == "disagrees" and wrong.fit.pvalue < 1e-6


def test_milstein_has_order_one_on_diagonal_noise(gbm):
    mil = dl.Milstein(gbm.drift, gbm.diffusion, noise="diagonal")
    accepted(run(mil, gbm), 1.0)
    # declared 1/2, it is faster: a L^-1/2 + b L^-1 does not describe it (here it does not fit at all;
    # where it fits, its leading coefficient is not detected: "pre-asymptotic"), never "agrees"
    slow = run(dl.Milstein(gbm.drift, gbm.diffusion, noise="general", derivative=gbm.derivative), gbm)
    assert slow.verdict != "agrees"


def test_milstein_has_order_one_half_on_the_sde_regimes_noise():
    # the sde regime's general noise (d = 2, 4 channels): without Lévy areas Milstein is order 1/2,
    # against itself on a grid 8 times finer than the deepest depth (the nested reference)
    p = regime_noise(2)
    kw = dict(noise=p.m, depths=[8, 16, 32, 64], draws=512, reference=512, seed=1)
    r = dl.strong_order(dl.Milstein(None, p.diffusion, noise="general", derivative=p.derivative), [1.0, -0.5], **kw)
    accepted(r, 0.5)
    assert "milstein on the grid 1/512" in r.report()
    told = dl.strong_order(dl.Milstein(None, p.diffusion, noise="commutative", derivative=p.derivative),
                           [1.0, -0.5], **kw)
    # declared order 1: on 4 depths its 3 terms leave no degree of freedom to try the next one, so the
    # misfit is not yet evidence against the order; on 5 depths it fits not even with it
    assert told.verdict == "insufficient evidence" and "at least 5 depths would decide" in told.fit.note
    sized = dl.strong_order(dl.Milstein(None, p.diffusion, noise="commutative", derivative=p.derivative),
                            [1.0, -0.5], **kw, budget=60)
    assert [s["draws"] for s in sized.stages] == [512]  # more draws cannot decide it: the sized run stops
    told = dl.strong_order(dl.Milstein(None, p.diffusion, noise="commutative", derivative=p.derivative),
                           [1.0, -0.5], **{**kw, "depths": [8, 16, 32, 64, 128], "reference": 1024})
    assert told.verdict == "disagrees" and "not even with its next term" in told.fit.note


def test_closed_form_derivatives_are_the_automatic_ones():
    x = torch.randn(7, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    p = regime_noise(3)
    assert torch.allclose(derivatives_along(p.diffusion, 0.0, x), p.derivative(0.0, x), rtol=1e-12, atol=1e-15)
    q = linear_sde(0.1, 0.5)
    assert torch.allclose(derivatives_along(q.diffusion, 0.0, x[:, :1]), q.derivative(0.0, x[:, :1]), rtol=1e-12)


def test_heun_has_order_one_on_a_commutative_stratonovich_sde():
    strat = linear_sde(0.1, 0.5, stratonovich=True)
    heun = dl.Heun(strat.drift, strat.diffusion, noise="diagonal")
    accepted(run(heun, strat), 1.0)
    # against the Itô solution of the same coefficients Heun converges to another limit: no rate
    ito = linear_sde(0.1, 0.5)
    assert run(heun, ito).verdict == "disagrees"


class LinearSDE:
    """``dX = a X dt + b X dW`` for torchsde (diagonal noise, Itô)."""

    noise_type, sde_type = "diagonal", "ito"

    def f(self, t, y):
        return 0.1 * y

    def g(self, t, y):
        return 0.5 * y


@pytest.mark.parametrize("method, ours", [("euler", "EulerMaruyama"), ("milstein", "Milstein")])
def test_a_torchsde_solver_runs_on_the_same_path(gbm, method, ours):
    kw = dict(depths=[8, 16, 32, 64], draws=256)
    theirs = run(dl.TorchsdeScheme(LinearSDE(), method), gbm, **kw)
    mine = run(getattr(dl, ours)(gbm.drift, gbm.diffusion, noise="diagonal"), gbm, **kw)
    # the same path and the same arithmetic up to the order of operations: equal to rounding
    np.testing.assert_allclose(theirs.error, mine.error, rtol=1e-9)
    np.testing.assert_allclose(theirs.terminal_error, mine.terminal_error, rtol=1e-9)
    assert theirs.theory_rate == (0.5 if method == "euler" else 1.0) and theirs.fit.pvalue >= LEVEL
    assert theirs.label.startswith(f"torchsde-{method}")


def test_modified_euler_on_a_linear_young_equation():
    # H = 0.6: a L^-0.7 (a fluctuation) + b L^-1, against the exact solution x0 exp(B^H)
    p = linear_young()
    r = run(dl.ModifiedEuler(p.diffusion, hurst=0.6), p)
    accepted(r, 0.7)
    assert r.hurst == 0.6 and "fBm path" in r.report()
    # the plain Euler step declared with the modified scheme's order: its L^(1-2H) = L^-0.2 term is missing
    euler = dl.Scheme.of(lambda h, dB, t, dt: h + h * dB, dl.ModifiedEuler(p.diffusion, 0.6).order, hurst=0.6)
    assert run(euler, p).verdict == "disagrees"


def test_result_round_trips_and_plots(gbm, tmp_path):
    r = run(dl.EulerMaruyama(gbm.drift, gbm.diffusion), gbm, depths=[8, 16, 32], draws=64)
    back = type(r).from_dict(r.to_dict())
    assert back.verdict == r.verdict and back.fit.coefficients == pytest.approx(r.fit.coefficients)
    assert back.nested_reference is False and back.options == {"noise": 1}
    r.plot(str(tmp_path / "em.png"))
    assert (tmp_path / "em.png").stat().st_size > 0


@pytest.mark.parametrize("kw, message", [
    (dict(scheme=3), "scheme must be a callable"),
    (dict(scheme=lambda h, w, t, dt: h), "order must be a deeplimits.StrongOrder"),
    (dict(x0="a"), "x0 must be the initial state"),
    (dict(noise=0), "noise must be an integer >= 1"),
    (dict(reference=64), r"reference must be at least 2 \* max\(depths\) = 256"),
    (dict(hurst=1.5), "hurst must lie in"),
    (dict(exact=1), "exact must be a callable or None"),
])
def test_bad_arguments_are_refused_before_any_work(gbm, kw, message):
    args = dict(scheme=dl.EulerMaruyama(gbm.drift, gbm.diffusion), x0=[1.0])
    args.update(kw)
    with pytest.raises(ValueError, match=message):
        dl.strong_order(args.pop("scheme"), args.pop("x0"), depths=[8, 16, 32, 64, 128], **args)


def test_scheme_declarations_are_checked():
    with pytest.raises(ValueError, match="noise must be one of 'general', 'commutative', 'diagonal', 'additive'"):
        dl.Milstein(None, lambda t, x: x[..., None], noise="scalar")
    with pytest.raises(ValueError, match="method must be one of"):
        dl.TorchsdeScheme(LinearSDE(), "srk")
    with pytest.raises(ValueError, match="hurst must lie in"):
        dl.ModifiedEuler(lambda t, x: x[..., None], hurst=0.4)
    assert dl.EulerMaruyama(None, lambda t, x: x[..., None], noise="additive").order.rate == 1.0


def test_the_order_command(tmp_path, capsys):
    from deeplimits.cli import main

    out = tmp_path / "r.json"
    assert main(["order", "--scheme", "heun", "--problem", "linear-stratonovich", "--depths", "8,16,32,64",
                 "--draws", "256", "--reference", "256", "--json", str(out), "--out", str(tmp_path / "run")]) == 0
    import json

    d = json.loads(out.read_text())
    assert d["regime"] == "scheme" and d["activation"] == "heun" and d["theory_rate"] == 1.0
    assert d["fit"]["pvalue"] >= LEVEL and (tmp_path / "run" / "order.png").exists()
    assert json.loads((tmp_path / "run" / "result.json").read_text()) == d
    assert "heun (d=1, 1 noise channel)" in capsys.readouterr().out
    assert main(["order", "--scheme", "milstein", "--problem", "linear-young", "--hurst", "0.7"]) == 2
    assert "does not apply to problem 'linear-young'" in capsys.readouterr().err
    assert main(["order", "--scheme", "modified-euler", "--problem", "linear-young"]) == 2
    assert "hurst must be given for problem 'linear-young'" in capsys.readouterr().err


def test_command_line_names_are_the_librarys():
    from deeplimits import _names
    from deeplimits.schemes import NOISES
    from deeplimits.schemes.problems import PROBLEMS, scheme_on

    assert _names.PROBLEMS == tuple(PROBLEMS) and _names.NOISES == NOISES
    for name in _names.SCHEMES:  # every shipped scheme runs on some problem
        problem = "linear-young" if name == "modified-euler" else "linear-sde"
        scheme, p = scheme_on(name, problem, hurst=0.7 if problem == "linear-young" else None)
        assert callable(scheme) and scheme.order.rate > 0 and p.exact is not None


def test_bad_states_and_drivers_are_refused_in_one_line():
    # issue 38: an empty state, a rough driver (H < 1/2) for a scheme, a step of the wrong shape
    em = dl.EulerMaruyama(None, lambda t, x: x[..., None], noise="diagonal")
    with pytest.raises(ValueError, match="x0 must be the initial state, d >= 1 numbers"):
        dl.strong_order(em, [], depths=[8, 16], draws=4)
    with pytest.raises(ValueError, match=r"hurst must lie in \(0.5, 1\)"):
        dl.strong_order(em, [1.0], depths=[8, 16], draws=4, hurst=0.3)
    for wrong, got in ((lambda h, w, t, dt: h[:, 0], r"\(4,\)"), (lambda h, w, t, dt: h[:, :0], r"\(4, 0\)")):
        with pytest.raises(ValueError, match=rf"scheme must return the next state.*\(4, 1\), got {got}"):
            dl.strong_order(dl.Scheme.of(wrong, dl.StrongOrder(0.5, "", "")), [1.0], depths=[8, 16, 32], draws=4)


def test_a_blow_up_is_a_result_without_warnings(recwarn):
    blow = dl.Scheme.of(lambda h, w, t, dt: h * 1e30 + w, dl.StrongOrder(0.5, "", ""))
    r = dl.strong_order(blow, [1.0], depths=[8, 16, 32], draws=8)
    assert r.verdict == "insufficient evidence" and "only 0 of 8 draws finite" in r.verdict_note
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_order_writes_into_out_like_the_other_commands(tmp_path, monkeypatch, capsys):
    """``deeplimits order`` writes ``order.png`` and ``result.json`` into ``--out DIR`` (default
    ``runs/order-<hash of the options>``, as convergence's ``runs/convergence-<hash>``); the
    former ``--figure PATH`` (a rename shim of 0.1) is gone."""
    from deeplimits.cli import main

    monkeypatch.chdir(tmp_path)
    argv = ["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--depths", "4,8,16", "--draws", "16"]
    assert main(argv) == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("order-") and sorted(p.name for p in run.iterdir()) == ["order.png", "result.json"]
    out = capsys.readouterr()
    assert out.out.splitlines()[-1] == f"wrote runs/{run.name}/order.png, runs/{run.name}/result.json"
    assert main(argv + ["--seed", "3"]) == 0 and len(list((tmp_path / "runs").iterdir())) == 2  # other options
    capsys.readouterr()
    assert main(argv + ["--out", "mine"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "wrote mine/order.png, mine/result.json"
    assert main(argv + ["--figure", "f.png"]) == 2  # the rename shim is gone (--figures takes no path)
    assert "unrecognized arguments: f.png" in capsys.readouterr().err
    from deeplimits.cli import build_parser

    text = build_parser()._subparsers._group_actions[0].choices["order"].format_help()
    assert "--out DIR" in text and "--figure PATH" not in text and "--no-figures" in text
