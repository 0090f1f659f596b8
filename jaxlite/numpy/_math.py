"""Unary elementwise functions: signs, rounding, exponentials, trigonometry, classification.

Mirrors the unary ufuncs of `jax.numpy` (`jax._src.numpy.ufuncs`). Transcendental functions
compute integer and bool inputs in floating point (`jnp.sin(int32)` is float32); sign and
rounding functions keep integer dtypes, since their results are already integers.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (check_arraylike, concrete_int, convert, ensure_array,
                                      promote_args_inexact, promote_args_numeric)
from jaxlite.runtime import fast_path

__all__ = [
    "negative", "positive", "abs", "absolute", "fabs", "sign", "floor", "ceil", "trunc",
    "rint", "round", "around", "exp", "exp2", "expm1", "log", "log1p", "log2",
    "log10", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos",
    "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg",
    "radians", "degrees", "isfinite", "isnan", "isinf", "isposinf", "isneginf", "real",
    "imag", "conj", "conjugate", "iscomplexobj", "isrealobj", "acos", "asin", "atan", "acosh",
    "asinh", "atanh",
]


def _array(fun_name: str, x: Any) -> Any:
    check_arraylike(fun_name, x)
    return ensure_array(x)


def _is_exact(x: Any) -> bool:
    return dtypes.is_integer(x.dtype) or x.dtype == np.bool_


# ------------------------------------------------------------------------ signs

def negative(x: Any, /) -> Any:
    """Elementwise `-x` (mirrors `jax.numpy.negative`); bool is rejected, as in JAX."""
    out = fast_path.unary(lax.neg_p, x)
    if out is not None:
        return out
    return lax.neg(_array("negative", x))


def positive(x: Any, /) -> Any:
    """Elementwise `+x`: `x` itself as an array (mirrors `jax.numpy.positive`)."""
    return _array("positive", x)


def abs(x: Any, /) -> Any:  # noqa: A001 (numpy's name)
    """Elementwise absolute value (mirrors `jax.numpy.abs`).

    Integer dtypes are kept (the most negative value stays itself); complex inputs give
    their real magnitude; unsigned and bool inputs are returned unchanged.
    """
    out = fast_path.unary(lax.abs_p, x)
    if out is not None:
        return out
    x = _array("abs", x)
    if x.dtype == np.bool_ or dtypes.is_unsigned(x.dtype):
        return x
    return lax.abs(x)


absolute = abs


def fabs(x: Any, /) -> Any:
    """Absolute value computed in floating point (mirrors `jax.numpy.fabs`)."""
    (x,) = promote_args_inexact("fabs", x)
    if dtypes.is_complex(x.dtype):
        raise TypeError("fabs does not support complex-valued inputs.")
    return lax.abs(x)


def sign(x: Any, /) -> Any:
    """Elementwise sign: -1, 0 or 1, `x / |x|` for complex (mirrors `jax.numpy.sign`)."""
    out = fast_path.unary(lax.sign_p, x)
    if out is not None:
        return out
    return lax.sign(_array("sign", x))


# ------------------------------------------------------------------------ rounding

def floor(x: Any, /) -> Any:
    """Elementwise floor; integer and bool inputs are returned unchanged (`jnp.floor`)."""
    out = fast_path.unary(lax.floor_p, x)
    if out is not None:
        return out
    x = _array("floor", x)
    return x if _is_exact(x) else lax.floor(x)


def ceil(x: Any, /) -> Any:
    """Elementwise ceiling; integer and bool inputs are returned unchanged (`jnp.ceil`)."""
    out = fast_path.unary(lax.ceil_p, x)
    if out is not None:
        return out
    x = _array("ceil", x)
    return x if _is_exact(x) else lax.ceil(x)


def trunc(x: Any) -> Any:
    """Round toward zero; integer and bool inputs are returned unchanged (`jnp.trunc`)."""
    x = _array("trunc", x)
    if _is_exact(x):
        return x
    zero = lax._convert_element_type(0, x.dtype, weak_type=True)
    return lax.select(lax.lt(x, zero), lax.ceil(x), lax.floor(x))



def _round_real(x: Any, decimals: int) -> Any:
    if decimals == 0:
        return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    # float16 and bfloat16 scale in float32, so that 10**decimals itself stays exact.
    wide = x.dtype in (np.float16, dtypes.bfloat16)
    work = lax.convert_element_type(x, np.float32) if wide else x
    factor = float(10.0 ** decimals)
    scaled = lax.round(lax.mul(work, factor), lax.RoundingMethod.TO_NEAREST_EVEN)
    out = lax.div(scaled, factor)
    return lax._convert_element_type(out, x.dtype, weak_type=x.weak_type) if wide else out


def round(a: Any, decimals: int = 0, out: None = None) -> Any:  # noqa: A001
    """Round to `decimals` decimal places, halves to even (mirrors `jax.numpy.round`).

    Integers are returned unchanged for `decimals >= 0`; complex numbers round their real
    and imaginary parts separately.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    x = _array("round", a)
    decimals = concrete_int(decimals, "round: decimals")
    if x.dtype == np.bool_:
        raise ValueError(f"data type {x.dtype} not inexact: jnp.round does not accept bool "
                         "arrays.")
    if dtypes.is_integer(x.dtype):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return x
    if dtypes.is_complex(x.dtype):
        return lax.complex(_round_real(lax.real(x), decimals),
                           _round_real(lax.imag(x), decimals))
    return _round_real(x, decimals)


