"""``deeplimits weights PATH...``: diagnostics of layer-indexed weights (docs/weights.md), and
with several depths of one tensor the exponents of their scaling. Convolution kernels (a tensor
``(L, c_out, c_in, kh, kw)``, or kernels in stages) are measured by the spectral norms of their
convolutions on ``--grid`` (without it: the grids a deeplimits convolutional network gives, or
the default). Outputs, as every command's: ``--out DIR`` (default ``runs/weights-<hash of the paths
and options>``) holds the figure ``weights.png`` and ``result.json``; ``--json PATH`` is a copy of
the JSON."""

from __future__ import annotations

import argparse
import os

from . import dry_run, outputs
from .execution import default_out
from .errors import UsageError, one_line, usage

__all__ = ["run_weights_cmd", "add_parser"]


def _diagnose(A, beta: float, grid, name: str):
    """The diagnostics of one tensor, or of convolution kernels on spectral norms (``grid``:
    ``--grid``, ``None`` when not given)."""
    from ..diagnostics import ConvKernels, conv_weight_diagnostics, weight_diagnostics
    from ..studies import presets

    if isinstance(A, ConvKernels):
        if grid is None and A.input_sizes is not None:
            return conv_weight_diagnostics(A, None, beta=beta, name=name)
        return conv_weight_diagnostics(A.stages, presets.CONV_GRID if grid is None else grid, beta=beta, name=name)
    if A.dim() == 5:  # (L, c_out, c_in, kh, kw): one stage of convolution kernels
        return conv_weight_diagnostics(A, presets.CONV_GRID if grid is None else grid, beta=beta, name=name)
    return weight_diagnostics(A, beta=beta, name=name)


def _figure(tensors: list, families: dict, into: str) -> list[str]:
    """``weights.png`` in the directory ``into``: Figs. 7-8 of the convolution kernels' families
    when there are any, else the first coordinates of each tensor against k/L; its path."""
    path = os.path.join(into, "weights.png")
    from ..diagnostics import ConvWeightDiagnostics

    conv = {n: f for n, f in families.items() if isinstance(f[0], ConvWeightDiagnostics)}
    if conv:
        from ..studies.scaling_conv.plots import plot_conv_scaling

        plot_conv_scaling(conv, path=path)
    else:
        from ..plots import plot_weight_coordinates

        plot_weight_coordinates([(d.name, A) for _, _, A, d in tensors], path=path)
    return [path]


def _read_all(args) -> list:
    """``(path, name, A, diagnostics)`` of every tensor of the files given: each file is data
    (nothing it names is imported); a file that is not weights, or a bad ``--beta`` or ``--grid``
    for one of its tensors, is one line naming it."""
    from .._user_code import reading_stored
    from ..diagnostics import load_weights

    tensors = []
    for path in args.paths:
        try:
            with reading_stored(path):  # a weights file is data: nothing it names is imported
                found = load_weights(path)
        except ValueError as e:  # "source: PATH ..." is shown as "PATH ..."
            raise UsageError(f"deeplimits weights: {one_line(e).removeprefix('source: ')}") from None
        for name, A in found.items():
            try:
                tensors.append((path, name, A, _diagnose(A, args.beta, args.grid, name)))
            except ValueError as e:  # a bad --beta or --grid, or the tensor of PATH named
                param = getattr(e, "param", None)
                if param == "beta" or (param == "input_size" and args.grid is not None):
                    raise usage("weights", e, {"beta": None, "input_size": "--grid"}) from None
                raise UsageError(f"deeplimits weights: {path} ({name}): {one_line(e)}") from None
    return tensors


