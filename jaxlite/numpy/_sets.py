"""Set operations: unique (and its array API variants), union, intersection, differences,
membership.

Mirrors `jax.numpy`'s set functions. Each one sorts, marks the first entry of every run
of equal values, and compacts the marked entries (`_nonzero.compact`), so that with
`size=` the shapes are static and everything works under `jit`. Padding follows JAX: the
values take `fill_value` (by default the smallest result, or 0 for `setdiff1d`), counts
take 0.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._nonzero import check_size, compact, fill_where, result_size
from jaxlite.numpy._promotion import (canonicalize_axis, check_arraylike, convert,
                                      ensure_array, promote_dtypes)
from jaxlite.numpy._shape import moveaxis, ravel
from jaxlite.numpy._sorting import searchsorted, sort_less, sorted_with_indices, stable_sort

__all__ = ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "union1d", "intersect1d", "setdiff1d", "setxor1d", "isin"]


class UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _index(x: Any) -> Any:
    return convert(x, dtypes.default_int_dtype())


def _same(x: Any, y: Any, equal_nan: bool) -> Any:
    """Whether neighbours of a sorted sequence are equal (NaNs equal when `equal_nan`)."""
    same = lax.bitwise_not(sort_less(x, y))
    if not equal_nan and dtypes.is_inexact(x.dtype):
        same = lax.bitwise_and(same, lax.eq(y, y))
    return same


def _run_starts(columns: list[Any], equal_nan: bool) -> Any:
    """For sorted rows (given as columns), whether each row starts a run of equal rows."""
    n = columns[0].shape[0]
    if n == 0:
        return lax.full((0,), False, np.bool_)
    same = lax.full((n - 1,), True, np.bool_)
    for column in columns:
        before, after = lax.slice(column, (0,), (n - 1,)), lax.slice(column, (1,), (n,))
        same = lax.bitwise_and(same, _same(before, after, equal_nan))
    return lax.concatenate([lax.full((1,), True, np.bool_), lax.bitwise_not(same)], 0)


def _gather_rows(x: Any, positions: Any) -> Any:
    n = x.shape[0]
    if n == 0:
        return lax.full((positions.shape[0],) + x.shape[1:], 0, x.dtype)
    return x[lax.min(positions, convert(n - 1, positions.dtype))]


def _unique_rows(rows: Any, size: Any, equal_nan: bool) -> dict[str, Any]:
    """The unique rows of the 2-d `rows` (n, m) and what unique reports about them."""
    n, m = rows.shape
    iota = lax.iota(dtypes.default_int_dtype(), n)
    if m:
        columns = [rows[:, j] for j in range(m)]
        *sorted_columns, perm = stable_sort(tuple(columns) + (iota,), 0, num_keys=m)
        starts = _run_starts(sorted_columns, equal_nan)
    else:
        # Empty rows are all equal: only the first one starts a run.
        perm, starts = iota, lax.lt(iota, lax.full_like(iota, 1))
    count = lax.reduce_sum(_index(starts), (0,))
    length = result_size("unique", size, count)
    positions, real = compact(starts, length + 1)
    positions, real, next_positions, next_real = (
        positions[:length], real[:length], positions[1:], real[1:])
    ends = lax.select(next_real, next_positions, lax.full_like(next_positions, n))
    counts = lax.select(real, lax.sub(ends, positions), lax.full_like(positions, 0))
    run_ids = lax.sub(lax.cumsum(_index(starts), 0), lax.full_like(iota, 1))
    _, inverse = stable_sort((perm, run_ids), 0)
    return {"values": _gather_rows(rows[perm] if n else rows, positions),
            "index": _gather_rows(perm, positions), "inverse": inverse,
            "counts": counts, "real": real, "n": n}


def _pad_unique(found: dict[str, Any], fill_value: Any, size: Any) -> dict[str, Any]:
    """Replace the padding of a unique result with JAX's fill values."""
    values, real = found["values"], found["real"]
    length = values.shape[0]
    if size is not None and length and found["n"] == 0 and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    first = values[0] if length else None
    fill = first if fill_value is None else convert(fill_value, values.dtype)
    padded = dict(found)
    if length:
        mask = lax.broadcast_in_dim(real, values.shape, (0,))
        filler = lax.broadcast_in_dim(fill, values.shape, tuple(range(1, values.ndim))
                                      if fill.ndim else ())
        padded["values"] = lax.select(mask, values, filler)
        if found["n"] == 0:
            # JAX pads only the values of an empty input: its index and counts stay empty
            padded["index"], padded["counts"] = found["index"][:0], found["counts"][:0]
        else:
            padded["index"] = lax.select(real, found["index"],
                                         lax.broadcast_in_dim(found["index"][0], real.shape,
                                                              ()))
    return padded


