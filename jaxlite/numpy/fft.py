"""`jaxlite.numpy.fft`: discrete Fourier transforms (mirrors `jax.numpy.fft`).

Every transform is `jaxlite.lax.fft` on the chosen axes: the axes are first cut or
zero-padded to the requested lengths (`n`, `s`), moved to the end in groups of at most
three (the primitive's limit), transformed, moved back and scaled for `norm`:

- "backward" (the default, also `None`): forward transforms unscaled, inverse ones divided
  by the number of points `N`;
- "ortho": both divided by `sqrt(N)`;
- "forward": forward transforms divided by `N`, inverse ones unscaled.

Dtypes follow JAX: integer and bool inputs are computed in floating point, float16 in
float32, and with x64 off float64 and complex128 inputs become float32 and complex64. For
the real transforms (rfft*, ihfft) complex inputs are an error, as in JAX. The last axis of
`axes` is the one that rfftn halves and irfftn restores.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.lax.fft import MAX_FFT_RANK, FftType
from jaxlite.numpy._promotion import (
    canonicalize_axis,
    check_arraylike,
    concrete_int,
    convert,
    ensure_array,
    user_dtype,
)

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn",
    "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
    "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_NORMS = (None, "backward", "ortho", "forward")
_INVERSE = (FftType.IFFT, FftType.IRFFT)


# ------------------------------------------------------------------ argument handling

def _check_norm(fun_name: str, norm: Any) -> None:
    if norm not in _NORMS:
        raise ValueError(f'jax.numpy.fft.{fun_name}: invalid norm value {norm}; should be '
                         f'"backward", "ortho" or "forward" (or None for "backward").')


def _resolve_axes(fun_name: str, ndim: int, s: Any, axes: Any,
                  default_axes: Sequence[int] | None) -> tuple[tuple[int, ...], Any]:
    """The transformed axes (nonnegative, in the given order) and `s` as a tuple or None."""
    if s is not None:
        s = tuple(s) if isinstance(s, (list, tuple, np.ndarray)) else (s,)
    if axes is None:
        if s is not None:
            axes = tuple(range(ndim - len(s), ndim))
        else:
            axes = tuple(range(ndim)) if default_axes is None else tuple(default_axes)
    axes = tuple(canonicalize_axis(axis, ndim) for axis in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"jax.numpy.fft.{fun_name} does not support repeated axes. Got "
                         f"axes {axes}.")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"jax.numpy.fft.{fun_name}: Shape and axes have different lengths "
                         f"(s={s}, axes={axes}); give one length per axis.")
    return axes, s


def _lengths(fun_name: str, kind: FftType, shape: tuple[int, ...], axes: tuple[int, ...],
             s: Any) -> tuple[int, ...]:
    """The transform lengths: `s` checked, or the input's sizes (irfft: 2 * (m - 1))."""
    if s is not None:
        lengths = tuple(concrete_int(n, f"jax.numpy.fft.{fun_name}: a length in n or s")
                        for n in s)
        if any(n < 1 for n in lengths):
            raise ValueError(f"jax.numpy.fft.{fun_name}: Shape should be positive; got "
                             f"lengths {lengths}.")
        return lengths
    lengths = [shape[axis] for axis in axes]
    if kind == FftType.IRFFT and lengths:
        lengths[-1] = 2 * (lengths[-1] - 1)
    return tuple(lengths)


def _input_dtype(fun_name: str, kind: FftType, x: Any) -> np.dtype:
    """The dtype the transform reads: floating for RFFT, complex for the others."""
    dtype = np.dtype(x.dtype)
    if kind == FftType.RFFT:
        if dtypes.is_complex(dtype):
            raise ValueError(f"jax.numpy.fft.{fun_name}: only real valued inputs supported "
                             f"for rfft, got {dtype.name}; take the real part first, or "
                             f"use the complex transform.")
        return dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
    return dtypes.canonicalize_dtype(dtypes.to_complex_dtype(dtype))


def _resize(x: Any, axes: tuple[int, ...], sizes: Sequence[int]) -> Any:
    """`x` cut or zero-padded at the end of each axis to the given size."""
    shape = np.shape(x)
    if all(shape[axis] == size for axis, size in zip(axes, sizes)):
        return x
    config = [(0, 0, 0)] * len(shape)
    for axis, size in zip(axes, sizes):
        config[axis] = (0, size - shape[axis], 0)
    return lax.pad(x, np.zeros((), x.dtype), config)


# ------------------------------------------------------------------------ transforms

