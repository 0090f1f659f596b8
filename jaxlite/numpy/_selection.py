"""Selecting and placing elements by index: take, take_along_axis, put, put_along_axis,
place, choose, select, compress, ravel_multi_index, unravel_index.

Mirrors the `jax.numpy` functions of those names. Reads are one gather built by
`_indexing.getitem`, writes one scatter built by `x.at[...]`, so they work under `jit`,
`grad` and `vmap`. The modes follow JAX: `take` and `take_along_axis` fill out-of-bounds
reads (NaN for inexact dtypes, the most negative integer for signed ones, the largest for
unsigned, True for bool) unless `mode` is "clip" or "wrap"; "raise" is not supported, since
it would need the index values. As JAX's, the writing functions never mutate: `put`,
`put_along_axis` and `place` require `inplace=False`.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.errors import ConcretizationTypeError
from jaxlite.lax.dimension_value import size_in_dtype
from jaxlite.numpy._creation import asarray
from jaxlite.numpy._indexing import getitem
from jaxlite.numpy._promotion import (broadcast_to_shape, canonicalize_axis, check_arraylike,
                                      ensure_array, promote_dtypes)
from jaxlite.numpy._shape import broadcast_arrays, known_value, moveaxis, ravel

__all__ = [
    "take", "take_along_axis", "put", "put_along_axis", "place", "choose", "select",
    "compress", "ravel_multi_index", "unravel_index",
]


def _integer_indices(fun_name: str, indices: Any) -> Any:
    indices = ensure_array(indices)
    if not dtypes.is_integer(indices.dtype):
        raise ValueError(f"{fun_name}: indices must have an integer type, got "
                         f"{indices.dtype}.")
    return indices


def _wrapped(indices: Any, size: int) -> Any:
    """Indices modulo `size` (numpy's mode='wrap')."""
    size_value = np.asarray(size, indices.dtype)
    rem = lax.rem(indices, size_value)
    if dtypes.is_unsigned(indices.dtype):
        return rem
    return lax.select(lax.lt(rem, lax.full_like(rem, 0)), lax.add(rem, size_value), rem)


def _read_mode(fun_name: str, mode: Any) -> str:
    mode = "fill" if mode is None else mode
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{fun_name} is not supported: it "
                                  "would need the index values. Use 'fill', 'clip' or 'wrap'.")
    if mode not in ("fill", "clip", "wrap", "promise_in_bounds"):
        raise ValueError(f"{fun_name}: invalid mode {mode!r}; expected 'fill', 'clip', "
                         "'wrap' or 'promise_in_bounds'.")
    return mode


def _from_end_in_dtype(indices: Any, size: int) -> Any:
    """Negative indices plus `size`, added in the indices' own dtype as `jax.numpy.take`
    does: `size` wraps into a narrow dtype (200 is -56 as int8), so an int8 -1 on an axis
    of 200 stays negative (-57) and reads as out of bounds."""
    if dtypes.is_unsigned(indices.dtype):
        return indices
    size_value = size_in_dtype(size, indices.dtype)
    return lax.select(lax.lt(indices, lax.full_like(indices, 0)),
                      lax.add(indices, size_value), indices)


def _gather_along(fun_name: str, a: Any, index: tuple, axis: int, mode: str,
                  fill_value: Any, **options: Any) -> Any:
    """`a[index]` where `index[axis]` holds the user's indices, with a take-style mode."""
    entries = list(index)
    user = entries[axis]
    wrap_negative = mode != "clip"
    if mode == "wrap":
        entries[axis] = _wrapped(user, a.shape[axis])
        mode = "promise_in_bounds"
    elif fun_name == "take" and wrap_negative:
        entries[axis], wrap_negative = _from_end_in_dtype(user, a.shape[axis]), False
    # In clip mode a negative index clamps to 0 rather than counting from the end.
    return getitem(a, tuple(entries), mode=mode, fill_value=fill_value,
                   wrap_negative_indices=wrap_negative, **options)


