"""Reductions: sum, prod, max, min, mean, var, std, any, all, argmax, argmin, cumsum, cumprod.

Mirrors `jax.numpy`'s reductions (`jax._src.numpy.reductions`), with JAX's dtype rules:
sums and products of bool and narrow integers accumulate in the default integer type
(`sum(int8)` is int32), means and variances of integers are float32, float16 and bfloat16
means and variances accumulate in float32, and results are never weak-typed. `where=`
masks take the reduction's identity; max and min have none, so they need `initial=`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (broadcast_to_shape, canonicalize_axes, canonicalize_axis,
                                      check_arraylike, convert, ensure_array, user_dtype)
from jaxlite.numpy._shape import ravel

__all__ = [
    "sum", "prod", "max", "min", "amax", "amin", "ptp", "mean", "var", "std", "any", "all",
    "argmax", "argmin", "cumsum", "cumprod", "count_nonzero",
]

_LOW_PRECISION = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def _prepare(fun_name: str, a: Any, axis: Any) -> tuple[Any, tuple[int, ...]]:
    check_arraylike(fun_name, a)
    a = ensure_array(a)
    return a, canonicalize_axes(axis, a.ndim)


def _keep(out: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    return lax.expand_dims(out, tuple(sorted(axes))) if keepdims and axes else out


def _mask(x: Any, where: Any, fill: Any) -> Any:
    """`x` with the entries outside `where` replaced by `fill` (a reduction's identity)."""
    if where is None:
        return x
    check_arraylike("where", where)
    mask = ensure_array(where)
    if mask.dtype != np.bool_:
        mask = lax.ne(mask, lax._convert_element_type(0, mask.dtype, weak_type=True))
    mask = broadcast_to_shape(mask, x.shape)
    return lax.select(mask, x, lax.full_like(x, fill))


def _accumulation_dtype(dtype: np.dtype, promote_integers: bool) -> np.dtype:
    """The dtype sums and products use by default: narrow integers widen, bool counts."""
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    if promote_integers and dtypes.is_signed_integer(dtype):
        default = dtypes.default_int_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    if promote_integers and dtypes.is_unsigned(dtype):
        default = dtypes.default_uint_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


def _truth(x: Any) -> Any:
    if x.dtype == np.bool_:
        return lax._convert_element_type(x, np.bool_, weak_type=False)
    return lax.ne(x, lax._convert_element_type(0, x.dtype, weak_type=False))


def _sum_or_prod(fun_name: str, a: Any, axis: Any, dtype: Any, keepdims: bool, initial: Any,
                 where: Any, promote_integers: bool) -> Any:
    a, axes = _prepare(fun_name, a, axis)
    is_sum = fun_name == "sum"
    target = (_accumulation_dtype(a.dtype, promote_integers) if dtype is None
              else user_dtype(dtype, fun_name))
    if target == np.bool_:
        # A bool sum is "any", a bool product "all".
        x = _mask(_truth(a), where, not is_sum)
        out = lax.reduce_or(x, axes) if is_sum else lax.reduce_and(x, axes)
        if initial is not None:
            extra = _truth(convert(initial, np.bool_))
            out = lax.bitwise_or(out, extra) if is_sum else lax.bitwise_and(out, extra)
        return _keep(out, axes, keepdims)
    x = _mask(convert(a, target), where, 0 if is_sum else 1)
    out = lax.reduce_sum(x, axes) if is_sum else lax.reduce_prod(x, axes)
    if initial is not None:
        extra = _initial_value(initial, target)
        out = lax.add(out, extra) if is_sum else lax.mul(out, extra)
    return _keep(out, axes, keepdims)


def sum(a: Any, axis: Any = None, dtype: Any = None, out: None = None,  # noqa: A001
        keepdims: bool = False, initial: Any = None, where: Any = None,
        promote_integers: bool = True) -> Any:
    """Sum of elements over `axis` (mirrors `jax.numpy.sum`).

    Bool and integers narrower than the default integer accumulate in it (int32 with x64
    off) unless `promote_integers=False`; `where` masks entries out; `initial` is added.
    """
    _no_out("sum", out)
    return _sum_or_prod("sum", a, axis, dtype, keepdims, initial, where, promote_integers)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, initial: Any = None, where: Any = None,
         promote_integers: bool = True) -> Any:
    """Product of elements over `axis` (mirrors `jax.numpy.prod`); dtype rules as `sum`."""
    _no_out("prod", out)
    return _sum_or_prod("prod", a, axis, dtype, keepdims, initial, where, promote_integers)


def _initial_value(initial: Any, dtype: np.dtype) -> Any:
    """`initial` in the reduction's dtype; Python ints wrap as JAX converts them
    (`initial=-1` on uint32 is 2**32 - 1)."""
    if isinstance(initial, int) and dtypes.is_integer(dtype):
        with np.errstate(over="ignore"):
            initial = np.array(initial).astype(dtype)
    return convert(initial, dtype)


def _no_out(fun_name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{fun_name} is not supported: "
                                  "jaxlite arrays are immutable.")


# ------------------------------------------------------------------------ max, min

