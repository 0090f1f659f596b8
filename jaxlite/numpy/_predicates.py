"""Tests on values and objects: closeness, equality of whole arrays, scalar tests, NaN cleanup.

Mirrors `jax.numpy`'s `isclose`, `allclose`, `array_equal`, `array_equiv`, `iscomplex`,
`isreal`, `isscalar`, `iterable` and `nan_to_num`. The whole-array tests return 0-d bool
arrays rather than Python bools, as in JAX, so that they work under `jit`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._math import imag, isfinite, isnan
from jaxlite.numpy._promotion import (check_arraylike, convert, ensure_array, is_jax_array,
                                      promote_args)
from jaxlite.numpy._reductions import all as all_
from jaxlite.numpy._ufuncs import equal

__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "iscomplex", "isreal",
           "isscalar", "iterable", "nan_to_num"]


def _strong(value: Any, dtype: np.dtype) -> Any:
    return lax._convert_element_type(value, dtype, weak_type=False)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
            equal_nan: bool = False) -> Any:
    """Elementwise test `|a - b| <= atol + rtol * |b|` (mirrors `jax.numpy.isclose`).

    Parameters
    ----------
    a, b : arrays or scalars, broadcast together. Integer and bool inputs are compared in
        the default floating type, as JAX does.
    rtol, atol : relative and absolute tolerances (converted to the comparison dtype).
    equal_nan : whether NaN in both `a` and `b` counts as close.

    Equal values are always close (infinities of the same sign included); an infinite `b`
    is close to nothing else.
    """
    x, y = promote_args("isclose", a, b)
    if not dtypes.is_inexact(x.dtype):
        wide = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(x.dtype))
        x, y = _strong(x, wide), _strong(y, wide)
    tolerance_dtype = dtypes.real_dtype(x.dtype)
    rtol = convert(rtol, tolerance_dtype)
    atol = convert(atol, tolerance_dtype)
    within = lax.le(lax.abs(lax.sub(x, y)), lax.add(atol, lax.mul(rtol, lax.abs(y))))
    out = lax.bitwise_or(lax.eq(x, y), lax.bitwise_and(isfinite(y), within))
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(isnan(x), isnan(y)))
    return out


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
             equal_nan: bool = False) -> Any:
    """Whether `isclose(a, b)` holds everywhere, as a 0-d bool array (`jnp.allclose`)."""
    return all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _as_array(fun_name: str, x: Any) -> Any:
    # array_equal and array_equiv accept lists, as JAX does (it converts them first).
    if isinstance(x, (list, tuple)):
        return ensure_array(np.asarray(x))
    check_arraylike(fun_name, x)
    return ensure_array(x)


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Whether two arrays have the same shape and elements (mirrors `jnp.array_equal`).

    Returns a 0-d bool array: False for different shapes, else whether every pair of
    elements is equal (NaNs equal to each other when `equal_nan`).
    """
    x, y = _as_array("array_equal", a1), _as_array("array_equal", a2)
    if np.shape(x) != np.shape(y):
        return lax.full((), False)
    same = equal(x, y)
    if equal_nan:
        same = lax.bitwise_or(same, lax.bitwise_and(isnan(x), isnan(y)))
    return all_(same)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether two arrays are equal after broadcasting (mirrors `jnp.array_equiv`).

    As JAX 0.10.2: shapes of different ranks that do not broadcast give False, shapes of
    equal rank that do not broadcast raise the elementwise TypeError (numpy gives False).
    """
    x, y = _as_array("array_equiv", a1), _as_array("array_equiv", a2)
    try:
        return all_(equal(x, y))
    except ValueError:
        return lax.full((), False)


def iscomplex(x: Any) -> Any:
    """Elementwise test for a nonzero imaginary part (mirrors `jax.numpy.iscomplex`)."""
    check_arraylike("iscomplex", x)
    part = imag(ensure_array(x))
    return lax.ne(part, lax._convert_element_type(0, part.dtype, weak_type=True))


def isreal(x: Any) -> Any:
    """Elementwise test for a zero imaginary part (mirrors `jax.numpy.isreal`)."""
    check_arraylike("isreal", x)
    part = imag(ensure_array(x))
    return lax.eq(part, lax._convert_element_type(0, part.dtype, weak_type=True))


def isscalar(element: Any) -> bool:
    """Whether `element` is a scalar: a Python or numpy scalar, or any 0-d array
    (mirrors `jax.numpy.isscalar`, which counts 0-d arrays, unlike numpy)."""
    if isinstance(element, (np.ndarray, np.generic)) or is_jax_array(element):
        return np.ndim(element) == 0
    return np.isscalar(element)


def iterable(y: Any) -> bool:
    """Whether `iter(y)` works; 0-d arrays are not iterable (mirrors `jnp.iterable`)."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def _fill(x: Any, value: Any, default: float) -> Any:
    return convert(default if value is None else value, x.dtype)


def _real_nan_to_num(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    info = dtypes.finfo(x.dtype)
    x = lax.select(isnan(x), _fill(x, nan, 0.0), x)
    x = lax.select(lax.eq(x, _strong(np.inf, x.dtype)), _fill(x, posinf, float(info.max)), x)
    return lax.select(lax.eq(x, _strong(-np.inf, x.dtype)), _fill(x, neginf, float(info.min)),
                      x)


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """Replace NaN and infinities by finite numbers (mirrors `jax.numpy.nan_to_num`).

    Parameters
    ----------
    x : an array or scalar; integer and bool inputs are returned unchanged.
    copy : ignored (arrays are immutable).
    nan : the value for NaN.
    posinf, neginf : the values for +inf and -inf; the largest and smallest finite values
        of the dtype when None. Complex inputs treat their two parts separately.
    """
    del copy
    check_arraylike("nan_to_num", x)
    x = ensure_array(x)
    if not dtypes.is_inexact(x.dtype):
        return x
    # JAX's replacement values are strong, so a weak input gives a strong result.
    x = lax._convert_element_type(x, x.dtype, weak_type=False)
    if dtypes.is_complex(x.dtype):
        real = _real_nan_to_num(lax.real(x), nan, posinf, neginf)
        return lax.complex(real, _real_nan_to_num(lax.imag(x), nan, posinf, neginf))
    return _real_nan_to_num(x, nan, posinf, neginf)