def _fft_on_axes(x: Any, kind: FftType, axes: Sequence[int], lengths: Sequence[int]) -> Any:
    """`lax.fft` of `kind` over `axes` (at most three), which it needs trailing."""
    ndim = np.ndim(x)
    perm = [d for d in range(ndim) if d not in axes] + list(axes)
    inverse = list(np.argsort(perm))
    moved = lax.transpose(x, perm)
    return lax.transpose(lax.fft(moved, kind, tuple(lengths)), inverse)


def _fft_groups(x: Any, kind: FftType, axes: tuple[int, ...],
                lengths: tuple[int, ...]) -> Any:
    """The transform over any number of axes, in groups of at most three.

    The group holding the last axis is the real one of RFFT and IRFFT: it runs first for
    RFFT (whose input is real) and last for IRFFT (whose output is real); the other groups
    are complex transforms in the same direction.
    """
    if not axes:
        return lax.fft(x, kind, ())
    cut = max(len(axes) - MAX_FFT_RANK, 0)
    groups = [(axes[i:min(i + MAX_FFT_RANK, cut)], lengths[i:min(i + MAX_FFT_RANK, cut)])
              for i in range(0, cut, MAX_FFT_RANK)]
    last = (axes[cut:], lengths[cut:])
    complex_kind = FftType.IFFT if kind in _INVERSE else FftType.FFT
    if kind == FftType.RFFT:
        x = _fft_on_axes(x, kind, *last)
    for group_axes, group_lengths in groups:
        x = _fft_on_axes(x, complex_kind, group_axes, group_lengths)
    if kind != FftType.RFFT:
        x = _fft_on_axes(x, kind, *last)
    return x


def _scale(x: Any, kind: FftType, norm: str | None, size: int) -> Any:
    """Apply `norm` to a result that lax.fft scaled as "backward" does."""
    if norm in (None, "backward") or size == 0:
        return x
    inverse = kind in _INVERSE
    if norm == "ortho":
        factor = math.sqrt(size) if inverse else 1 / math.sqrt(size)
    else:  # "forward"
        factor = size if inverse else 1 / size
    return lax.mul(x, np.asarray(factor, x.dtype))


def _transform(fun_name: str, kind: FftType, a: Any, s: Any, axes: Any, norm: Any,
               default_axes: Sequence[int] | None = None) -> Any:
    check_arraylike(f"jax.numpy.fft.{fun_name}", a)
    _check_norm(fun_name, norm)
    x = ensure_array(a)
    axes, s = _resolve_axes(fun_name, np.ndim(x), s, axes, default_axes)
    lengths = _lengths(fun_name, kind, np.shape(x), axes, s)
    x = convert(x, _input_dtype(fun_name, kind, x))
    sizes = list(lengths)
    if kind == FftType.IRFFT and sizes:
        sizes[-1] = sizes[-1] // 2 + 1
    x = _resize(x, axes, sizes)
    return _scale(_fft_groups(x, kind, axes, lengths), kind, norm, math.prod(lengths))