def _rows_along(ar: Any, axis: Any) -> tuple[Any, Any, int | None]:
    """`ar` as a 2-d array whose rows are the items compared by unique."""
    if axis is None:
        return lax.reshape(ravel(ar), (ar.size, 1)), None, None
    axis = canonicalize_axis(axis, ar.ndim)
    moved = moveaxis(ar, axis, 0)
    width = int(np.prod(moved.shape[1:], dtype=np.int64))
    return lax.reshape(moved, (moved.shape[0], width)), moved.shape, axis

def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None, sorted: bool = True) -> Any:
    """The sorted distinct entries of `ar` (mirrors `jax.numpy.unique`).

    Optionally also the index of each one's first occurrence, the inverse (the position in
    the result of each input entry, in the input's shape when `axis` is None) and the
    counts. With `axis`, distinct slices along that axis. Under `jit` pass `size=`; the
    result is cut or padded to it (values with `fill_value`, by default the smallest one).
    `sorted=False` is accepted; the result is sorted anyway.
    """
    check_arraylike("unique", ar)
    ar = ensure_array(ar)
    if dtypes.is_complex(ar.dtype):
        # JAX reads every complex entry with a NaN part as nan + 0j before sorting
        has_nan = lax.bitwise_or(lax.ne(lax.real(ar), lax.real(ar)),
                                 lax.ne(lax.imag(ar), lax.imag(ar)))
        ar = lax.select(has_nan, lax.full_like(ar, complex(np.nan, 0)), ar)
    size = check_size("unique", size)
    rows, moved_shape, axis = _rows_along(ar, axis)
    found = _pad_unique(_unique_rows(rows, size, equal_nan), fill_value, size)
    values = found["values"]
    if axis is None:
        values = lax.reshape(values, (values.shape[0],))
        inverse = lax.reshape(found["inverse"], ar.shape)
    else:
        values = moveaxis(lax.reshape(values, (values.shape[0],) + moved_shape[1:]), 0, axis)
        inverse = found["inverse"]
    extras = [found["index"]] * return_index + [inverse] * return_inverse
    extras += [found["counts"]] * return_counts
    return (values, *extras) if extras else values


def _array_api_unique(x: Any, size: Any, fill_value: Any) -> dict[str, Any]:
    check_arraylike("unique", x)
    x = ensure_array(x)
    values, index, inverse, counts = unique(x, True, True, True, equal_nan=False, size=size,
                                            fill_value=fill_value)
    return {"values": values, "indices": index, "inverse": inverse, "counts": counts}


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None
               ) -> UniqueAllResult:
    """Distinct values with first indices, inverse and counts; NaNs all distinct
    (mirrors `jax.numpy.unique_all`, the array API function)."""
    r = _array_api_unique(x, size, fill_value)
    return UniqueAllResult(r["values"], r["indices"], r["inverse"], r["counts"])


def unique_counts(x: Any, /, *, size: int | None = None, fill_value: Any = None
                  ) -> UniqueCountsResult:
    """Distinct values and their counts (mirrors `jax.numpy.unique_counts`)."""
    r = _array_api_unique(x, size, fill_value)
    return UniqueCountsResult(r["values"], r["counts"])


