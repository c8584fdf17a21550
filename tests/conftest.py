"""Shared test set-up: no test leaves a regime registered (a documentation example registers
``linear-sde`` to show how; the registry is restored after every test so that later tests see
the package's own regimes only). Run in parallel (``pytest -n 2``, pytest-xdist: the README's test
command), each worker keeps torch on one thread, so two workers share two cores without
oversubscribing them."""

import os

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    import torch

    torch.set_num_threads(1)

from deeplimits.regimes import REGISTRY


@pytest.fixture(autouse=True)
def _restore_regime_registry():
    saved = dict(REGISTRY)
    yield
    if REGISTRY != saved:
        REGISTRY.clear()
        REGISTRY.update(saved)
