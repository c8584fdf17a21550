"""The executor arguments of a sweep (``workers``, ``scheduler``, ``timeout``), checked the same way
by the sweep runner, the studies and the command line before any work (one-line ``ValueError``
naming the parameter)."""

from __future__ import annotations

import re

from ._validate import integer, real
from .errors import ParameterError

__all__ = ["workers", "scheduler", "timeout", "executor"]

_SCHEDULER = re.compile(r"^(?:(?:tcp|tls|ucx|ws|wss|inproc)://)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


def workers(value) -> int | None:
    """``None`` (run in this process) or a number of local Dask worker processes ``>= 1``."""
    return None if value is None else integer("workers", value, low=1, high=1024)


def scheduler(value) -> str | None:
    """``None`` or a Dask scheduler address: ``[tcp|tls|ucx|ws|wss|inproc]://HOST:PORT`` or ``HOST:PORT``."""
    if value is None:
        return None
    m = _SCHEDULER.match(value) if isinstance(value, str) else None
    if m is None or not 1 <= int(m.group(2)) <= 65535:
        raise ParameterError("scheduler", "scheduler must be a Dask scheduler address like tcp://HOST:PORT (port in "
                                          f"1..65535), got {value!r}")
    return value


def timeout(value) -> float | None:
    """``None`` (the default) or seconds in (0, 86400] to wait for a Dask scheduler or its workers."""
    return None if value is None else real("timeout", value, low=0.0, high=86400.0, low_open=True)


def executor(workers_, scheduler_, timeout_=None) -> tuple[int | None, str | None, float | None]:
    """``workers`` xor ``scheduler`` (or neither), each well-formed, and a ``timeout``."""
    w, s, t = workers(workers_), scheduler(scheduler_), timeout(timeout_)
    if w is not None and s is not None:
        raise ParameterError("workers", "give workers (a local cluster) or scheduler (an existing one), not both")
    if w is not None or s is not None:
        from ._extras import need

        need("distributed")  # before any work: a missing extra is a one-line message
    return w, s, t

