"""Optimisers for parameters that hold ``C`` independent configurations (docs/training.md).

PyTorch's optimisers take one learning rate per param group; here every parameter has a
configuration axis and each configuration has its own rate: a group's ``lr`` (one number, what
``torch.optim.lr_scheduler`` reads and writes) times its factors ``lr_scale`` ``(C,)``
(:mod:`._groups`), broadcast along that axis. With the total loss the sum of the per-config
losses, the ``C`` configs then follow exactly the trajectories they would follow trained one
by one with ``torch.optim.Adam`` / ``torch.optim.SGD`` and the same scheduler (up to rounding).

A boolean mask :attr:`finite` ``(C,)`` on the parameters' device records the configs still
alive: :meth:`observe` (the per-config losses) and every :meth:`step` (the gradients) clear
the entry of every config whose loss, or any entry of whose gradient, is not finite, and a
cleared config gets no further update (its parameters and optimiser state stay as they were).
On a GPU nothing in a step reads the device from the host: the update is written so that a
frozen config's slices are left alone by masks, with no branch on the mask.
"""

from __future__ import annotations

import sys

import torch

from .. import _validate as V_
from . import _groups as G_
from ..errors import ParameterError

__all__ = ["BatchedAdam", "BatchedSGD"]

_F64 = torch.float64


def _plain(method):
    """``method`` of :class:`torch.optim.Optimizer` without its ``torch._disable_dynamo`` wrapper
    while nothing has imported ``torch._dynamo``: the wrapper's first call imports it (about 1.3 s
    of CPU, as much as importing torch) only to mark the method as not to be compiled, and nothing
    compiles before dynamo is imported. Once it is, the wrapped method (what PyTorch calls)."""
    if "torch._dynamo" in sys.modules:
        return method
    return getattr(method, "__wrapped__", method)


def _betas(betas) -> tuple[float, float]:
    """Adam's ``(beta1, beta2)``: two reals in [0, 1)."""
    pair = V_.sequence("betas", betas, what="a pair (beta1, beta2) of reals in [0, 1)")
    if len(pair) != 2:
        raise ParameterError("betas", f"betas must be a pair (beta1, beta2) of reals in [0, 1), got {betas!r}")
    return tuple(V_.real(f"betas[{i}]", b, low=0.0, high=1.0, high_open=True) for i, b in enumerate(pair))


def _pick(cond: torch.Tensor, a: float, b: float) -> torch.Tensor:
    """``a`` where ``cond`` else ``b``, in float64 (``torch.where`` of two Python numbers gives
    float32, which would round a coefficient such as 0.9), made on ``cond``'s device without a
    copy from the host."""
    return torch.where(cond, torch.full_like(cond, a, dtype=_F64), b)


def _view(t: torch.Tensor, p: torch.Tensor, axis: int) -> torch.Tensor:
    """``t`` ``(C,)`` shaped to broadcast along ``p``'s config axis, in ``p``'s dtype and device."""
    shape = [1] * p.dim()
    shape[axis] = -1
    return t.to(device=p.device, dtype=p.dtype if t.dtype.is_floating_point else t.dtype).reshape(shape)


