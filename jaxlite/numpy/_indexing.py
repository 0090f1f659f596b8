"""Basic indexing `x[idx]` and iteration over the first axis.

Mirrors numpy's basic indexing as `jax.numpy` implements it for static indices: integers
(negative ones count from the end), slices with any step, `None` (a new axis) and `...`,
alone or in a tuple. The result is one `lax.slice` for all the slices, a `lax.rev` for the
negative steps and a `lax.reshape` that drops the integer-indexed axes and adds the new
ones. Advanced indexing (integer arrays, boolean masks) needs gather, which arrives later.
"""
from __future__ import annotations

import operator
from typing import Any, Iterator

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.core.trace import Tracer
from jaxlite.numpy._promotion import ensure_array, is_jax_array

# Installed as Array and tracer methods by _operators; not part of the jnp namespace.
__all__: list[str] = []

_ADVANCED = ("integer-array and boolean-mask indexing (x[[0, 2]], x[mask]) need gather, "
             "which arrives with x.at[...] in a later release; use lax.slice / "
             "jnp.split / jnp.where for now.")


def _is_integer_scalar(idx: Any) -> bool:
    if isinstance(idx, (bool, np.bool_)):
        return False
    if isinstance(idx, (int, np.integer)):
        return True
    if is_jax_array(idx) or isinstance(idx, np.ndarray):
        return np.ndim(idx) == 0 and dtypes.is_integer(idx.dtype)
    return False


def _static_int(idx: Any) -> int:
    """The value of an integer index; traced ones are not supported yet."""
    if isinstance(idx, Tracer) and idx.concrete_value() is None:
        raise NotImplementedError(
            "Indexing with a traced integer (x[i] inside jit, vmap or grad with a traced i) "
            "needs dynamic_slice, which arrives in a later release; use a static index or "
            "lax.dynamic_index_in_dim when it lands.")
    return operator.index(idx)


def _check_entry(idx: Any) -> None:
    if isinstance(idx, str):
        raise TypeError(f"jaxlite does not support string indexing; got idx={idx!r}")
    if isinstance(idx, (bool, np.bool_)) or isinstance(idx, (list, np.ndarray)) \
            or is_jax_array(idx):
        raise NotImplementedError(f"Unsupported index {idx!r}: {_ADVANCED}")
    if isinstance(idx, (float, np.floating, complex)):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{type(idx).__name__}")
    raise TypeError(f"Unsupported index {idx!r} of type {type(idx).__name__}; expected an "
                    "integer, a slice, None or Ellipsis.")


def _normalize(index: Any, ndim: int) -> list[Any]:
    """The index as a list with the ellipsis expanded into full slices."""
    if isinstance(index, tuple):
        entries = list(index)
    elif isinstance(index, list):
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        "allowed; use `arr[array(seq)]` (advanced indexing, not supported "
                        "yet) or `arr[tuple(seq)]` instead of `arr[seq]`.")
    else:
        entries = [index]
    for entry in entries:
        if not (entry is None or entry is Ellipsis or isinstance(entry, slice)
                or _is_integer_scalar(entry)):
            _check_entry(entry)
    ellipses = sum(1 for e in entries if e is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for e in entries if e is not None and e is not Ellipsis)
    if used > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {used} were "
                         "indexed")
    if ellipses:
        at = entries.index(Ellipsis)
        entries[at:at + 1] = [slice(None)] * (ndim - used)
    else:
        entries += [slice(None)] * (ndim - used)
    return entries


def _slice_bounds(entry: slice, size: int) -> tuple[int, int, int, int]:
    """(low, high, stride, count) covering a slice's elements in increasing order."""
    start, stop, step = (None if v is None else _static_int(v)
                         for v in (entry.start, entry.stop, entry.step))
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start, stop, step = slice(start, stop, step).indices(size)
    count = len(range(start, stop, step))
    if count == 0:
        return 0, 0, 1, 0
    if step > 0:
        return start, start + (count - 1) * step + 1, step, count
    lowest = start + (count - 1) * step
    return lowest, start + 1, -step, count


def getitem(x: Any, index: Any) -> Any:
    """`x[index]` for basic indices (the `__getitem__` of arrays and tracers).

    Integers out of range raise IndexError, as in numpy. Advanced indexing raises
    NotImplementedError until gather arrives.
    """
    x = ensure_array(x)
    entries = _normalize(index, x.ndim)
    starts, limits, strides, reversed_axes = [], [], [], []
    out_shape: list[int] = []
    axis = 0
    for entry in entries:
        if entry is None:
            out_shape.append(1)
            continue
        size = x.shape[axis]
        if isinstance(entry, slice):
            low, high, stride, count = _slice_bounds(entry, size)
            if entry.step is not None and _static_int(entry.step) < 0 and count > 1:
                reversed_axes.append(axis)
            out_shape.append(count)
        else:
            value = _static_int(entry)
            if not -size <= value < size:
                raise IndexError(f"index {value} is out of bounds for axis {axis} with size "
                                 f"{size}")
            low = value % size
            high, stride = low + 1, 1
        starts.append(low)
        limits.append(high)
        strides.append(stride)
        axis += 1
    out = x
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        out = lax.slice(out, starts, limits, None if set(strides) <= {1} else strides)
    if reversed_axes:
        out = lax.rev(out, reversed_axes)
    return lax.reshape(out, tuple(out_shape))


def iterate(x: Any) -> Iterator[Any]:
    """Iterate over the first axis (the `__iter__` of arrays and tracers)."""
    x = ensure_array(x)
    if x.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return (getitem(x, i) for i in range(x.shape[0]))
