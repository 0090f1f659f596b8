"""Rearranging elements: roll, rollaxis, rot90, tile, resize, trim_zeros.

Mirrors the `jax.numpy` functions of those names, composed from the `lax` movement
primitives. `roll` takes a traced shift: the array is joined to itself and a
`dynamic_slice` reads the rolled window, so no gather is needed.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.core.trace import Tracer
from jaxlite.errors import ConcretizationTypeError
from jaxlite.lax.dimension_value import size_in_dtype
from jaxlite.numpy._promotion import (canonicalize_axes, canonicalize_axis, canonicalize_shape,
                                      check_arraylike, concrete_int, ensure_array)
from jaxlite.numpy._shape import flip, ravel, reshape, transpose

__all__ = ["roll", "rollaxis", "rot90", "tile", "resize", "trim_zeros"]


def _roll_axis(a: Any, shift: Any, axis: int) -> Any:
    size = a.shape[axis]
    if size == 0:
        return a
    if not isinstance(shift, Tracer) or shift.concrete_value() is not None:
        amount = int(np.asarray(shift if not isinstance(shift, Tracer)
                                else shift.concrete_value())) % size
        if amount == 0:
            return a
        head = lax.slice_in_dim(a, size - amount, size, 1, axis)
        tail = lax.slice_in_dim(a, 0, size - amount, 1, axis)
        return lax.concatenate([head, tail], axis)
    # A traced shift: the window of [a, a] that starts at (-shift) mod size.
    size_value = size_in_dtype(size, shift.dtype)
    start = lax.rem(lax.sub(size_value, lax.rem(shift, size_value)), size_value)
    doubled = lax.concatenate([a, a], axis)
    return lax.dynamic_slice_in_dim(doubled, start, size, axis)


def roll(a: Any, shift: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Shift elements cyclically by `shift` along `axis`; the array is flattened when
    `axis` is None (mirrors `jax.numpy.roll`). Shifts and axes broadcast against each
    other; a shift may be traced."""
    check_arraylike("roll", a)
    a = ensure_array(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    if not isinstance(shift, Tracer):
        # Known shifts stay Python integers (even under jit): static slices joined, which
        # partitioners see through, instead of a computed window of [a, a].
        shifts = np.asarray(shift)
        if not dtypes.is_integer(shifts.dtype):
            raise TypeError(f"roll: shift must be an integer, got dtype {shifts.dtype}.")
    else:
        shifts = ensure_array(shift)
    if not dtypes.is_integer(shifts.dtype):
        raise TypeError(f"roll: shift must be an integer, got dtype {shifts.dtype}.")
    axes = np.atleast_1d(np.asarray(axis))
    if shifts.ndim > 1 or axes.ndim > 1:
        raise ValueError("roll: shift and axis must be integers or 1-d sequences.")
    count = np.broadcast_shapes(shifts.shape, axes.shape)
    count = count[0] if count else 1
    if isinstance(shifts, np.ndarray):
        shifts = [int(s) for s in np.broadcast_to(shifts, (count,))]
    elif shifts.shape != (count,):
        shifts = lax.broadcast_in_dim(shifts, (count,), () if shifts.ndim == 0 else (0,))
    for i, ax in enumerate(np.broadcast_to(axes, (count,))):
        a = _roll_axis(a, shifts[i], canonicalize_axis(int(ax), a.ndim))
    return a


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move `axis` to before position `start` (mirrors `jax.numpy.rollaxis`; prefer
    `moveaxis`)."""
    check_arraylike("rollaxis", a)
    a = ensure_array(a)
    axis = canonicalize_axis(axis, a.ndim)
    start = concrete_int(start, "rollaxis: start")
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"rollaxis: start={start} must lie in [-{a.ndim}, {a.ndim}].")
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    order = [d for d in range(a.ndim) if d != axis]
    order.insert(start, axis)
    return lax.transpose(a, tuple(order))


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees `k` times in the plane of `axes`, from the first axis towards
    the second (mirrors `jax.numpy.rot90`)."""
    check_arraylike("rot90", m)
    m = ensure_array(m)
    if m.ndim < 2:
        raise ValueError(f"rot90 requires its argument to have ndim at least two, but got "
                         f"shape {m.shape}.")
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must be a pair of axes, got {axes}.")
    first, second = canonicalize_axes(tuple(axes), m.ndim)
    turns = concrete_int(k, "rot90: k") % 4
    if turns == 0:
        return m
    if turns == 2:
        return flip(m, (first, second))
    perm = list(range(m.ndim))
    perm[first], perm[second] = perm[second], perm[first]
    if turns == 1:
        return transpose(flip(m, second), perm)
    return flip(transpose(m, perm), second)


def tile(A: Any, reps: Any) -> Any:
    """`A` repeated `reps` times along each axis (mirrors `jax.numpy.tile`)."""
    check_arraylike("tile", A)
    A = ensure_array(A)
    reps = canonicalize_shape(reps, "tile")
    rank = max(A.ndim, len(reps))
    reps = (1,) * (rank - len(reps)) + reps
    A = lax.reshape(A, (1,) * (rank - A.ndim) + tuple(A.shape))
    # Each axis d becomes a pair (reps[d], A.shape[d]) that merges into one.
    paired = tuple(n for r, s in zip(reps, A.shape) for n in (r, s))
    spread = lax.broadcast_in_dim(A, paired, tuple(range(1, 2 * rank, 2)))
    return lax.reshape(spread, tuple(r * s for r, s in zip(reps, A.shape)))


def resize(a: Any, new_shape: Any) -> Any:
    """An array of `new_shape` filled with the flattened `a`, repeated as needed (mirrors
    `jax.numpy.resize`); an empty `a` gives zeros."""
    check_arraylike("resize", a)
    new_shape = canonicalize_shape(new_shape, "resize")
    flat = ravel(a)
    total = math.prod(new_shape)
    if flat.shape[0] == 0 or total == 0:
        return lax.full_like(flat, 0, shape=new_shape)
    copies = -(-total // flat.shape[0])
    repeated = tile(flat, copies)
    return lax.reshape(lax.slice_in_dim(repeated, 0, total, 1, 0), new_shape)


def trim_zeros(filt: Any, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Any:
    """`filt` without its leading ('f') and trailing ('b') zeros along the axes `axis` (all
    of them by default) (mirrors `jax.numpy.trim_zeros`). The values must be concrete,
    since the result's shape depends on them."""
    check_arraylike("trim_zeros", filt)
    filt = ensure_array(filt)
    host = filt.concrete_value() if isinstance(filt, Tracer) else np.asarray(filt)
    if host is None:
        raise ConcretizationTypeError(
            "jnp.trim_zeros: the result's shape depends on the values of 'filt', which are "
            "traced here; call it outside jit.")
    if not set(trim.lower()) <= set("fb"):
        raise ValueError(f"trim_zeros: unexpected trim={trim!r}; use 'f', 'b' or 'fb'.")
    if filt.ndim == 0:
        raise ValueError("trim_zeros: the input must be at least 1-d.")
    starts, stops = [0] * filt.ndim, list(filt.shape)
    nonzero = np.nonzero(host)
    for d in canonicalize_axes(axis, filt.ndim):
        if nonzero[d].size == 0:
            starts[d] = stops[d] = 0
            continue
        if "f" in trim.lower():
            starts[d] = int(nonzero[d].min())
        if "b" in trim.lower():
            stops[d] = int(nonzero[d].max()) + 1
    return lax.slice(filt, starts, stops)
