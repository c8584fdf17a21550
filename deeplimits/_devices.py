"""The ``device`` argument of every entry point: a device that can hold numbers here, checked
with one line naming the parameter (docs/sweeps.md, "Devices")."""

from __future__ import annotations

import torch

from .errors import ParameterError, param_name

__all__ = ["device", "device_spec"]


def device(name: str, value, dtype: torch.dtype | None = None) -> torch.device:
    """A device that can hold numbers here: ``None`` (the CPU), a name (``'cpu'``, ``'cuda'``,
    ``'cuda:1'``, ``'mps'``) or a :class:`torch.device`. Unknown names, the ``meta`` device (no
    data), devices this machine does not have and (given ``dtype``) float64 on MPS, which has
    none, are refused with one line naming ``name``."""
    dev = _device(name, value)
    if dtype == torch.float64 and dev.type == "mps":
        raise ParameterError(param_name(name), f"{name}: 'mps' has no float64; use dtype=torch.float32 on it")
    return dev


def device_spec(value, dtype: torch.dtype | None = None) -> str | None:
    """The ``device`` of a plan as its spec records it, checked (:func:`device`): ``None`` for
    the CPU (so that the specs and store keys of CPU runs stay those of before devices
    existed), else its name (``'cuda'``, ``'cuda:1'``, ``'mps'``). One encoding for every study."""
    dev = device("device", value, dtype)
    return None if dev.type == "cpu" else str(dev)


def _device(name: str, value) -> torch.device:
    if value is None:
        return torch.device("cpu")
    if not isinstance(value, (str, torch.device)):
        raise ParameterError(param_name(name), f"{name} must be a device name ('cpu', 'cuda', 'cuda:0', 'mps') or a "
                                               f"torch.device, got {type(value).__name__}")
    try:
        dev = torch.device(value)
    except (RuntimeError, ValueError):
        raise ParameterError(param_name(name), f"{name}: {value!r} is not a device (use 'cpu', 'cuda', 'cuda:0', "
                                               "'mps')") from None
    if dev.type == "cpu":
        return torch.device("cpu")
    if dev.type == "meta":
        raise ParameterError(param_name(name), f"{name}: 'meta' holds no data (tensors without numbers); use 'cpu', "
                                               "'cuda' or 'mps'")
    backend = torch.backends.mps if dev.type == "mps" else getattr(torch, dev.type, None)
    if backend is None or not hasattr(backend, "is_available"):
        raise ParameterError(param_name(name), f"{name}: {str(value)!r} is not supported (use 'cpu', 'cuda' or 'mps')")
    where = "torch.backends.mps" if dev.type == "mps" else f"torch.{dev.type}"
    if not backend.is_available():
        raise ParameterError(param_name(name), f"{name}: {str(value)!r} is not available on this machine "
                                               f"({where}.is_available() is False)")
    count = getattr(backend, "device_count", lambda: 1)()
    if dev.index is not None and dev.index >= count:
        raise ParameterError(param_name(name), f"{name}: {str(value)!r} is not available on this machine "
                                               f"({where}.device_count() is {count})")
    return dev
