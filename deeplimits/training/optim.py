"""Optimisers for parameters that hold ``C`` independent configurations (docs/training.md).

PyTorch's optimisers take one learning rate per parameter tensor; here every parameter
declares its configuration axis and the learning rate is a tensor with one value per config,
broadcast along that axis. With the total loss the sum of the per-config losses, the ``C``
configs then follow exactly the trajectories they would follow trained one by one with
``torch.optim.Adam`` / ``torch.optim.SGD`` (up to rounding).

A boolean mask :attr:`finite` ``(C,)`` records the configs still alive: :meth:`step` with
``loss`` (the per-config losses ``(C,)``) clears the entry of every config whose loss, or any
entry of whose gradient, is not finite, and a cleared config gets no further update (its
parameters and optimiser state stay as they were).
"""

from __future__ import annotations

import numbers

import torch

from .. import _validate as V_

__all__ = ["BatchedAdam", "BatchedSGD"]


def _axes(params) -> dict:
    """``{parameter: config axis}`` from a dict or an object with ``config_axes()``."""
    if hasattr(params, "config_axes"):
        params = params.config_axes()
    if not isinstance(params, dict) or not params:
        raise ValueError("params must be a non-empty dict {parameter: config axis} or a module with config_axes()")
    for p, a in params.items():
        if not isinstance(p, torch.Tensor) or not p.requires_grad:
            raise ValueError(f"params keys must be tensors that require grad, got {type(p).__name__}")
        V_.integer("config axis", a, low=0, high=p.dim() - 1)
    return params


def _lr(lr, configs: int) -> torch.Tensor:
    """Learning rates ``(C,)`` in float64 from a number or ``C`` real values, each finite and > 0."""
    bad = ValueError(f"lr must be a number or one real number per config ({configs}), got {lr!r:.80}")
    if isinstance(lr, numbers.Real) and not isinstance(lr, bool):
        lr = [float(lr)] * configs
    elif isinstance(lr, torch.Tensor):
        V_.has_data("lr", lr)
        if lr.dtype == torch.bool or lr.is_complex():
            raise bad
    elif isinstance(lr, (str, bytes, bool)) or not hasattr(lr, "__len__"):
        raise bad
    try:
        t = torch.as_tensor(lr, dtype=torch.float64).detach().clone().reshape(-1)
    except (TypeError, ValueError, RuntimeError):
        raise bad from None
    if t.numel() != configs:
        raise ValueError(f"lr must be a number or have one value per config ({configs}), got {t.numel()}")
    if not bool(torch.isfinite(t).all()) or bool((t <= 0).any()):
        raise ValueError(f"lr must be finite and > 0, got {t.tolist()}")
    return t


def _betas(betas) -> tuple[float, float]:
    """Adam's ``(beta1, beta2)``: two reals in [0, 1)."""
    pair = V_.sequence("betas", betas, what="a pair (beta1, beta2) of reals in [0, 1)")
    if len(pair) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2) of reals in [0, 1), got {betas!r}")
    return tuple(V_.real(f"betas[{i}]", b, low=0.0, high=1.0, high_open=True) for i, b in enumerate(pair))


def _pick(cond: torch.Tensor, a: float, b: float) -> torch.Tensor:
    """``a`` where ``cond`` else ``b``, in float64 (``torch.where`` of two Python numbers gives
    float32, which would round a coefficient such as 0.9)."""
    return torch.where(cond, _f64(a, cond), _f64(b, cond))


def _f64(x: float, like: torch.Tensor) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64, device=like.device)


def _view(t: torch.Tensor, p: torch.Tensor, axis: int) -> torch.Tensor:
    """``t`` ``(C,)`` shaped to broadcast along ``p``'s config axis, in ``p``'s dtype and device."""
    shape = [1] * p.dim()
    shape[axis] = -1
    return t.to(device=p.device, dtype=p.dtype if t.dtype.is_floating_point else t.dtype).reshape(shape)


