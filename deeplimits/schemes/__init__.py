"""One-step maps ``(h, increment, t, dt) -> h`` whose strong order can be tested on the package's
coupled driver path (:func:`deeplimits.strong_order`; docs/schemes.md).

* :class:`Scheme`: a one-step map with its declared :class:`~deeplimits.orders.StrongOrder`;
  :meth:`Scheme.of` wraps any callable (a residual block, a textbook scheme);
* for Itô and Stratonovich SDEs ``dX = f(t, X) dt + g(t, X) dW``: :class:`EulerMaruyama`,
  :class:`Milstein` (without Lévy area) and :class:`Heun` (Stratonovich), each declaring its
  order for the noise it is told (``general``, ``commutative``, ``diagonal``, ``additive``);
* for Young equations driven by fBm, ``H > 1/2``: :class:`ModifiedEuler` (Hu, Liu & Nualart 2016);
* :class:`TorchsdeScheme`: one step of a torchsde solver over the increment it is given.
"""

from .base import NOISES, Scheme
from .sde import EulerMaruyama, Heun, Milstein
from .young import ModifiedEuler
from .adapter import TorchsdeScheme

__all__ = ["Scheme", "NOISES", "EulerMaruyama", "Milstein", "Heun", "ModifiedEuler", "TorchsdeScheme"]
