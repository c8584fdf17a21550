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
  :class:`~deeplimits.schemes.Scheme` and a :class:`~deeplimits.schemes.problems.Problem`.

What was imported is recorded (``args.user_code``: module, name, SHA-256 of its source, flag) and
enters the run's spec (:func:`with_user_code`): a resumed run whose file changed is refused, not
mixed. Nothing read from a store is imported: resuming takes the objects from the flags again.
"""

from __future__ import annotations

from ..errors import ParameterError

__all__ = ["resolve", "with_user_code", "changed_code", "is_user_spec", "USER_FLAGS"]

USER_FLAGS = ("block", "driver", "law", "phi", "scheme", "problem")
"""The flags that take ``MODULE:NAME``."""


def is_user_spec(value) -> bool:
    """Whether a flag's value names a user's object (``MODULE:NAME``) rather than a built-in."""
    return isinstance(value, str) and ":" in value


def _block(obj, text):
    from ..blocks import Block, block_class, register_block, registered_blocks

    cls = type(obj) if isinstance(obj, Block) else obj
    if not (isinstance(cls, type) and issubclass(cls, Block)):
        raise ParameterError("block", f"--block {text}: not a deeplimits Block subclass (it is a "
                                      f"{type(obj).__name__})")
    if cls.__dict__.get("name") not in registered_blocks() or block_class(cls.name) is not cls:
        register_block(cls)
    return cls.name


def _driver(obj, text, flag):
    from ..paths import Driver, driver_class, register_driver, registered_drivers

    cls = type(obj) if isinstance(obj, Driver) else obj
    if not (isinstance(cls, type) and issubclass(cls, Driver)):
        raise ParameterError(flag, f"--{flag} {text}: not a deeplimits Driver subclass (it is a {type(obj).__name__})")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or name not in registered_drivers() or driver_class(name) is not cls:
        register_driver(cls)
    return cls.name


def _phi(obj, text):
    from ..studies.law.phis import register_test_function

    if not callable(obj) and type(obj).__name__ != "TestFunction":
        raise ParameterError("phi", f"--phi {text}: not a function of the output (it is a {type(obj).__name__})")
    try:
        return register_test_function(obj).name
    except ParameterError as e:
        raise ParameterError("phi", f"--phi {text}: {e}") from None


def _scheme(obj, text):
    if not (callable(obj) and hasattr(obj, "order")):
        raise ParameterError("scheme", f"--scheme {text}: not a scheme (a deeplimits Scheme, or a callable (h, "
                                       f"increment, t, dt) -> h with an order), it is a {type(obj).__name__}")
    return obj


def _problem(obj, text):
    from ..schemes.problems import Problem

    if not isinstance(obj, Problem):
        raise ParameterError("problem", f"--problem {text}: not a deeplimits Problem (it is a {type(obj).__name__})")
    return obj


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
    from .._user_code import load_user_object

    args.user_code = []
    for flag in USER_FLAGS:
        value = getattr(args, flag, None)
        texts = value if isinstance(value, list) else [value]
        if not any(is_user_spec(t) for t in texts) and not (flag == "block" and value is not None):
            continue  # (a built-in's name; --block takes only MODULE:NAME)
        out = []
        for text in texts:
            if not is_user_spec(text) and flag != "block":
                out.append(text)
                continue
            obj, where = load_user_object(text, what=flag)
            args.user_code.append({**where, "flag": f"--{flag}"})
            out.append(_take(flag, obj, text))
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
    if flag == "phi":
        return _phi(obj, text)
    return _scheme(obj, text) if flag == "scheme" else _problem(obj, text)


def with_user_code(args, spec):
    """``spec`` (a plan's, a dict) with what the command imported under ``user_code`` (unchanged
    when it imported nothing): the run store compares it when a run resumes."""
    code = getattr(args, "user_code", None)
    if not code or not isinstance(spec, dict):
        return spec
    return {**spec, "user_code": code}


def changed_code(directory, spec) -> str | None:
    """Why the store in ``directory`` refuses ``spec``, when the run is the same but for the code it
    imported (a file changed since: its SHA-256 differs); ``None`` otherwise."""
    from ..runs import RunStore

    if not isinstance(spec, dict):
        return None
    try:
        stored = RunStore(directory, create=False, readonly=True).spec
    except Exception:  # noqa: BLE001 - no store to read: the store's own message stands
        return None
    if not isinstance(stored, dict) or {k: v for k, v in stored.items() if k != "user_code"} != \
            {k: v for k, v in spec.items() if k != "user_code"}:
        return None
    old = {(c["flag"], c["module"], c["name"]): c["sha256"] for c in stored.get("user_code") or []}
    changed = [f"{flag} {m}:{n}" for (flag, m, n), sha in
               (((c["flag"], c["module"], c["name"]), c["sha256"]) for c in spec.get("user_code") or [])
               if old.get((flag, m, n)) != sha]
    return (f"{directory} holds this run made with other code ({', '.join(changed) or 'the imported objects'}: "
            "the source changed since); a resumed run is not mixed with changed code: restore the file, or use "
            "another --out")