class _Batched(torch.optim.Optimizer):
    def __init__(self, params, lr, defaults: dict):
        axes = _axes(params)
        sizes = {p.shape[a] for p, a in axes.items()}
        if len(sizes) != 1:
            raise ValueError(f"params must all have the same number of configs along their axis, got {sorted(sizes)}")
        self.configs = sizes.pop()
        groups = [{"params": [p], "axis": a} for p, a in axes.items()]
        super().__init__(groups, dict(lr=_lr(lr, self.configs), **defaults))
        self.finite = torch.ones(self.configs, dtype=torch.bool)
        self._scratch: dict = {}  # not optimiser state: never saved
        self._workspace = getattr(params, "_workspace", None)  # a ResidualNetwork's buffers

    @property
    def lr(self) -> torch.Tensor:
        """The learning rates ``(C,)``; assign a number or ``C`` values to change them."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value):
        t = _lr(value, self.configs)
        for g in self.param_groups:
            g["lr"] = t

    def zero_grad(self, set_to_none: bool = True):
        """Clear the gradients; with ``set_to_none`` (the default) the gradient tensors of a
        :class:`~deeplimits.training.ResidualNetwork` go back to its workspace and the next
        backward pass writes into them (a fresh tensor of that size costs a page fault per
        4 KiB on CPU): a reference to an old ``.grad`` kept across steps is overwritten, as
        with ``set_to_none=False``."""
        if set_to_none and self._workspace is not None:
            for g in self.param_groups:
                p = g["params"][0]
                if p.grad is not None and p.grad.dim() >= 3:
                    self._workspace.recycle(p.grad)
                    p.grad = None
        super().zero_grad(set_to_none=set_to_none)

    @torch.no_grad()
    def mark(self, loss: torch.Tensor | None = None) -> torch.Tensor:
        """Clear :attr:`finite` for configs with a non-finite ``loss`` ``(C,)`` or gradient."""
        if loss is not None:
            if not isinstance(loss, torch.Tensor):
                raise ValueError(f"loss must be a tensor of shape ({self.configs},) (one loss per config), "
                                 f"got {type(loss).__name__}")
            loss = V_.has_data("loss", loss).detach()
            if loss.shape != (self.configs,):
                raise ValueError(f"loss must have shape ({self.configs},) (one loss per config), "
                                 f"got {tuple(loss.shape)}")
            self.finite &= torch.isfinite(loss).cpu()
        for g in self.param_groups:
            p, a = g["params"][0], g["axis"]
            if p.grad is not None:
                # one pass: a sum over a config's entries is finite only if every entry is
                # (an overflow of finite entries to inf also flags the config: it is blowing up)
                dims = [i for i in range(p.dim()) if i != a]
                ok = torch.isfinite(p.grad.sum(dim=dims) if dims else p.grad)
                self.finite &= ok.cpu()
        return self.finite

    @torch.no_grad()
    def step(self, closure=None, *, loss: torch.Tensor | None = None):
        """One update of every config still :attr:`finite` (``loss``: per-config losses ``(C,)``)."""
        out = None
        if V_.callback("closure", closure) is not None:
            with torch.enable_grad():
                out = closure()
        self.mark(loss)
        for g in self.param_groups:
            p = g["params"][0]
            if p.grad is not None:
                self._update(p, g)
        return out

    def state_dict(self) -> dict:
        """PyTorch's optimiser state plus the :attr:`finite` mask."""
        out = super().state_dict()
        out["finite"] = self.finite.clone()
        return out

    def load_state_dict(self, state_dict: dict):
        state_dict = dict(state_dict)
        finite = state_dict.pop("finite", None)
        super().load_state_dict(state_dict)
        if finite is not None:
            self.finite = torch.as_tensor(finite, dtype=torch.bool).clone()

    def _grad(self, p, group):
        """The gradient with the L2 penalty, zero for the frozen configs (in place when there is
        no penalty: a frozen config's gradient may be NaN and must not reach any state)."""
        grad = p.grad if group["weight_decay"] == 0 else p.grad.add(p, alpha=group["weight_decay"])
        if not bool(self.finite.all()):
            self._zero_frozen(grad, group["axis"])
        return grad

    def _zero_frozen(self, t: torch.Tensor, axis: int) -> torch.Tensor:
        """Zero the frozen configs' slices of ``t`` (``index_fill_``: a hundred times faster on
        CPU than ``masked_fill_`` with a broadcast mask)."""
        frozen = (~self.finite).nonzero().squeeze(1).to(t.device)
        return t.index_fill_(axis, frozen, 0.0)

    def _temporary(self, p):
        """A persistent temporary shaped like ``p`` (a fresh one page-faults every step on CPU)."""
        u = self._scratch.get(p)
        if u is None:
            u = self._scratch[p] = torch.empty_like(p)
        return u

    def _update(self, p, group):  # pragma: no cover - abstract
        raise NotImplementedError