def take(a: Any, indices: Any, axis: int | None = None, out: None = None,
         mode: str | None = None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value: Any = None) -> Any:
    """The elements of `a` at `indices` along `axis` (of the flattened `a` when `axis` is
    None) (mirrors `jax.numpy.take`). See the module docstring for the modes."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    check_arraylike("take", a, indices)
    a = ensure_array(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    indices = _integer_indices("take", indices)
    mode = _read_mode("take", mode)
    if a.shape[axis] == 0 and indices.size:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    index = (slice(None),) * axis + (indices,)
    return _gather_along("take", a, index, axis, mode, fill_value,
                         unique_indices=unique_indices, indices_are_sorted=indices_are_sorted)


def _along_axis_args(fun_name: str, arr: Any, indices: Any,
                     axis: int | None) -> tuple[Any, Any, int]:
    """`arr` (flattened when `axis` is None), integer `indices` and a nonnegative axis."""
    arr = ensure_array(arr)
    indices = _integer_indices(fun_name, indices)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"{fun_name}: when axis is None, indices must be 1-d; got "
                             f"shape {indices.shape}.")
        arr, axis = ravel(arr), 0
    return arr, indices, canonicalize_axis(axis, arr.ndim)


def _along_axis_index(fun_name: str, arr: Any, indices: Any, axis: int) -> tuple[Any, tuple]:
    """`arr` broadcast against `indices` outside `axis`, and the full index tuple that
    reads `arr[..., indices[...], ...]` element by element."""
    if indices.ndim != arr.ndim:
        raise ValueError(f"{fun_name}: indices and arr must have the same number of "
                         f"dimensions; {indices.ndim} vs. {arr.ndim}.")
    try:
        common = list(np.broadcast_shapes(
            tuple(n for d, n in enumerate(arr.shape) if d != axis),
            tuple(n for d, n in enumerate(indices.shape) if d != axis)))
    except ValueError:
        raise ValueError(f"{fun_name}: shapes {arr.shape} and {indices.shape} do not "
                         f"broadcast outside axis {axis}.") from None
    arr_shape = tuple(common[:axis] + [arr.shape[axis]] + common[axis:])
    index_shape = tuple(common[:axis] + [indices.shape[axis]] + common[axis:])
    arr = broadcast_to_shape(arr, arr_shape)
    indices = broadcast_to_shape(indices, index_shape)
    index = tuple(indices if d == axis else lax.broadcasted_iota(np.dtype(np.int32),
                                                                  index_shape, d)
                  for d in range(arr.ndim))
    return arr, index


def take_along_axis(arr: Any, indices: Any, axis: int | None = -1, mode: Any = None,
                    fill_value: Any = None, *,
                    wrap_negative_indices: bool | None = None) -> Any:
    """`arr` read at `indices` along `axis`, the other axes matched element by element
    (mirrors `jax.numpy.take_along_axis`); both are flattened when `axis` is None."""
    check_arraylike("take_along_axis", arr, indices)
    arr, indices, axis = _along_axis_args("take_along_axis", arr, indices, axis)
    mode = _read_mode("take_along_axis", mode)
    if np.dtype(indices.dtype).itemsize < 4:
        # JAX widens narrow indices first: an int8 -1 on an axis of 200 reads entry 199.
        indices = lax.convert_element_type(indices, np.int32)
    arr, index = _along_axis_index("take_along_axis", arr, indices, axis)
    if wrap_negative_indices is False:
        return getitem(arr, index, mode=mode, fill_value=fill_value,
                       wrap_negative_indices=False)
    return _gather_along("take_along_axis", arr, index, axis, mode, fill_value)


def _no_inplace(fun_name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"jnp.{fun_name} cannot modify arrays in place, since JAX arrays "
                         "are immutable; pass inplace=False and use the returned array.")


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """A copy of `a` whose flattened positions `ind` hold the values `v`, repeated as
    needed (mirrors `jax.numpy.put`). Out-of-range indices are clipped by default (after
    negative ones count from the end); mode 'wrap' takes them modulo the size."""
    _no_inplace("put", inplace)
    check_arraylike("put", a, ind, v)
    a = ensure_array(a)
    flat = ravel(a)
    index = ravel(_integer_indices("put", ind))
    values = ravel(asarray(v))
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    if index.shape[0] == 0 or flat.shape[0] == 0:
        return a
    if values.shape[0] == 0:
        raise ValueError("jnp.put: cannot place an empty array of values.")
    values = _cycled(values, index.shape[0])
    size = np.asarray(flat.shape[0], index.dtype)
    if mode == "wrap":
        index = _wrapped(index, flat.shape[0])
    elif mode in (None, "clip"):
        if mode is None and not dtypes.is_unsigned(index.dtype):
            index = lax.select(lax.lt(index, lax.full_like(index, 0)),
                               lax.add(index, size), index)
        index = lax.clamp(lax.full_like(index, 0), index, lax.sub(size, lax.full_like(
            index, 1)))
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    out = flat.at[index].set(values, mode="promise_in_bounds", wrap_negative_indices=False)
    return lax.reshape(out, a.shape)


def _cycled(values: Any, count: int) -> Any:
    """The 1-d `values` repeated and cut to `count` entries, as numpy's put and place do."""
    length = values.shape[0]
    if length == count:
        return values
    positions = lax.rem(lax.iota(np.dtype(np.int32), count), np.asarray(length, np.int32))
    return values[positions]


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Any:
    """A copy of `arr` with `values` written at `indices` along `axis`, the other axes
    matched element by element (mirrors `jax.numpy.put_along_axis`); out-of-bounds
    indices are dropped by default."""
    _no_inplace("put_along_axis", inplace)
    check_arraylike("put_along_axis", arr, indices, values)
    original_shape = np.shape(arr)
    arr, indices, axis = _along_axis_args("put_along_axis", arr, indices, axis)
    if indices.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: indices and arr must have the same number of "
                         f"dimensions; {indices.ndim} vs. {arr.ndim}.")
    # The target is not broadcast: only the index broadcasts to it, outside `axis`.
    index_shape = tuple(indices.shape[d] if d == axis else arr.shape[d]
                        for d in range(arr.ndim))
    indices = broadcast_to_shape(indices, index_shape)
    index = tuple(indices if d == axis else lax.broadcasted_iota(np.dtype(np.int32),
                                                                  index_shape, d)
                  for d in range(arr.ndim))
    out = arr.at[index].set(values, mode=mode)
    return lax.reshape(out, original_shape)


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """A copy of `arr` whose positions where `mask` is true hold `vals`, repeated in order
    as needed (mirrors `jax.numpy.place`). The mask must be concrete."""
    _no_inplace("place", inplace)
    check_arraylike("place", arr, mask, vals)
    arr = ensure_array(arr)
    host = known_value(mask)
    if host is None:
        raise ConcretizationTypeError(
            "jnp.place: the mask is traced, but which positions it selects must be known; "
            "use jnp.where(mask, values, arr) under jit instead.")
    positions = np.flatnonzero(np.broadcast_to(host, arr.shape)).astype(np.int32)
    if positions.size == 0:
        return arr
    values = ravel(asarray(vals))
    if values.shape[0] == 0:
        raise ValueError("jnp.place: cannot place an empty array of values.")
    out = ravel(arr).at[positions].set(_cycled(values, positions.size))
    return lax.reshape(out, arr.shape)


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Pick, at each position, the entry of the choice array numbered by `a` (mirrors
    `jax.numpy.choose`). `a` and the choices broadcast together; mode 'raise' needs a
    concrete `a`, 'wrap' and 'clip' bring indices into range."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    check_arraylike("choose", a)
    if isinstance(choices, (list, tuple)):
        check_arraylike("choose", *choices)
    host = known_value(a)
    a = _integer_indices("choose", a)
    options = [choices[i] for i in range(len(choices))]
    count = len(options)
    if mode == "raise":
        if host is None:
            raise ConcretizationTypeError(
                "jnp.choose with mode='raise' needs concrete indices; under jit use "
                "mode='wrap' or mode='clip'.")
        if host.size and (host.min() < 0 or host.max() >= count):
            raise ValueError("invalid entry in choice array: indices must lie in "
                             f"[0, {count}) for {count} choices.")
    elif mode == "wrap":
        a = _wrapped(a, count)
    elif mode == "clip":
        a = lax.clamp(lax.full_like(a, 0), a, lax.full_like(a, count - 1))
    else:
        raise ValueError(f"choose: invalid mode {mode!r}; expected 'raise', 'wrap' or "
                         "'clip'.")
    arrays = broadcast_arrays(a, *promote_dtypes(*options))
    which = lax.convert_element_type(arrays[0], np.int32)
    return lax.select_n(which, *arrays[1:])


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """At each position, the entry of the first choice whose condition holds, else
    `default` (mirrors `jax.numpy.select`)."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist; got "
                         f"{len(condlist)} vs {len(choicelist)}.")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    conditions = [asarray(c) != 0 if asarray(c).dtype != np.bool_ else asarray(c)
                  for c in condlist]
    promoted = promote_dtypes(default, *choicelist)
    arrays = broadcast_arrays(*conditions, *promoted)
    conds, values = arrays[:len(conditions)], arrays[len(conditions):]
    out = values[0]
    # Walk from the last choice to the first, so the first true condition wins.
    for cond, value in reversed(list(zip(conds, values[1:]))):
        out = lax.select(cond, value, out)
    return out


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Any:
    """The slices of `a` along `axis` where the 1-d `condition` is true; `a` is flattened
    when `axis` is None (mirrors `jax.numpy.compress`). Without `size` the condition must
    be concrete; with it the result has `size` slices, padded with `fill_value`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    check_arraylike("compress", condition, a)
    host = known_value(condition)
    condition = ensure_array(condition)
    if condition.ndim != 1:
        raise ValueError(f"condition must be a 1D array; got shape {condition.shape}.")
    a = ensure_array(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    length = condition.shape[0]
    if length > a.shape[axis]:
        if host is None or host[a.shape[axis]:].any():
            raise ValueError("condition contains entries that are out of bounds")
        condition, host, length = condition[:a.shape[axis]], host[:a.shape[axis]], \
            a.shape[axis]
    a = moveaxis(a, axis, 0)[:length]
    if size is None:
        if host is None:
            raise ConcretizationTypeError(
                "jnp.compress: the condition is traced, so the result's size is unknown; "
                "pass size= (and fill_value=) to give it a static size.")
        kept = a[np.flatnonzero(host).astype(np.int32)]
        return moveaxis(kept, 0, axis)
    return moveaxis(_compress_sized(condition, a, size, fill_value), 0, axis)


def _compress_sized(condition: Any, a: Any, size: int, fill_value: Any) -> Any:
    """The first `size` rows of `a` where `condition` holds, then rows of `fill_value`:
    row r lands at position (number of true entries before r) when it is kept."""
    if not 0 <= size <= a.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size} for a.shape[axis]={a.shape[0]}")
    keep = condition != 0
    slots = lax.sub(lax.cumsum(lax.convert_element_type(keep, np.int32), 0),
                    np.ones((), np.int32))
    slots = lax.select(keep, slots, lax.full_like(slots, size))
    filled = lax.full_like(a, 0, shape=(size,) + a.shape[1:])
    filled = lax.add(filled, asarray(fill_value).astype(a.dtype))
    return filled.at[slots].set(a, mode="drop")


