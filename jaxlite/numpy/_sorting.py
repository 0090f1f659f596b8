"""Sorting and searching: sort, argsort, lexsort, partition, searchsorted, digitize.

Mirrors `jax.numpy`'s sorting functions. Everything is built on the stable `lax.sort`,
which orders NaNs last and complex numbers by real part, then imaginary part. Indices are
in the default integer type (int32 with x64 off). `partition` follows JAX's layout rather
than numpy's: the `kth + 1` smallest entries first in ascending order, then the rest in
descending order (numpy leaves both parts in an unspecified order).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (canonicalize_axis, check_arraylike, convert,
                                      ensure_array, promote_dtypes, user_dtype)
from jaxlite.numpy._shape import ravel

__all__ = ["sort", "argsort", "sort_complex", "lexsort", "partition", "argpartition",
           "searchsorted", "digitize"]


def _no_sort_options(fun_name: str, kind: Any, order: Any) -> None:
    if kind is not None:
        raise TypeError(f"jnp.{fun_name}: 'kind' is not supported; the sort is always a "
                        "stable merge sort. Use stable=True/False instead.")
    if order is not None:
        raise TypeError(f"jnp.{fun_name}: 'order' (sorting structured arrays by field) is "
                        "not supported: jaxlite arrays have no fields.")


def _along(fun_name: str, a: Any, axis: Any) -> tuple[Any, int]:
    """The array to sort (flattened when `axis` is None) and the axis, nonnegative."""
    check_arraylike(fun_name, a)
    a = ensure_array(a)
    if axis is None:
        return ravel(a), 0
    return a, canonicalize_axis(axis, a.ndim)


def stable_sort(operands: Any, axis: int, num_keys: int = 1, is_stable: bool = True) -> Any:
    """`lax.sort`, except that empty operands come back unchanged: there is nothing to
    order, and this keeps empty arrays away from the sort kernels and rules."""
    first = operands[0] if isinstance(operands, tuple) else operands
    if math.prod(first.shape) == 0:
        return operands
    return lax.sort(operands, axis, is_stable=is_stable, num_keys=num_keys)


def sorted_with_indices(a: Any, axis: int) -> tuple[Any, Any]:
    """`a` sorted stably along `axis` (nonnegative) and the permutation that sorts it."""
    iota = lax.broadcasted_iota(dtypes.default_int_dtype(), a.shape, axis)
    return stable_sort((a, iota), axis)


def take_along(x: Any, indices: Any, axis: int) -> Any:
    """`x[..., indices, ...]` along `axis`, `indices` having x's shape except on `axis`.

    Other axes pair up one to one, as in `numpy.take_along_axis`.
    """
    ndim = x.ndim
    others = tuple(d for d in range(ndim) if d != axis)
    dnums = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                       start_index_map=(axis,), operand_batching_dims=others,
                                       start_indices_batching_dims=others)
    return lax.gather(x, lax.expand_dims(indices, (ndim,)), dnums, (1,) * ndim,
                      mode="clip")


def sort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
         stable: bool = True, descending: bool = False) -> Any:
    """`a` sorted along `axis`, or flattened when `axis` is None (mirrors `jnp.sort`).

    NaNs go last (first with `descending=True`); the sort is always stable.
    """
    _no_sort_options("sort", kind, order)
    a, axis = _along("sort", a, axis)
    if a.ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    out = stable_sort(a, axis, is_stable=stable)
    return lax.rev(out, (axis,)) if descending else out


def argsort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
            stable: bool = True, descending: bool = False, dtype: Any = None) -> Any:
    """The indices that sort `a` along `axis` (mirrors `jax.numpy.argsort`).

    Equal entries keep their original order, in descending sorts too. `dtype` chooses
    the integer type of the indices (the default integer type otherwise).
    """
    _no_sort_options("argsort", kind, order)
    a, axis = _along("argsort", a, axis)
    if a.ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    index_dtype = dtypes.default_int_dtype() if dtype is None else user_dtype(dtype, "argsort")
    if descending:
        # Sorting the reversed array and reversing back keeps ties in their first order.
        _, perm = sorted_with_indices(lax.rev(a, (axis,)), axis)
        last = lax.full_like(perm, a.shape[axis] - 1)
        perm = lax.sub(last, lax.rev(perm, (axis,)))
    else:
        _, perm = sorted_with_indices(a, axis)
    return convert(perm, index_dtype)


def sort_complex(a: Any) -> Any:
    """`a` sorted along its last axis and returned as complex (`jax.numpy.sort_complex`)."""
    a, axis = _along("sort_complex", a, -1)
    # JAX's to_complex_dtype: 64-bit integers give complex128 under x64.
    target = dtypes.canonicalize_dtype(dtypes.to_complex_dtype(a.dtype))
    return convert(stable_sort(a, axis), target)


def lexsort(keys: Any, axis: int = -1) -> Any:
    """The indices that sort by several keys, the last key primary (`jax.numpy.lexsort`).

    `keys` is a sequence of arrays of one shape, or an array whose rows are the keys.
    """
    key_list = list(keys) if isinstance(keys, (list, tuple)) else None
    if key_list is None:
        check_arraylike("lexsort", keys)
        keys = ensure_array(keys)
        if keys.ndim == 0:
            raise TypeError("jnp.lexsort: keys must be a sequence of arrays or an array of "
                            "at least one dimension, got a scalar.")
        key_list = [keys[i] for i in range(keys.shape[0])]
    if not key_list:
        raise TypeError("jnp.lexsort: need at least one key to sort by.")
    check_arraylike("lexsort", *key_list)
    key_list = [ensure_array(k) for k in key_list]
    shapes = {k.shape for k in key_list}
    if len(shapes) != 1:
        raise ValueError(f"jnp.lexsort: all keys need the same shape, got "
                         f"{[k.shape for k in key_list]}.")
    shape = key_list[0].shape
    if not shape:
        return convert(0, dtypes.default_int_dtype())
    axis = canonicalize_axis(axis, len(shape))
    iota = lax.broadcasted_iota(dtypes.default_int_dtype(), shape, axis)
    outs = stable_sort(tuple(key_list[::-1]) + (iota,), axis, num_keys=len(key_list))
    return outs[-1]


def _partition_layout(fun_name: str, a: Any, kth: Any, axis: int) -> tuple[Any, int, int]:
    check_arraylike(fun_name, a)
    a = ensure_array(a)
    if dtypes.is_complex(a.dtype):
        raise NotImplementedError(f"jnp.{fun_name} for complex dtype is not implemented.")
    if a.ndim == 0:
        raise ValueError(f"jnp.{fun_name}: the input must have at least one dimension.")
    axis = canonicalize_axis(axis, a.ndim)
    try:
        k = operator.index(kth)
    except TypeError:
        raise TypeError(f"jnp.{fun_name}: kth must be a single static integer, got "
                        f"{kth!r}.") from None
    n = a.shape[axis]
    if not -n <= k < n:
        raise ValueError(f"jnp.{fun_name}: kth={kth} is out of bounds for axis {axis} of "
                         f"size {n}.")
    return a, axis, k % n


def _split_reversed(x: Any, k: int, axis: int) -> Any:
    """`x` with the entries after position `k` along `axis` reversed (JAX's layout)."""
    n = x.shape[axis]
    low = lax.slice_in_dim(x, 0, k + 1, 1, axis)
    high = lax.rev(lax.slice_in_dim(x, k + 1, n, 1, axis), (axis,))
    return lax.concatenate([low, high], axis)


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """`a` rearranged so that the entry at `kth` is where sorting would put it
    (mirrors `jax.numpy.partition`).

    Entries before it are no larger (in ascending order), entries after it no smaller (in
    descending order, as JAX lays them out).
    """
    a, axis, k = _partition_layout("partition", a, kth, axis)
    if a.dtype == np.bool_:
        raise TypeError("jnp.partition does not accept bool arrays, as in JAX; convert "
                        "them to an integer type first.")
    return _split_reversed(stable_sort(a, axis), k, axis)


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """The indices that `partition` would gather (mirrors `jax.numpy.argpartition`)."""
    a, axis, k = _partition_layout("argpartition", a, kth, axis)
    if a.dtype == np.bool_:
        raise TypeError("jnp.argpartition does not accept bool arrays, as in JAX; convert "
                        "them to an integer type first.")
    _, perm = sorted_with_indices(a, axis)
    # JAX's argpartition gives int32 indices, x64 or not.
    return lax.convert_element_type(_split_reversed(perm, k, axis), np.int32)


# ------------------------------------------------------------------------ searching

def _is_nan(x: Any) -> Any:
    return lax.ne(x, x)


def sort_less(x: Any, y: Any) -> Any:
    """`x < y` in the sort order: NaNs after every number, complex lexicographic."""
    if dtypes.is_complex(x.dtype):
        xr, yr = lax.real(x), lax.real(y)
        tie = lax.bitwise_or(lax.eq(xr, yr), lax.bitwise_and(_is_nan(xr), _is_nan(yr)))
        return lax.bitwise_or(sort_less(xr, yr),
                              lax.bitwise_and(tie, sort_less(lax.imag(x), lax.imag(y))))
    if dtypes.is_inexact(x.dtype):
        nan_after = lax.bitwise_and(_is_nan(y), lax.bitwise_not(_is_nan(x)))
        return lax.bitwise_or(lax.lt(x, y), nan_after)
    if x.dtype == np.bool_:
        return lax.bitwise_and(lax.bitwise_not(x), y)
    return lax.lt(x, y)


def _count_before(a: Any, v: Any, right: bool) -> Any:
    """For each entry of `v`, how many entries of the sorted 1-d `a` go before it.

    A binary search unrolled over the static length of `a`: each step halves the
    interval [low, high) that holds the answer.
    """
    n = a.shape[0]
    index_dtype = _search_index_dtype(n)
    low = lax.full(v.shape, 0, index_dtype)
    high = lax.full(v.shape, n, index_dtype)
    for _ in range(max(1, math.ceil(math.log2(n + 1)))):
        mid = lax.div(lax.add(low, high), convert(2, index_dtype))
        probe = a[lax.min(mid, convert(max(n - 1, 0), index_dtype))]
        # left side: probe < v; right side: probe <= v, i.e. not v < probe.
        before = (lax.bitwise_not(sort_less(v, probe)) if right else sort_less(probe, v))
        open_ = lax.lt(low, high)
        low = lax.select(lax.bitwise_and(open_, before), lax.add(mid, convert(1, index_dtype)),
                         low)
        high = lax.select(lax.bitwise_and(open_, lax.bitwise_not(before)), mid, high)
    return low


def _count_before_all(a: Any, v: Any, right: bool) -> Any:
    """The same count by comparing every pair (JAX's method='compare_all')."""
    pairs_a = lax.broadcast_in_dim(a, v.shape + a.shape, (v.ndim,))
    pairs_v = lax.broadcast_in_dim(v, v.shape + a.shape, tuple(range(v.ndim)))
    before = (lax.bitwise_not(sort_less(pairs_v, pairs_a)) if right
              else sort_less(pairs_a, pairs_v))
    return lax.reduce_sum(convert(before, _search_index_dtype(a.shape[0])), (v.ndim,))


def _search_index_dtype(length: int) -> np.dtype:
    """The dtype of searchsorted's positions: int32 while they fit, as JAX gives (under
    x64 too), else the default integer."""
    return np.dtype(np.int32) if length < 2**31 else dtypes.default_int_dtype()


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Where the entries of `v` would go in the sorted 1-d `a` (`jnp.searchsorted`).

    `side='left'` gives the first suitable position, `'right'` the last. `sorter`, the
    permutation that sorts `a`, may stand in for sorting it. NaNs sort last.
    Methods 'scan', 'scan_unrolled' and 'sort' all run an unrolled binary search
    here; 'compare_all' compares every pair.
    """
    check_arraylike("searchsorted", a, v)
    if side not in ("left", "right"):
        raise ValueError(f"jnp.searchsorted: side must be 'left' or 'right', got {side!r}.")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"jnp.searchsorted: method must be one of {_SEARCH_METHODS}, got "
                         f"{method!r}.")
    a, v = promote_dtypes(a, v)
    if a.ndim != 1:
        raise ValueError(f"jnp.searchsorted: a must be one-dimensional, got shape {a.shape}.")
    if sorter is not None:
        a = a[ensure_array(sorter)]
    if a.shape[0] == 0:
        return lax.full(v.shape, 0, _search_index_dtype(0))
    if method == "compare_all":
        return _count_before_all(a, v, side == "right")
    return _count_before(a, v, side == "right")


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """The index of the bin of each entry of `x` (mirrors `jax.numpy.digitize`).

    `bins` must be monotonic, increasing or decreasing (read from its ends, so that this
    works under jit); `right` says whether bins include their right edge.
    """
    check_arraylike("digitize", x, bins)
    x, bins = promote_dtypes(x, bins)
    if bins.ndim != 1:
        raise ValueError(f"jnp.digitize: bins must be one-dimensional, got shape "
                         f"{bins.shape}.")
    if bins.shape[0] == 0:
        return lax.full(x.shape, 0, _search_index_dtype(0))
    side = "left" if right else "right"
    search = method or "scan"
    rising = searchsorted(bins, x, side=side, method=search)
    falling = lax.sub(lax.full_like(rising, bins.shape[0]),
                      searchsorted(lax.rev(bins, (0,)), x, side=side, method=search))
    increasing = lax.bitwise_not(sort_less(bins[-1], bins[0]))
    return lax.select(lax.broadcast_in_dim(increasing, x.shape, ()), rising, falling)