def _lowest(dtype: np.dtype) -> Any:
    if dtype == np.bool_:
        return False
    if dtypes.is_integer(dtype):
        return int(np.iinfo(dtype).min)
    return -np.inf


def _highest(dtype: np.dtype) -> Any:
    if dtype == np.bool_:
        return True
    if dtypes.is_integer(dtype):
        return int(np.iinfo(dtype).max)
    return np.inf


def _extremum(fun_name: str, a: Any, axis: Any, keepdims: bool, initial: Any,
              where: Any) -> Any:
    a, axes = _prepare(fun_name, a, axis)
    if where is not None and initial is None:
        raise ValueError(f"reduction operation {fun_name} does not have an identity, so to "
                         "use a where mask one has to specify 'initial'")
    if initial is None and 0 in [a.shape[d] for d in axes]:
        raise ValueError(f"zero-size array to reduction operation {fun_name} which has no "
                         "identity")
    largest = fun_name == "max"
    x = convert(a, a.dtype)  # reductions give strong results
    x = _mask(x, where, _lowest(x.dtype) if largest else _highest(x.dtype))
    out = lax.reduce_max(x, axes) if largest else lax.reduce_min(x, axes)
    if initial is not None:
        extra = _initial_value(initial, x.dtype)
        out = lax.max(out, extra) if largest else lax.min(out, extra)
    return _keep(out, axes, keepdims)


def max(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Largest element over `axis`, NaN propagating (mirrors `jax.numpy.max`).

    An empty reduction needs `initial`, as does a `where` mask.
    """
    _no_out("max", out)
    return _extremum("max", a, axis, keepdims, initial, where)


def min(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Smallest element over `axis`, NaN propagating (mirrors `jax.numpy.min`)."""
    _no_out("min", out)
    return _extremum("min", a, axis, keepdims, initial, where)


amax = max
amin = min


def ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Range `max - min` over `axis` (mirrors `jax.numpy.ptp`)."""
    _no_out("ptp", out)
    high = max(a, axis, keepdims=keepdims)
    low = min(a, axis, keepdims=keepdims)
    return lax.sub(high, low)


# ------------------------------------------------------------------------ any, all

def _logical_reduction(fun_name: str, a: Any, axis: Any, keepdims: bool, where: Any) -> Any:
    a, axes = _prepare(fun_name, a, axis)
    is_any = fun_name == "any"
    x = _mask(_truth(a), where, not is_any)
    out = lax.reduce_or(x, axes) if is_any else lax.reduce_and(x, axes)
    return _keep(out, axes, keepdims)


def any(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,  # noqa: A001
        where: Any = None) -> Any:
    """Whether any element over `axis` is nonzero (mirrors `jax.numpy.any`)."""
    _no_out("any", out)
    return _logical_reduction("any", a, axis, keepdims, where)


def all(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,  # noqa: A001
        where: Any = None) -> Any:
    """Whether every element over `axis` is nonzero (mirrors `jax.numpy.all`)."""
    _no_out("all", out)
    return _logical_reduction("all", a, axis, keepdims, where)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The number of nonzero elements over `axis` (mirrors `jax.numpy.count_nonzero`)."""
    a, axes = _prepare("count_nonzero", a, axis)
    counts = convert(_truth(a), dtypes.default_int_dtype())
    return _keep(lax.reduce_sum(counts, axes), axes, keepdims)


# ------------------------------------------------------------------------ mean, var, std

def _widen(dtype: np.dtype) -> np.dtype:
    """float16 and bfloat16 accumulate in float32, as JAX's means and variances do."""
    return dtypes.default_float_dtype() if dtype in _LOW_PRECISION else dtype


def _count(a: Any, axes: tuple[int, ...], where: Any, dtype: np.dtype, keepdims: bool) -> Any:
    """How many elements each reduction covers: static without `where`, else summed."""
    if where is None:
        return math.prod(a.shape[d] for d in axes)
    mask = broadcast_to_shape(ensure_array(where), a.shape)
    return _keep(lax.reduce_sum(convert(_truth(mask), dtype), axes), axes, keepdims)


def mean(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, *, where: Any = None) -> Any:
    """Arithmetic mean over `axis` (mirrors `jax.numpy.mean`).

    Integer and bool inputs give the default float type; float16 and bfloat16 accumulate in
    float32 and round at the end. An empty mean is NaN.
    """
    _no_out("mean", out)
    return _mean(a, axis, dtype, keepdims, where)


def _mean(a: Any, axis: Any, dtype: Any, keepdims: bool, where: Any) -> Any:
    a, axes = _prepare("mean", a, axis)
    if dtype is None:
        target = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(a.dtype))
    else:
        target = user_dtype(dtype, "mean")
    compute = _widen(target)
    total = _keep(lax.reduce_sum(_mask(convert(a, compute), where, 0), axes), axes, keepdims)
    count = _count(a, axes, where, compute, keepdims)
    if not isinstance(count, int):
        return convert(lax.div(total, count), target)
    return convert(lax.div(total, convert(count, compute)), target)


