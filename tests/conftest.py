"""Shared test set-up: no test leaves a regime registered (a documentation example registers
``linear-sde`` to show how; the registry is restored after every test so that later tests see
the package's own regimes only)."""

import pytest

from deeplimits.regimes import REGISTRY


@pytest.fixture(autouse=True)
def _restore_regime_registry():
    saved = dict(REGISTRY)
    yield
    if REGISTRY != saved:
        REGISTRY.clear()
        REGISTRY.update(saved)