around = round


def rint(x: Any, /) -> Any:
    """Round to the nearest integer, halves to even, in floating point (`jnp.rint`).

    As in JAX, integers and bools become the default float type (float64 with x64),
    strongly typed."""
    check_arraylike("rint", x)
    if not dtypes.is_inexact(dtypes.dtype(x)):
        return convert(x, dtypes.default_float_dtype())
    (x,) = promote_args_inexact("rint", x)
    return round(x)


# ------------------------------------------------------------------------ transcendental

def _inexact_unary(fun_name: str, op: Any, primitive: Any) -> Any:
    def fun(x: Any, /) -> Any:
        out = fast_path.unary(primitive, x, inexact=True)
        if out is not None:
            return out
        (x,) = promote_args_inexact(fun_name, x)
        return op(x)
    fun.__name__ = fun.__qualname__ = fun_name
    fun.__doc__ = (f"Elementwise `{fun_name}`, in floating point for integer and bool inputs "
                   f"(mirrors `jax.numpy.{fun_name}`).")
    return fun


exp = _inexact_unary("exp", lax.exp, lax.exp_p)
exp2 = _inexact_unary("exp2", lax.exp2, lax.exp2_p)
expm1 = _inexact_unary("expm1", lax.expm1, lax.expm1_p)
log = _inexact_unary("log", lax.log, lax.log_p)
log1p = _inexact_unary("log1p", lax.log1p, lax.log1p_p)
sqrt = _inexact_unary("sqrt", lax.sqrt, lax.sqrt_p)
cbrt = _inexact_unary("cbrt", lax.cbrt, lax.cbrt_p)
sin = _inexact_unary("sin", lax.sin, lax.sin_p)
cos = _inexact_unary("cos", lax.cos, lax.cos_p)
tan = _inexact_unary("tan", lax.tan, lax.tan_p)
arcsin = _inexact_unary("arcsin", lax.asin, lax.asin_p)
arccos = _inexact_unary("arccos", lax.acos, lax.acos_p)
arctan = _inexact_unary("arctan", lax.atan, lax.atan_p)
sinh = _inexact_unary("sinh", lax.sinh, lax.sinh_p)
cosh = _inexact_unary("cosh", lax.cosh, lax.cosh_p)
tanh = _inexact_unary("tanh", lax.tanh, lax.tanh_p)
arcsinh = _inexact_unary("arcsinh", lax.asinh, lax.asinh_p)
arccosh = _inexact_unary("arccosh", lax.acosh, lax.acosh_p)
arctanh = _inexact_unary("arctanh", lax.atanh, lax.atanh_p)
# The array API's names, as jax.numpy has them.
acos, asin, atan = arccos, arcsin, arctan
acosh, asinh, atanh = arccosh, arcsinh, arctanh


def _log_base(fun_name: str, base: float) -> Any:
    def fun(x: Any, /) -> Any:
        (x,) = promote_args_inexact(fun_name, x)
        if dtypes.is_complex(x.dtype):
            # Each part divided by the real log(base): a complex division would turn the
            # 0 imaginary part of log(0) = -inf+0j into NaN (0 - inf * 0).
            natural = lax.log(x)
            part = lax.real(natural).dtype
            divisor = lax._convert_element_type(math.log(base), part, weak_type=False)
            return lax.complex(lax.div(lax.real(natural), divisor),
                               lax.div(lax.imag(natural), divisor))
        # JAX divides by a strong constant, so the result is never weak-typed.
        divisor = lax._convert_element_type(math.log(base), x.dtype, weak_type=False)
        return lax.div(lax.log(x), divisor)
    fun.__name__ = fun.__qualname__ = fun_name
    fun.__doc__ = (f"Elementwise base-{int(base)} logarithm, as `log(x) / log({int(base)})` "
                   f"(mirrors `jax.numpy.{fun_name}`).")
    return fun


