"""Detrending and windowed-FFT spectral analysis: detrend, stft, istft, csd and welch
(mirror the same names of `jax.scipy.signal`).

All of them follow scipy's definitions as JAX implements them: the signal is cut into
segments of `nperseg` samples every `nperseg - noverlap` (default half overlap), each
segment is detrended and multiplied by the window (Hann by default, other names through
scipy.signal.get_window, or an array), and FFT'd; csd averages conj(X) Y over segments
(mean or median), scaled to a density (1 / (fs sum w^2)) or a spectrum (1 / (sum w)^2),
doubled on one-sided inner frequencies. Differences from scipy that JAX has, kept here:
nperseg defaults to the whole signal for csd/welch, and detrend='linear' solves least
squares per segment.
"""
from __future__ import annotations

import importlib
import math
import operator
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.errors import warn_at_user
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (canonicalize_axis, check_arraylike, ensure_array,
                                      promote_dtypes_inexact)
from jaxlite.transforms.vmap import vmap

__all__ = ["detrend", "stft", "istft", "csd", "welch"]


def detrend(data: Any, axis: int = -1, type: str = "linear",
            bp: int | Sequence[int] | np.ndarray = 0, overwrite_data: None = None) -> Any:
    """data minus its mean ('constant') or its least-squares line between breakpoints
    ('linear') along axis (mirrors `jax.scipy.signal.detrend`)."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (data,) = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return data - data.mean(axis, keepdims=True)
    n = data.shape[axis]
    breakpoints = np.sort(np.unique(np.r_[0, bp, n]))
    if breakpoints[0] < 0 or breakpoints[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    data = jnp.moveaxis(data, axis, 0)
    shape = data.shape
    data = data.reshape(n, -1)
    for start, stop in zip(breakpoints[:-1], breakpoints[1:]):
        points = stop - start
        design = jnp.vstack([jnp.ones(points, dtype=data.dtype),
                             jnp.arange(1, points + 1, dtype=data.dtype)
                             / points.astype(data.dtype)]).T
        window = slice(start, stop)
        coef, *_ = jnp.linalg.lstsq(design, data[window])
        data = data.at[window].add(-jnp.matmul(design, coef, precision=lax.Precision.HIGHEST))
    return jnp.moveaxis(data.reshape(shape), 0, axis)


def hann(n: int) -> Any:
    """The periodic Hann window of n samples (scipy's get_window('hann', n))."""
    if n == 1:
        return jnp.array([1.0])
    return jnp.sin(jnp.linspace(0, np.pi, n, endpoint=False)) ** 2


def _scipy_window(window: Any, n: int) -> np.ndarray:
    """scipy.signal.get_window(window, n); scipy.signal is loaded only when a window other
    than 'hann' is asked for (importing it takes seconds)."""
    try:
        signal = importlib.import_module("scipy.signal")
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return signal.get_window(window, n)


def _window(window: Any, nperseg: int | None, length: int, dtype: Any) -> tuple[Any, int]:
    """The window as an array of dtype, and the segment length."""
    if isinstance(window, (str, tuple)):
        size = length if nperseg is None else int(nperseg)
        if size > length:
            warn_at_user(f"nperseg={size} is greater than input_length={length}, using "
                          f"nperseg={length}")
            size = length
        values = hann(size) if window == "hann" else _scipy_window(window, size)
        return jnp.array(values, dtype=dtype), size
    values = jnp.asarray(window, dtype=dtype)
    size = values.size if nperseg is None else int(nperseg)
    if values.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < values.size:
        raise ValueError("window is longer than input signal")
    if size != values.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return values, size


def _segment_spectra(x: Any, win: Any, detrend_func: Callable, nperseg: int, noverlap: int,
                     nfft: int, twosided: bool) -> Any:
    """FFTs of the detrended, windowed segments of x along its last axis: (..., segments,
    frequencies)."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    batch, length = x.shape[:-1], x.shape[-1]
    if nperseg == 1 and noverlap == 0:
        segments = x[..., None]
    else:
        starts = jnp.arange(0, length - nperseg + 1, nperseg - noverlap)
        cut = partial(lax.dynamic_slice_in_dim, x, slice_size=nperseg, axis=-1)
        segments = vmap(lambda start: cut(start), out_axes=-2)(starts)
    segments = detrend_func(segments)
    if jnp.iscomplexobj(win):
        segments = segments.astype(jnp.result_type(segments.dtype, np.complex64))
    segments = win.reshape((1,) * len(batch) + (1, nperseg)) * segments
    if twosided:
        return jnp.fft.fft(segments, n=nfft)
    return jnp.fft.rfft(segments.real, n=nfft)


def _odd_extension(x: Any, n: int, axis: int = -1) -> Any:
    if n < 1:
        return x
    if n > x.shape[axis] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[axis] - 1}.")
    left_end = lax.slice_in_dim(x, 0, 1, axis=axis)
    left = jnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right_end = lax.slice_in_dim(x, -1, None, axis=axis)
    right = jnp.flip(lax.slice_in_dim(x, -(n + 1), -1, axis=axis), axis=axis)
    return jnp.concatenate((2 * left_end - left, x, 2 * right_end - right), axis=axis)


def _padder(mode: str, **kwargs: Any) -> Callable:
    def pad(x: Any, n: int, axis: int = -1) -> Any:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (n, n)
        return jnp.pad(x, widths, mode, **kwargs)
    return pad


BOUNDARIES = {"even": _padder("reflect"), "odd": _odd_extension, "constant": _padder("edge"),
              "zeros": _padder("constant", constant_values=0.0),
              None: lambda x, *args, **kwargs: x}


def _detrend_function(detrend_type: Any, axis: int) -> Callable:
    if isinstance(detrend_type, str):
        return partial(detrend, type=detrend_type, axis=-1)
    if callable(detrend_type):
        if axis == -1:
            return detrend_type
        return lambda d: jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis)
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _pad_to(x: Any, length: int) -> Any:
    extra = length - x.shape[-1]
    return jnp.concatenate((x, jnp.zeros_like(x, shape=(*x.shape[:-1], extra))), -1)


def _promote_signals(x: Any, y: Any, axis: int, mode: str) -> tuple[Any, Any, tuple]:
    """x and y (x itself when y is None) as arrays of one inexact dtype, and the shape of
    the other dimensions (broadcast)."""
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(ensure_array(x))
        return x, x, x.shape[:axis] + x.shape[axis + 1:]
    if mode != "psd":
        raise ValueError("two-argument mode is available only when mode=='psd'")
    check_arraylike("spectral_helper", x, y)
    x, y = promote_dtypes_inexact(ensure_array(x), ensure_array(y))
    if x.ndim != y.ndim:
        raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
    try:
        outer = jnp.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                     y.shape[:axis] + y.shape[axis + 1:])
    except ValueError as err:
        raise ValueError("x and y cannot be broadcast together.") from err
    return x, y, outer


def _extend(signal: Any, boundary: str | None, padded: bool, nperseg: int,
            step: int) -> Any:
    """The signal (time last) extended at both ends by the boundary rule, then zero-padded
    to a whole number of steps."""
    if boundary is not None:
        signal = BOUNDARIES[boundary](signal, nperseg // 2, axis=-1)
    if padded:
        signal = _pad_to(signal, signal.shape[-1]
                         + (-(signal.shape[-1] - nperseg) % step) % nperseg)
    return signal


def _scale(win: Any, fs: Any, scaling: str, mode: str) -> Any:
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    scale = jnp.asarray(jnp.sqrt(scale) if mode == "stft" else scale)
    return scale.astype(dtypes.canonicalize_dtype(dtypes.to_complex_dtype(scale.dtype)))


def spectral_helper(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann",
                    nperseg: int | None = None, noverlap: int | None = None,
                    nfft: int | None = None, detrend_type: Any = "constant",
                    return_onesided: bool = True, scaling: str = "density", axis: int = -1,
                    mode: str = "psd", boundary: str | None = None,
                    padded: bool = False) -> tuple[Any, Any, Any]:
    """Frequencies, segment times and the per-segment spectra (mode 'stft') or cross
    spectral densities (mode 'psd') of x (and y), the segments on the last axis."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(BOUNDARIES.keys())}")
    axis = canonicalize_axis(operator.index(axis), np.ndim(x))
    x, y_arr, outer = _promote_signals(x, y, axis, mode)
    result_dtype = dtypes.canonicalize_dtype(dtypes.to_complex_dtype(x.dtype))
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None and int(nperseg) < 1:
        raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window(window, None if nperseg is None else int(nperseg), x.shape[axis],
                           x.dtype)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)
    if x.size == 0 or y_arr.size == 0:
        shape = outer[:axis] + (min(x.shape[axis], y_arr.shape[axis]),) + outer[axis:]
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y_arr = jnp.moveaxis(y_arr, axis, -1) if y_arr.ndim > 1 else y_arr
        length = max(x.shape[-1], y_arr.shape[-1])
        x, y_arr = _pad_to(x, length), _pad_to(y_arr, length)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    x = _extend(x, boundary, padded, nperseg, nperseg - noverlap)
    detrend_func = _detrend_function(detrend_type, axis)
    scale = _scale(win, fs, scaling, mode)
    twosided = not return_onesided
    if return_onesided and (jnp.iscomplexobj(x) or jnp.iscomplexobj(y)):
        twosided = True
        warn_at_user("Input data is complex, switching to return_onesided=False")
    frequency_fn = jnp.fft.fftfreq if twosided else jnp.fft.rfftfreq
    freqs = frequency_fn(nfft, 1 / fs, dtype=freq_dtype)
    spectra = partial(_segment_spectra, win=win, detrend_func=detrend_func, nperseg=nperseg,
                      noverlap=noverlap, nfft=nfft, twosided=twosided)
    result = spectra(x)
    if y is not None:
        y_arr = _extend(y_arr, boundary, padded, nperseg, nperseg - noverlap)
        result = jnp.conjugate(result) * spectra(y_arr)
    elif mode == "psd":
        result = jnp.conjugate(result) * result
    result *= scale
    if not twosided and mode == "psd":
        result = result.at[..., 1:None if nfft % 2 else -1].mul(2)
    time = jnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nperseg - noverlap,
                      dtype=freq_dtype) / fs
    if boundary is not None:
        time -= (nperseg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = result.real
    return freqs, time, jnp.moveaxis(result, -1, axis)


def stft(x: Any, fs: Any = 1.0, window: str = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: bool = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Any, Any, Any]:
    """The short-time Fourier transform (mirrors `jax.scipy.signal.stft`): (frequencies,
    segment times, Zxx) with Zxx (..., frequencies, segments)."""
    return spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                           return_onesided, scaling="spectrum", axis=axis, mode="stft",
                           boundary=boundary, padded=padded)