class _Batched(torch.optim.Optimizer):
    #: on the CPU, branch on the mask (a read of host memory): all live, the plain in-place
    #: update; some frozen, their slices zeroed by ``index_fill_``. False: the masked update
    #: of the other devices (the tests run it on the CPU too).
    _host_branches = True
    _OPTIONS: tuple = ()

    def __init__(self, params, lr, options: dict, axis=None):
        if axis is not None:
            V_.integer("axis", axis, low=0)
        groups = G_.normalise(params)
        _, first = G_.tensors(groups[0].get("params", []))
        self.configs = G_.configs_of(first[:1], G_.resolve_axes(first[:1], groups[0].get("axis", axis)))
        self._device = first[0].device
        self._axes: dict = {}
        lr_, scale, ref = G_.split_lr(lr, self.configs)
        super().__init__(groups, dict(lr=lr_, lr_scale=scale, lr_ref=ref, axis=axis, **options))
        self.finite = torch.ones(self.configs, dtype=torch.bool, device=self._device)
        self._scratch: dict = {}  # not optimiser state: never saved
        self._owners = [params] if callable(getattr(params, "release_grads", None)) else []

    def add_param_group(self, param_group: dict) -> None:
        """PyTorch's ``add_param_group``, checked: ``params`` (tensors that require grad, on this
        optimiser's device, with its ``C`` configurations along their axis), ``axis`` (an integer,
        or ``None``/absent: the optimiser's ``axis``, else each tensor's ``config_axis``), ``lr``
        (a number or ``C`` values; absent: the optimiser's) and the optimiser's other options."""
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise ParameterError("param_group", "param_group must be a dict with 'params' (and optionally 'axis', "
                                                f"'lr', ...), got {type(param_group).__name__}")
        g = dict(param_group)
        g["params"], ps = G_.tensors(g["params"])
        if "lr_scale" in g or "lr_ref" in g:
            raise ParameterError("param_group", "param_group must not set lr_scale or lr_ref: give lr, a number or one "
                                                "value per config")
        g["axis"] = g.get("axis", self.defaults["axis"])
        axes = G_.resolve_axes(ps, g["axis"])
        if G_.configs_of(ps, axes) != self.configs:
            raise ParameterError("params", f"params must have this optimiser's {self.configs} configs along their "
                                           f"axis, got {G_.configs_of(ps, axes)}")
        if any(p.device != self._device for p in ps):
            raise ParameterError("params", f"params must all be on one device ({self._device}), got "
                                           f"{sorted({str(p.device) for p in ps})}")
        if "lr" in g:
            g["lr"], scale, g["lr_ref"] = G_.split_lr(g["lr"], self.configs)
        else:
            g["lr"], scale, g["lr_ref"] = (self.defaults[k] for k in ("lr", "lr_scale", "lr_ref"))
        g["lr_scale"] = scale.to(self._device)
        g.update(self._options(**{k: g.get(k, self.defaults[k]) for k in self._OPTIONS}))
        _plain(torch.optim.Optimizer.add_param_group)(self, g)
        self._axes.update(zip(ps, axes))

    @staticmethod
    def _options(**kw) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def lr(self) -> torch.Tensor:
        """The learning rates ``(C,)`` of the first param group (``lr * lr_scale``); assign a
        number or ``C`` values to set every group's (which restarts ``lr`` and ``lr_scale``)."""
        return G_.rates(self.param_groups[0])

    @lr.setter
    def lr(self, value):
        lr, scale, ref = G_.split_lr(value, self.configs)
        for g in self.param_groups:
            g.update(lr=lr, lr_scale=scale.to(self._device), lr_ref=ref)

    def zero_grad(self, set_to_none: bool = True):
        """Clear the gradients; with ``set_to_none`` (the default) a
        :class:`~deeplimits.training.ResidualNetwork` given as ``params`` takes them back
        through its public :meth:`~deeplimits.training.ResidualNetwork.release_grads` (the next
        backward pass writes into them: a reference to an old ``.grad`` kept across steps is
        overwritten, as with ``set_to_none=False``)."""
        if set_to_none:
            mine = [p for g in self.param_groups for p in g["params"]]
            for owner in self._owners:
                theirs = list(owner.parameters())
                owner.release_grads([p for p in mine if any(p is q for q in theirs)])
        _plain(torch.optim.Optimizer.zero_grad)(self, set_to_none=set_to_none)

    @torch.no_grad()
    def observe(self, loss: torch.Tensor) -> torch.Tensor:
        """Clear :attr:`finite` for the configs whose loss is not finite: ``loss`` the per-config
        losses ``(C,)`` of this step (on the device: nothing is read back to the host). Returns
        :attr:`finite`."""
        if not isinstance(loss, torch.Tensor):
            raise ParameterError("loss", f"loss must be a tensor of shape ({self.configs},) (one loss per config), "
                                         f"got {type(loss).__name__}")
        loss = V_.has_data("loss", loss).detach()
        if loss.shape != (self.configs,):
            raise ParameterError("loss", f"loss must have shape ({self.configs},) (one loss per config), got "
                                         f"{tuple(loss.shape)}")
        self.finite &= torch.isfinite(loss).to(self.finite.device)
        return self.finite

    @torch.no_grad()
    def mark(self, loss: torch.Tensor | None = None) -> torch.Tensor:
        """:meth:`observe` ``loss`` (when given), then clear :attr:`finite` for the configs with
        a non-finite gradient entry (what :meth:`step` does first). Returns :attr:`finite`."""
        if loss is not None:
            self.observe(loss)
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is not None:
                    # one pass: a sum over a config's entries is finite only if every entry is
                    # (an overflow of finite entries to inf also flags the config: it is blowing up)
                    a = self._axes[p]
                    dims = [i for i in range(p.dim()) if i != a]
                    self.finite &= torch.isfinite(p.grad.sum(dim=dims) if dims else p.grad)
        return self.finite

    @torch.no_grad()
    def step(self, closure=None):
        """One update of every config still :attr:`finite` (torch's signature: ``closure``, a
        function that recomputes the loss, is called with gradients enabled and its value
        returned; the per-config losses reach the mask through :meth:`observe`)."""
        out = None
        if V_.callback("closure", closure) is not None:
            with torch.enable_grad():
                out = closure()
        self.mark()
        live_all = None  # unknown: the masked update, no read of the mask
        if self._host_branches and self.finite.device.type == "cpu":
            live_all = bool(self.finite.all())
        for g in self.param_groups:
            rates = G_.rates(g)
            for p in g["params"]:
                if p.grad is not None:
                    self._update(p, g, self._axes[p], rates, live_all)
        return out

    def state_dict(self) -> dict:
        """PyTorch's optimiser state (the groups with their ``lr``, ``lr_scale``, ``lr_ref`` and
        ``axis``) plus the :attr:`finite` mask."""
        out = _plain(torch.optim.Optimizer.state_dict)(self)
        out["finite"] = self.finite.clone()
        return out

    def load_state_dict(self, state_dict: dict):
        """PyTorch's, then the factors, step counts and the mask moved to the parameters' device
        and checked against them."""
        state_dict = dict(state_dict)
        finite = state_dict.pop("finite", None)
        _plain(torch.optim.Optimizer.load_state_dict)(self, state_dict)
        for g in self.param_groups:
            g["lr_scale"] = self._per_config("lr_scale", g.get("lr_scale"), _F64)
            self._axes.update(zip(g["params"], G_.resolve_axes(g["params"], g.get("axis"))))
            for p in g["params"]:
                if "step" in self.state.get(p, {}):
                    self.state[p]["step"] = self.state[p]["step"].to(device=self._device, dtype=_F64)
        if finite is not None:
            self.finite = self._per_config("finite", finite, torch.bool)

    def _per_config(self, name, value, dtype) -> torch.Tensor:
        if value is None:
            raise ParameterError("state_dict", f"state_dict must be a batched optimiser's (its {name} is missing)")
        t = torch.as_tensor(value, dtype=dtype).to(self._device).clone()
        if t.shape != (self.configs,):
            raise ParameterError("state_dict", f"state_dict {name} must have shape ({self.configs},), got "
                                               f"{tuple(t.shape)}")
        return t

    def _grad(self, p, group, axis, live_all):
        """The gradient with the L2 penalty, zero for the frozen configs (in place when there is
        no penalty: a frozen config's gradient may be NaN and must not reach any state)."""
        grad = p.grad if group["weight_decay"] == 0 else p.grad.add(p, alpha=group["weight_decay"])
        if live_all is None:
            grad.masked_fill_(~_view(self.finite, p, axis), 0.0)
        elif not live_all:
            self._zero_frozen(grad, axis)
        return grad

    def _zero_frozen(self, t: torch.Tensor, axis: int) -> torch.Tensor:
        """Zero the frozen configs' slices of ``t`` on the CPU (``index_fill_``: a hundred times
        faster there than ``masked_fill_`` with a broadcast mask)."""
        frozen = (~self.finite).nonzero().squeeze(1).to(t.device)
        return t.index_fill_(axis, frozen, 0.0)

    def _temporary(self, p):
        """A persistent temporary shaped like ``p`` (a fresh one page-faults every step on CPU)."""
        u = self._scratch.get(p)
        if u is None:
            u = self._scratch[p] = torch.empty_like(p)
        return u

    def _update(self, p, group, axis, rates, live_all):  # pragma: no cover - abstract
        raise NotImplementedError


