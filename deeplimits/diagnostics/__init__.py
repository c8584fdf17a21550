"""Diagnostics of layer-indexed weights (Cohen, Cont, Rossier & Xu, ICML 2021; Marion et al.,
JMLR 2025, §4.2; docs/weights.md): norms and the Hurst index of one tensor ``A`` of shape
``(L, ...)`` (:func:`weight_diagnostics`), their exponents across a family of depths
(:func:`scaling_exponents`), spectral norms of convolution kernels (:func:`conv_spectral_norms`) and their diagnostics
along depth (:func:`conv_weight_diagnostics`), and the weights of files, runs and modules (:func:`load_weights`)."""

from .measures import DIAGNOSTICS, WeightDiagnostics, hurst_index, weight_diagnostics
from .scaling import Exponents, hypothesis, loglog_fit, scaling_exponents, weigh_evidence
from .sources import load_weights
from .trend import from_trend, trend_loss, trend_split
from .conv_norms import conv_spectral_norms
from .conv_depth import ConvKernels, ConvWeightDiagnostics, conv_layer_norms, conv_weight_diagnostics
from .pair import own_ode_error

__all__ = ["weight_diagnostics", "WeightDiagnostics", "hurst_index", "DIAGNOSTICS", "scaling_exponents",
           "Exponents", "hypothesis", "weigh_evidence", "loglog_fit", "load_weights", "trend_split", "from_trend",
           "trend_loss", "own_ode_error", "conv_spectral_norms",
           "conv_layer_norms", "conv_weight_diagnostics", "ConvKernels", "ConvWeightDiagnostics"]
