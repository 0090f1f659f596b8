"""Reductions that skip NaNs, and the array API cumulative functions.

Mirrors `jax.numpy`'s nansum, nanprod, nanmax, nanmin, nanargmax, nanargmin, nanmean,
nanvar, nanstd, nancumsum, nancumprod, cumulative_sum and cumulative_prod. A NaN-skipping
reduction is the plain reduction with the NaNs masked out through its `where=` argument,
so dtypes, `keepdims` and `initial` behave exactly as in the plain one. Integer and bool
inputs have no NaNs and reduce as usual. As in JAX, a slice of NaNs only gives NaN from
nanmax, nanmin, nanmean and nanvar, and -1 from nanargmax and nanargmin (numpy raises).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy import _reductions as red
from jaxlite.numpy._promotion import (broadcast_to_shape, canonicalize_axis, check_arraylike,
                                      convert, ensure_array, user_dtype)

__all__ = ["nansum", "nanprod", "nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean",
           "nanvar", "nanstd", "nancumsum", "nancumprod", "cumulative_sum", "cumulative_prod"]


def _checked(fun_name: str, a: Any, out: Any) -> Any:
    red._no_out(fun_name, out)
    check_arraylike(fun_name, a)
    return ensure_array(a)


def _is_nan(a: Any) -> Any:
    return lax.ne(a, a)


def _not_nan_where(a: Any, where: Any) -> Any:
    """The `where=` mask of a NaN-skipping reduction: the caller's mask minus the NaNs."""
    if not dtypes.is_inexact(a.dtype):
        return where
    keep = lax.bitwise_not(_is_nan(a))
    if where is None:
        return keep
    return lax.bitwise_and(keep, broadcast_to_shape(red._truth(ensure_array(where)), a.shape))


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Sum over `axis` treating NaNs as zero (mirrors `jax.numpy.nansum`)."""
    a = _checked("nansum", a, out)
    return red.sum(a, axis, dtype, None, keepdims, initial, _not_nan_where(a, where))


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Product over `axis` treating NaNs as one (mirrors `jax.numpy.nanprod`)."""
    a = _checked("nanprod", a, out)
    return red.prod(a, axis, dtype, None, keepdims, initial, _not_nan_where(a, where))


def _nan_extremum(fun_name: str, a: Any, axis: Any, keepdims: bool, initial: Any,
                  where: Any) -> Any:
    largest = fun_name == "nanmax"
    reduce = red.max if largest else red.min
    if not dtypes.is_inexact(a.dtype):
        return reduce(a, axis, None, keepdims, initial, where)
    if initial is None and where is None and a.size == 0:
        # An empty array reduces as max/min does: empty results, or JAX's ValueError
        # ('zero-size array to reduction operation ...') over an empty axis.
        return reduce(a, axis, None, keepdims)
    mask = _not_nan_where(a, where)
    if initial is None:
        # Without an identity, reduce with the far end of the range and put NaN back
        # where nothing was left.
        far = -np.inf if largest else np.inf
        out = reduce(a, axis, None, keepdims, far, mask)
        empty = red.any(mask, axis, None, keepdims)
        return lax.select(empty, out, lax.full_like(out, np.nan))
    return reduce(a, axis, None, keepdims, initial, mask)