class BatchedAdam(_Batched):
    """Adam (Kingma & Ba 2015, as ``torch.optim.Adam``) with one learning rate per config.

    Args:
        params: a module with ``config_axes()`` (a
            :class:`~deeplimits.training.modules.ResidualNetwork`), a dict ``{parameter: config
            axis}``, an iterable of parameters (``module.parameters()``, a list; also
            ``(name, parameter)`` pairs) or of param groups (dicts with ``params`` and optionally
            ``axis``, ``lr``, ``betas``, ...). Each group's tensors hold the same ``C``
            configurations along their axis, on one device.
        lr: a number (the group's ``lr``) or ``C`` values (a list or tensor: ``lr = 1`` times
            these factors, ``lr_scale``), each finite and > 0.
        betas: two reals in [0, 1). eps: > 0. weight_decay: >= 0 (an L2 penalty added to the
            gradient). As in ``torch.optim.Adam``.
        axis: the configuration axis of tensors given without one (an integer), or ``None``:
            each tensor's ``config_axis`` attribute (every ``ResidualNetwork`` parameter has it).

    Bias corrections count the steps of each config, so a frozen config does not age.
    """

    _OPTIONS = ("betas", "eps", "weight_decay")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0,
                 axis: int | None = None):
        super().__init__(params, lr, self._options(betas, eps, weight_decay), axis)

    @staticmethod
    def _options(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0) -> dict:
        return dict(betas=_betas(betas), eps=V_.real("eps", eps, low=0.0, low_open=True),
                    weight_decay=V_.real("weight_decay", weight_decay, low=0.0))

    def _update(self, p, group, a, rates, live_all):
        b1, b2 = group["betas"]
        st = self.state[p]
        if not st:
            st["step"] = torch.zeros(self.configs, dtype=_F64, device=p.device)
            st["exp_avg"], st["exp_avg_sq"] = torch.zeros_like(p), torch.zeros_like(p)
        live = self.finite
        grad = self._grad(p, group, a, live_all)
        step = st["step"] + live.to(_F64)
        # a frozen config gets step size 0 (and a harmless bias correction: its step may be 0)
        step_size = _view(torch.where(live, rates / (1 - b1 ** step), 0.0), p, a)
        bc2_sqrt = _view(torch.where(live, (1 - b2 ** step).sqrt(), 1.0), p, a)
        m, v = st["exp_avg"], st["exp_avg_sq"]
        if live_all:
            m.lerp_(grad, 1 - b1)
            v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        elif live_all is None:  # the same kernels as above, the frozen slices put back by masks
            tmp, keep = self._temporary(p), _view(live, p, a)
            torch.where(keep, torch.lerp(m, grad, 1 - b1, out=tmp), m, out=m)
            torch.where(keep, torch.mul(v, b2, out=tmp).addcmul_(grad, grad, value=1 - b2), v, out=v)
        else:  # a frozen config's moments stay as they are (its gradient is zero here)
            m.lerp_(grad, _view(live.to(_F64) * (1 - b1), p, a))
            v.mul_(_view(_pick(live, b2, 1.0), p, a)).addcmul_(grad, grad, value=1 - b2)
        u = torch.sqrt(v, out=self._temporary(p)).div_(bc2_sqrt).add_(group["eps"])
        torch.div(m, u, out=u).mul_(step_size)
        if live_all is None:
            u.masked_fill_(~_view(live, p, a), 0.0)  # exactly no update of a frozen config
        elif not live_all:
            self._zero_frozen(u, a)
        p.sub_(u)
        st["step"] = step


