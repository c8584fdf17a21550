"""Your own objects on the command line (docs/cli.md, "Your own objects"): a flag given
``MODULE:NAME`` imports the user's module on the user's command (:func:`deeplimits._user_code.load_user_object`),
checks what it names and hands the object to the library as the flag's name would:

* ``--block MODULE:NAME``: a :class:`~deeplimits.blocks.Block` subclass (or instance), registered;
  the command runs on it as ``--arch`` its name;
* ``--driver MODULE:NAME``, ``--law MODULE:NAME``: a :class:`~deeplimits.paths.Driver` subclass (or
  instance), registered; the command runs on its name;
* ``--phi MODULE:FUNCTION`` (repeated): a test function of the output (or a
  :class:`~deeplimits.studies.law.TestFunction`), registered;
* ``--scheme MODULE:OBJECT``, ``--problem MODULE:OBJECT`` (``order``): a
  :class:`~deeplimits.schemes.Scheme` and a :class:`~deeplimits.schemes.problems.Problem`;
* ``--model MODULE:MAKE`` (``transfer``): a module factory ``make(depth, beta)`` (its branches
  multiplied by ``depth^-beta``), or a :class:`~deeplimits.studies.transfer.user.TransferNetwork`,
  named ``MAKE``; ``--data MODULE:DATA``: tensors ``(x, y)`` or ``(x_train, y_train, x_test,
  y_test)``, a ``Dataset`` of ``(x, y)`` pairs, or a function of no arguments returning one, named
  ``DATA`` (:func:`~deeplimits.studies.transfer.user.transfer_data`);
* ``--case MODULE:FAMILY`` (``trained-limit``, repeated): a family of one's own, a mapping with a
  ``name`` and the keys of :data:`~deeplimits.studies._shared.families.FAMILY_KEYS` (its ``arch``
  a block's name or a ``Block`` subclass, its ``driver`` a driver's name or a ``Driver`` subclass,
  both registered), ``theory`` and ``label`` when given.

What was imported is recorded (``args.user_code``: module, name, SHA-256 of its source, flag;
:data:`deeplimits._user_code.IMPORTED` under the name it was registered by); the run store writes
it beside its spec and refuses a resumed run whose file changed (:class:`deeplimits.runs.RunStore`),
and a changed file names a default directory of its own (:func:`run_key`). Nothing read from a
store is imported: resuming takes the objects from the flags again.
"""

from __future__ import annotations

from ..errors import ParameterError

__all__ = ["resolve", "run_key", "is_user_spec", "typed_flags", "register_given", "USER_FLAGS"]

USER_FLAGS = ("block", "driver", "law", "phi", "scheme", "problem", "model", "data", "case")
"""The flags that take ``MODULE:NAME``."""
ONLY_USER = ("block", "model", "data", "case")
"""The flags that take nothing but ``MODULE:NAME`` (no built-in names)."""
ONLY_ON = {"case": ("trained-limit",)}
"""The flags that take ``MODULE:NAME`` on some commands only (elsewhere a built-in's name:
``shapes --case tanh``)."""


def is_user_spec(value) -> bool:
    """Whether a flag's value names a user's object (``MODULE:NAME``) rather than a built-in."""
    return isinstance(value, str) and ":" in value


def typed_flags(args, params) -> dict:
    """``params`` (the parameter names a command sets, or a mapping name -> flag) as the mapping
    :func:`~.errors.usage` shows its errors by, naming the flag the user typed: ``arch`` is
    ``--block`` where the residual map is a block of one's own given by ``--block`` (docs/cli.md:
    a block the study refuses is reported under ``--block``, not ``--arch``)."""
    out = dict(params) if isinstance(params, dict) else dict.fromkeys(params)
    if getattr(args, "block", None) is not None and "arch" in out:
        out["arch"] = "--block"
    return out