def _one_axis(n: Any, axis: Any) -> tuple[Any, tuple[Any]]:
    return (None if n is None else (n,)), (axis,)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """One-dimensional discrete Fourier transform (mirrors `jax.numpy.fft.fft`).

    `n` cuts or zero-pads `axis` to that length first; `norm` is "backward" (default),
    "ortho" or "forward". Real and integer inputs give complex results.
    """
    return _transform("fft", FftType.FFT, a, *_one_axis(n, axis), norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Inverse of `fft` (mirrors `jax.numpy.fft.ifft`)."""
    return _transform("ifft", FftType.IFFT, a, *_one_axis(n, axis), norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Fourier transform of real input, keeping the `n // 2 + 1` non-negative frequencies
    (mirrors `jax.numpy.fft.rfft`)."""
    return _transform("rfft", FftType.RFFT, a, *_one_axis(n, axis), norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Inverse of `rfft`: a real signal of length `n` (default `2 * (m - 1)` for `m` input
    entries) from its non-negative frequencies (mirrors `jax.numpy.fft.irfft`)."""
    return _transform("irfft", FftType.IRFFT, a, *_one_axis(n, axis), norm)


def _swapped_norm(norm: str | None) -> str:
    """The norm that moves the scaling to the other direction (hfft is an inverse rfft)."""
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Transform of a Hermitian-symmetric signal given by its first half: a real spectrum
    of length `n` (default `2 * (m - 1)`) (mirrors `jax.numpy.fft.hfft`)."""
    _check_norm("hfft", norm)
    check_arraylike("jax.numpy.fft.hfft", a)
    x = ensure_array(a)
    x = convert(x, _input_dtype("hfft", FftType.FFT, x))
    return irfft(lax.conj(x), n, axis, _swapped_norm(norm))


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Inverse of `hfft`: the first half of the Hermitian spectrum of a real signal
    (mirrors `jax.numpy.fft.ihfft`)."""
    _check_norm("ihfft", norm)
    return lax.conj(rfft(a, n, axis, _swapped_norm(norm)))


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    """Two-dimensional transform over `axes` (mirrors `jax.numpy.fft.fft2`)."""
    return _transform("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """Inverse of `fft2` (mirrors `jax.numpy.fft.ifft2`)."""
    return _transform("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """Two-dimensional transform of real input (mirrors `jax.numpy.fft.rfft2`)."""
    return _transform("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    """Inverse of `rfft2` (mirrors `jax.numpy.fft.irfft2`)."""
    return _transform("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """N-dimensional transform over `axes` (default: the last `len(s)` axes, or all)
    (mirrors `jax.numpy.fft.fftn`)."""
    return _transform("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """Inverse of `fftn` (mirrors `jax.numpy.fft.ifftn`)."""
    return _transform("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """N-dimensional transform of real input; the last of `axes` keeps its non-negative
    frequencies (mirrors `jax.numpy.fft.rfftn`)."""
    return _transform("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """Inverse of `rfftn`: a real result whose last axis has length `s[-1]` (default
    `2 * (m - 1)`) (mirrors `jax.numpy.fft.irfftn`)."""
    return _transform("irfftn", FftType.IRFFT, a, s, axes, norm)


# ----------------------------------------------------------------------- frequencies

def _frequencies(fun_name: str, numerators: np.ndarray, n: int, d: Any, dtype: Any) -> Any:
    """`numerators / (n * d)` computed in the floating type of `dtype`, then cast to it."""
    dtype = (dtypes.default_float_dtype() if dtype is None
             else user_dtype(dtype, f"jax.numpy.fft.{fun_name}"))
    compute = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
    check_arraylike(f"jax.numpy.fft.{fun_name}", d)
    if np.ndim(d) != 0:
        raise TypeError(f"jax.numpy.fft.{fun_name}: the sample spacing d must be a scalar, "
                        f"got shape {np.shape(d)}.")
    spacing = lax.mul(convert(d, compute), np.asarray(n, compute))
    counts = convert(numerators, compute)
    ratio = lax.div(counts, lax.broadcast_in_dim(spacing, np.shape(counts), ()))
    return convert(ratio, dtype)


def _sample_count(fun_name: str, n: Any) -> int:
    if isinstance(n, (float, np.floating)) and float(n).is_integer():
        n = int(n)  # JAX accepts a whole float here
    count = concrete_int(n, f"jax.numpy.fft.{fun_name}: n")
    if count < 0:
        raise ValueError(f"jax.numpy.fft.{fun_name}: n must be nonnegative, got {count}.")
    return count


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an `fft` of length `n` with sample spacing `d`:
    `[0, 1, ..., -2, -1] / (n * d)` (mirrors `jax.numpy.fft.fftfreq`).

    The result has `dtype` (default: the default float type). `device` is accepted for
    JAX's signature and ignored (there is one host device).
    """
    n = _sample_count("fftfreq", n)
    numerators = np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", numerators, n, d, dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an `rfft` of length `n`: `[0, 1, ..., n // 2] / (n * d)`
    (mirrors `jax.numpy.fft.rfftfreq`; `device` is ignored)."""
    n = _sample_count("rfftfreq", n)
    return _frequencies("rfftfreq", np.arange(n // 2 + 1), n, d, dtype)


# --------------------------------------------------------------------------- shifts

def _roll(x: Any, shift: int, axis: int) -> Any:
    size = np.shape(x)[axis]
    k = shift % size if size else 0
    if k == 0:
        return x
    return lax.concatenate([lax.slice_in_dim(x, size - k, size, axis=axis),
                            lax.slice_in_dim(x, 0, size - k, axis=axis)], axis)


def _shift(fun_name: str, x: Any, axes: Any, direction: int) -> Any:
    check_arraylike(f"jax.numpy.fft.{fun_name}", x)
    x = ensure_array(x)
    ndim = np.ndim(x)
    if axes is None:
        axes = range(ndim)
    elif not isinstance(axes, (list, tuple)):
        axes = (operator.index(axes),)
    # numpy rolls repeated axes once per mention, and so does this
    for axis in (canonicalize_axis(a, ndim) for a in axes):
        x = _roll(x, direction * (np.shape(x)[axis] // 2), axis)
    return x


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """Move the zero frequency to the centre: roll each of `axes` (default all) by half its
    length (mirrors `jax.numpy.fft.fftshift`)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """Inverse of `fftshift` (they differ for odd lengths) (mirrors
    `jax.numpy.fft.ifftshift`)."""
    return _shift("ifftshift", x, axes, -1)