def run_weights_cmd(args) -> int:
    from ..diagnostics import ConvWeightDiagnostics, WeightDiagnostics, scaling_exponents

    out = default_out(args, "weights", {"command": "weights", "paths": [os.path.abspath(p) for p in args.paths],
                                        "beta": args.beta, "grid": args.grid})
    outputs.check_outputs(args, "weights", out)
    if args.grid is not None and args.grid < 1:
        raise UsageError(f"deeplimits weights: --grid must be an integer >= 1, got {args.grid}")
    if args.dry_run:
        return dry_run.show_files(args, args.paths, out)
    tensors = _read_all(args)
    families: dict = {}
    for _, name, _, d in tensors:
        families.setdefault(name, []).append(d)
    exponents = {name: scaling_exponents(fam) for name, fam in families.items() if len({d.depth for d in fam}) > 1}
    report = outputs.report_stream(args.json)
    print(WeightDiagnostics.HEADER, file=report)
    for path, _, _, d in tensors:
        conv = ""
        if isinstance(d, ConvWeightDiagnostics):
            conv = "  spectral norms on " + ", ".join(f"{n}x{m}" for n, m in d.input_size)
        print(d.report_line() + f"  {path}{conv}", file=report)
    for e in exponents.values():
        print(e.report(), file=report)
    os.makedirs(out, exist_ok=True)
    payload = {"tensors": [{"path": str(p), **d.to_dict()} for p, _, _, d in tensors],
               "exponents": {n: e.exponents for n, e in exponents.items()},
               "hypothesis": {n: {"supports": e.hypothesis, "reason": e.reason, "evidence": e.evidence}
                              for n, e in exponents.items()}}
    written = outputs.dump_json(outputs.strict_json(payload), out, args.json)
    written = outputs.listed(outputs.draw_figures(lambda into: _figure(tensors, families, into), out,
                                                  outputs.figure_mode(args)), written)  # after the JSON
    print("wrote " + ", ".join(written), file=report)
    return 0


def add_parser(sub) -> None:
    """The ``weights`` command's flags (defaults read from :mod:`deeplimits.studies.presets`)."""
    from ..studies import presets
    from .execution import RUNS
    from .values import integer, real

    w = sub.add_parser(
        "weights", help="diagnostics of layer-indexed weights: norms, Hurst index, exponents across depths",
        description="For each tensor A of shape (L, ...) in the given files (.npy, .pt: a tensor, a state_dict "
                    "whose entries differ by a layer index, or a training chunk) or training run directories: "
                    "max_k |A_k|, L^beta max_k |A_{k+1} - A_k|, max_k |sum_{j<k} A_j|, the root sum of squares, "
                    "the quadratic variation and the Hurst index of each coordinate of the cumulative sum "
                    "(median and IQR over coordinates; Cohen et al., ICML 2021). With several depths of a "
                    "tensor of one name: the log-log slope of each on L with a 95% interval, beta, and the "
                    "verdict (smooth, rough, sparse or neither; 'insufficient evidence' below 4 depths spanning a "
                    "factor of 4, or with an exponent's interval too wide: docs/weights.md). Convolution kernels "
                    "are measured by the spectral norms of their convolutions (Sedghi, Gupta & Long, ICLR 2019).")
    w.add_argument("paths", nargs="+", metavar="PATH", help="weight files or run directories")
    w.add_argument("--beta", type=real, default=presets.WEIGHTS_DEFAULTS["beta"],
                   help="scale of the increment norm L^beta (default %(default)g)")
    w.add_argument("--grid", type=integer, metavar="N",
                   help="the N x N input grid of the spectral norms of convolution kernels, tensors (L, c_out, c_in, "
                        "kh, kw) or kernels in stages (default: a deeplimits convolutional network's own grids, "
                        f"otherwise {presets.CONV_GRID})")
    w.add_argument("--out", metavar="DIR",
                   help=f"output directory: the figure weights.png (the first coordinates of each tensor against k/L; "
                        f"convolution kernels: their spectral norms along depth and their scaling) and result.json "
                        f"(default {RUNS}/weights-<hash of the paths and options>)")
    w.add_argument("--json", metavar="PATH", help="also write the diagnostics (and exponents) as JSON to PATH ('-': "
                                                  "standard output, the report then goes to standard error)")
    outputs.figure_flag(w)
    w.set_defaults(func=run_weights_cmd)
