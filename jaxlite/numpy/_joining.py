"""More joining and splitting: append, block, column_stack, concat, dstack, unstack, the
h/v/dsplit family, delete and insert.

Mirrors the `jax.numpy` functions of those names. Joins are `lax.concatenate` after numpy's
rules for bringing the pieces to a common rank; `delete` and `insert` move elements with one
gather or scatter whose positions are computed from the indices, so a traced index works
under `jit` wherever the result's shape does not depend on it (as in JAX).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.errors import ConcretizationTypeError
from jaxlite.numpy._creation import array, asarray
from jaxlite.numpy._promotion import (broadcast_shapes, canonicalize_axis, check_arraylike,
                                      ensure_array, is_jax_array, promote_dtypes)
from jaxlite.numpy._shape import (_as_sequence, _split, atleast_1d, atleast_3d, broadcast_to,
                                  concatenate, known_value, moveaxis, ravel)

__all__ = [
    "append", "block", "column_stack", "concat", "dstack", "unstack", "hsplit", "vsplit",
    "dsplit", "delete", "insert",
]

_INDEX = np.dtype(np.int32)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """`values` joined to the end of `arr`; both are flattened when `axis` is None (mirrors
    `jax.numpy.append`)."""
    check_arraylike("append", arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    """Array API name of `concatenate` (mirrors `jax.numpy.concat`)."""
    return concatenate(arrays, axis=axis)


def column_stack(tup: Any) -> Any:
    """Join 1-d arrays as columns and 2-d arrays as they are, along axis 1 (mirrors
    `jax.numpy.column_stack`)."""
    arrays = []
    for x in _as_sequence("column_stack", tup):
        x = ensure_array(x)
        arrays.append(lax.reshape(x, (x.size, 1)) if x.ndim < 2 else x)
    return concatenate(arrays, 1)


def dstack(tup: Any, dtype: Any = None) -> Any:
    """Join arrays along a third axis, after making them at least 3-d (mirrors
    `jax.numpy.dstack`)."""
    arrays = [atleast_3d(x) for x in _as_sequence("dstack", tup)]
    return concatenate(arrays, 2, dtype=dtype)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of `x` along `axis`, as a tuple (mirrors `jax.numpy.unstack`)."""
    check_arraylike("unstack", x)
    x = ensure_array(x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    axis = canonicalize_axis(axis, x.ndim)
    return tuple(lax.squeeze(lax.slice_in_dim(x, i, i + 1, 1, axis), (axis,))
                 for i in range(x.shape[axis]))


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split along axis 1, or axis 0 for 1-d arrays (mirrors `jax.numpy.hsplit`)."""
    check_arraylike("hsplit", ary)
    axis = 0 if np.ndim(ary) == 1 else 1
    return _split("hsplit", atleast_1d(ary), indices_or_sections, axis, strict=True)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split along axis 0 of an array of at least 2 dimensions (mirrors
    `jax.numpy.vsplit`)."""
    _check_ndim("vsplit", ary, 2)
    return _split("vsplit", ary, indices_or_sections, 0, strict=True)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split along axis 2 of an array of at least 3 dimensions (mirrors
    `jax.numpy.dsplit`)."""
    _check_ndim("dsplit", ary, 3)
    return _split("dsplit", ary, indices_or_sections, 2, strict=True)


def _check_ndim(fun_name: str, ary: Any, least: int) -> None:
    check_arraylike(fun_name, ary)
    if np.ndim(ary) < least:
        raise ValueError(f"{fun_name} only works on arrays of {least} or more dimensions; "
                         f"got shape {np.shape(ary)}.")


# ------------------------------------------------------------------------ block

def _block_depth(arrays: Any, path: str) -> int:
    if isinstance(arrays, tuple):
        raise TypeError(f"jnp.block: {path} is a tuple; only lists may nest blocks.")
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise ValueError("jax.numpy.block does not allow empty list arguments; found one at "
                         f"{path}.")
    depths = {_block_depth(item, f"{path}[{i}]") for i, item in enumerate(arrays)}
    if len(depths) != 1:
        raise ValueError(f"jnp.block: the lists at {path} are nested to different depths "
                         f"{sorted(depths)}; every entry must be nested equally deep.")
    return depths.pop() + 1


def _block_join(arrays: Any, depth: int, rank: int) -> Any:
    """Join the innermost lists along the last axis, the next ones along the one before."""
    if not isinstance(arrays, list):
        x = ensure_array(arrays)
        return lax.reshape(x, (1,) * (rank - x.ndim) + tuple(x.shape))
    parts = [_block_join(item, depth - 1, rank) for item in arrays]
    return concatenate(parts, rank - depth)


def _block_leaves(arrays: Any) -> list[Any]:
    if isinstance(arrays, list):
        return [leaf for item in arrays for leaf in _block_leaves(item)]
    return [arrays]


def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks (mirrors `jax.numpy.block`).

    The innermost lists join along the last axis, the lists holding them along the axis
    before, and so on; blocks get leading size-1 axes up to the common rank first.
    """
    depth = _block_depth(arrays, "arrays")
    leaves = _block_leaves(arrays)
    check_arraylike("block", *leaves)
    if depth == 0:
        return asarray(arrays)
    leaves = promote_dtypes(*leaves)
    rank = max([depth] + [x.ndim for x in leaves])
    it = iter(leaves)
    return _block_join(_replace_leaves(arrays, it), depth, rank)


def _replace_leaves(arrays: Any, leaves: Any) -> Any:
    if isinstance(arrays, list):
        return [_replace_leaves(item, leaves) for item in arrays]
    return next(leaves)


# ------------------------------------------------------------------------ delete, insert

def _axis_view(fun_name: str, arr: Any, axis: int | None) -> tuple[Any, int]:
    check_arraylike(fun_name, arr)
    arr = ensure_array(arr)
    if axis is None:
        return ravel(arr), 0
    return arr, canonicalize_axis(axis, arr.ndim)


def _static_index(obj: Any) -> int | None:
    """`obj` as a Python int when it is one (or a concrete 0-d integer array), else None."""
    try:
        return operator.index(obj)
    except TypeError:
        return None


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """`arr` without the entries `obj` (an index, a slice, an integer or boolean array)
    along `axis`; the array is flattened first when `axis` is None (mirrors
    `jax.numpy.delete`).

    As in JAX: one index out of range raises ValueError, an index array IndexError (numpy's
    words), and lists are refused. Index arrays must be concrete, except with
    `assume_unique_indices=True`, which promises distinct indices (clipped into range) and
    so gives a result shape known from their count.
    """
    arr, axis = _axis_view("delete", arr, axis)
    length = arr.shape[axis]
    index = _static_index(obj)
    if index is not None:
        return _take_static(arr, np.delete(np.arange(length), canonicalize_axis(index, length)),
                            axis)
    if isinstance(obj, slice):
        return _take_static(arr, np.delete(np.arange(length), np.arange(length)[obj]), axis)
    check_arraylike("delete", arr, obj)
    if dtypes.is_integer(dtypes.dtype(obj)) and assume_unique_indices:
        return _delete_unique(arr, obj, axis)
    host = known_value(obj)
    if host is None:
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: the 'obj' "
            "array argument of jnp.delete() (the size of the result depends on it). Pass "
            "concrete indices, or assume_unique_indices=True if the indices are distinct.")
    return _take_static(arr, np.flatnonzero(_kept_mask(host, length)), axis)


