"""The same seed gives the same JSON: small seeded runs of every study and regime compared with
the results recorded before the issue-11 restructure (tests/golden/, commands in COMMANDS.json).

Numbers are compared with a relative tolerance, never bitwise: BLAS picks kernels by shape and
CPU, so another machine may differ in the last bits (about 1e-16 relative in float64, 1e-7 in
float32, amplified at most a few hundred times over these depths). ``rtol = 1e-5`` leaves two
orders of magnitude for that, while a changed seed, law or formula moves the numbers by O(1).
Wall times (``seconds``) are not compared. A field changed on purpose is listed in
``INTENDED`` with the reason. ``stab-iid`` and ``stab-inside`` draw uniform weights: they were
rewritten (same commands, same seeds) when the uniform sampler moved to the centred SFC64 grid
(``deeplimits._random._centred_uniform``, 1.6x faster; the same law, other numbers).
"""

import json
import math
import pathlib
import shlex

import pytest

from deeplimits.cli import main

HERE = pathlib.Path(__file__).parent / "golden"
COMMANDS = json.loads((HERE / "COMMANDS.json").read_text())["commands"]
RTOL, ATOL = 1e-5, 1e-9
SKIP = {"seconds"}
#: old key -> its new name in a convergence result (issue 28: the number of draws is "draws"
#: everywhere; the golden results keep the key they were written with)
RENAMED = {"paths": "draws"}
_NO_DOF = "3 declared terms for 3 depths: a test needs at least 4 depths"
_EVIDENCE = "insufficient evidence"


def _margin(reading: str, draws: int) -> str:
    """Issue 52: an agreement is an equivalence test within a margin of the declared exponent."""
    return ("L^-1/2 + L^-1 fits and its leading term L^-1/2 dominates at every depth, but its exponent is not shown "
            f"within 0.1 of 0.5: {reading} (power 0.00 at this size); about {draws} "
            "draws would decide it at power 0.9; see docs/schemes.md, \"Why does my scheme disagree or read pre-asymptotic?\"")


def _too_wide(width: str, draws: int, terms: int | None = None) -> str:
    """A bootstrap interval too wide, and the draws that would narrow it (a lower bound on what decides)."""
    more = "" if terms is None else f"; and its {terms} declared terms need at least {terms + 1} depths for a test"
    return (f"interval too wide (width {width} > 0.5); at least about {draws} finite draws would narrow it under 0.5 "
            f"(it narrows like draws^-1/2; the expansion's own test at the margin 0.1 may need more){more}")


# name -> {json path: new value}: differences made on purpose
INTENDED: dict[str, dict] = {
    # issue 11: the corrected fBm network at H = 3/4 declares L^-1 sqrt(log L) with its own note
    # issue 29: the verdict is a test of the declared expansion (deeplimits.studies.expansion_fit).
    # issue 52: at H = 3/4 the modified Euler expansion has four terms (the series in (log L)^-1/2 and the
    # drift L^-3/2): three depths leave no test
    "fbm-corrected": {
        "rate_note": "modified Euler scheme (Hu, Liu & Nualart, Ann. Appl. Probab. 2016): order 2H - 1/2 for H < 3/4, "
                     "1 for H > 3/4; at H = 3/4 exactly L^-1 sqrt(log L): the slope over practical depths is below 1 "
                     "(the profile test reads the exponent of that law)",
        "verdict": _EVIDENCE,
        "verdict_note": _NO_DOF.replace("3 declared", "4 declared").replace("4 depths", "5 depths"),
    },
    # issue 37: the single power-law slope is no longer tested (it told correct schemes pre-asymptotic): the
    # inside regimes' expansions fit, their leading terms dominate and their exponents are not rejected
    # (the inside-ode declares the Taylor series' next two terms: three depths leave no degree of freedom)
    "inside-ode": {"verdict": _EVIDENCE, "verdict_note": "3 declared terms for 3 depths: a test needs at least 4 depths"},
    # issue 37: an agreement needs the data to pin the leading exponent down (3 depths do not); issue 52: it is
    # shown within a margin of the declared exponent, and the note says how many draws would show it
    # (against a nested reference the profile no longer takes a shift whose leading term the reference
    # cannot see: the intervals of these three-depth runs moved, their verdicts did not; and the interval
    # holds the exponents whose term leads deeper than the deepest depth too: their lower ends moved down)
    "inside-sde": {"verdict": _EVIDENCE, "verdict_note": _margin(
        "exponent -0.025, 90% interval [-0.500, 0.738] not inside 0.5 +- 0.1", 2451)},
    "sde": {"verdict": _EVIDENCE, "verdict_note": _margin(
        "exponent 0.270, 90% interval [0.180, 1.056] not inside 0.5 +- 0.1", 1230)},
    # issue 37: too little evidence is a verdict of its own, "insufficient evidence" (it was null), and the
    # note says how many depths a test needs
    # the note of a bootstrap interval too wide says how many draws would narrow it (deeplimits.studies.verdict_power)
    "inside-sde-drift": {"verdict": _EVIDENCE, "verdict_note": _too_wide("0.51", 9)},
    "ode-res2": {"verdict": _EVIDENCE},
    "ode": {"verdict": _EVIDENCE, "verdict_note": _NO_DOF},
    # at H = 0.7 the Euler network declares four terms, L^(2-4H) among them
    "fbm": {"verdict": _EVIDENCE, "verdict_note": _NO_DOF.replace("3 declared", "4 declared").replace("4 depths", "5 depths")},
    "default": {"0/verdict": _EVIDENCE, "0/verdict_note": _too_wide("1.13", 41, 2), "1/verdict": _EVIDENCE,
                "1/verdict_note": _NO_DOF.replace("3 depths", "2 depths"), "2/verdict": _EVIDENCE,
                "2/verdict_note": _NO_DOF.replace("3 depths", "2 depths")},
}


def compare(new, old, where="$"):
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        old = {(RENAMED[k] if k in RENAMED and k not in new else k): v for k, v in old.items()}
        keys = set(old) - SKIP
        assert keys <= set(new), f"{where}: missing {sorted(keys - set(new))}"
        for k in keys:
            compare(new[k], old[k], f"{where}.{k}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), where
        for i, (a, b) in enumerate(zip(new, old)):
            compare(a, b, f"{where}[{i}]")
    elif isinstance(old, float) and not isinstance(new, bool):
        assert isinstance(new, (int, float)) and math.isclose(new, old, rel_tol=RTOL, abs_tol=ATOL), \
            f"{where}: {new!r} != {old!r}"
    else:
        assert new == old, f"{where}: {new!r} != {old!r}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_same_seed_same_json(name, tmp_path):
    out = tmp_path / "out.json"
    argv = shlex.split(COMMANDS[name]) + ["--out", str(tmp_path / "run"), "--quiet", "--json", str(out)]
    assert main(argv) == 0
    old = json.loads((HERE / f"{name}.json").read_text())
    new = json.loads(out.read_text())
    for path, value in INTENDED.get(name, {}).items():
        old = _set(old, path, value)
    compare(new, old)


def _set(obj, path, value):
    """``obj`` with the field at ``path`` (keys and indices joined by '/') replaced by ``value``."""
    *head, last = path.split("/")
    cur = obj
    for k in head:
        cur = cur[int(k)] if isinstance(cur, list) else cur[k]
    cur[int(last) if isinstance(cur, list) else last] = value
    return obj
