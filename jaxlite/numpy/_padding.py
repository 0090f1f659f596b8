"""`pad`: widen an array at both ends of each axis (mirrors `jax.numpy.pad`).

Axes are padded one after the other, as numpy does, so a corner takes its value from the
last axis. The modes are built from few pieces:
- "constant" and "empty" are `lax.pad` (one per side when the sides differ);
- "edge", "wrap", "reflect" and "symmetric" (even) only copy elements: numpy's own `pad`
  applied to `arange(n)` on the host gives which element lands where, and one gather with
  those static indices moves them;
- odd reflection is linear in the elements: numpy's `pad` of the identity matrix gives the
  coefficients, and one dot product applies them;
- "linear_ramp", "maximum", "minimum", "mean" and "median" compute the side values from
  the edge or from statistics of the first or last `stat_length` elements;
- a callable is applied to every 1-d line along each axis, after zero padding.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.core.trace import Tracer
from jaxlite.numpy._creation import asarray, linspace
from jaxlite.numpy._math import round as _round
from jaxlite.numpy._promotion import check_arraylike, ensure_array
from jaxlite.numpy._shape import flip, moveaxis, stack

__all__ = ["pad"]

_MODE_KWARGS = {
    "constant": {"constant_values"}, "edge": set(), "linear_ramp": {"end_values"},
    "maximum": {"stat_length"}, "minimum": {"stat_length"}, "mean": {"stat_length"},
    "median": {"stat_length"}, "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
    "wrap": set(), "empty": set(),
}


def _pairs(value: Any, ndim: int, what: str, integer: bool) -> list[tuple[Any, Any]]:
    """A per-axis argument (scalar, pair, or one pair per axis) as `ndim` (before, after)
    pairs of host values."""
    if isinstance(value, Tracer):
        known = value.concrete_value()
        if known is None:
            raise TypeError(f"jnp.pad: {what} must be concrete, got a traced value.")
        value = known
    host = np.asarray(value)
    if ndim == 0:
        return []
    try:
        pairs = np.broadcast_to(host, (ndim, 2))
    except ValueError:
        raise ValueError(f"jnp.pad: {what} of shape {host.shape} cannot be read as "
                         f"(before, after) pairs for {ndim} axes.") from None
    if integer:
        if pairs.dtype.kind not in "iu":
            raise TypeError(f"jnp.pad: {what} must be integers, got {pairs.dtype}.")
        if (pairs < 0).any():
            raise ValueError(f"jnp.pad: index can't contain negative values; got {what}="
                             f"{value}.")
        return [(int(b), int(a)) for b, a in pairs]
    return [(b, a) for b, a in pairs]


def _value_pairs(value: Any, ndim: int, what: str) -> list[tuple[Any, Any]]:
    """Per-axis pairs of fill values, which may be arrays (traced ones included)."""
    if np.ndim(value) == 0:
        return [(value, value)] * ndim
    return _pairs(value, ndim, what, integer=False)


def _pad_constant(x: Any, axis: int, before: int, after: int, values: tuple) -> Any:
    config = [(0, 0, 0)] * x.ndim
    low, high = (asarray(v).astype(x.dtype) for v in values)
    if before == 0 and after == 0:
        return x
    config[axis] = (before, 0, 0)
    x = lax.pad(x, low, config) if before else x
    config[axis] = (0, after, 0)
    return lax.pad(x, high, config) if after else x


def _pad_by_copy(x: Any, axis: int, before: int, after: int, mode: str,
                 reflect_type: str) -> Any:
    """edge / wrap / reflect / symmetric: a static gather, or a dot for odd reflection."""
    size = x.shape[axis]
    if size == 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")
    options = {"reflect_type": reflect_type} if mode in ("reflect", "symmetric") else {}
    if reflect_type == "odd" and mode in ("reflect", "symmetric"):
        weights = np.pad(np.eye(size), ((before, after), (0, 0)), mode=mode, **options)
        return _apply_weights(x, axis, weights)
    source = np.pad(np.arange(size), (before, after), mode=mode, **options)
    return x[(slice(None),) * axis + (source.astype(np.int32),)]


def _apply_weights(x: Any, axis: int, weights: np.ndarray) -> Any:
    """`weights @ x` along `axis`, in `x`'s dtype."""
    if x.dtype == np.bool_:
        raise TypeError("jnp.pad: odd reflection is not defined for boolean arrays.")
    w = asarray(weights.astype(np.int64) if dtypes.is_integer(x.dtype) else weights,
                dtype=x.dtype)
    moved = moveaxis(x, axis, 0)
    out = lax.dot_general(w, moved, (((1,), (0,)), ((), ())))
    return moveaxis(out, 0, axis)


def _edge(x: Any, axis: int, last: bool) -> Any:
    size = x.shape[axis]
    return lax.slice_in_dim(x, size - 1 if last else 0, size if last else 1, 1, axis)


def _join(x: Any, axis: int, low: Any, high: Any) -> Any:
    parts = [p for p in (low, x, high) if p is not None and p.shape[axis]]
    if len(parts) == 1:
        return parts[0]  # x itself, or the padding of an empty x
    return lax.concatenate(parts, axis) if parts else x


def _pad_linear_ramp(x: Any, axis: int, before: int, after: int, ends: tuple) -> Any:
    if x.shape[axis] == 0:
        raise ValueError("Cannot apply 'linear_ramp' padding to empty axis")
    sides = []
    for width, end, last in ((before, ends[0], False), (after, ends[1], True)):
        if not width:
            sides.append(None)
            continue
        edge = _edge(x, axis, last)
        ramp = linspace(lax.full_like(edge, 0) + asarray(end).astype(x.dtype), edge, width,
                        endpoint=False, dtype=x.dtype, axis=axis)
        ramp = lax.squeeze(ramp, (axis + 1,))
        sides.append(flip(ramp, axis) if last else ramp)
    return _join(x, axis, *sides)


