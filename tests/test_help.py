"""What ``deeplimits COMMAND --help`` says of each option (issue 39, "What a newcomer reads").

Every option of every command (and of ``deeplimits`` itself) is read from the parser as
``--help`` prints it (argparse's ``%(default)s`` expanded), so a new flag is checked without
being listed here. ``deeplimits runs`` takes its actions (list, show, export, plot) as the
choices of one positional: their help is that positional's, checked with the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re

import pytest

from deeplimits.cli import build_parser, main

#: the width the command-line page renders ``--help`` at (docs/hooks/cli_reference.py), which a
#: terminal of 80 columns shows unwrapped; no line of any ``--help`` may be longer
HELP_COLUMNS = 80

#: the orders a flag that takes no value may start with (after an optional "WHO: " qualifier):
#: what giving the flag does. A new such flag starts with one of these, or adds its verb here
#: (an order, never a noun phrase like "a zero-initialised bias" or "no progress bar").
VERBS = {"show", "drop", "keep", "use", "put", "give", "draw", "divide", "store", "hide", "measure", "run", "print"}


def parsers(parser=None, prog="deeplimits"):
    """``(prog, parser)`` of ``deeplimits`` and of every command, depth first."""
    parser = parser or build_parser()
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, f"{prog} {name}")


def options():
    """``(prog, action, help)`` for every option and positional ``--help`` shows (hidden
    deprecated aliases left out), the help on one line."""
    for prog, parser in parsers():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                continue
            text = formatter._expand_help(action) if action.help else ""
            yield prog, action, " ".join(text.split())


def name(prog, action) -> str:
    return f"{prog} {'/'.join(action.option_strings) or action.dest}"


def test_every_option_says_what_it_is():
    """A help that is empty, or only a parenthesis (``--dtype``'s ``(default float64)``), says
    nothing of what the option sets: with every parenthesised part taken out, words remain."""
    bare = []
    for prog, action, text in options():
        outside = text
        while re.search(r"\([^()]*\)", outside):
            outside = re.sub(r"\([^()]*\)", "", outside)
        if not re.search(r"[A-Za-z]{2}", outside):
            bare.append(f"{name(prog, action)}: {text!r}")
    assert not bare


def test_no_option_is_required_beside_a_default():
    """``--hurst`` once read "(in (0.5, 1); required); the command's default: 0.75": an option
    the command fills in is not required; one that must be given has no default."""
    both = [f"{name(prog, a)}: {t!r}" for prog, a, t in options()
            if re.search(r"\brequired\b", t, re.I) and re.search(r"\bdefault\b", t, re.I)]
    assert not both


def _flags():
    """The options that take no value (``store_true``, ``store_const``, ``--bias/--no-bias``, ...)."""
    return [(prog, a, t) for prog, a, t in options() if a.option_strings and a.nargs == 0]


def test_a_flag_says_what_giving_it_does():
    """A flag without a value is an order to the command, so its help is one: it starts with a
    verb of :data:`VERBS` (after an optional qualifier "WHO: ", e.g. ``inside-sde:`` or ``with
    --calibrate:``), and it speaks of effects, not of Python values. The old help of
    ``--no-ito-correction`` fails both ways: after ``inside-sde:`` it read "keep the Itô
    correction ... (default True; this flag sets False)", the option's meaning, not the flag's,
    with ``True``/``False``; so did "a zero-initialised bias per layer" and "no progress bar"."""
    flags = _flags()
    assert len(flags) > 15  # help, version, quiet, calibrate, ablation, the BooleanOptionalActions ...
    bad = []
    for prog, action, text in flags:
        body = re.sub(r"^(?:(?:with|for) [^:]+|[\w-]+(?:, [\w-]+)*): ", "", text)
        first = body.split(" ", 1)[0]
        if first not in VERBS:
            bad.append(f"{name(prog, action)} starts with {first!r}, not an order: {text!r}")
        if re.search(r"\b(True|False)\b|this flag sets", text):
            bad.append(f"{name(prog, action)} speaks of True/False, not of what the flag does: {text!r}")
    assert not bad


def test_a_pair_of_flags_says_which_is_the_default():
    """``--bias, --no-bias`` share one help: it says what the first does and which of the two
    holds when neither is given (a "default" clause, or what happens "without the flag")."""
    pairs = [(p, a, t) for p, a, t in _flags() if isinstance(a, argparse.BooleanOptionalAction)]
    assert pairs
    assert not [name(p, a) for p, a, t in pairs if not re.search(r"\bdefault\b|without the flag", t)]


@pytest.mark.slow
def test_a_boolean_option_flag_states_the_setting_it_makes():
    """Each boolean regime option's flag (``--corrected``, ``--no-ito-correction``) starts, for
    each regime, with the declaration's text for the value the flag sets, and gives the default's
    after ``default:``; a flag that sets False thus never reads as the option's True."""
    from deeplimits.regimes import declarations

    convergence = dict(parsers())["deeplimits convergence"]
    checked = 0
    for option, by in declarations().items():
        for regime, o in by.items():
            if o.type is not bool:
                continue
            action = next(a for a in convergence._actions if a.dest == option)
            assert action.const is (not o.default)
            assert f"{regime}: {o.effect(action.const)} (default: {o.effect(o.default)})" in action.help
            checked += 1
    assert checked >= 2
    help = next(a.help for a in convergence._actions if "--no-ito-correction" in a.option_strings)
    assert help.startswith("inside-sde: drop the Itô correction from the limit")


@pytest.mark.parametrize("argv", [["--help"]] + [[prog.split(" ", 1)[1], "--help"] for prog, _ in list(parsers())[1:]]
                         + [["runs", action, "--help"] for action in ("list", "show", "export", "plot")], ids=" ".join)
def test_every_help_fits_80_columns(argv, monkeypatch):
    """Every ``deeplimits ... --help`` in a terminal of :data:`HELP_COLUMNS` columns: exit 0, the
    options listed, no line longer than the terminal (a long list of choices is shown by a
    metavar in the usage, and named in the help)."""
    monkeypatch.setenv("COLUMNS", str(HELP_COLUMNS))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 0
    text = out.getvalue()
    assert "usage: deeplimits" in text and "-h, --help" in text
    assert not [line for line in text.splitlines() if len(line) > HELP_COLUMNS]