def what_it_is(obj) -> str:
    """What ``obj`` is, in a user's terms, for a refusal's "it is ...": ``the Block subclass
    Softsign``, ``the Driver subclass Logistic``, ``the class Mixer``, ``the function quartic``,
    ``the module torch``, ``a Block instance (Softsign)``, ``a float``; never its metaclass
    (``ABCMeta``)."""
    import functools
    import inspect

    from ..blocks import Block
    from ..paths import Driver

    kinds = ((Block, "Block"), (Driver, "Driver"))
    if isinstance(obj, type):
        kind = next((f"{word} subclass" for base, word in kinds if issubclass(obj, base)), "class")
        return f"the {kind} {obj.__name__}"
    if inspect.ismodule(obj):
        return f"the module {obj.__name__}"
    if isinstance(obj, functools.partial):
        return "a function (a functools.partial)"
    if inspect.isroutine(obj):
        return f"the function {getattr(obj, '__name__', '?')}"
    word = next((w for base, w in kinds if isinstance(obj, base)), None)
    if word is not None:
        return f"a {word} instance ({type(obj).__name__})"
    name = type(obj).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def register_given(obj, text: str) -> None:
    """A block or law the user gave by ``text`` (``runs show --code MODULE:NAME``), registered as the
    flag that made the run registered it; anything else (an activation, found by its ``MODULE:NAME``
    where a store names it) is left as it is."""
    from ..blocks import Block
    from ..paths import Driver

    cls = obj if isinstance(obj, type) else type(obj)
    if issubclass(cls, Block):
        _block(obj, text)
    elif issubclass(cls, Driver):
        _driver(obj, text, "code")


def _block(obj, text):
    from ..blocks import Block, block_class, register_block, registered_blocks

    cls = type(obj) if isinstance(obj, Block) else obj
    if not (isinstance(cls, type) and issubclass(cls, Block)):
        raise ParameterError("block", f"--block {text}: not a deeplimits Block subclass (it is "
                                      f"{what_it_is(obj)})")
    if cls.__dict__.get("name") not in registered_blocks() or block_class(cls.name) is not cls:
        register_block(cls)
    return cls.name


def _driver(obj, text, flag):
    from ..paths import Driver, driver_class, register_driver, registered_drivers

    cls = type(obj) if isinstance(obj, Driver) else obj
    if not (isinstance(cls, type) and issubclass(cls, Driver)):
        raise ParameterError(flag, f"--{flag} {text}: not a deeplimits Driver subclass (it is {what_it_is(obj)})")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or name not in registered_drivers() or driver_class(name) is not cls:
        register_driver(cls)
    return cls.name


def _phi(obj, text):
    from ..studies.law.phis import register_test_function

    if not callable(obj) and type(obj).__name__ != "TestFunction":
        raise ParameterError("phi", f"--phi {text}: not a function of the output (it is {what_it_is(obj)})")
    try:
        return register_test_function(obj).name
    except ParameterError as e:
        raise ParameterError("phi", f"--phi {text}: {e}") from None


def _scheme(obj, text):
    if not (callable(obj) and hasattr(obj, "order")):
        raise ParameterError("scheme", f"--scheme {text}: not a scheme (a deeplimits Scheme, or a callable (h, "
                                       f"increment, t, dt) -> h with an order), it is {what_it_is(obj)}")
    return obj


def _problem(obj, text):
    from ..schemes.problems import Problem

    if not isinstance(obj, Problem):
        raise ParameterError("problem", f"--problem {text}: not a deeplimits Problem (it is {what_it_is(obj)})")
    return obj


def _model(obj, text):
    """A :class:`TransferNetwork`, or a factory ``make(depth, beta)`` named by ``text``'s NAME."""
    from ..studies.transfer.user import TransferNetwork

    if isinstance(obj, TransferNetwork):
        return obj
    if not callable(obj):
        raise ParameterError("model", f"--model {text}: not a module factory make(depth, beta) (it is "
                                      f"{what_it_is(obj)})")
    return TransferNetwork(text.partition(":")[2], obj)


def _data(obj, text):
    """The data set ``obj`` (or what ``obj()`` returns), checked, named by ``text``'s NAME."""
    from ..studies.transfer.user import TransferData, transfer_data

    if callable(obj) and not isinstance(obj, TransferData) and not hasattr(obj, "__getitem__"):
        try:
            obj = obj()
        except Exception as e:  # noqa: BLE001 - the user's function: its error, in one line
            raise ParameterError("data", f"--data {text}: calling it failed ({type(e).__name__}: "
                                         f"{' '.join(str(e).split())[:160]})") from None
    try:
        return transfer_data(obj, name=text.partition(":")[2])
    except ParameterError as e:
        raise ParameterError("data", f"--data {text}: {e}") from None


