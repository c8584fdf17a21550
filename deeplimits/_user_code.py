"""A user's own code, and the one rule about it: it enters only by what the user types or calls
in this invocation (a ``module:Name`` argument, an object passed in Python), never by what a file
names (docs/sweeps.md, "Files are data: nothing they name is imported").

:func:`load_user_object` is the one place the package imports a module by a name given at run
time. It records what it imported (module, name, the SHA-256 of the module's source) in
:data:`IMPORTED`, which a new run store writes beside its spec (the provenance of the run), and
it refuses, in one line, inside :func:`reading_stored`: the context every reader of stored runs
and weight files holds (``runs show|plot|export``, :func:`~deeplimits.studies.load_trained`,
``deeplimits weights``), so a spec or a weights file edited to name ``'evilact:f'`` is refused,
not imported.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib
import sys

from .errors import ParameterError

__all__ = ["load_user_object", "reading_stored", "reading", "provenance_of", "is_user_code", "IMPORTED",
           "SYSTEM_MODULES"]

#: modules whose functions act on the system, never a block, a law or an activation: refused by
#: name before anything of them is imported or called ('os:system' would run at the first step)
SYSTEM_MODULES = frozenset({"os", "posix", "nt", "sys", "subprocess", "shutil", "builtins", "signal", "socket",
                            "ctypes", "runpy", "pty", "multiprocessing", "threading", "pathlib", "tempfile",
                            "webbrowser", "code", "pdb", "io", "gc", "resource", "pickle", "marshal",
                            "this", "antigravity"})

IMPORTED: dict[str, dict] = {}
"""``{'module:Name': {'module', 'name', 'sha256'}}``: what :func:`load_user_object` imported in this
process, on the user's word (read by the run store to record a run's provenance)."""

_READING: contextvars.ContextVar[str | None] = contextvars.ContextVar("deeplimits_reading_stored", default=None)


@contextlib.contextmanager
def reading_stored(what: str):
    """While reading the stored data ``what`` (a run directory, a weights file), no module is
    imported by name: :func:`load_user_object` raises a one-line :class:`ParameterError` instead."""
    token = _READING.set(str(what))
    try:
        yield
    finally:
        _READING.reset(token)


def reading() -> str | None:
    """The stored data being read (:func:`reading_stored`), or ``None``."""
    return _READING.get()


def is_user_code(spec) -> bool:
    """Whether ``spec`` is spelled ``'module:Name'`` with a dotted module path and an identifier."""
    if not isinstance(spec, str) or spec.count(":") != 1:
        return False
    module, _, name = spec.partition(":")
    return bool(module) and name.isidentifier() and all(p.isidentifier() for p in module.split("."))


def provenance_of(spec: str, module) -> dict:
    """``{'module', 'name', 'sha256'}`` of ``spec`` found in the imported ``module``: the SHA-256 of
    its source file (``None`` for a module without one: a compiled or built-in module)."""
    module_name, _, name = spec.partition(":")
    digest = None
    path = getattr(module, "__file__", None)
    if path:
        try:
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            digest = None
    return {"module": module_name, "name": name, "sha256": digest}


def load_user_object(spec: str, *, what: str, param: str | None = None):
    """``(obj, provenance)``: the object ``Name`` of the user's module ``module``, from the
    ``'module:Name'`` the user gave for ``what`` (an activation, a block, a law, ...), and its
    provenance (:func:`provenance_of`). Refused in one line naming ``param`` (default ``what``) when
    the spelling is wrong, the module acts on the system, a stored file is being read
    (:func:`reading_stored`), or the module or the name cannot be found."""
    param = param or what
    where = f"{what} {spec!r}"
    if not is_user_code(spec):
        raise ParameterError(param, f"{where}: expected 'module:Name', e.g. 'mypkg.acts:cube'")
    stored = reading()
    if stored is not None:
        raise ParameterError(param, f"{where} names code to import, and {stored} is data: nothing a stored file names "
                                    "is imported (give the object itself, e.g. load_trained(path, activation=fn))")
    module_name, _, name = spec.partition(":")
    if module_name.split(".")[0] in SYSTEM_MODULES:
        raise ParameterError(param, f"{where}: module {module_name!r} acts on the system, it holds no {what} (give "
                                    "one of your own module, e.g. 'mypkg.acts:cube')")
    try:
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
    except ImportError as e:
        raise ParameterError(param, f"{where}: cannot import module {module_name!r} ({e})") from None
    obj = getattr(module, name, None)
    if obj is None:
        raise ParameterError(param, f"{where}: module {module_name!r} has no {name!r}")
    info = provenance_of(spec, module)
    IMPORTED[spec] = info
    return obj, info
