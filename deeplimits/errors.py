"""The package's exceptions: what a caller can catch by kind.

* :class:`ResourceError` (a ``ValueError``): a request that cannot fit, refused at plan time with
  the estimate and the parameters to change (``knobs``).
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["ResourceError"]


class ResourceError(ValueError):
    """A request that cannot fit: raised at plan time, before any work, with the estimate.

    ``needed`` and ``available`` are bytes (or counts, with ``unit``); ``knobs`` are the
    parameter names to change (the CLI shows them as flags)."""

    def __init__(self, message: str, *, needed: float, available: float, knobs: Sequence[str] = ()):
        super().__init__(message)
        self.needed, self.available, self.knobs = needed, available, tuple(knobs)