def _median_bias(n: int) -> Any:
    """The bias of the median of n chi^2_2 variables against their mean (scipy's)."""
    evens = jnp.arange(2.0, n, 2)
    return 1 + jnp.sum(1.0 / (evens + 1) - 1.0 / evens)


def csd(x: Any, y: Any, fs: Any = 1.0, window: str = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Any, Any]:
    """The cross spectral density of x and y by Welch's method (mirrors
    `jax.scipy.signal.csd`): (frequencies, Pxy); y=None gives x's power spectrum."""
    freqs, _, pxy = spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                    return_onesided, scaling, axis, mode="psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1]).astype(pxy.dtype)
                if jnp.iscomplexobj(pxy):
                    pxy = (jnp.median(jnp.real(pxy), axis=-1)
                           + 1j * jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy /= bias
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x: Any, fs: Any = 1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Any, Any]:
    """The power spectral density by Welch's method (mirrors `jax.scipy.signal.welch`)."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, pxx.real


def _overlap_and_add(x: Any, step: int) -> Any:
    """Sum the frames of x (..., frames, frame_length), frame i starting at i * step."""
    *batch, frames, length = x.shape
    flat = math.prod(batch)
    x = x.reshape((flat, frames, length))
    out_length = step * (frames - 1) + length
    chunks = 1 + (length - 1) // step
    x = jnp.pad(x, ((0, 0), (0, 0), (0, chunks * step - length)))
    x = x.reshape((flat, frames, chunks, step)).transpose((0, 2, 1, 3))
    x = jnp.pad(x, ((0, 0), (0, 0), (0, frames), (0, 0)))
    shrunk = x.shape[2] - 1
    x = x.reshape((flat, -1))[:, :chunks * shrunk * step].reshape((flat, chunks, shrunk * step))
    return x.sum(axis=1)[:, :out_length].reshape(tuple(batch) + (-1,))


def _istft_window(window: Any, nperseg: int, dtype: Any) -> Any:
    if isinstance(window, str) and window == "hann":
        return hann(nperseg).astype(dtype)
    if isinstance(window, (str, tuple)):
        return jnp.array(_scipy_window(window, nperseg), dtype=dtype)
    win = jnp.asarray(window)
    if len(win.shape) != 1:
        raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
        raise ValueError(f"window must have length of {nperseg}")
    return win


def istft(Zxx: Any, fs: Any = 1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2) -> tuple[Any, Any]:
    """The inverse STFT by weighted overlap-add (mirrors `jax.scipy.signal.istft`):
    (times, x)."""
    check_arraylike("istft", Zxx)
    zxx = ensure_array(Zxx)
    if zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, zxx.ndim)
    time_axis = canonicalize_axis(time_axis, zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    zxx = jnp.asarray(zxx, dtype=dtypes.to_complex_dtype(zxx.dtype))
    n_default = 2 * (zxx.shape[freq_axis] - 1) if input_onesided else zxx.shape[freq_axis]
    nperseg = int(nperseg or n_default)
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    else:
        nfft_int = int(nfft)
    if nfft_int < nperseg:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg}).")
    noverlap = int(noverlap or nperseg // 2)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if time_axis != zxx.ndim - 1 or freq_axis != zxx.ndim - 2:
        outer = tuple(i for i in range(zxx.ndim) if i not in {time_axis, freq_axis})
        zxx = jnp.transpose(zxx, outer + (freq_axis, time_axis))
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    frames = inverse(zxx, axis=-2, n=nfft)[..., :nperseg, :]
    win = _istft_window(window, nperseg, frames.dtype)
    frames *= win.sum()  # undoes the 'spectrum' scaling
    win = lax.expand_dims(win, (*range(frames.ndim - 2), -1))
    x = _overlap_and_add((frames * win).swapaxes(-2, -1), step)
    squared = jnp.repeat(win * win, frames.shape[-1], axis=-1)
    norm = _overlap_and_add(squared.swapaxes(-2, -1), step)
    if boundary:
        x = x[..., nperseg // 2:-(nperseg // 2)]
        norm = norm[..., nperseg // 2:-(nperseg // 2)]
    x /= jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != zxx.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