def unique_inverse(x: Any, /, *, size: int | None = None, fill_value: Any = None
                   ) -> UniqueInverseResult:
    """Distinct values and the inverse, in x's shape (`jax.numpy.unique_inverse`)."""
    r = _array_api_unique(x, size, fill_value)
    return UniqueInverseResult(r["values"], r["inverse"])


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Distinct values, NaNs all distinct (mirrors `jax.numpy.unique_values`)."""
    return _array_api_unique(x, size, fill_value)["values"]


# ------------------------------------------------------------------------ two sets

def _flat_pair(fun_name: str, ar1: Any, ar2: Any) -> tuple[Any, Any]:
    check_arraylike(fun_name, ar1, ar2)
    ar1, ar2 = promote_dtypes(ar1, ar2)
    return ravel(ar1), ravel(ar2)


def _sorted_firsts(x: Any) -> tuple[Any, Any, Any]:
    """`x` sorted, the permutation, and whether each entry starts a run of equal values."""
    if x.shape[0] == 0:
        return x, lax.full((0,), 0, dtypes.default_int_dtype()), lax.full((0,), True, np.bool_)
    values, perm = sorted_with_indices(x, 0)
    return values, perm, _run_starts([values], True)


def _pick(fun_name: str, values: Any, keep: Any, size: Any, fill_value: Any,
          default_fill: Any) -> tuple[Any, Any, Any]:
    """The kept entries of `values` (in order), padded; and the positions and real mask."""
    count = lax.reduce_sum(_index(keep), (0,))
    length = result_size(fun_name, size, count)
    positions, real = compact(keep, length)
    picked = _gather_rows(values, positions)
    if fill_value is not None:
        fill = convert(fill_value, values.dtype)
    elif default_fill is None and length:
        fill = picked[0]
    else:
        fill = convert(0 if default_fill is None else default_fill, values.dtype)
    return fill_where(real, picked, fill), positions, real


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted distinct values found in either input (mirrors `jnp.union1d`)."""
    ar1, ar2 = _flat_pair("union1d", ar1, ar2)
    return unique(lax.concatenate([ar1, ar2], 0), size=size, fill_value=fill_value)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, method: str = "auto") -> Any:
    """Whether each entry of `element` equals some entry of `test_elements` (`jnp.isin`).

    `method` is 'compare_all' (every pair), 'sort' or 'binary_search' (search in the
    sorted test values), or 'auto' (compare_all for small inputs).
    """
    check_arraylike("isin", element, test_elements)
    if method not in ("auto", "compare_all", "sort", "binary_search"):
        raise ValueError(f"jnp.isin: method must be 'auto', 'compare_all', 'sort' or "
                         f"'binary_search', got {method!r}.")
    element, tests = promote_dtypes(element, test_elements)
    tests = ravel(tests)
    if tests.shape[0] == 0:
        found = lax.full(element.shape, False, np.bool_)
    elif method == "compare_all" or (method == "auto" and tests.shape[0] * element.size
                                     <= 1 << 16):
        pairs = lax.eq(lax.broadcast_in_dim(element, element.shape + tests.shape,
                                            tuple(range(element.ndim))),
                       lax.broadcast_in_dim(tests, element.shape + tests.shape,
                                            (element.ndim,)))
        found = lax.reduce_or(pairs, (element.ndim,))
    else:
        ordered = stable_sort(tests, 0)
        where = searchsorted(ordered, element)
        probe = ordered[lax.min(where, convert(tests.shape[0] - 1, where.dtype))]
        found = lax.eq(probe, element)
    return lax.bitwise_not(found) if invert else found


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """The sorted distinct values of `ar1` not in `ar2` (mirrors `jnp.setdiff1d`);
    padding takes `fill_value`, 0 by default. The result has ar1's dtype."""
    check_arraylike("setdiff1d", ar1, ar2)
    dtype = ensure_array(ar1).dtype
    ar1, ar2 = _flat_pair("setdiff1d", ar1, ar2)
    values, _, firsts = _sorted_firsts(ar1)
    keep = lax.bitwise_and(firsts, isin(values, ar2, invert=True))
    picked, _, _ = _pick("setdiff1d", values, keep, size, fill_value, 0)
    return convert(picked, dtype)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """The sorted values found in exactly one of the inputs (mirrors `jnp.setxor1d`)."""
    ar1, ar2 = _flat_pair("setxor1d", ar1, ar2)
    only = []
    for mine, other in ((ar1, ar2), (ar1, ar2)[::-1]):
        values, _, firsts = _sorted_firsts(mine)
        only.append((values, lax.bitwise_and(firsts, isin(values, other, invert=True))))
    values = lax.concatenate([only[0][0], only[1][0]], 0)
    keep = lax.concatenate([only[0][1], only[1][1]], 0)
    # Kept entries first, each group in value order: then compaction keeps them sorted.
    rejected, values = stable_sort((convert(lax.bitwise_not(keep), np.int32), values), 0,
                                   num_keys=2)
    picked, _, _ = _pick("setxor1d", values, lax.eq(rejected, lax.full_like(rejected, 0)),
                         size, fill_value, None)
    return picked


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted distinct values found in both inputs (mirrors `jnp.intersect1d`).

    With `return_indices`, also the index of each value's first occurrence in each input;
    padded indices are the input lengths, as in JAX.
    """
    ar1, ar2 = _flat_pair("intersect1d", ar1, ar2)
    values, perm1, firsts = _sorted_firsts(ar1)
    keep = lax.bitwise_and(firsts, isin(values, ar2))
    picked, positions, real = _pick("intersect1d", values, keep, size, fill_value, None)
    if not return_indices:
        return picked
    index1 = lax.select(real, _gather_rows(perm1, positions),
                        lax.full_like(positions, ar1.shape[0]))
    sorted2, perm2 = sorted_with_indices(ar2, 0)
    where2 = searchsorted(sorted2, picked) if ar2.shape[0] else lax.full_like(positions, 0)
    index2 = lax.select(real, _gather_rows(perm2, where2),
                        lax.full_like(positions, ar2.shape[0]))
    return picked, index1, index2