def nanmax(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """Largest non-NaN entry over `axis`; NaN where there is none (`jnp.nanmax`)."""
    a = _checked("nanmax", a, out)
    return _nan_extremum("nanmax", a, axis, keepdims, initial, where)


def nanmin(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """Smallest non-NaN entry over `axis`; NaN where there is none (`jnp.nanmin`)."""
    a = _checked("nanmin", a, out)
    return _nan_extremum("nanmin", a, axis, keepdims, initial, where)


def _nan_arg_extremum(fun_name: str, a: Any, axis: Any, keepdims: Any) -> Any:
    arg = red.argmax if fun_name == "nanargmax" else red.argmin
    if not dtypes.is_inexact(a.dtype):
        return arg(a, axis, None, keepdims)
    nans = _is_nan(a)
    far = -np.inf if fun_name == "nanargmax" else np.inf
    found = arg(lax.select(nans, lax.full_like(a, far), a), axis, None, keepdims)
    all_nan = red.all(nans, axis, None, bool(keepdims))
    return lax.select(all_nan, lax.full_like(found, -1), found)


def nanargmax(a: Any, axis: int | None = None, out: None = None,
              keepdims: bool | None = None) -> Any:
    """Index of the largest non-NaN entry along `axis`; -1 for a slice of NaNs
    (mirrors `jax.numpy.nanargmax`)."""
    a = _checked("nanargmax", a, out)
    return _nan_arg_extremum("nanargmax", a, axis, keepdims)


def nanargmin(a: Any, axis: int | None = None, out: None = None,
              keepdims: bool | None = None) -> Any:
    """Index of the smallest non-NaN entry along `axis`; -1 for a slice of NaNs
    (mirrors `jax.numpy.nanargmin`)."""
    a = _checked("nanargmin", a, out)
    return _nan_arg_extremum("nanargmin", a, axis, keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, where: Any = None) -> Any:
    """Mean of the non-NaN entries over `axis`; NaN where there are none (`jnp.nanmean`)."""
    a = _checked("nanmean", a, out)
    return red.mean(a, axis, dtype, None, keepdims, where=_not_nan_where(a, where))


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    """Variance of the non-NaN entries over `axis`, divided by their count minus `ddof`
    (mirrors `jax.numpy.nanvar`)."""
    a = _checked("nanvar", a, out)
    return red.var(a, axis, dtype, None, ddof, keepdims, where=_not_nan_where(a, where),
                   mean=mean)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    """Standard deviation of the non-NaN entries over `axis` (`jax.numpy.nanstd`)."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def _nan_cumulative(fun_name: str, a: Any, axis: Any, dtype: Any, out: Any) -> Any:
    a = _checked(fun_name, a, out)
    if dtypes.is_inexact(a.dtype):
        neutral = 0 if fun_name == "nancumsum" else 1
        a = lax.select(_is_nan(a), lax.full_like(a, neutral), a)
    plain = red.cumsum if fun_name == "nancumsum" else red.cumprod
    return plain(a, axis, dtype)


def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Running sums along `axis` treating NaNs as zero (mirrors `jax.numpy.nancumsum`)."""
    return _nan_cumulative("nancumsum", a, axis, dtype, out)


def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Running products along `axis` treating NaNs as one (`jax.numpy.nancumprod`)."""
    return _nan_cumulative("nancumprod", a, axis, dtype, out)


def _array_api_cumulative(fun_name: str, x: Any, axis: Any, dtype: Any,
                          include_initial: bool) -> Any:
    check_arraylike(fun_name, x)
    x = ensure_array(x)
    what = "sum" if fun_name == "cumulative_sum" else "product"
    if x.ndim == 0:
        raise ValueError(f"jnp.{fun_name}: the input must be non-scalar to take a cumulative "
                         f"{what}; got a 0-d array. Use jnp.atleast_1d first.")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"jnp.{fun_name}: the input has rank {x.ndim}, so axis must be "
                             "given explicitly; it is only optional for 1-d arrays.")
        axis = 0
    axis = canonicalize_axis(axis, x.ndim)
    if fun_name == "cumulative_sum":
        # Unlike cumsum, the array API sum widens narrow integers as `sum` does.
        accumulate = red._accumulation_dtype(x.dtype, True) if dtype is None else dtype
        out = red.cumsum(x, axis, accumulate)
    else:
        out = red.cumprod(x, axis, dtype)
    if dtype is not None:
        out = convert(out, user_dtype(dtype, fun_name))
    if not include_initial:
        return out
    start = 0 if fun_name == "cumulative_sum" else 1
    pad = [(0, 0, 0)] * x.ndim
    pad[axis] = (1, 0, 0)
    return lax.pad(out, convert(start, out.dtype), pad)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """Running sums along `axis` (the array API function, `jax.numpy.cumulative_sum`).

    `axis` may be left out only for 1-d input; `include_initial` prepends a zero.
    """
    return _array_api_cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Running products along `axis` (`jax.numpy.cumulative_prod`); `include_initial`
    prepends a one."""
    return _array_api_cumulative("cumulative_prod", x, axis, dtype, include_initial)
