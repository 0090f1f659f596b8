"""Convolution and correlation: convolve, convolve2d, correlate, correlate2d and
fftconvolve (mirror the same names of `jax.scipy.signal`).

The direct methods are one lax.conv_general_dilated of the larger input with the flipped
smaller one (JAX's choice: the inputs are swapped when the second is larger in every
dimension), padded for 'full', 'same' or 'valid'; inputs must be smaller-or-equal in every
dimension one way round. fftconvolve multiplies spectra (real FFTs for real inputs) over
the full size and slices the mode's window out of the middle; `axes` maps over the other
dimensions. As JAX, convolve2d and correlate2d support only boundary='fill' with
fillvalue=0.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Sequence

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.numpy._promotion import (canonicalize_axis, check_arraylike, ensure_array,
                                      promote_dtypes_inexact)
from jaxlite.transforms.vmap import vmap

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve"]

MODES = ("full", "same", "valid")


def _fftconvolve_all_axes(in1: Any, in2: Any, mode: str) -> Any:
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
        if swap:
            in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        conv = in1 * in2
    else:
        if jnp.iscomplexobj(in1):
            forward, inverse = jnp.fft.fftn, jnp.fft.ifftn
        else:
            forward, inverse = jnp.fft.rfftn, jnp.fft.irfftn
        conv = inverse(forward(in1, full_shape) * forward(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
    starts = tuple((full - out) // 2 for full, out in zip(full_shape, out_shape))
    return lax.dynamic_slice(conv, starts, out_shape)


def fftconvolve(in1: Any, in2: Any, mode: str = "full",
                axes: Sequence[int] | None = None) -> Any:
    """Convolution by FFT (mirrors `jax.scipy.signal.fftconvolve`); with `axes`, only over
    those axes, the others (equal in size) being mapped over."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(ensure_array(in1), ensure_array(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("same", "full", "valid"):
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    convolve_fn = partial(_fftconvolve_all_axes, mode=mode)
    if axes is None:
        return convolve_fn(in1, in2)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(canonicalize_axis(ax, in1.ndim) for ax in axes)
    mapped = set(range(in1.ndim)) - set(axes)
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    for ax in sorted(mapped):
        convolve_fn = vmap(convolve_fn, in_axes=ax, out_axes=ax)
    return convolve_fn(in1, in2)


def _convolve_nd(in1: Any, in2: Any, mode: str, *, precision: Any) -> Any:
    if mode not in MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    original = in2.shape
    if swap:
        in1, in2 = in2, in1
    shape = in2.shape
    in2 = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2)
                   for s, s_o in zip(shape, original)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    result = lax.conv_general_dilated(in1[None, None], in2[None, None], (1,) * len(shape),
                                      padding, precision=precision)
    return result[0, 0]


def _arrays(name: str, *args: Any) -> list[Any]:
    check_arraylike(name, *args)
    return [ensure_array(a) for a in args]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """N-dimensional convolution (mirrors `jax.scipy.signal.convolve`); method 'fft' uses
    fftconvolve, 'direct' and 'auto' a direct convolution."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _convolve_nd(*_arrays("convolve", in1, in2), mode, precision=precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: float) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Any = None) -> Any:
    """Two-dimensional convolution (mirrors `jax.scipy.signal.convolve2d`)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(*_arrays("convolve2d", in1, in2), mode, precision=precision)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """N-dimensional cross-correlation: convolution with in2 flipped and conjugated
    (mirrors `jax.scipy.signal.correlate`)."""
    in1, in2 = _arrays("correlate", in1, in2)
    return convolve(in1, jnp.flip(in2.conj()), mode, precision=precision, method=method)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Any = None) -> Any:
    """Two-dimensional cross-correlation (mirrors `jax.scipy.signal.correlate2d`)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = _arrays("correlate2d", in1, in2)
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    same_shape = all(s1 == s2 for s1, s2 in zip(in1.shape, in2.shape))

    def flipped_first() -> Any:
        return jnp.flip(_convolve_nd(jnp.flip(in1), in2.conj(), mode, precision=precision))
    if mode == "same":
        return flipped_first()
    if mode == "valid":
        if swap and not same_shape:
            return _convolve_nd(jnp.flip(in2), in1.conj(), mode, precision=precision)
        return flipped_first()
    if swap:
        return _convolve_nd(jnp.flip(in2), in1.conj(), mode, precision=precision).conj()
    return flipped_first()
