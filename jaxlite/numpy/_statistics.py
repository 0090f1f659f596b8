"""Order statistics and moments: quantile, percentile, median (and their NaN-skipping
forms), average, cov, corrcoef.

Mirrors `jax.numpy`. A quantile sorts the reduced axes (flattened into one, NaNs last)
and reads the entries around the fractional position `q * (n - 1)`, where `n` counts the
non-NaN entries for the nan* forms. The methods are JAX's: 'linear', 'lower', 'higher',
'midpoint', 'nearest' (ties go to the lower entry, where numpy rounds half to even) and
'inverted_cdf'. Without the nan* prefix a NaN anywhere in a slice makes its result NaN.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.numpy._placement import accepts_placement
from jaxlite.core import dtypes
from jaxlite.numpy import _reductions as red
from jaxlite.numpy._linalg_basic import diagonal, dot
from jaxlite.numpy._promotion import (broadcast_to_shape, canonicalize_axes, canonicalize_axis,
                                      check_arraylike, convert, ensure_array,
                                      promote_dtypes_inexact, user_dtype)
from jaxlite.numpy._sorting import stable_sort, take_along

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "average", "cov", "corrcoef"]

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile_args(fun_name: str, a: Any, q: Any, method: str, out: Any, weights: Any
                   ) -> tuple[Any, Any]:
    red._no_out(fun_name, out)
    check_arraylike(fun_name, a, q)
    if weights is not None:
        raise NotImplementedError(f"jnp.{fun_name}: weights are not supported yet in "
                                  "jaxlite; compute a weighted quantile by sorting.")
    if method not in _METHODS:
        raise ValueError(f"jnp.{fun_name}: method must be one of {_METHODS}, got "
                         f"{method!r}.")
    if dtypes.is_complex(ensure_array(a).dtype):
        raise ValueError(f"jnp.{fun_name} does not support complex input: complex numbers "
                         "have no order. Pass the real part or the magnitude.")
    # The result takes a's (inexact) dtype; q follows it, whatever its own dtype.
    a, = promote_dtypes_inexact(a)
    return a, convert(q, a.dtype)


def _flatten_reduced(a: Any, axis: Any, keepdims: bool) -> tuple[Any, tuple[int, ...]]:
    """`a` with the reduced axes merged into one last axis, and the kept-axes shape."""
    axes = canonicalize_axes(axis, a.ndim)
    rest = [d for d in range(a.ndim) if d not in axes]
    moved = lax.transpose(a, tuple(rest) + axes)
    n = math.prod(a.shape[d] for d in axes)
    flat = lax.reshape(moved, tuple(a.shape[d] for d in rest) + (n,))
    if keepdims:
        kept = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    else:
        kept = tuple(a.shape[d] for d in rest)
    return flat, kept


def _pick(ordered: Any, position: Any) -> Any:
    """Entries of the sorted last axis at the integer `position` (shape q + batch)."""
    batch = ordered.shape[:-1]
    q_ndim = position.ndim - len(batch)
    ordered = lax.broadcast_in_dim(ordered, position.shape + (ordered.shape[-1],),
                                   tuple(range(q_ndim, position.ndim + 1)))
    index = lax.expand_dims(position, (position.ndim,))
    return lax.squeeze(take_along(ordered, index, position.ndim), (position.ndim,))


def _interpolate(ordered: Any, count: Any, q: Any, method: str) -> Any:
    """The quantiles `q` of the sorted last axis of `ordered`, `count` entries being valid."""
    dtype = ordered.dtype
    batch = ordered.shape[:-1]
    q_ndim = q.ndim
    q = lax.broadcast_in_dim(q, q.shape + batch, tuple(range(q_ndim)))
    count = lax.broadcast_in_dim(convert(count, dtype), q.shape,
                                 tuple(range(q_ndim, q_ndim + len(batch))))
    top = lax.max(lax.sub(count, lax.full_like(count, 1)), lax.full_like(count, 0))
    if method == "inverted_cdf":
        # The first entry whose cumulative share count reaches q * count.
        position = lax.sub(lax.ceil(lax.mul(q, count)), lax.full_like(count, 1))
        position = lax.clamp(lax.full_like(count, 0), position, top)
        return _pick(ordered, convert(position, dtypes.default_int_dtype()))
    position = lax.clamp(lax.full_like(count, 0), lax.mul(q, top), top)
    low, high = lax.floor(position), lax.ceil(position)
    index = dtypes.default_int_dtype()
    low_value = _pick(ordered, convert(low, index))
    high_value = _pick(ordered, convert(high, index))
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "midpoint":
        return lax.mul(lax.add(low_value, high_value), lax.full_like(low_value, 0.5))
    weight = lax.sub(position, low)
    if method == "nearest":
        upper = lax.gt(weight, lax.full_like(weight, 0.5))
        return lax.select(upper, high_value, low_value)
    return lax.add(low_value, lax.mul(lax.sub(high_value, low_value), weight))


def _quantile(fun_name: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool,
              skip_nans: bool) -> Any:
    flat, kept = _flatten_reduced(a, axis, keepdims)
    n = flat.shape[-1]
    if n == 0:
        # JAX's gather of the sorted entries fails: its words, then ours
        where = 0 if axis is None else (canonicalize_axis(axis, a.ndim) if np.ndim(axis) == 0
                                        else flat.ndim - 1)
        raise TypeError(f"Slice size at index {where} in gather op is out of range, must be "
                        f"within [0, 0 + 1), got 1. (jnp.{fun_name}: cannot take a quantile "
                        f"over an empty axis; the reduced axes of shape {a.shape} hold no "
                        "entries.)")
    if keepdims and axis is None and a.ndim == 0:
        kept = (1,)  # JAX ravels the input first, so a 0-d one keeps one axis
    if flat.size == 0:  # nothing kept: an empty result of the right shape
        return lax.full(q.shape + kept, 0, flat.dtype)
    ordered = stable_sort(flat, flat.ndim - 1)
    nans = lax.ne(flat, flat)
    if skip_nans:
        count = lax.reduce_sum(convert(lax.bitwise_not(nans), np.int32), (flat.ndim - 1,))
    else:
        count = lax.full(flat.shape[:-1], n, np.int32)
    result = _interpolate(ordered, count, q, method)
    poisoned = lax.reduce_or(nans, (flat.ndim - 1,)) if not skip_nans else lax.eq(
        count, lax.full_like(count, 0))
    poisoned = lax.broadcast_in_dim(poisoned, result.shape,
                                    tuple(range(q.ndim, result.ndim)))
    result = lax.select(poisoned, lax.full_like(result, np.nan), result)
    return lax.reshape(result, q.shape + kept)


def quantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """The `q`-th quantiles (0 <= q <= 1) over `axis` (mirrors `jax.numpy.quantile`).

    The result has q's shape followed by the kept axes. Integers give floats.
    """
    a, q = _quantile_args("quantile", a, q, method, out, weights)
    return _quantile("quantile", a, q, axis, method, keepdims, False)


def nanquantile(a: Any, q: Any, axis: Any = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None) -> Any:
    """`quantile` of the non-NaN entries; NaN for slices of NaNs (`jnp.nanquantile`)."""
    a, q = _quantile_args("nanquantile", a, q, method, out, weights)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True)


def _percent(q: Any) -> Any:
    return lax.div(q, convert(100, q.dtype))


@accepts_placement("out_sharding")
def percentile(a: Any, q: Any, axis: Any = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None) -> Any:
    """The `q`-th percentiles (0 <= q <= 100) over `axis` (`jax.numpy.percentile`)."""
    a, q = _quantile_args("percentile", a, q, method, out, weights)
    return _quantile("percentile", a, _percent(q), axis, method, keepdims, False)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None) -> Any:
    """`percentile` of the non-NaN entries (mirrors `jax.numpy.nanpercentile`)."""
    a, q = _quantile_args("nanpercentile", a, q, method, out, weights)
    return _quantile("nanpercentile", a, _percent(q), axis, method, keepdims, True)


def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The middle value over `axis`, the mean of the two middle ones for an even count
    (mirrors `jax.numpy.median`); NaN if a slice holds a NaN."""
    return quantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def nanmedian(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """The median of the non-NaN entries over `axis` (mirrors `jax.numpy.nanmedian`)."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


# ------------------------------------------------------------------------ moments

def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The weighted mean over `axis` (mirrors `jax.numpy.average`).

    `weights` has a's shape, or is 1-d along a single `axis`. With `returned`, the sum of
    the weights comes back too (broadcast to the result's shape).
    """
    check_arraylike("average", a)
    if weights is None:
        avg = red.mean(a, axis, keepdims=keepdims)
        a = ensure_array(a)
        axes = canonicalize_axes(axis, a.ndim)
        total = lax.full_like(avg, math.prod(a.shape[d] for d in axes))
        return (avg, total) if returned else avg
    check_arraylike("average", weights)
    a, weights = promote_dtypes_inexact(a, weights)
    axes = canonicalize_axes(axis, a.ndim)
    if weights.shape != a.shape:
        if len(axes) != 1 or weights.ndim != 1 or weights.shape[0] != a.shape[axes[0]]:
            raise ValueError(f"jnp.average: weights of shape {weights.shape} do not fit "
                             f"an array of shape {a.shape} reduced over axis={axis}; give "
                             "them a's shape, or a 1-d shape along a single axis.")
        weights = lax.broadcast_in_dim(weights, a.shape, axes)
    total = red.sum(weights, axes, keepdims=keepdims)
    avg = lax.div(red.sum(lax.mul(a, weights), axes, keepdims=keepdims), total)
    return (avg, lax.broadcast_in_dim(total, avg.shape, tuple(range(avg.ndim))))\
        if returned else avg


def _observations(fun_name: str, m: Any, y: Any, rowvar: bool, dtype: Any) -> Any:
    """The variables as rows of a 2-d array (y's variables appended below m's)."""
    check_arraylike(fun_name, m)
    m = ensure_array(m)
    if m.ndim > 2:
        raise ValueError(f"jnp.{fun_name}: m has more than 2 dimensions ({m.shape}).")
    parts = [m] if y is None else [m, ensure_array(y)]
    if y is not None:
        check_arraylike(fun_name, y)
        if parts[1].ndim > 2:
            raise ValueError(f"jnp.{fun_name}: y has more than 2 dimensions.")
    parts = promote_dtypes_inexact(*parts)
    rows = []
    for part in parts:
        part = lax.reshape(part, (1, part.size)) if part.ndim < 2 else part
        if not rowvar and part.shape[0] != 1:
            part = lax.transpose(part, (1, 0))
        rows.append(part)
    x = lax.concatenate(rows, 0) if len(rows) > 1 else rows[0]
    return convert(x, user_dtype(dtype, fun_name)) if dtype is not None else x


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: Any = None, aweights: Any = None,
        dtype: Any = None) -> Any:
    """The covariance matrix of the variables (rows of `m`, or columns when not `rowvar`)
    (mirrors `jax.numpy.cov`).

    `fweights` (integer repeat counts) and `aweights` (observation weights) weight the
    observations; the divisor is the weighted count minus `ddof` (1 unless `bias`). A single
    variable gives a 0-d result.
    """
    x = _observations("cov", m, y, rowvar, dtype)
    n_obs = x.shape[1]
    w = None
    for given, name in ((fweights, "fweights"), (aweights, "aweights")):
        if given is None:
            continue
        check_arraylike("cov", given)
        given = convert(given, x.dtype)
        if given.shape != (n_obs,):
            raise ValueError(f"jnp.cov: {name} must be 1-d with one weight per observation "
                             f"({n_obs}), got shape {given.shape}.")
        w = given if w is None else lax.mul(w, given)
    if ddof is None:
        ddof = 0 if bias else 1
    if w is None:
        w_sum = convert(n_obs, x.dtype)
        mean = red.mean(x, 1, keepdims=True)
        factor = lax.sub(w_sum, convert(ddof, x.dtype))
    else:
        w_sum = red.sum(w)
        mean = lax.div(red.sum(lax.mul(x, lax.expand_dims(w, (0,))), 1, keepdims=True), w_sum)
        if ddof == 0:
            factor = w_sum
        elif aweights is None:
            factor = lax.sub(w_sum, convert(ddof, x.dtype))
        else:
            a_w = convert(aweights, x.dtype)
            factor = lax.sub(w_sum, lax.div(lax.mul(convert(ddof, x.dtype),
                                                    red.sum(lax.mul(w, a_w))), w_sum))
    factor = lax.max(factor, lax.full_like(factor, 0))
    centred = lax.sub(x, broadcast_to_shape(mean, x.shape))
    weighted = centred if w is None else lax.mul(centred, lax.expand_dims(w, (0,)))
    conj = lax.conj(centred) if dtypes.is_complex(x.dtype) else centred
    product = dot(weighted, lax.transpose(conj, (1, 0)))
    result = lax.div(product, lax.broadcast_in_dim(factor, product.shape, ()))
    return lax.squeeze(result, (0, 1)) if result.shape == (1, 1) else result


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Any:
    """Pearson correlation coefficients of the variables (mirrors `jax.numpy.corrcoef`);
    real parts are clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return lax.div(c, c)
    d = lax.real(diagonal(c)) if dtypes.is_complex(c.dtype) else diagonal(c)
    scale = lax.sqrt(d)
    c = lax.div(c, lax.broadcast_in_dim(scale, c.shape, (0,)))
    c = lax.div(c, lax.broadcast_in_dim(scale, c.shape, (1,)))
    if dtypes.is_complex(c.dtype):
        re = lax.clamp(convert(-1, d.dtype), lax.real(c), convert(1, d.dtype))
        return lax.complex(re, lax.imag(c))
    return lax.clamp(convert(-1, c.dtype), c, convert(1, c.dtype))