def _index_shape_check(fun_name: str, dims: Sequence[int], count: int) -> tuple[int, ...]:
    dims = tuple(int(d) for d in dims)
    if len(dims) != count:
        raise ValueError(f"{fun_name}: multi_index has {count} entries but dims has "
                         f"{len(dims)}.")
    return dims


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Any:
    """Flat indices of the coordinate arrays `multi_index` into an array of shape `dims`
    (mirrors `jax.numpy.ravel_multi_index`). Mode 'raise' checks concrete coordinates;
    'wrap' and 'clip' bring them into range."""
    dims = _index_shape_check("ravel_multi_index", dims, len(multi_index))
    check_arraylike("ravel_multi_index", *multi_index)
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}.")
    hosts = [known_value(c) for c in multi_index]
    coords = [_integer_indices("ravel_multi_index", c) for c in multi_index]
    # JAX's default is the promotion of a Python int with the coordinates: int8
    # coordinates give int8, int64 ones int64.
    target = (dtypes.result_type(int, *multi_index) if dtype is None
              else dtypes.canonicalize_dtype(dtype))
    coords = [lax.convert_element_type(c, target) for c in broadcast_arrays(*coords)]
    if mode == "raise":
        if any(h is None for h in hosts):
            raise ConcretizationTypeError(
                "jnp.ravel_multi_index with mode='raise' needs concrete coordinates; under "
                "jit use mode='wrap' or mode='clip'.")
        if any(((h < 0) | (h >= n)).any() for h, n in zip(hosts, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        coords = [_wrapped(c, n) for c, n in zip(coords, dims)]
    elif mode == "clip":
        coords = [lax.clamp(lax.full_like(c, 0), c, lax.full_like(c, max(n - 1, 0)))
                  for c, n in zip(coords, dims)]
    else:
        raise ValueError(f"ravel_multi_index: invalid mode {mode!r}; expected 'raise', "
                         "'wrap' or 'clip'.")
    strides = _strides(dims if order == "C" else dims[::-1])
    if order == "F":
        strides = strides[::-1]
    out = lax.full_like(coords[0], 0) if coords else lax.full((), 0, target)
    for c, stride in zip(coords, strides):
        out = lax.add(out, lax.mul(c, np.asarray(stride, target)))
    return out


def _strides(dims: Sequence[int]) -> list[int]:
    """Row-major strides, in elements, of an array of shape `dims`."""
    return [math.prod(dims[i + 1:]) for i in range(len(dims))]


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """The coordinate arrays of flat `indices` into an array of `shape` (mirrors
    `jax.numpy.unravel_index`). As in JAX, negative indices count from the end and
    out-of-range ones clamp to the first or last element."""
    check_arraylike("unravel_index", indices)
    indices = _integer_indices("unravel_index", indices)
    shape = tuple(int(d) for d in shape)
    total = math.prod(shape)
    if total == 0 and indices.size:
        raise ValueError("unravel_index: cannot unravel into an empty shape.")
    flat = lax.select(lax.lt(indices, lax.full_like(indices, 0)),
                      lax.add(indices, np.asarray(total, indices.dtype)), indices)
    flat = lax.clamp(lax.full_like(flat, 0), flat, lax.full_like(flat, max(total - 1, 0)))
    out = []
    for stride, n in zip(_strides(shape), shape):
        out.append(lax.rem(lax.div(flat, np.asarray(stride, flat.dtype)),
                           np.asarray(n, flat.dtype)))
    return tuple(out)
