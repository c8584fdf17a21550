"""The memory model of the scheme-order study (:mod:`deeplimits.studies.memory` holds the shared
models): the peak bytes of a chunk of draws of :func:`~deeplimits.strong_order`, counted from the
sizes alone.
"""

from __future__ import annotations

__all__ = ["scheme_order_bytes"]


def scheme_order_bytes(n: int, d: int, noise: int, reference: int, depths, item: int, driver,
                       milstein: bool = False, device=None) -> int:
    """Peak bytes of a chunk of :func:`~.study.strong_order` on ``n`` draws: the ``driver``
    (a :class:`~deeplimits.paths.Driver`) as :func:`~deeplimits.studies.convergence.memory.convergence_bytes`
    counts it (``noise`` entries), the states (``4 len(depths) + 10`` of ``n x d``) and a step of a shipped scheme: its diffusion
    ``(n, d, noise)`` and the einsum over it (three of them), and for Milstein the derivatives
    ``(noise, n, d, noise)`` twice."""
    total = driver.sweep_bytes(n * noise, reference, len(depths), item, device)
    total += item * n * d * (4 * len(depths) + 10) + 3 * item * n * d * noise
    if milstein:
        total += 2 * item * noise * n * d * noise
    return int(total)
