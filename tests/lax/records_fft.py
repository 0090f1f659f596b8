"""Test records of fft.py: the fft primitive, each of its four kinds over 1 to 3 trailing
dimensions, with 0 to 2 batch dimensions in front.

The reference is numpy.fft (pocketfft) on the same trailing axes at the same precision.
FFT, IFFT and IRFFT read complex inputs of the record's precision, RFFT real ones; IRFFT
inputs are arbitrary complex arrays, not Hermitian spectra, so the derivative checks also
cover the imaginary parts that IRFFT ignores.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from records import Case, Record, standard_values

from jaxlite import lax

_NUMPY_TRANSFORMS = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn,
                     "IRFFT": np.fft.irfftn}


def _fft_case(rng: np.random.Generator, dtype: Any) -> Case:
    kind = str(rng.choice(list(_NUMPY_TRANSFORMS)))
    rank = int(rng.integers(1, 4))
    lengths = tuple(int(n) for n in rng.integers(1, 5, rank))
    batch = tuple(int(n) for n in rng.integers(1, 3, int(rng.integers(0, 3))))
    real = np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.finfo(dtype).dtype
    input_dtype = real if kind == "RFFT" else np.result_type(real, np.complex64)
    minor = lengths[:-1] + (lengths[-1] // 2 + 1,) if kind == "IRFFT" else lengths
    x = standard_values(rng, batch + minor, input_dtype)
    axes = tuple(range(len(batch), len(batch) + rank))

    def fun(x):
        return lax.fft(x, kind, lengths)

    def reference(x):
        return _NUMPY_TRANSFORMS[kind](x, s=lengths, axes=axes)  # keeps single precision
    return Case(fun, reference, [x])


RECORDS = [
    Record("fft", _fft_case, dtypes=(np.float32, np.complex64),
           notes="FFT, IFFT, RFFT, IRFFT over 1..3 trailing dims, 0..2 batch dims"),
]
