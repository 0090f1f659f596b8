"""`jaxlite.scipy.signal`: convolution and spectral analysis (mirrors `jax.scipy.signal`):
convolve, convolve2d, correlate, correlate2d, fftconvolve (`_convolve`); detrend, stft,
istft, csd, welch (`_spectral`)."""
from jaxlite.scipy.signal._convolve import (convolve, convolve2d, correlate,  # noqa: F401
                                            correlate2d, fftconvolve)
from jaxlite.scipy.signal._spectral import csd, detrend, istft, stft, welch  # noqa: F401

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]
