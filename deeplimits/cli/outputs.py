"""What a command writes: JSON (a file, or ``-`` for standard output), CSV, figures, and where
the human report goes (standard error when standard output carries the JSON or CSV)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .errors import UsageError, one_line

STDOUT = "-"

__all__ = ["STDOUT", "check_outputs", "check_file", "report_stream", "dump_json", "write_json", "figure_flag",
           "figure_mode", "figures_wanted", "draw_figures", "listed", "in_background", "write_convergence",
           "write_study", "write_training"]


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
                   help="draw the figures into the output directory after the JSON is written and wait for them "
                        "(without the flag they are drawn after the JSON too, in the background: the command ends "
                        "first); --no-figures: the JSON and the report alone (scripts; 'deeplimits runs plot DIR' "
                        "draws them from a stored run later)")


#: whether a command may draw its figures in the background: only the ``deeplimits`` process itself
#: (:func:`deeplimits.cli.main` called for ``sys.argv``), on Linux (``os.fork``: the child has the
#: finished result, imports nothing again); a call of ``main([...])`` in a session waits for them
BACKGROUND = {"allowed": False}


def figure_mode(args) -> str:
    """How a command that draws by default draws: ``'none'`` (``--no-figures``), ``'now'``
    (``--figures``, or where the background is not allowed, or with a Dask cluster) or ``'background'``."""
    given = getattr(args, "figures", None)
    if given is False:
        return "none"
    cluster = getattr(args, "workers", None) or getattr(args, "scheduler", None)
    allowed = BACKGROUND["allowed"] and sys.platform.startswith("linux") and hasattr(os, "fork") and not cluster
    return "background" if given is None and allowed else "now"


def figures_wanted(args) -> bool:
    """Whether a command draws its figures: unless ``--no-figures`` was given."""
    return figure_mode(args) != "none"


def _mode(figures) -> str:
    return {True: "now", False: "none"}.get(figures, figures) if isinstance(figures, bool) else figures


def draw_figures(draw, out: str, figures) -> list[str]:
    """The figures ``draw(directory) -> paths`` draws into ``out``, by ``figures`` (a mode of
    :func:`figure_mode`, or True / False): now (their paths), none, or in the background: a child
    process (``os.fork``, after the JSON is written and the store closed) draws them into a
    directory of its own inside ``out`` and moves each into ``out`` when it is whole; the command
    goes on and ends without waiting (one line, ``figures-error.txt``, if the drawing fails)."""
    mode = _mode(figures)
    if mode == "none":
        return []
    if mode == "now":
        return draw(out)
    in_background(lambda: _draw_then_move(draw, out))
    return [BACKGROUND_NOTE.format(out=out)]


#: what a command says of figures drawn in the background (last, after the files it wrote)
BACKGROUND_NOTE = "and its figures in the background, into {out} (--figures waits for them)"


def listed(figures: list, written: list) -> list:
    """The figures' paths, then the files written, then a note of figures drawn in the background."""
    note = [f for f in figures if f.startswith("and its figures")]
    return [f for f in figures if f not in note] + written + note


def _draw_then_move(draw, out: str) -> None:
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix=".figures-", dir=out)
    try:
        for path in draw(tmp):
            os.replace(path, os.path.join(out, os.path.basename(path)))
    except Exception as e:  # noqa: BLE001 - the command has ended: the reason is left beside its JSON
        with open(os.path.join(out, "figures-error.txt"), "w") as f:
            f.write(f"{type(e).__name__}: {one_line(e)}\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def in_background(work) -> int:
    """``work()`` in a child process (``os.fork``) whose standard streams are closed (a pipe reading
    the command's output ends with the command); the child's id (the caller does not wait for it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        work()
        code = 0
    finally:
        os._exit(code)  # no interpreter shutdown: nothing of the parent's (its store, its files) is touched


def write_convergence(results, out, json_path, *, as_list, figures=True) -> list[str]:
    """The JSON of convergence results and, by ``figures`` (:func:`draw_figures`), their figure
    drawn after it from the results (also used to redraw a stored run)."""
    payload = [r.to_dict() for r in results] if as_list else results[0].to_dict()
    os.makedirs(out, exist_ok=True)
    written = dump_json(payload, out, json_path)

    def draw(into):
        from ..studies.convergence.plots import plot_convergence

        png = os.path.join(into, "convergence.png")
        plot_convergence(results, path=png)
        return [png]
    return listed(draw_figures(draw, out, figures), written)


def write_study(result, out, json_path, *, figures=True) -> list[str]:
    """The JSON of a study's result and, by ``figures`` (:func:`draw_figures`), the figures it draws
    (``result.figures(directory)``), after the JSON is written: from the result, never from the data again."""
    os.makedirs(out, exist_ok=True)
    written = dump_json(result.to_dict(), out, json_path)
    return listed(draw_figures(result.figures, out, figures), written)  # each result draws its own


def write_training(result, plan, out, json_path, *, figures=True) -> list[str]:
    """The JSON of a training grid and, by ``figures`` (:func:`draw_figures`), after it: the heat map
    for more than one (H, beta); the weight coordinates against the layer when the trained weights
    are stored (read from ``out``)."""
    os.makedirs(out, exist_ok=True)
    written = dump_json(result.to_dict(), out, json_path)

    def draw(into):
        from ..studies.training.plots import plot_weight_paths
        from ..studies.training.trained import weight_paths

        figs = []
        if len(result.best) > 1:
            figs.append(os.path.join(into, "heatmap.png"))
            result.plot(figs[-1])
        panels = weight_paths(plan, out, result) if plan.arch != "conv" else []  # dense layers' coordinates only
        if panels:
            figs.append(os.path.join(into, "weights.png"))
            plot_weight_paths(panels, path=figs[-1])
        return figs
    return listed(draw_figures(draw, out, figures), written)


def strict_json(payload):
    """``payload`` with every non-finite float as ``None`` (strict JSON)."""
    from .._plain import strict

    return strict(payload)


def write_records_json(records, path) -> None:
    """The records of a run store as JSON at ``path`` (``-``: standard output)."""
    _write_json(records, path)


