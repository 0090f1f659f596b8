"""Functions whose output size depends on values: nonzero, flatnonzero, argwhere, extract.

Mirrors `jax.numpy`'s handling of data-dependent shapes. Eagerly the size is read from the
values; under `jit` (or any transformation that hides them) the caller passes `size=`, and
the result is cut or padded to it, padding with `fill_value`. The helpers here (`result_size`,
`compact`) serve the set functions and histograms too.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.core.trace import Tracer
from jaxlite.errors import ConcretizationTypeError
from jaxlite.numpy._promotion import check_arraylike, convert, ensure_array
from jaxlite.numpy._shape import ravel
from jaxlite.numpy._sorting import stable_sort

__all__ = ["nonzero", "flatnonzero", "argwhere", "extract"]


def concrete_or_none(x: Any) -> np.ndarray | None:
    """The value of `x` as numpy when it is known now (eagerly, or a constant), else None."""
    if isinstance(x, Tracer):
        return x.concrete_value()
    return np.asarray(x)


def check_size(fun_name: str, size: Any) -> int | None:
    if size is None:
        return None
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(f"jnp.{fun_name}: size must be a static nonnegative integer, got "
                        f"{size!r}; it fixes the output shape, so it cannot be traced.") \
            from None
    if size < 0:
        raise ValueError(f"jnp.{fun_name}: size must be nonnegative, got {size}.")
    return size


def result_size(fun_name: str, size: Any, count: Any) -> int:
    """The output length: `size` when given, else the concrete value of `count`.

    Without `size` the count must be known now; under `jit` it is not, and the error
    says to pass `size=`.
    """
    size = check_size(fun_name, size)
    if size is not None:
        return size
    known = concrete_or_none(count)
    if known is None:
        raise ConcretizationTypeError(
            f"jnp.{fun_name}: the length of the result depends on the values of the input, "
            f"which are traced here ({count.aval.str_short()} count). Pass a static size= "
            f"(and optionally fill_value=) to jnp.{fun_name} to use it under jit, vmap or "
            "other transformations; entries beyond the true length are padded.")
    return int(known)


def compact(keep: Any, size: int) -> tuple[Any, Any]:
    """The positions of the true entries of the 1-d bool `keep`, in order, cut or padded to
    `size`, and a mask of the positions that are real (not padding).

    A stable sort that moves the true entries first does the compaction, so that it has a
    fixed shape and works under every transformation.
    """
    n = keep.shape[0]
    index_dtype = dtypes.default_int_dtype()
    iota = lax.iota(index_dtype, n)
    _, positions = stable_sort((convert(lax.bitwise_not(keep), np.int32), iota), 0)
    positions = _fit(positions, size, 0)
    count = lax.reduce_sum(convert(keep, index_dtype), (0,))
    real = lax.lt(lax.iota(index_dtype, size), count)
    return positions, real


def _fit(x: Any, size: int, fill: Any) -> Any:
    """The 1-d `x` cut to `size`, or padded at its end with `fill`."""
    n = x.shape[0]
    if size <= n:
        return lax.slice(x, (0,), (size,))
    return lax.pad(x, convert(fill, x.dtype), ((0, size - n, 0),))


def fill_where(real: Any, values: Any, fill: Any) -> Any:
    """`values` where `real` (a mask on the first axis), else the scalar `fill`."""
    mask = lax.broadcast_in_dim(real, values.shape, (0,))
    return lax.select(mask, values, lax.full_like(values, 0) if fill is None
                      else lax.broadcast_in_dim(convert(fill, values.dtype), values.shape, ()))


def _truth(x: Any) -> Any:
    if x.dtype == np.bool_:
        return x
    return lax.ne(x, lax.full_like(x, 0))


def _flat_true_positions(fun_name: str, a: Any, size: Any) -> tuple[Any, Any, Any]:
    """(positions of the nonzero entries of the flattened `a`, real mask, the array)."""
    check_arraylike(fun_name, a)
    a = ensure_array(a)
    keep = _truth(ravel(a))
    count = lax.reduce_sum(convert(keep, dtypes.default_int_dtype()), (0,))
    length = result_size(fun_name, size, count)
    positions, real = compact(keep, length)
    return positions, real, a


def per_dimension(fun_name: str, arg_name: str, value: Any, ndim: int) -> list[Any]:
    """`value` given once for all `ndim` dimensions, or as a tuple/list of one per dimension."""
    if not isinstance(value, (tuple, list)):
        return [value] * ndim
    if len(value) != ndim:
        raise ValueError(f"jnp.{fun_name}: {arg_name} must be a scalar or hold one entry per "
                         f"dimension ({ndim}), got {len(value)} entries.")
    return list(value)


def _unravel(positions: Any, shape: tuple[int, ...]) -> list[Any]:
    """Per-axis indices of the flat `positions` in an array of `shape` (C order)."""
    out = []
    for axis in range(len(shape)):
        stride = int(np.prod(shape[axis + 1:], dtype=np.int64))
        index = lax.div(positions, convert(stride, positions.dtype))
        out.append(lax.rem(index, convert(max(shape[axis], 1), positions.dtype)))
    return out


def _padding(a: Any, fill_value: Any) -> Any:
    """The padding of nonzero's results: `fill_value` (0 by default), but 0 for an empty
    `a`, whose padded results JAX 0.10.2 fills with zeros whatever `fill_value` says."""
    return 0 if fill_value is None or np.size(a) == 0 else fill_value


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """The indices of the nonzero entries, one array per axis (mirrors `jnp.nonzero`).

    Under `jit` pass `size=`; padding entries take `fill_value` (0 by default, or one value
    per axis).
    """
    check_arraylike("nonzero", a)
    if np.ndim(a) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    positions, real, a = _flat_true_positions("nonzero", a, size)
    fills = per_dimension("nonzero", "fill_value", _padding(a, fill_value), a.ndim)
    return tuple(fill_where(real, index, fill)
                 for index, fill in zip(_unravel(positions, a.shape), fills))


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero entries of the flattened `a` (`jnp.flatnonzero`)."""
    positions, real, a = _flat_true_positions("flatnonzero", a, size)
    return fill_where(real, positions, _padding(a, fill_value))


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero entries as rows of a (count, ndim) array (`jnp.argwhere`).

    A 0-d input is read as a 1-d array of one entry whose column is then dropped, as numpy
    does.
    """
    check_arraylike("argwhere", a)
    a = ensure_array(a)
    positions, real, _ = _flat_true_positions("argwhere", a, size)
    columns = [fill_where(real, index, _padding(a, fill_value))
               for index in _unravel(positions, a.shape)]
    if not columns:
        return lax.full((positions.shape[0], 0), 0, positions.dtype)
    return lax.concatenate([lax.expand_dims(c, (1,)) for c in columns], 1)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The entries of the flattened `arr` where the flattened `condition` is nonzero
    (mirrors `jax.numpy.extract`); under `jit` pass `size=`, padding with `fill_value`."""
    check_arraylike("extract", condition, arr)
    values = ravel(ensure_array(arr))
    positions, real, _ = _flat_true_positions("extract", condition, size)
    if values.shape[0] == 0:
        return fill_where(real, lax.full(positions.shape, 0, values.dtype), fill_value)
    picked = values[lax.min(positions, convert(values.shape[0] - 1, positions.dtype))]
    return fill_where(real, picked, fill_value)

