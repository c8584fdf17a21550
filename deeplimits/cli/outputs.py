"""What a command writes: JSON (a file, or ``-`` for standard output), CSV, figures, and where
the human report goes (standard error when standard output carries the JSON or CSV)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .errors import UsageError, one_line

STDOUT = "-"

__all__ = ["STDOUT", "check_outputs", "check_file", "report_stream", "dump_json", "write_json", "figure_flag", "figures_wanted",
           "write_convergence", "write_study", "write_training"]


def report_stream(*paths):
    """Where the human report goes: standard error when one of ``paths`` is ``-`` (standard
    output then carries the machine-readable result alone), else standard output."""
    return sys.stderr if STDOUT in paths else sys.stdout


def check_file(cmd: str, flag: str, path) -> None:
    """``path`` (a file, not ``-``) writable: probed, what the probe creates it removes."""
    from .. import _validate as V

    if path is None or path == STDOUT:
        return
    try:
        V.writable_file(flag, path)
    except ValueError as e:
        raise UsageError(f"deeplimits {cmd}: {one_line(e)}") from None


def check_outputs(args, cmd: str, out: str) -> None:
    """``--out`` and ``--json`` writable (probed: created and removed), before any work or store."""
    from .. import _validate as V

    try:
        V.writable_dir("--out", out)
    except ValueError as e:
        raise UsageError(f"deeplimits {cmd}: {one_line(e)}") from None
    check_file(cmd, "--json", args.json)


def _write_json(payload, path) -> None:
    if path == STDOUT:
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
        sys.stdout.flush()
        return
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(payload, f, indent=2)


def write_json(payload, path) -> str:
    """``payload`` as JSON at ``path`` (``-``: standard output); what was written, in words."""
    _write_json(payload, path)
    return "standard output" if path == STDOUT else path


def dump_json(payload, out, json_path) -> list[str]:
    """``payload`` as ``out/result.json`` and, when given, at ``json_path`` (``-``: standard
    output); the paths written."""
    paths = [os.path.join(out, "result.json")] + ([json_path] if json_path else [])
    for path in paths:
        _write_json(payload, path)
    return ["standard output" if p == STDOUT else p for p in paths]


def figure_flag(p) -> None:
    """``--figures/--no-figures`` of a command that draws its figures by default (``--no-figures``:
    the JSON and the report alone, for scripts; 'deeplimits runs plot DIR' draws them later)."""
    p.add_argument("--figures", action=argparse.BooleanOptionalAction, default=None,
                   help="draw the figures into the output directory after the JSON is written, as without the "
                        "flag; --no-figures: the JSON and the report alone (scripts; 'deeplimits runs plot DIR' "
                        "draws them from a stored run later)")


def figures_wanted(args) -> bool:
    """Whether a command draws its figures: unless ``--no-figures`` was given."""
    return getattr(args, "figures", None) is not False


def write_convergence(results, out, json_path, *, as_list, figures: bool = True) -> list[str]:
    """The JSON of convergence results and, with ``figures``, their figure drawn after it from the
    results (also used to redraw a stored run)."""
    payload = [r.to_dict() for r in results] if as_list else results[0].to_dict()
    os.makedirs(out, exist_ok=True)
    written = dump_json(payload, out, json_path)
    if not figures:
        return written
    from ..plots import plot_convergence

    png = os.path.join(out, "convergence.png")
    plot_convergence(results, path=png)
    return [png] + written


def write_study(result, out, json_path, *, figures: bool = True) -> list[str]:
    """The JSON of a study's result and, with ``figures``, the figures it draws (``result.figures(out)``),
    after the JSON is written: from the result, never from the data again."""
    os.makedirs(out, exist_ok=True)
    written = dump_json(result.to_dict(), out, json_path)
    if not figures:
        return written
    return result.figures(out) + written  # each result draws its own (a new study needs no line here)


def write_training(result, plan, out, json_path, *, figures: bool = True) -> list[str]:
    """The JSON of a training grid and, with ``figures``, after it: the heat map for more than one
    (H, beta); the weight coordinates against the layer when the trained weights are stored."""
    os.makedirs(out, exist_ok=True)
    written = dump_json(result.to_dict(), out, json_path)
    if not figures:
        return written
    from ..plots import plot_weight_paths
    from ..studies.training.trained import weight_paths

    figs = []
    if len(result.best) > 1:
        figs.append(os.path.join(out, "heatmap.png"))
        result.plot(figs[-1])
    panels = weight_paths(plan, out, result) if plan.arch != "conv" else []  # dense layers' coordinates only
    if panels:
        figs.append(os.path.join(out, "weights.png"))
        plot_weight_paths(panels, path=figs[-1])
    return figs + written


def strict_json(payload):
    """``payload`` with every non-finite float as ``None`` (strict JSON)."""
    from .._plain import strict

    return strict(payload)


def write_records_json(records, path) -> None:
    """The records of a run store as JSON at ``path`` (``-``: standard output)."""
    _write_json(records, path)


