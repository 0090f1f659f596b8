"""`jaxlite.scipy.fft`: the discrete cosine transform of type 2 and its inverse (mirrors
`jax.scipy.fft`: dct, dctn, idct, idctn; only type 2, norm None/'backward' or 'ortho').

DCT-II by one complex FFT of the same length (Makhoul, IEEE Trans. ASSP 28(1), 1980):
reorder x as v = (x_0, x_2, x_4, ..., x_5, x_3, x_1) (evens, then odds reversed); then
X_k = 2 Re(w^k V_k), V = FFT(v), w = exp(-i pi / (2N)). Over two axes at once, with
W1 = w1^k1 and W2 = w2^k2, X = 2 Re(W1 (W2 V + conj(W2) V')), V' the FFT flipped along
the second axis and rolled by one; more axes go two at a time. 'ortho' scales X_0 by
1/sqrt(4N) and the others by 1/sqrt(2N). The inverse undoes each step: it scales to the
orthonormal transform, divides by w^k, takes N times the inverse FFT and undoes the
reordering. Complex inputs transform their real and imaginary parts separately.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (canonicalize_axes, canonicalize_axis, check_arraylike,
                                      ensure_array, promote_dtypes_inexact)

__all__ = ["dct", "dctn", "idct", "idctn"]


def _twiddle(n: int, k: Any) -> Any:
    """exp(-i pi k / (2 n)) in the complex dtype of k's precision."""
    complex_dtype = dtypes.canonicalize_dtype(dtypes.to_complex_dtype(k.dtype))
    return jnp.exp(-0.5j * np.pi * k.astype(complex_dtype) / jnp.asarray(n, complex_dtype))


def _other_axes(ndim: int, axis: int) -> list[int]:
    return [a for a in range(ndim) if a != axis]


def _reorder(x: Any, axis: int) -> Any:
    """Evens, then odds reversed, along axis."""
    evens = lax.slice_in_dim(x, None, None, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([evens, odds], axis)


def _undo_reorder(x: Any, axis: int) -> Any:
    half = math.ceil(x.shape[axis] / 2)
    evens = lax.slice_in_dim(x, 0, half, 1, axis)
    odds = lax.rev(lax.slice_in_dim(x, half, x.shape[axis], 1, axis), (axis,))
    index = [slice(None)] * x.ndim
    out = jnp.zeros(x.shape, dtype=x.dtype)
    index[axis] = slice(None, None, 2)
    out = out.at[tuple(index)].set(evens)
    index[axis] = slice(1, None, 2)
    return out.at[tuple(index)].set(odds)


def _ortho_scale(out: Any, axis: int) -> Any:
    """Divide entry 0 along axis by sqrt(4 N), the others by sqrt(2 N)."""
    n = out.shape[axis]
    factor = lax.concatenate([lax.full((1,), 4, out.dtype), lax.full((n - 1,), 2, out.dtype)],
                             0)
    factor = lax.expand_dims(factor, _other_axes(out.ndim, axis))
    return out / lax.sqrt(factor * n)


def _check(name: str, x: Any, type: int, norm: str | None) -> Any:
    check_arraylike(name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")
    return ensure_array(x)


def _resize(x: Any, sizes: dict[int, int]) -> Any:
    """x zero-padded (or cropped) to sizes[axis] along the given axes."""
    if not sizes:
        return x
    return lax.pad(x, jnp.array(0, x.dtype),
                   [(0, sizes[a] - x.shape[a] if a in sizes else 0, 0) for a in range(x.ndim)])


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
        norm: str | None = None) -> Any:
    """The DCT-II of x along axis, zero-padded or cropped to n (mirrors
    `jax.scipy.fft.dct`)."""
    x = _check("dct", x, type, norm)
    if dtypes.is_complex(x.dtype):
        return lax.complex(dct(x.real, type, n, axis, norm), dct(x.imag, type, n, axis, norm))
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, {} if n is None else {axis: n})
    size = x.shape[axis]
    spectrum = jnp.fft.fft(_reorder(x, axis), axis=axis)
    k = lax.expand_dims(jnp.arange(size, dtype=spectrum.real.dtype), _other_axes(x.ndim, axis))
    out = 2 * (spectrum * _twiddle(size, k)).real
    return _ortho_scale(out, axis) if norm == "ortho" else out


