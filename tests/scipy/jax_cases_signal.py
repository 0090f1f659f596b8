"""jax.scipy.signal cases for the JAX agreement harness (see jax_cases.py)."""
from __future__ import annotations

import numpy as np

from jax_cases import JaxCase, normal

S9 = normal("s9", (9,))
S4 = normal("s4", (4,))
M45 = normal("m45", (4, 5))
M23 = normal("m23", (2, 3))
C6 = normal("c6", (6,), np.complex128)
LONG = normal("long", (64,))
TWO = normal("two", (2, 50))
Y50 = normal("y50", (50,))


def _g(J):
    return J.scipy.signal


def _c(name, call, **kw):
    return JaxCase("signal." + name, call, **kw)


CASES = [
    _c("convolve/full", lambda J: _g(J).convolve(S9, S4), jit=True),
    _c("convolve/same_swapped", lambda J: _g(J).convolve(S4, S9, mode="same")),
    _c("convolve/valid", lambda J: _g(J).convolve(S9, S4, mode="valid")),
    _c("convolve/fft", lambda J: _g(J).convolve(S9, S4, method="fft", mode="same")),
    _c("convolve/int", lambda J: _g(J).convolve(np.arange(5), np.array([1, 2]))),
    _c("convolve/2d", lambda J: _g(J).convolve(M45, M23)),
    _c("convolve/bad_method", lambda J: _g(J).convolve(S9, S4, method="other")),
    _c("convolve/bad_mode", lambda J: _g(J).convolve(S9, S4, mode="other")),
    _c("convolve/mixed_sizes", lambda J: _g(J).convolve(normal("a", (2, 5)),
                                                        normal("b", (3, 2)))),
    _c("convolve2d/same", lambda J: _g(J).convolve2d(M45, M23, mode="same")),
    _c("convolve2d/valid", lambda J: _g(J).convolve2d(M45, M23, mode="valid")),
    _c("convolve2d/boundary", lambda J: _g(J).convolve2d(M45, M23, boundary="wrap")),
    _c("convolve2d/1d", lambda J: _g(J).convolve2d(S9, S4)),
    _c("correlate/full", lambda J: _g(J).correlate(S9, S4)),
    _c("correlate/complex_same", lambda J: _g(J).correlate(C6, S4, mode="same")),
    _c("correlate2d/full", lambda J: _g(J).correlate2d(M45, M23)),
    _c("correlate2d/full_swap", lambda J: _g(J).correlate2d(M23, M45)),
    _c("correlate2d/same", lambda J: _g(J).correlate2d(M45, M23, mode="same")),
    _c("correlate2d/valid_swap", lambda J: _g(J).correlate2d(M23, M45, mode="valid")),
    _c("fftconvolve/full", lambda J: _g(J).fftconvolve(S9, S4)),
    _c("fftconvolve/valid_2d", lambda J: _g(J).fftconvolve(M45, M23, mode="valid")),
    _c("fftconvolve/axes", lambda J: _g(J).fftconvolve(M45, normal("m42", (4, 2)), axes=1)),
    _c("fftconvolve/complex", lambda J: _g(J).fftconvolve(C6, S4, mode="same")),
    _c("fftconvolve/ranks", lambda J: _g(J).fftconvolve(M45, S4)),
    _c("detrend/linear", lambda J: _g(J).detrend(LONG)),
    _c("detrend/constant_axis0", lambda J: _g(J).detrend(M45, axis=0, type="constant")),
    _c("detrend/breakpoints", lambda J: _g(J).detrend(TWO, bp=[10, 30])),
    _c("detrend/bad_type", lambda J: _g(J).detrend(LONG, type="quadratic")),
    _c("stft", lambda J: _g(J).stft(LONG, nperseg=16), jit=True),
    _c("stft/fs_noverlap", lambda J: _g(J).stft(TWO, fs=10.0, nperseg=8, noverlap=2)),
    _c("stft/no_boundary", lambda J: _g(J).stft(LONG, nperseg=10, boundary=None,
                                                padded=False, nfft=12)),
    _c("stft/even_boundary", lambda J: _g(J).stft(LONG, nperseg=8, boundary="even")),
    _c("stft/twosided", lambda J: _g(J).stft(LONG, nperseg=8, return_onesided=False)),
    _c("stft/window_name", lambda J: _g(J).stft(LONG, nperseg=8, window="hamming")),
    _c("stft/detrend", lambda J: _g(J).stft(LONG, nperseg=8, detrend="linear")),
    _c("istft", lambda J: _g(J).istft(_g(J).stft(LONG, nperseg=16)[2], nperseg=16)),
    _c("istft/axes", lambda J: _g(J).istft(
        J.numpy.swapaxes(_g(J).stft(TWO, nperseg=8)[2], -1, -2), time_axis=-2,
        freq_axis=-1)),
    _c("istft/1d", lambda J: _g(J).istft(LONG)),
    _c("welch", lambda J: _g(J).welch(LONG, nperseg=16), jit=True),
    _c("welch/default_nperseg", lambda J: _g(J).welch(LONG)),
    _c("welch/spectrum_median", lambda J: _g(J).welch(TWO, fs=4.0, nperseg=10,
                                                      scaling="spectrum", average="median")),
    _c("welch/odd_nfft", lambda J: _g(J).welch(LONG, nperseg=8, nfft=9)),
    _c("welch/axis0", lambda J: _g(J).welch(TWO.T, nperseg=10, axis=0)),
    _c("welch/bad_scaling", lambda J: _g(J).welch(LONG, scaling="other")),
    _c("csd", lambda J: _g(J).csd(TWO, Y50, nperseg=10)),
    _c("csd/median", lambda J: _g(J).csd(LONG[:50], Y50, nperseg=10, average="median")),
    _c("csd/none", lambda J: _g(J).csd(LONG, None, nperseg=8)),
    _c("csd/bad_average", lambda J: _g(J).csd(LONG[:50], Y50, nperseg=10, average="mode")),
]