def _kept_mask(doomed: np.ndarray, length: int) -> np.ndarray:
    """Which of `length` positions `delete` keeps, given concrete indices or a mask."""
    if dtypes.is_integer(doomed.dtype):
        mask = np.ones(length, dtype=bool)
        mask[doomed] = False  # numpy's IndexError out of range, as in JAX
        return mask
    if doomed.dtype == np.bool_:
        if doomed.shape != (length,):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                             "one-dimensional with length matching specified axis.")
        return ~doomed
    raise ValueError(f"np.delete(arr, obj): got obj.dtype={doomed.dtype}; must be integer "
                     "or bool.")


def _take_static(arr: Any, positions: np.ndarray, axis: int) -> Any:
    index = (slice(None),) * axis + (positions.astype(np.int32),)
    return arr[index]


def _delete_unique(arr: Any, obj: Any, axis: int) -> Any:
    """Delete distinct traced indices: output j reads input j + #{k : d_k - k <= j}."""
    length = arr.shape[axis]
    doomed = ravel(asarray(obj)).astype(_INDEX)
    doomed = lax.select(lax.lt(doomed, np.zeros((), _INDEX)),
                        lax.add(doomed, np.asarray(length, _INDEX)), doomed)
    # out-of-range indices are clipped, as JAX does (they then delete nothing or the end)
    doomed = lax.clamp(np.asarray(0, _INDEX), doomed, np.asarray(length, _INDEX))
    doomed = lax.sort(doomed, 0)
    count = doomed.shape[0]
    shifted = lax.sub(doomed, lax.iota(_INDEX, count))
    out_ids = lax.iota(_INDEX, length - count)
    before = lax.le(lax.broadcast_in_dim(shifted, (length - count, count), (1,)),
                    lax.broadcast_in_dim(out_ids, (length - count, count), (0,)))
    skip = lax.reduce_sum(lax.convert_element_type(before, _INDEX), (1,))
    return arr[(slice(None),) * axis + (lax.add(out_ids, skip),)]


