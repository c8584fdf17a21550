"""The limit beside the transfer (docs/transfer.md, "The limit beside it"): for each rescaled
setting of a transfer study whose ``beta`` has a limit to test (:data:`FAMILIES`), the depth
family trained at the transferred rate with the trained-limit machinery
(:func:`~deeplimits.studies.trained_limit.study.train_depth_family`, docs/trained-limit.md).

The transferred rate is the one the verdict reads: the smallest depth's optimal base rate
``2^o`` (:func:`~.fit.fit_optima`), the blocks of depth ``L`` training at ``2^o L^p`` with ``p``
the predicted exponent. The family is the transfer study's network (res-1 tanh of the study's
width, its embedding and readout fixed random maps, cross-entropy on the same digits, the same
mini-batches and epochs; in float64, as the trained-limit study, whatever the grid's dtype: the
distances are differences of nearby numbers), its residual weights read off ONE driver sample at
every depth and at the reference depth :attr:`~.study.TransferPlan.limit`: a smooth function of
``k/L`` at ``beta = 1`` (the ODE limit of Sander et al. 2022 and Marion et al. 2024), i.i.d. Gaussian
weights read off one Brownian path at ``beta = 1/2`` (the states' SDE limit; the weights have
none). Its distances to the reference, their rates against ``L`` and the family's verdict are
:func:`~deeplimits.studies.trained_limit.result.summarise_case`'s. One task per setting, run
after the grid (its rate reads the grid's optimum), stored in the same run store.
"""

from __future__ import annotations

import time

from ... import _validate as V_
from ..._random import chunk_seed
from ...errors import ParameterError
from ...runs import Task

__all__ = ["FAMILIES", "CHECKPOINTS", "check_limit", "limit_settings", "limit_key", "limit_tasks", "limit_checkpoints",
           "train_limit", "run_limit", "stored_limits", "attach_stored", "limit_lines", "plot_limit"]

FAMILIES = {
    1.0: dict(arch="res-1", activation="tanh", driver="smooth", beta=1.0, coupled=True, theory=1.0,
              label="smooth initial weights, beta = 1: an ODE limit (the Euler rate 1)"),
    0.5: dict(arch="res-1", activation="tanh", driver="gaussian", beta=0.5, coupled=True, theory=None,
              label="i.i.d. Gaussian initial weights read off one Brownian path, beta = 1/2 (states: an SDE "
                    "limit; weights: none)"),
}
"""The families by ``beta`` (the keys of :data:`~deeplimits.studies.trained_limit.presets.CASES`):
the other scalings have no limit to test and are left out."""

CHECKPOINTS = 4
"""The most measurements of a family along training (:func:`limit_checkpoints`)."""

_SEED_OFFSET = 1 << 20  # the limit tasks' seeds: chunk_seed(seed, offset + i), apart from the grid's


def check_limit(limit, depths, betas) -> int | None:
    """``limit``: ``None`` (no limit family) or the reference depth, deeper than every depth,
    each depth dividing it, a power of two when a ``beta = 1/2`` family reads a Brownian path;
    ``betas`` must hold one of :data:`FAMILIES`."""
    if limit is None:
        return None
    limit = V_.integer("limit", limit, low=max(depths) + 1, high=1 << 16)
    if not any(b in FAMILIES for b in betas):
        have = ", ".join(f"{b:g}" for b in FAMILIES)
        raise ParameterError("limit", f"limit needs a beta with a limit to test ({have}), got betas {list(betas)}")
    for L in depths:
        if limit % L:
            raise ParameterError("limit", f"limit must be a multiple of every depth (the family's layers sit "
                                          f"on the reference's), got {limit} for depth {L}")
    if 0.5 in betas:
        V_.power_of_two("limit", limit)
    return limit


def limit_settings(plan) -> list[tuple[float, str]]:
    """``(beta, optimizer)`` of the plan that get a limit family (none without :attr:`limit`)."""
    if plan.limit is None:
        return []
    return [(b, o) for b in plan.betas if b in FAMILIES for o in plan.optimizers]


def limit_key(beta: float, optimizer: str) -> str:
    """The run-store key of the limit task of ``(beta, optimizer)``."""
    return f"transfer/beta-{beta:g}/{optimizer}/limit"


def limit_tasks(plan, result) -> list:
    """One task per :func:`limit_settings` whose rescaled setting of ``result`` has an optimum:
    the transferred rate ``2^o`` (base) and the exponent ``p`` in its parameters."""
    base = {k: v for k, v in plan.to_dict().items() if k not in ("study", "betas", "optimizers", "lrs")}
    out = []
    for i, (b, o) in enumerate(limit_settings(plan)):
        row = next((r for r in result.settings if (r["beta"], r["optimizer"], r["variant"]) == (b, o, "rescaled")),
                   None)
        if row is None or "optimum" not in row:
            continue
        out.append(Task(limit_key(b, o), "transfer-limit",
                        {**base, "beta": b, "optimizer": o, "rate": row["optimum"][0], "exponent": row["exponent"]},
                        chunk_seed(plan.seed, _SEED_OFFSET + i)))
    return out


