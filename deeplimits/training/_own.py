"""The parameters a :class:`~deeplimits.training.ResidualNetwork` holds besides its block's weights,
and the check that a block's weight names leave them alone."""

from __future__ import annotations

from ..errors import ParameterError

__all__ = ["OWN_PARAMETERS", "check_names"]

OWN_PARAMETERS = ("A", "B", "delta", "b")
"""The input layer, the readout, the trained scale and the bias (a block's optional ``b`` is that bias)."""


def check_names(block) -> None:
    """A block whose required weights are named as the network's own parameters would overwrite
    them (its input layer read as a layer's weight, silently): refused in one line naming ``arch``."""
    clash = [n for n in block.required if n in OWN_PARAMETERS]
    if clash:
        raise ParameterError("arch", f"arch {block.name!r}: its weights {clash} are named as the network's own "
                                     f"parameters {OWN_PARAMETERS} (input layer, readout, trained scale, bias): rename "
                                     "them")