def _insert_indices(obj: Any, length: int) -> Any:
    """`insert`'s indices as a 0-d or 1-d integer array, with JAX's checks."""
    indices = asarray(np.arange(length)[obj] if isinstance(obj, slice) else obj)
    if indices.ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not dtypes.is_integer(indices.dtype):
        if indices.size == 0 and not is_jax_array(obj):  # e.g. np.array([]), float64
            return indices.astype(_INDEX)
        raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    return indices


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """`arr` with `values` inserted before the index or indices `obj` along `axis`; the
    array is flattened first when `axis` is None (mirrors `jax.numpy.insert`).

    `obj` may be traced (the result's size follows from its shape). As in JAX, one index
    (0-d, or an array of one) inserts all of `values` there, a 0-d one with `values`' first
    axis turned to `axis`; negative indices count from the end and the rest are clipped
    into range. The values are cast to `arr`'s dtype, as in numpy.
    """
    check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    arr, axis = _axis_view("insert", arr, axis)
    length = arr.shape[axis]
    indices = _insert_indices(obj, length)
    values = array(values, ndmin=arr.ndim, dtype=arr.dtype)
    if indices.size == 1:
        if indices.ndim == 0:
            values = moveaxis(values, 0, axis)
        indices = broadcast_to(ravel(indices), (values.shape[axis],))
    count = broadcast_shapes("insert", indices.shape, (values.shape[axis],))[0]
    index = broadcast_to(indices, (count,)).astype(_INDEX)
    block_shape = list(arr.shape)
    block_shape[axis] = count
    block = broadcast_to(values, tuple(block_shape))
    index = lax.select(lax.lt(index, np.zeros((), _INDEX)),
                       lax.add(index, np.asarray(length, _INDEX)), index)
    index = lax.clamp(np.zeros((), _INDEX), index, np.asarray(length, _INDEX))
    new_pos = _sorted_insert_positions(index)
    # An old element i moves right by the number of inserted values at positions <= i.
    old_ids = lax.iota(_INDEX, length)
    at_or_before = lax.le(lax.broadcast_in_dim(index, (length, count), (1,)),
                          lax.broadcast_in_dim(old_ids, (length, count), (0,)))
    old_pos = lax.add(old_ids, lax.reduce_sum(
        lax.convert_element_type(at_or_before, _INDEX), (1,)))
    out_shape = list(arr.shape)
    out_shape[axis] = length + count
    out = lax.full_like(arr, 0, shape=tuple(out_shape))
    lead = (slice(None),) * axis
    out = out.at[lead + (new_pos,)].set(block, unique_indices=True)
    return out.at[lead + (old_pos,)].set(arr, unique_indices=True)


def _sorted_insert_positions(index: Any) -> Any:
    """Where each inserted value lands: its index plus its rank in a stable sort."""
    count = index.shape[0]
    ranks = lax.iota(_INDEX, count)
    _, order = lax.sort((index, ranks), 0, num_keys=1)
    # rank_of[order[r]] = r, by scattering the ranks through the sort permutation.
    rank_of = lax.full((count,), 0, _INDEX).at[order].set(ranks, unique_indices=True)
    return lax.add(index, rank_of)