def _case(obj, text):
    """A family of one's own (a mapping with a ``name``), its block and driver classes registered
    and replaced by their names."""
    from collections.abc import Mapping

    from ..blocks import Block
    from ..paths import Driver

    if not isinstance(obj, Mapping) or not isinstance(obj.get("name"), str):
        raise ParameterError("case", f"--case {text}: not a family (a mapping with a 'name' and the keys arch, "
                                     f"activation, driver, beta, coupled), it is {what_it_is(obj)}")
    out = dict(obj)
    if isinstance(out.get("arch"), Block) or (isinstance(out.get("arch"), type) and issubclass(out["arch"], Block)):
        out["arch"] = _block(out["arch"], text)
    if isinstance(out.get("driver"), Driver) or (isinstance(out.get("driver"), type)
                                                 and issubclass(out["driver"], Driver)):
        out["driver"] = _driver(out["driver"], text, "case")
    return out


def _labels(flag, taken) -> list[str]:
    """The names the spec will hold for what ``flag`` took (those the run store records it by)."""
    if isinstance(taken, str):
        return [taken]
    if flag in ("model", "data"):
        return [taken.name]
    if flag == "case":
        return [v for v in (taken["name"], taken.get("arch"), taken.get("driver")) if isinstance(v, str)]
    return []


def resolve(args) -> None:
    """Each of :data:`USER_FLAGS` that ``args`` has, given ``MODULE:NAME``: imported, checked,
    registered, and replaced by what the library takes (``--block``: ``args.arch``); the
    provenance of each in ``args.user_code`` (module docstring). A wrong module, name or object is
    a usage error, one line naming the flag."""
    from .errors import usage

    try:
        _resolve(args)
    except ParameterError as e:
        raise usage(args.command, e) from None


def _resolve(args) -> None:
    from .._user_code import load_user_object, record

    args.user_code = []
    for flag in USER_FLAGS:
        value = getattr(args, flag, None)
        if flag in ONLY_ON and getattr(args, "command", None) not in ONLY_ON[flag]:
            continue
        texts = value if isinstance(value, list) else [value]
        if not any(is_user_spec(t) for t in texts) and not (flag in ONLY_USER and value is not None):
            continue  # (a built-in's name; --block, --model, --data, --case take only MODULE:NAME)
        out = []
        for text in texts:
            if not is_user_spec(text) and flag not in ONLY_USER:
                out.append(text)
                continue
            obj, where = load_user_object(text, what=flag, flag=f"--{flag}")
            args.user_code.append({**where, "flag": f"--{flag}"})
            out.append(_take(flag, obj, text))
            for label in _labels(flag, out[-1]):  # registered under a name the spec will hold
                record(label, where)
        setattr(args, flag, out if isinstance(value, list) else out[0])
    if getattr(args, "block", None) is not None:
        if getattr(args, "arch", None) not in (None, args.block):
            raise ParameterError("block", f"--block and --arch name two residual maps ({args.block}, {args.arch}): "
                                          "give one")
        args.arch = args.block


def _take(flag, obj, text):
    if flag == "block":
        return _block(obj, text)
    if flag in ("driver", "law"):
        return _driver(obj, text, flag)
    take = {"phi": _phi, "scheme": _scheme, "problem": _problem, "model": _model, "data": _data, "case": _case}
    return take[flag](obj, text)


def run_key(args, spec):
    """What names the run's default directory (``runs/CMD-<hash>``): ``spec`` (a plan's, a dict, or a
    list of them) with what the command imported under ``user_code`` (unchanged when it imported
    nothing), so that a changed file gets a directory of its own. The store records the provenance
    beside its spec and refuses a resume with a changed source (:class:`deeplimits.runs.RunStore`)."""
    code = getattr(args, "user_code", None)
    if not code:
        return spec
    return {"spec": spec, "user_code": code}
