"""``deeplimits weights PATH...``: diagnostics of layer-indexed weights (docs/weights.md), and
with several depths of one tensor the exponents of their scaling."""

from __future__ import annotations

from . import outputs
from .errors import UsageError, one_line, usage

__all__ = ["run_weights_cmd"]


def run_weights_cmd(args) -> int:
    from ..diagnostics import WeightDiagnostics, load_weights, scaling_exponents, weight_diagnostics

    outputs.check_file("weights", "--json", args.json)
    outputs.check_figure("weights", "--figure", args.figure)
    tensors = []
    for path in args.paths:
        try:
            found = load_weights(path)
        except ValueError as e:  # "source: PATH ..." is shown as "PATH ..."
            raise UsageError(f"deeplimits weights: {one_line(e).removeprefix('source: ')}") from None
        for name, A in found.items():
            try:
                tensors.append((path, name, A, weight_diagnostics(A, beta=args.beta, name=name)))
            except ValueError as e:  # a bad --beta, or the tensor of PATH named
                if getattr(e, "param", None) == "beta":
                    raise usage("weights", e, ("beta",)) from None
                raise UsageError(f"deeplimits weights: {path} ({name}): {one_line(e)}") from None
    families: dict = {}
    for _, name, _, d in tensors:
        families.setdefault(name, []).append(d)
    exponents = {name: scaling_exponents(fam) for name, fam in families.items() if len({d.depth for d in fam}) > 1}
    report = outputs.report_stream(args.json)
    print(WeightDiagnostics.HEADER, file=report)
    for path, _, _, d in tensors:
        print(d.report_line() + f"  {path}", file=report)
    for e in exponents.values():
        print(e.report(), file=report)
    if args.figure:
        from ..plots import plot_weight_coordinates

        plot_weight_coordinates([(d.name, A) for _, _, A, d in tensors], path=args.figure)
        print(f"wrote {args.figure}", file=report)
    if args.json:
        payload = {"tensors": [{"path": str(p), **d.to_dict()} for p, _, _, d in tensors],
                   "exponents": {n: e.exponents for n, e in exponents.items()},
                   "hypothesis": {n: {"supports": e.hypothesis, "reason": e.reason, "evidence": e.evidence}
                                  for n, e in exponents.items()}}
        outputs.write_records_json(outputs.strict_json(payload), args.json)
    return 0