class BatchedAdam(_Batched):
    """Adam (Kingma & Ba 2015, as ``torch.optim.Adam``) with one learning rate per config.

    Args:
        params: ``{parameter: config axis}`` or a module with ``config_axes()``
            (e.g. :class:`~deeplimits.training.modules.ResidualNetwork`).
        lr: a number or ``C`` values (a list or tensor), each finite and > 0.
        betas: two reals in [0, 1). eps: > 0. weight_decay: >= 0 (an L2 penalty added to the
            gradient). As in ``torch.optim.Adam``.

    Bias corrections count the steps of each config, so a frozen config does not age.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0):
        b1, b2 = _betas(betas)
        eps = V_.real("eps", eps, low=0.0, low_open=True)
        wd = V_.real("weight_decay", weight_decay, low=0.0)
        super().__init__(params, lr, dict(betas=(b1, b2), eps=eps, weight_decay=wd))

    def _update(self, p, group):
        b1, b2 = group["betas"]
        a = group["axis"]
        st = self.state[p]
        if not st:
            st["step"] = torch.zeros(self.configs, dtype=torch.float64)
            st["exp_avg"], st["exp_avg_sq"] = torch.zeros_like(p), torch.zeros_like(p)
        live = self.finite
        grad = self._grad(p, group)
        step = st["step"] + live.to(torch.float64)
        # a frozen config gets step size 0 (and a harmless bias correction: its step may be 0)
        step_size = _view(torch.where(live, group["lr"] / (1 - b1 ** step), _f64(0.0, live)), p, a)
        bc2_sqrt = _view(torch.where(live, (1 - b2 ** step).sqrt(), _f64(1.0, live)), p, a)
        m, v = st["exp_avg"], st["exp_avg_sq"]
        if bool(live.all()):
            m.lerp_(grad, 1 - b1)
            v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        else:  # a frozen config's moments stay as they are (its gradient is zero here)
            m.lerp_(grad, _view(live.to(torch.float64) * (1 - b1), p, a))
            v.mul_(_view(_pick(live, b2, 1.0), p, a)).addcmul_(grad, grad, value=1 - b2)
        u = torch.sqrt(v, out=self._temporary(p)).div_(bc2_sqrt).add_(group["eps"])
        torch.div(m, u, out=u).mul_(step_size)
        if not bool(live.all()):
            self._zero_frozen(u, a)  # exactly no update, even where m / u is 0 / 0 (eps = 0)
        p.sub_(u)
        st["step"] = step


class BatchedSGD(_Batched):
    """SGD (as ``torch.optim.SGD``: momentum, dampening, Nesterov, L2 weight decay) with one
    learning rate per config; ``params`` and ``lr`` as for :class:`BatchedAdam`; ``momentum``
    in [0, 1), ``dampening`` in [0, 1], ``weight_decay`` >= 0, ``nesterov`` True or False
    (True needs momentum > 0 and dampening 0)."""

    def __init__(self, params, lr=1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        momentum = V_.real("momentum", momentum, low=0.0, high=1.0, high_open=True)
        dampening = V_.real("dampening", dampening, low=0.0, high=1.0)
        wd = V_.real("weight_decay", weight_decay, low=0.0)
        if V_.flag("nesterov", nesterov) and (momentum <= 0 or dampening != 0):
            raise ValueError("nesterov requires momentum > 0 and dampening = 0")
        super().__init__(params, lr, dict(momentum=momentum, dampening=dampening, weight_decay=wd,
                                          nesterov=bool(nesterov)))

    def _update(self, p, group):
        a, mu = group["axis"], group["momentum"]
        live = self.finite
        grad = self._grad(p, group)
        lr = _view(torch.where(live, group["lr"], _f64(0.0, live)), p, a)
        if mu != 0:
            st = self.state[p]
            if not st:
                st["step"] = torch.zeros(self.configs, dtype=torch.float64)
                st["momentum_buffer"] = torch.zeros_like(p)
            first, buf = st["step"] == 0, st["momentum_buffer"]
            # live: buf <- grad at a config's first step, else mu buf + (1 - dampening) grad;
            # frozen: buf unchanged (its gradient is zero here)
            keep = torch.where(live & ~first, _f64(mu, live), _pick(live, 0.0, 1.0))
            take = torch.where(live & ~first, _f64(1 - group["dampening"], live), _pick(live, 1.0, 0.0))
            buf.mul_(_view(keep, p, a)).addcmul_(grad, _view(take, p, a))
            st["step"] = st["step"] + live.to(torch.float64)
            grad = torch.add(grad, buf, alpha=mu, out=self._temporary(p)) if group["nesterov"] else buf
        p.addcmul_(grad, lr, value=-1.0)
