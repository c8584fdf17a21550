"""A user's own code, and the one rule about it: it enters only by what the user types or calls
in this invocation (``--activation mypkg.acts:cube``, ``--block mymodels:Gated``, an object passed
in Python), never by what a file names (docs/sweeps.md, "Files are data: nothing they name is
imported"; docs/cli.md, "Your own objects").

:func:`load_user_object` is the one place the package imports a module by a name given at run
time. It imports ``module`` (from the working directory too, where a user keeps the file, as
``python -m`` would find it), reads ``Name`` off it (``Outer.Inner`` reads an attribute of an
attribute), and records its provenance ``{'module', 'name', 'sha256'}`` (the SHA-256 of the
module's source file) in :data:`IMPORTED`, which a run store writes beside its spec and compares
when the run resumes (a resumed run whose file changed is refused, not mixed). It refuses, in
one line, inside :func:`reading_stored`: the context every reader of stored runs and weight
files holds (``runs show|plot|export``, :func:`~deeplimits.studies.load_trained`, ``deeplimits
weights``), so a spec or a weights file edited to name ``'evilact:f'`` is refused, not imported.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib
import os
import re
import sys

from .errors import ParameterError

__all__ = ["load_user_object", "reading_stored", "reading", "provenance_of", "is_user_code", "record", "IMPORTED",
           "SYSTEM_MODULES"]

#: modules whose functions act on the system, never a block, a law or an activation: refused by
#: name before anything of them is imported or called ('os:system' would run at the first step)
SYSTEM_MODULES = frozenset({"os", "posix", "nt", "sys", "subprocess", "shutil", "builtins", "signal", "socket",
                            "ctypes", "runpy", "pty", "multiprocessing", "threading", "pathlib", "tempfile",
                            "webbrowser", "code", "pdb", "io", "gc", "resource", "pickle", "marshal", "this",
                            "antigravity"})

IMPORTED: dict[str, dict] = {}
"""``{label: {'module', 'name', 'sha256'}}``: what this process imported on the user's word, by the
text the user gave (``'mypkg.acts:cube'``) and by the name it was registered under (``'gated-tanh'``,
:func:`record`): a run store records the entries its spec names (:func:`deeplimits.runs.user_code_of`)."""

_SPEC = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
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
    """Whether ``spec`` is spelled ``'module:Name'`` (dotted identifiers on both sides)."""
    return isinstance(spec, str) and bool(_SPEC.match(spec.strip()))


def provenance_of(spec: str, module) -> dict:
    """``{'module', 'name', 'sha256'}`` of ``spec`` found in the imported ``module``: the SHA-256 of
    its source file (``None`` for a module without one: a compiled or built-in module)."""
    module_name, _, name = spec.strip().partition(":")
    digest, path = None, getattr(module, "__file__", None)
    if path and os.path.isfile(path):
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    return {"module": module_name, "name": name, "sha256": digest}


def record(label: str, provenance: dict) -> None:
    """Record ``provenance`` under ``label`` too (the name a user's object was registered under)."""
    IMPORTED[label] = dict(provenance)


def load_user_object(spec: str, *, what: str, flag: str | None = None):
    """``(obj, provenance)``: the object ``Name`` of the user's module ``module``, from the
    ``'module:Name'`` the user gave for ``what`` (an activation, a block, a law, ...), and its
    provenance (:func:`provenance_of`). Refused in one line naming ``what`` (the parameter; its
    messages start with ``flag``, e.g. ``'--block'``, when given) when the spelling is wrong, the
    module acts on the system, a stored file is being read (:func:`reading_stored`), or the module
    or the name cannot be found."""
    where = f"{flag} {spec}" if flag else f"{what} {spec!r}"
    if not is_user_code(spec):
        raise ParameterError(what, f"{flag} must be module:Name (e.g. mymodels:Gated), got {spec!r:.80}" if flag else
                             f"{where}: expected 'module:Name', e.g. 'mypkg.acts:cube'")
    stored = reading()
    if stored is not None and spec.strip() in IMPORTED:  # given on the user's word in this process already
        return _given(spec.strip()), IMPORTED[spec.strip()]
    if stored is not None:
        raise ParameterError(what, f"{where} names code to import, and {stored} is data: nothing a stored file names "
                                   "is imported (give the object itself, e.g. load_trained(path, activation=fn))")
    module_name, name = spec.strip().split(":")
    if module_name.split(".")[0] in SYSTEM_MODULES:
        raise ParameterError(what, f"{where}: module {module_name!r} acts on the system, it holds no {what} (give "
                                   "one of your own module, e.g. 'mypkg.acts:cube')")
    module = _import(module_name, what, where)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ParameterError(what, f"{where}: module {module_name!r} has no {name!r}")
        obj = getattr(obj, part)
    info = provenance_of(spec, module)
    IMPORTED[spec.strip()] = info
    return obj, info


def _given(spec: str):
    """The object of ``spec``, whose module the user's word imported already (nothing is imported)."""
    module_name, name = spec.split(":")
    obj = sys.modules[module_name]
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _import(module_name: str, what: str, where: str):
    """The module ``module_name``, from the working directory too; any error in one line."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:  # a user's file in the working directory, as `python -m` would find it
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - the user's module: its error, in one line
        raise ParameterError(what, f"{where}: cannot import module {module_name!r} ({type(e).__name__}: "
                                   f"{' '.join(str(e).split())[:160]})") from None
    finally:
        if added:
            sys.path.remove(cwd)