def _dct_two_axes(x: Any, axes: Sequence[int], norm: str | None) -> Any:
    axis1, axis2 = (canonicalize_axis(a, x.ndim) for a in axes)
    n1, n2 = x.shape[axis1], x.shape[axis2]
    spectrum = jnp.fft.fftn(_reorder(_reorder(x, axis1), axis2), axes=axes)
    k1 = lax.expand_dims(jnp.arange(n1, dtype=spectrum.dtype), _other_axes(x.ndim, axis1))
    k2 = lax.expand_dims(jnp.arange(n2, dtype=spectrum.dtype), _other_axes(x.ndim, axis2))
    mirrored = jnp.roll(jnp.flip(spectrum, axis=axis2), shift=1, axis=axis2)
    out = _twiddle(n1, k1) * (_twiddle(n2, k2) * spectrum + _twiddle(n2, -k2) * mirrored)
    out = 2 * out.real
    if norm == "ortho":
        return _ortho_scale(_ortho_scale(out, axis1), axis2)
    return out


def _axes_and_sizes(x: Any, s: Any, axes: Any) -> tuple[tuple[int, ...], list[int] | None]:
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = canonicalize_axes(axes, x.ndim)
    return tuple(axes), s


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The DCT-II over several axes (default all; the last len(s) with s) (mirrors
    `jax.scipy.fft.dctn`)."""
    x = _check("dctn", x, type, norm)
    if dtypes.is_complex(x.dtype):
        return lax.complex(dctn(x.real, type, s, axes, norm), dctn(x.imag, type, s, axes, norm))
    axes, s = _axes_and_sizes(x, s, axes)
    if len(axes) == 1:
        return dct(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
    x = _resize(x, {} if s is None else dict(zip(axes, s)))
    if len(axes) == 2:
        return _dct_two_axes(x, axes, norm)
    for pair in (axes[i:i + 2] for i in range(0, len(axes), 2)):
        x = dctn(x, axes=pair, norm=norm)
    return x


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
         norm: str | None = None) -> Any:
    """The inverse of the DCT-II along axis (the DCT-III, scaled) (mirrors
    `jax.scipy.fft.idct`)."""
    x = _check("idct", x, type, norm)
    if dtypes.is_complex(x.dtype):
        return lax.complex(idct(x.real, type, n, axis, norm), idct(x.imag, type, n, axis, norm))
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, {} if n is None else {axis: n})
    size = x.shape[axis]
    (x,) = promote_dtypes_inexact(x)
    if norm is None or norm == "backward":
        x = _ortho_scale(x, axis)
    x = _ortho_scale(x, axis)
    k = lax.expand_dims(jnp.arange(size, dtype=x.dtype), _other_axes(x.ndim, axis))
    twiddle = _twiddle(size, k)
    x = x.astype(twiddle.dtype) / twiddle * 2 * size
    return _undo_reorder(jnp.fft.ifft(x, axis=axis).real, axis)


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The inverse of dctn, axis by axis (mirrors `jax.scipy.fft.idctn`)."""
    x = _check("idctn", x, type, norm)
    if dtypes.is_complex(x.dtype):
        return lax.complex(idctn(x.real, type, s, axes, norm),
                           idctn(x.imag, type, s, axes, norm))
    axes, s = _axes_and_sizes(x, s, axes)
    if len(axes) == 1:
        return idct(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
    x = _resize(x, {} if s is None else dict(zip(axes, s)))
    for axis in axes:
        x = idct(x, axis=axis, norm=norm)
    return x
