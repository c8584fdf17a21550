"""The per-configuration losses of :func:`~deeplimits.training.train` and the evaluation of a
:class:`~deeplimits.training.modules.ResidualNetwork` (docs/training.md, "The training loop"):
cross-entropy, half the squared error summed over the outputs (``'squared'``) or the squared
error averaged over the outputs (``'mse'``, ``torch.nn.MSELoss()``'s convention: ``2 / k`` times
``'squared'`` for ``k`` outputs), one mean per configuration, so that their sum gives each
configuration exactly its own gradient.
"""

from __future__ import annotations

import torch

from .. import _validate as V_
from ..data.batching import batches
from ..errors import ParameterError
from .modules import ResidualNetwork

__all__ = ["LOSSES", "EVAL_BATCH", "config_losses", "evaluate", "evaluate_batches"]

LOSSES = ("cross_entropy", "squared", "mse")
#: mini-batch of :func:`evaluate` (no gradient)
EVAL_BATCH = 1024


def config_losses(out: torch.Tensor, y: torch.Tensor, loss: str) -> torch.Tensor:
    """Per-configuration mean losses ``(C,)`` of outputs ``(C, batch, k)`` against ``y``:
    cross-entropy with class labels ``(batch,)`` (``int64`` in ``[0, k)``), or with targets
    ``(batch, k)`` (the dtype of ``out``) half the squared error summed over the outputs
    (``'squared'``) or the squared error averaged over them (``'mse'``)."""
    loss = V_.choice("loss", loss, LOSSES)
    out = V_.tensor("out", out, finite=False)
    if out.dim() != 3 or 0 in out.shape:
        raise ParameterError("out", "out must have shape (configs, batch, outputs), none empty, got "
                                    f"{tuple(out.shape)}")
    _targets("y", y, loss, out.shape[1], out.shape[2], out.dtype, out.device)
    return _config_losses(out, y, loss)


def _config_losses(out, y, loss):
    C, B, K = out.shape
    if loss == "cross_entropy":
        per = torch.nn.functional.cross_entropy(out.reshape(C * B, K), y.repeat(C), reduction="none")
        return per.view(C, B).mean(1)
    if loss == "mse":
        return ((out - y.unsqueeze(0)) ** 2).mean((-1, -2))
    return 0.5 * ((out - y.unsqueeze(0)) ** 2).sum(-1).mean(-1)


def _targets(name, y, loss, n, k, dtype, device):
    """Class labels ``(n,)`` in ``[0, k)`` for cross-entropy, else targets ``(n, k)`` of ``dtype``
    (``n=None``: any number)."""
    if loss == "cross_entropy":
        V_.labels(name, y, k, n)
    else:
        V_.tensor(name, y, shape=(n, k), dtype_=dtype)
    return V_.same_device(name, y, device, "the outputs'")


def _pair(module, x_name, x, y_name, y, loss):
    """Inputs ``(n, d_in)`` (``n >= 1``, finite, the module's dtype and device) and their targets."""
    V_.inputs(x_name, x, module.in_features, module.A)
    _targets(y_name, y, loss, x.shape[0], module.out_features, module.A.dtype, module.A.device)


def _module(module) -> ResidualNetwork:
    if not isinstance(module, ResidualNetwork):
        raise ParameterError("module", f"module must be a ResidualNetwork, got {type(module).__name__}")
    return module


@torch.no_grad()
def evaluate(module: ResidualNetwork, x: torch.Tensor, y: torch.Tensor, loss: str, batch_size: int = EVAL_BATCH):
    """Mean loss ``(C,)`` and, for cross-entropy, accuracy ``(C,)`` (else ``None``) over ``(x, y)``:
    ``x`` ``(n, d_in)`` with ``n >= 1``, ``y`` class labels ``(n,)`` or targets ``(n, d_out)``."""
    loss = V_.choice("loss", loss, LOSSES)
    _pair(_module(module), "x", x, "y", y, loss)
    return _evaluate(module, x, y, loss, V_.integer("batch_size", batch_size))


@torch.no_grad()
def _evaluate(module, x, y, loss, batch_size=EVAL_BATCH):
    return evaluate_batches(module, batches((x, y), batch_size, shuffle=False), loss)


@torch.no_grad()
def evaluate_batches(module, pairs, loss: str):
    """Mean loss ``(C,)`` and, for cross-entropy, accuracy ``(C,)`` (else ``None``) over the
    mini-batches ``(x, y)`` of ``pairs`` (checked by the caller), weighted by their sizes."""
    total, correct, n = 0.0, 0.0, 0
    for xb, yb in pairs:
        out = module(xb)
        total = total + _config_losses(out, yb, loss) * len(xb)
        if loss == "cross_entropy":
            correct = correct + (out.argmax(-1) == yb.unsqueeze(0)).sum(-1).to(torch.float64)
        n += len(xb)
    return total / n, (correct / n if loss == "cross_entropy" else None)
