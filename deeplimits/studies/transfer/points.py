"""The measured points of a transfer study as tidy rows (:meth:`.result.TransferResult.points`,
:mod:`~deeplimits.studies._shared.points`)."""

from __future__ import annotations

import math

from .._shared.points import point, setting

__all__ = ["transfer_points"]


def transfer_points(result) -> list[dict]:
    """Per setting and depth: ``final_loss`` at each base rate (``log2_base_lr`` in the setting),
    ``optimal_log2_base_lr`` and ``optimal_log2_lr`` (the base optimum times ``L^p``) with their
    90% intervals, ``loss_gap`` with its interval, and the coordinate check's ``h_L`` and ``block`` means."""
    out = []
    for r in result.settings:
        where = setting(beta=r["beta"], optimizer=r["optimizer"], variant=r["variant"])
        for j, L in enumerate(r["depths"]):
            out += [point("transfer", f"{where}, log2_base_lr={lr:g}", L, "final_loss", v)
                    for lr, v in zip(r["lrs"], r["curves"][j])]
            if "optimum" in r:
                shift = r["exponent"] * math.log2(L)
                lo, hi = r["optimum_ci"][j]
                out += [point("transfer", where, L, "optimal_log2_base_lr", r["optimum"][j], ci=(lo, hi)),
                        point("transfer", where, L, "optimal_log2_lr", r["optimum"][j] + shift, ci=(lo + shift, hi + shift)),
                        point("transfer", where, L, "loss_gap", r["loss_gap"][j], ci=r["loss_gap_ci"][j])]
            out += [point("transfer", where, L, f"coordinate_{k}", r["coords"][k]["mean"][j]) for k in ("h_L", "block")]
    return out
