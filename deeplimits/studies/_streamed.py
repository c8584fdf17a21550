"""The layers of a propagation pass, drawn as the forward pass reaches them (docs/propagation.md).

The forward pass of :func:`~deeplimits.studies.propagation.core._propagate` reads layer ``k`` just
after layer ``k - 1``: :class:`StreamedLayers` draws each weight's next block of layers in a
background thread while the pass consumes the current one, so the pass runs on weights still
in the cache and the drawing (the floor of a study with fresh i.i.d. weights) overlaps the
arithmetic. The blocks are kept for the backward pass, which reads them in reverse. The
numbers are those of :meth:`~deeplimits.paths.DriverSample.iter_weights`, block by block: the
same seed gives the same weights as drawing them all first.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

__all__ = ["StreamedLayers"]


class StreamedLayers:
    """``layers[k] = {name: weight_k}`` (one entry per weight of ``samples``, name -> DriverSample,
    in their order) of the first ``n`` layers of the depth-``depth`` weights."""

    def __init__(self, samples: dict, depth: int, n: int):
        self.n = n
        self._its = {nm: s.iter_weights(depth) for nm, s in samples.items()}
        self._views: dict[str, list] = {nm: [] for nm in samples}
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="deeplimits-layers")
        self._next = {nm: self._pool.submit(next, it, None) for nm, it in self._its.items()}

    def __len__(self) -> int:
        return self.n

    def _grow(self, nm: str, k: int) -> None:
        views = self._views[nm]
        while len(views) <= k:
            block = self._next[nm].result()
            if block is None:
                raise IndexError(f"layer {k} beyond the {len(views)} layers of weight {nm}")
            views.extend(block.unbind(0))
            # the next block is drawn while this one is used, unless it would not be needed
            self._next[nm] = (self._pool.submit(next, self._its[nm], None) if len(views) < self.n else
                              _done(None))

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.n))]
        if not 0 <= k < self.n:
            raise IndexError(k)
        for nm in self._views:
            self._grow(nm, k)
        if k == self.n - 1:  # every block is drawn
            self._pool.shutdown(wait=False)
        return {nm: views[k] for nm, views in self._views.items()}


def _done(value):
    from concurrent.futures import Future

    f: Future = Future()
    f.set_result(value)
    return f