class BatchedSGD(_Batched):
    """SGD (as ``torch.optim.SGD``: momentum, dampening, Nesterov, L2 weight decay) with one
    learning rate per config; ``params``, ``lr`` and ``axis`` as for :class:`BatchedAdam`;
    ``momentum`` in [0, 1), ``dampening`` in [0, 1], ``weight_decay`` >= 0, ``nesterov`` True
    or False (True needs momentum > 0 and dampening 0)."""

    _OPTIONS = ("momentum", "dampening", "weight_decay", "nesterov")

    def __init__(self, params, lr=1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, axis: int | None = None):
        super().__init__(params, lr, self._options(momentum, dampening, weight_decay, nesterov), axis)

    @staticmethod
    def _options(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False) -> dict:
        momentum = V_.real("momentum", momentum, low=0.0, high=1.0, high_open=True)
        dampening = V_.real("dampening", dampening, low=0.0, high=1.0)
        if V_.flag("nesterov", nesterov) and (momentum <= 0 or dampening != 0):
            raise ParameterError("nesterov", "nesterov requires momentum > 0 and dampening = 0")
        return dict(momentum=momentum, dampening=dampening, nesterov=nesterov,
                    weight_decay=V_.real("weight_decay", weight_decay, low=0.0))

    def _update(self, p, group, a, rates, live_all):
        mu = group["momentum"]
        live = self.finite
        grad = self._grad(p, group, a, live_all)
        lr = _view(torch.where(live, rates, 0.0), p, a)
        if mu != 0:
            st = self.state[p]
            if not st:
                st["step"] = torch.zeros(self.configs, dtype=_F64, device=p.device)
                st["momentum_buffer"] = torch.zeros_like(p)
            first, buf = st["step"] == 0, st["momentum_buffer"]
            # live: buf <- grad at a config's first step, else mu buf + (1 - dampening) grad;
            # frozen: buf unchanged (its gradient is zero here)
            keep = torch.where(live & ~first, mu, _pick(live, 0.0, 1.0))
            take = torch.where(live & ~first, 1 - group["dampening"], _pick(live, 1.0, 0.0))
            buf.mul_(_view(keep, p, a)).addcmul_(grad, _view(take, p, a))
            st["step"] = st["step"] + live.to(_F64)
            grad = torch.add(grad, buf, alpha=mu, out=self._temporary(p)) if group["nesterov"] else buf
        p.addcmul_(grad, lr, value=-1.0)
