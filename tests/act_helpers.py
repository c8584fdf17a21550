"""Activations for ``--activation MODULE:FUNCTION`` tests (tests/test_cli_thin.py)."""

import torch


def soft_cubic(x):
    """An elementwise activation with sigma(0) = 0, sigma'(0) = 1, smooth: x + x^3 / 6 damped."""
    return torch.tanh(x) + x ** 3 / 6 * torch.exp(-x ** 2)


NOT_CALLABLE = 3.0
