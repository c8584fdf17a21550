"""A user's object from the ``module:Name`` the user typed (``--block mymodels:Gated``), imported
on the user's own command, never because a stored file names it (docs/cli.md, "Your own objects").

:func:`load_user_object` imports ``module`` (from the working directory too, where a user keeps
the file), reads ``Name`` off it (``Outer.Inner`` reads an attribute of an attribute) and returns
the object with its provenance ``{"module", "name", "sha256"}``, the SHA-256 of the module's source
file: a run records it, so that a resumed run whose file changed is refused, not mixed. A bad module
or name is one line naming the flag.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys

from .errors import ParameterError

__all__ = ["load_user_object"]

_SPEC = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


def load_user_object(spec: str, *, what: str) -> tuple[object, dict]:
    """``(object, {"module", "name", "sha256"})`` of ``spec`` (``'module:Name'``) given to the flag
    ``--what``; a one-line :class:`~deeplimits.errors.ParameterError` naming ``what`` when the text,
    the module or the name is wrong."""
    flag = f"--{what.replace('_', '-')}"
    if not isinstance(spec, str) or not _SPEC.match(spec.strip()):
        raise ParameterError(what, f"{flag} must be module:Name (e.g. mymodels:Gated), got {spec!r:.80}")
    module_name, name = spec.strip().split(":")
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:  # a user's file in the working directory, as `python -m` would find it
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - the user's module: its error, in one line
        text = " ".join(str(e).split())
        raise ParameterError(what, f"{flag} {spec}: cannot import module {module_name!r} ({type(e).__name__}: "
                                   f"{text[:160]})") from None
    finally:
        if added:
            sys.path.remove(cwd)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ParameterError(what, f"{flag} {spec}: module {module_name!r} has no {name!r}")
        obj = getattr(obj, part)
    source = getattr(module, "__file__", None)
    sha = None
    if source and os.path.isfile(source):
        with open(source, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
    return obj, {"module": module_name, "name": name, "sha256": sha}