def _var_dtypes(a_dtype: np.dtype, dtype: Any) -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) of a variance."""
    inexact = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(a_dtype))
    if dtype is None:
        return _widen(inexact), dtypes.real_dtype(inexact)
    target = user_dtype(dtype, "var")
    if target == np.bool_:  # JAX divides in bool and fails there
        raise TypeError("div does not accept dtype bool at position 0. Accepted dtypes at "
                        "position 0 are subtypes of integer, floating, complexfloating. "
                        "(var: dtype=bool; pass an inexact dtype.)")
    if not dtypes.is_inexact(target):
        # JAX computes an integer variance in integer arithmetic; jaxlite refuses it
        raise ValueError(f"var and std need an inexact dtype, got dtype={target.name}.")
    compute = dtypes.result_type(inexact, target)
    return _widen(compute), target


def var(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: int | float | None = None) -> Any:
    """Variance over `axis`: mean squared distance from the mean (`jax.numpy.var`).

    The divisor is `N - ddof` (`correction` is the array API name of `ddof`); a divisor of
    zero or less gives NaN. Complex inputs give real variances.
    """
    _no_out("var", out)
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a, axes = _prepare("var", a, axis)
    compute, target = _var_dtypes(a.dtype, dtype)
    x = convert(a, compute)
    real_compute = dtypes.real_dtype(compute)
    if mean is None:
        centre = _mean(x, tuple(axes), None, True, where)
    else:
        centre = convert(mean, compute)
    centered = lax.sub(x, broadcast_to_shape(centre, x.shape))
    if dtypes.is_complex(compute):
        squares = lax.add(lax.mul(lax.real(centered), lax.real(centered)),
                          lax.mul(lax.imag(centered), lax.imag(centered)))
    else:
        squares = lax.mul(centered, centered)
    total = _keep(lax.reduce_sum(_mask(squares, where, 0), axes), axes, keepdims)
    count = _count(a, axes, where, real_compute, keepdims)
    if isinstance(count, int):
        divisor = count - ddof
        if divisor <= 0:
            return convert(lax.full_like(total, np.nan), target)
        return convert(lax.div(total, convert(divisor, real_compute)), target)
    divisor = lax.sub(count, convert(ddof, real_compute))
    result = lax.div(total, divisor)
    positive = lax.gt(divisor, lax.convert_element_type(0, real_compute))
    return convert(lax.select(positive, result, lax.full_like(result, np.nan)), target)


def std(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: int | float | None = None) -> Any:
    """Standard deviation: the square root of `var` (mirrors `jax.numpy.std`)."""
    _no_out("std", out)
    if dtype is not None and not dtypes.is_inexact(user_dtype(dtype, "std")):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    return lax.sqrt(var(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                        correction=correction))


# ------------------------------------------------------------------------ arg reductions

def _arg_extremum(fun_name: str, a: Any, axis: Any, keepdims: bool | None) -> Any:
    check_arraylike(fun_name, a)
    a = ensure_array(a)
    if axis is None:
        x, ax = ravel(a), 0
    else:
        x, ax = a, canonicalize_axis(axis, a.ndim)
    if x.shape[ax] == 0:
        raise ValueError(f"attempt to get {fun_name} of an empty sequence")
    op = lax.argmax if fun_name == "argmax" else lax.argmin
    out = op(x, ax, dtypes.default_int_dtype())
    if keepdims:
        out = lax.reshape(out, (1,) * a.ndim) if axis is None else lax.expand_dims(out, (ax,))
    return out


def argmax(a: Any, axis: int | None = None, out: None = None,
           keepdims: bool | None = None) -> Any:
    """Index of the largest element along `axis`, the first NaN winning (`jnp.argmax`)."""
    _no_out("argmax", out)
    return _arg_extremum("argmax", a, axis, keepdims)


def argmin(a: Any, axis: int | None = None, out: None = None,
           keepdims: bool | None = None) -> Any:
    """Index of the smallest element along `axis`, the first NaN winning (`jnp.argmin`)."""
    _no_out("argmin", out)
    return _arg_extremum("argmin", a, axis, keepdims)


# ------------------------------------------------------------------------ cumulative

def _cumulative(fun_name: str, a: Any, axis: Any, dtype: Any) -> Any:
    check_arraylike(fun_name, a)
    a = ensure_array(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    if dtype is None:
        target = dtypes.default_int_dtype() if a.dtype == np.bool_ else a.dtype
    else:
        target = user_dtype(dtype, fun_name)
    compute = dtypes.default_int_dtype() if target == np.bool_ else target
    x = convert(a, compute)
    out = lax.cumsum(x, axis) if fun_name == "cumsum" else lax.cumprod(x, axis)
    return _truth(out) if target == np.bool_ else out


def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Running sums along `axis`, of the flattened array when None (`jnp.cumsum`).

    Bool inputs count in the default integer type; other dtypes are kept.
    """
    _no_out("cumsum", out)
    return _cumulative("cumsum", a, axis, dtype)


def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Running products along `axis`, of the flattened array when None (`jnp.cumprod`)."""
    _no_out("cumprod", out)
    return _cumulative("cumprod", a, axis, dtype)