def limit_checkpoints(epochs: int) -> tuple[int, ...]:
    """The epochs after which a family is measured along training (and after the last): at most
    :data:`CHECKPOINTS`, spread evenly (the trained-limit study's rule)."""
    from .._shared.families import checkpoints

    return checkpoints(epochs, min(epochs, CHECKPOINTS))


def train_limit(data, params: dict, seed: int) -> dict:
    """One setting's family (a limit task's ``params``) trained at its transferred rate on
    ``data`` and measured against the reference
    (:func:`~deeplimits.studies.trained_limit.study.train_depth_family`), on one thread; the
    sweep task ``transfer-limit`` of :mod:`.study` calls it. Returns
    :func:`~deeplimits.studies.trained_limit.study.train_depth_family`'s records with the
    ``rate`` (``log2`` of the base rate) and ``exponent`` trained at and the ``seconds``."""
    from ..._random import single_threaded_torch
    from .._shared.families import train_depth_family

    marks = limit_checkpoints(params["epochs"])
    family = {**FAMILIES[params["beta"]], "lr_exponent": params["exponent"], "width": params["width"]}
    if params.get("arch"):  # a registered block of the plan's in place of res-1 tanh
        family.update(arch=params["arch"], activation=params.get("activation"))
    t0 = time.perf_counter()
    with single_threaded_torch():
        out = train_depth_family(family, data, depths=params["depths"], reference=params["limit"],
                                 seeds=params["seeds"], epochs=params["epochs"], lr=2.0 ** params["rate"],
                                 optimizer=params["optimizer"], batch_size=params["batch_size"], seed=seed,
                                 shuffle_seed=params["seed"], checkpoints=marks)
    out.update(seconds=time.perf_counter() - t0, rate=params["rate"], exponent=params["exponent"])
    return out


def _attach(result, tasks, results) -> None:
    """Each task's summary into its setting of ``result`` (``row['limit']``; the rate the task
    trained at, from its result: a store rebuilt from a partial grid may read another optimum)."""
    from ..trained_limit.result import summarise_case

    for t, r in zip(tasks, results):
        p = t.params
        row = result.setting(p["beta"], p["optimizer"], "rescaled")
        family = summarise_case(f"beta-{p['beta']:g}-{p['optimizer']}", FAMILIES[p["beta"]], r["records"],
                                p["depths"], p["limit"])
        rate, exponent = r.get("rate", p["rate"]), r.get("exponent", p["exponent"])
        row["limit"] = {"reference": p["limit"], "rate": rate, "exponent": exponent, "family": family}


def run_limit(plan, result, progress=None, *, store=None, workers=None, scheduler=None, timeout=None):
    """Run the limit tasks of ``result`` (the grid's, :meth:`~.study.TransferPlan.run`) not yet
    in ``store`` and add their summaries and compute time to it; ``progress`` (``None`` or a
    function) is called with 1 as each task this call runs finishes."""
    from ...runs import run_sweep

    tasks = limit_tasks(plan, result)
    if not tasks:
        return result
    t0 = time.perf_counter()
    stored = set(store.results()) if store is not None else set()
    before = plan._stored_seconds(store, stored & {t.key for t in tasks})

    def report(task):  # the work of this call only (stored tasks are counted by stored_limits)
        if task.key not in stored:
            progress(1)

    done = run_sweep(tasks, store, workers=workers, scheduler=scheduler, timeout=timeout,
                     progress=None if progress is None else report)
    _attach(result, tasks, [done[t.key] for t in tasks])
    result.seconds += before + time.perf_counter() - t0
    return result


def stored_limits(plan, store) -> int:
    """The limit tasks of ``plan`` already finished in ``store`` (a resumed run's progress)."""
    if store is None:
        return 0
    stored = store.results()
    return sum(limit_key(b, o) in stored for b, o in limit_settings(plan))


def attach_stored(plan, result, done: dict, seconds: dict):
    """``result`` (rebuilt from a store) with the limit tasks finished among ``done``."""
    tasks = [t for t in limit_tasks(plan, result) if t.key in done]
    _attach(result, tasks, [done[t.key] for t in tasks])
    result.seconds += sum(seconds.get(t.key) or 0.0 for t in tasks)
    return result


def limit_lines(limit: dict) -> list[str]:
    """The report's lines of one setting's family (the trained-limit study's lines, indented)."""
    from ..trained_limit.report import case_lines

    head = (f"  the limit beside it (docs/trained-limit.md): the family at the transferred rate 2^{limit['rate']:.2f} "
            f"L^{limit['exponent']:g}, reference depth {limit['reference']}, {limit['family']['label']}")
    return [head] + ["    " + line for line in case_lines(limit["family"])[1:]]


def plot_limit(result, path: str | None = None, *, ax=None):
    """The families of a transfer result with :attr:`~.study.TransferPlan.limit` drawn as the
    trained-limit study draws its cases
    (:func:`~deeplimits.studies.trained_limit.plots.plot_trained_limit`: one column per setting,
    the distances against depth, the state distance against the training time)."""
    from ..trained_limit.plots import plot_cases

    cases = [s["limit"]["family"] for s in result.settings if "limit" in s]
    if not cases:
        raise ParameterError("result", "result has no limit families: run the study with limit=R (--limit R)")
    return plot_cases(cases, path=path, ax=ax, carried=[result])  # the figure carries the families' verdicts
