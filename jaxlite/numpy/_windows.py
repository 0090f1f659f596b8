"""Window functions for signal processing: bartlett, blackman, hamming, hanning, kaiser.

Mirrors the `jax.numpy` functions of those names: `M` samples of the window, in the
default float dtype, computed from an iota. `M < 1` gives an empty array and `M == 1` a
single one, as in numpy.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import concrete_int, ensure_array
from jaxlite.numpy._special_math import i0

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _window(fun_name: str, M: int, shape_fn: Callable[[Any, int, np.dtype], Any]) -> Any:
    """`shape_fn(n, M, dtype)` on n = 0, ..., M - 1, with numpy's small-M cases."""
    M = concrete_int(M, f"{fun_name}: M")
    dtype = dtypes.default_float_dtype()
    if M < 1:
        return lax.full((0,), 0, dtype)
    if M == 1:
        return lax.full((1,), 1, dtype)
    return shape_fn(lax.iota(dtype, M), M, dtype)


def _const(value: float, dtype: np.dtype) -> np.ndarray:
    return np.asarray(value, dtype)


def _cosine_sum(coefficients: tuple[float, ...]) -> Callable[[Any, int, np.dtype], Any]:
    """The window sum_k (-1)^k a_k cos(2 pi k n / (M - 1))."""
    def shape_fn(n: Any, M: int, dtype: np.dtype) -> Any:
        phase = lax.mul(n, _const(2 * np.pi / (M - 1), dtype))
        out = lax.full_like(n, coefficients[0])
        for k, a in enumerate(coefficients[1:], start=1):
            term = lax.mul(_const(a, dtype), lax.cos(lax.mul(phase, _const(k, dtype))))
            out = lax.sub(out, term) if k % 2 else lax.add(out, term)
        return out
    return shape_fn


def bartlett(M: int) -> Any:
    """The triangular Bartlett window of `M` samples (mirrors `jax.numpy.bartlett`)."""
    def shape_fn(n: Any, M: int, dtype: np.dtype) -> Any:
        half = _const((M - 1) / 2, dtype)
        return lax.sub(_const(1, dtype), lax.abs(lax.div(lax.sub(n, half), half)))
    return _window("bartlett", M, shape_fn)


def blackman(M: int) -> Any:
    """The Blackman window of `M` samples (mirrors `jax.numpy.blackman`)."""
    return _window("blackman", M, _cosine_sum((0.42, 0.5, 0.08)))


def hamming(M: int) -> Any:
    """The Hamming window of `M` samples (mirrors `jax.numpy.hamming`)."""
    return _window("hamming", M, _cosine_sum((0.54, 0.46)))


def hanning(M: int) -> Any:
    """The Hann window of `M` samples (mirrors `jax.numpy.hanning`)."""
    return _window("hanning", M, _cosine_sum((0.5, 0.5)))


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window of `M` samples with shape parameter `beta` (mirrors
    `jax.numpy.kaiser`): I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)."""
    def shape_fn(n: Any, M: int, dtype: np.dtype) -> Any:
        b = lax.convert_element_type(ensure_array(beta), dtype)
        ratio = lax.sub(lax.mul(n, _const(2 / (M - 1), dtype)), _const(1, dtype))
        root = lax.sqrt(lax.sub(_const(1, dtype), lax.mul(ratio, ratio)))
        return lax.div(i0(lax.mul(b, root)), i0(b))
    return _window("kaiser", M, shape_fn)