log2 = _log_base("log2", 2.0)
log10 = _log_base("log10", 10.0)


def square(x: Any, /) -> Any:
    """Elementwise `x * x`; integer dtypes are kept, bool becomes int32 (`jnp.square`).

    Through `lax.square`, as JAX: a complex square is (a - b)(a + b) + 2ab i (XLA's), not
    the product `x * x` that `x ** 2` computes."""
    out = fast_path.unary(lax.square_p, x)
    if out is not None:
        return out
    (x,) = promote_args_numeric("square", x)
    return lax.square(x)


def reciprocal(x: Any, /) -> Any:
    """Elementwise `1 / x`, in floating point for integer inputs (`jnp.reciprocal`)."""
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def deg2rad(x: Any, /) -> Any:
    """Degrees to radians (mirrors `jax.numpy.deg2rad`)."""
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, np.pi / 180)


def rad2deg(x: Any, /) -> Any:
    """Radians to degrees (mirrors `jax.numpy.rad2deg`)."""
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, 180 / np.pi)


radians = deg2rad
degrees = rad2deg


# ------------------------------------------------------------------------ classification

def _bool_result(out: Any, weak: bool) -> Any:
    # The lax tests give strong bools; JAX keeps the weak flag of some of these tests.
    return lax._convert_element_type(out, np.bool_, weak_type=weak)


def isfinite(x: Any, /) -> Any:
    """Elementwise test for values that are neither infinite nor NaN (`jnp.isfinite`)."""
    x = _array("isfinite", x)
    if _is_exact(x):
        return lax.full(x.shape, True)
    if dtypes.is_complex(x.dtype):
        out = lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    else:
        out = lax.is_finite(x)
    return _bool_result(out, x.weak_type)


def isnan(x: Any, /) -> Any:
    """Elementwise test for NaN; complex values with a NaN part count (`jnp.isnan`)."""
    x = _array("isnan", x)
    if _is_exact(x):
        return _bool_result(lax.full(x.shape, False), x.weak_type)
    return lax.ne(x, x)


def _equals_strong(x: Any, value: float) -> Any:
    return lax.eq(x, lax._convert_element_type(value, x.dtype, weak_type=False))


def isinf(x: Any, /) -> Any:
    """Elementwise test for +-inf; complex values with an infinite part count (`jnp.isinf`)."""
    x = _array("isinf", x)
    if _is_exact(x):
        return lax.full(x.shape, False)
    if dtypes.is_complex(x.dtype):
        return lax.bitwise_or(_equals_strong(lax.abs(lax.real(x)), np.inf),
                              _equals_strong(lax.abs(lax.imag(x)), np.inf))
    return _equals_strong(lax.abs(x), np.inf)


def _isinf_signed(fun_name: str, value: float) -> Any:
    def fun(x: Any, /, out: None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to {fun_name} is not supported: "
                                      "jaxlite arrays are immutable.")
        x = _array(fun_name, x)
        if dtypes.is_complex(x.dtype):
            raise ValueError(f"{fun_name} is not well defined for complex inputs.")
        if _is_exact(x):
            return lax.full(x.shape, False)
        return _equals_strong(x, value)
    fun.__name__ = fun.__qualname__ = fun_name
    fun.__doc__ = f"Elementwise test for {value} (mirrors `jax.numpy.{fun_name}`)."
    return fun


isposinf = _isinf_signed("isposinf", np.inf)
isneginf = _isinf_signed("isneginf", -np.inf)


# ------------------------------------------------------------------------ complex parts

def real(val: Any, /) -> Any:
    """The real part; non-complex inputs are returned unchanged (`jax.numpy.real`)."""
    x = _array("real", val)
    return lax.real(x) if dtypes.is_complex(x.dtype) else x


def imag(val: Any, /) -> Any:
    """The imaginary part; zeros of the same dtype for real inputs (`jax.numpy.imag`)."""
    x = _array("imag", val)
    return lax.imag(x) if dtypes.is_complex(x.dtype) else lax.full_like(x, 0)


def conjugate(x: Any, /) -> Any:
    """The complex conjugate; non-complex inputs are returned unchanged (`jnp.conjugate`)."""
    x = _array("conjugate", x)
    return lax.conj(x) if dtypes.is_complex(x.dtype) else x


conj = conjugate


def iscomplexobj(x: Any) -> bool:
    """Whether `x` has a complex dtype (mirrors `jax.numpy.iscomplexobj`)."""
    if x is None:
        return False
    return dtypes.is_complex(dtypes.dtype(x, canonicalize=False))


def isrealobj(x: Any) -> bool:
    """Whether `x` has a non-complex dtype (mirrors `jax.numpy.isrealobj`)."""
    return not iscomplexobj(x)