def _median(x: Any, axis: int) -> Any:
    ordered = lax.sort(x, axis)
    n = x.shape[axis]
    low = lax.slice_in_dim(ordered, (n - 1) // 2, (n - 1) // 2 + 1, 1, axis)
    high = lax.slice_in_dim(ordered, n // 2, n // 2 + 1, 1, axis)
    return lax.div(lax.add(low, high), np.asarray(2, x.dtype))


def _statistic(mode: str, x: Any, axis: int) -> Any:
    """The statistic of `x` along `axis`, kept as a size-1 axis, in `x`'s dtype."""
    if mode in ("maximum", "minimum"):
        reduce = lax.reduce_max if mode == "maximum" else lax.reduce_min
        return lax.expand_dims(reduce(x, (axis,)), (axis,))
    work = x if dtypes.is_inexact(x.dtype) else lax.convert_element_type(
        x, dtypes.default_float_dtype())
    if mode == "mean":
        total = lax.reduce_sum(work, (axis,))
        value = lax.expand_dims(lax.div(total, np.asarray(x.shape[axis], work.dtype)),
                                (axis,))
    else:
        value = _median(work, axis)
    if not dtypes.is_inexact(x.dtype):
        # numpy rounds an integer statistic half to even before casting it back.
        value = _round(value)
    return lax.convert_element_type(value, x.dtype)


def _check_statistic_of_nothing(mode: str, axis: int) -> None:
    """JAX's errors for a statistic of an empty axis (or, for the extrema, of an empty
    array); the mean of nothing is NaN (0 for integers), as in JAX."""
    if mode in ("maximum", "minimum"):
        raise ValueError(f"zero-size array to reduction operation {mode[:3]} which has no "
                         "identity")
    if mode == "median":
        raise TypeError(f"Slice size at index {axis} in gather op is out of range, must be "
                        "within [0, 0 + 1), got 1. (jnp.pad: no median of an empty axis.)")


def _pad_stat(x: Any, axis: int, before: int, after: int, mode: str,
              lengths: tuple) -> Any:
    size = x.shape[axis]
    if (before or after) and (size == 0 or (x.size == 0 and mode != "median")):
        _check_statistic_of_nothing(mode, axis)
    sides = []
    for width, length, last in ((before, lengths[0], False), (after, lengths[1], True)):
        if not width:
            sides.append(None)
            continue
        if length is not None and int(length) == 0:
            raise ValueError("stat_length of 0 yields no value for padding")
        length = size if length is None else min(int(length), size)
        start = size - length if last else 0
        value = _statistic(mode, lax.slice_in_dim(x, start, start + length, 1, axis), axis)
        shape = tuple(width if d == axis else n for d, n in enumerate(x.shape))
        sides.append(lax.broadcast_in_dim(value, shape, tuple(range(x.ndim))))
    return _join(x, axis, *sides)


def _pad_callable(x: Any, widths: list[tuple[int, int]], function: Callable[..., Any],
                  kwargs: dict) -> Any:
    """numpy's callable mode: zero padding on every axis first, then
    `function(line, (before, after), axis, kwargs)` returns each 1-d line along each axis."""
    for axis, (before, after) in enumerate(widths):
        x = _pad_constant(x, axis, before, after, (0, 0))
    for axis, (before, after) in enumerate(widths):
        moved = moveaxis(x, axis, -1)
        count = moved.size // max(moved.shape[-1], 1)
        lines = lax.reshape(moved, (count, moved.shape[-1]))
        results = [asarray(function(lines[i], (before, after), axis, kwargs))
                   for i in range(count)]
        if results:
            lines = stack(results).astype(x.dtype)
        x = moveaxis(lax.reshape(lines, moved.shape), -1, axis)
    return x


def pad(array: Any, pad_width: Any, mode: str | Callable[..., Any] = "constant",
        **kwargs: Any) -> Any:
    """`array` padded by `pad_width` (an int, a (before, after) pair, or one pair per
    axis) according to `mode` (mirrors `jax.numpy.pad`; see the module docstring).

    Keyword arguments as numpy's: `constant_values` ("constant"), `end_values`
    ("linear_ramp"), `stat_length` ("maximum", "minimum", "mean", "median"),
    `reflect_type` ("reflect", "symmetric"). As in JAX, "empty" pads with zeros.
    """
    check_arraylike("pad", array)
    x = ensure_array(array)
    widths = _pairs(pad_width, x.ndim, "pad_width", integer=True)
    if callable(mode):
        return _pad_callable(x, widths, mode, kwargs)
    if mode not in _MODE_KWARGS:
        raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - _MODE_KWARGS[mode]
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode in ("constant", "empty"):
        values = _value_pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values")
    elif mode == "linear_ramp":
        values = _value_pairs(kwargs.get("end_values", 0), x.ndim, "end_values")
    elif mode in ("maximum", "minimum", "mean", "median"):
        stat = kwargs.get("stat_length")
        values = [(None, None)] * x.ndim if stat is None else _pairs(
            stat, x.ndim, "stat_length", integer=True)
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got "
                         f"{reflect_type!r}.")
    for axis, (before, after) in enumerate(widths):
        if not before and not after:
            continue
        if mode in ("constant", "empty"):
            x = _pad_constant(x, axis, before, after, values[axis])
        elif mode in ("edge", "wrap", "reflect", "symmetric"):
            x = _pad_by_copy(x, axis, before, after, mode, reflect_type)
        elif mode == "linear_ramp":
            x = _pad_linear_ramp(x, axis, before, after, values[axis])
        else:
            x = _pad_stat(x, axis, before, after, mode, values[axis])
    return x
