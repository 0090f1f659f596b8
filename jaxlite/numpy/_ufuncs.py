"""Binary elementwise functions: arithmetic, powers, extrema, comparisons, bitwise, logical.

Mirrors the binary ufuncs of `jax.numpy` (`jax._src.numpy.ufuncs`). Each function promotes
its arguments on JAX's type lattice and broadcasts them numpy-style, then applies `lax`
operations. Python semantics hold where numpy has them: `floor_divide` rounds toward minus
infinity and `remainder` takes the sign of the divisor, for integers and floats alike.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.core.trace import Tracer
from jaxlite.numpy._nonzero import nonzero
from jaxlite.numpy._promotion import (broadcast_shapes, check_arraylike, check_python_ints,
                                      convert, ensure_array, promote_args, promote_args_inexact,
                                      promote_args_numeric, promote_dtypes, promote_shapes,
                                      weak_only_when_0d)
from jaxlite.runtime import fast_path

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "fmod", "divmod", "power", "pow", "maximum", "minimum", "fmax", "fmin",
    "arctan2", "hypot", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
    "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "logical_and",
    "logical_or", "logical_xor", "logical_not", "where", "clip", "atan2", "bitwise_invert",
]


def _zero(x: Any) -> Any:
    return lax._convert_element_type(0, x.dtype, weak_type=True)


def _one(x: Any) -> Any:
    return lax._convert_element_type(1, x.dtype, weak_type=True)


def _reject_complex(fun_name: str, x: Any) -> None:
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"{fun_name} does not support complex-valued inputs (got "
                        f"{x.dtype.name}).")


def _order(op: Any, x: Any, y: Any) -> Any:
    """`op(x, y)` for an ordering `op`; complex numbers order lexicographically, real part
    first, as in numpy and JAX."""
    if not dtypes.is_complex(x.dtype):
        return op(x, y)
    xr, yr = lax.real(x), lax.real(y)
    return lax.select(lax.eq(xr, yr), op(lax.imag(x), lax.imag(y)), op(xr, yr))


def _ordering(fun_name: str, op: Any, x1: Any, x2: Any) -> Any:
    out = fast_path.binary(_ORDER_PRIMITIVES[op], x1, x2, real_only=True)
    if out is not None:
        return out
    return _order(op, *promote_args(fun_name, x1, x2))


_ORDER_PRIMITIVES = {lax.lt: lax.lt_p, lax.le: lax.le_p, lax.gt: lax.gt_p, lax.ge: lax.ge_p}


# ------------------------------------------------------------------------ arithmetic

def add(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 + x2` (mirrors `jax.numpy.add`); bool operands give logical or."""
    out = fast_path.binary(lax.add_p, x1, x2)
    if out is not None:
        return out
    x, y = promote_args("add", x1, x2)
    return lax.bitwise_or(x, y) if x.dtype == np.bool_ else lax.add(x, y)


def subtract(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 - x2` (mirrors `jax.numpy.subtract`); bool operands are rejected."""
    out = fast_path.binary(lax.sub_p, x1, x2)
    if out is not None:
        return out
    return lax.sub(*promote_args("subtract", x1, x2))


def multiply(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 * x2` (mirrors `jax.numpy.multiply`); bool operands give logical and."""
    out = fast_path.binary(lax.mul_p, x1, x2)
    if out is not None:
        return out
    x, y = promote_args("multiply", x1, x2)
    return lax.bitwise_and(x, y) if x.dtype == np.bool_ else lax.mul(x, y)


def true_divide(x1: Any, x2: Any, /) -> Any:
    """Elementwise true division, in floating point even for integers (`jnp.true_divide`)."""
    out = fast_path.binary(lax.div_p, x1, x2, inexact=True)
    if out is not None:
        return out
    return lax.div(*promote_args_inexact("true_divide", x1, x2))


divide = true_divide


def _float_floor_divide(x: Any, y: Any) -> Any:
    # Divide the exact multiple x - fmod(x, y) by y and step one down when fmod's sign
    # disagrees with the divisor's. A zero quotient keeps the sign that division gives, as
    # in JAX (-0.0 // 1.0 is +0.0 there; numpy gives -0.0, the sign of x / y).
    mod = lax.rem(x, y)
    quotient = lax.div(x, y)
    exact = lax.div(lax.sub(x, mod), y)
    fix = lax.bitwise_and(lax.ne(mod, _zero(mod)), lax.ne(lax.lt(y, _zero(y)),
                                                          lax.lt(mod, _zero(mod))))
    exact = lax.select(fix, lax.sub(exact, _one(exact)), exact)
    rounded = lax.round(exact, lax.RoundingMethod.TO_NEAREST_EVEN)
    return lax.select(lax.eq(y, _zero(y)), quotient, rounded)


def floor_divide(x1: Any, x2: Any, /) -> Any:
    """Elementwise floor division `x1 // x2` (mirrors `jax.numpy.floor_divide`).

    Rounds toward minus infinity for integers and floats. An integer divided by zero gives
    the XLA quotient (-1) adjusted toward minus infinity; floats divided by zero give
    `x1 / x2` (inf or nan), as numpy does.
    """
    x, y = promote_args_numeric("floor_divide", x1, x2)
    _reject_complex("floor_divide", x)
    if dtypes.is_unsigned(x.dtype):
        return lax.div(x, y)
    if dtypes.is_integer(x.dtype):
        quotient = lax.div(x, y)
        inexact = lax.ne(lax.rem(x, y), _zero(x))
        signs_differ = lax.ne(lax.sign(x), lax.sign(y))
        return lax.select(lax.bitwise_and(inexact, signs_differ),
                          lax.sub(quotient, _one(quotient)), quotient)
    return _float_floor_divide(x, y)


def remainder(x1: Any, x2: Any, /) -> Any:
    """Elementwise remainder with the sign of the divisor, Python's `%` (`jnp.remainder`).

    For integers `x % 0` is 0, as in JAX; for floats it is nan.
    """
    x, y = promote_args_numeric("remainder", x1, x2)
    _reject_complex("remainder", x)
    if dtypes.is_integer(x.dtype):
        y = lax.select(lax.eq(y, _zero(y)), lax.full_like(y, 1), y)
        if dtypes.is_unsigned(x.dtype):
            return lax.rem(x, y)
    mod = lax.rem(x, y)
    fix = lax.bitwise_and(lax.ne(mod, _zero(mod)),
                          lax.ne(lax.lt(mod, _zero(mod)), lax.lt(y, _zero(y))))
    return lax.select(fix, lax.add(mod, y), mod)


mod = remainder


def fmod(x1: Any, x2: Any, /) -> Any:
    """Elementwise C remainder, with the sign of the dividend (mirrors `jax.numpy.fmod`).

    For integers `fmod(x, 0)` is 0, as in JAX.
    """
    x, y = promote_args_numeric("fmod", x1, x2)
    _reject_complex("fmod", x)
    if dtypes.is_integer(x.dtype):
        y = lax.select(lax.eq(y, _zero(y)), lax.full_like(y, 1), y)
    return lax.rem(x, y)


def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:  # noqa: A001 (numpy's name)
    """`(floor_divide(x1, x2), remainder(x1, x2))` (mirrors `jax.numpy.divmod`)."""
    return floor_divide(x1, x2), remainder(x1, x2)


# ------------------------------------------------------------------------ powers

# Integer powers read the exponent's low 6 bits only, as JAX's jnp.power does (any higher bit
# overflows every base but 0 and +-1): 3 ** 64 is 1, 3 ** -1 is 3 ** 63 (two's complement).
_INTEGER_POWER_BITS = 6


def _integer_power(x: Any, y: Any) -> Any:
    """`x ** y` for integer arrays by square-and-multiply over the exponent's low 6 bits,
    wrapping like integer products, and 0 for a zero base with a nonzero exponent: JAX's
    numbers, exponents of 64 and beyond or negative included."""
    zero_base = lax.bitwise_and(lax.eq(x, _zero(x)), lax.ne(y, _zero(y)))
    acc = lax.select(zero_base, lax.full_like(x, 0), lax.full_like(x, 1))
    base, exponent = x, y
    for _ in range(_INTEGER_POWER_BITS):
        bit = lax.ne(lax.bitwise_and(exponent, _one(exponent)), _zero(exponent))
        acc = lax.select(bit, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        exponent = lax.shift_right_logical(exponent, _one(exponent))
    return acc


def _concrete_index(x: Any) -> int | None:
    """`x` as a Python int when it is an integer scalar known now (not traced), else None."""
    if isinstance(x, Tracer):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def power(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 ** x2` (mirrors `jax.numpy.power`).

    A concrete integer scalar exponent (a Python int or bool, a numpy integer, a 0-d integer
    array known now) uses `lax.integer_pow` (exact repeated multiplication, the dtype of
    `x1` kept), as in JAX. Integer arrays raised to integer arrays use square-and-multiply
    over the exponent's low 6 bits and wrap on overflow, as JAX does (so a negative or a
    large exponent gives JAX's implementation-defined value); bool operands count as int32.
    """
    check_arraylike("power", x1, x2)
    exponent = _concrete_index(x2)
    if exponent is not None:
        x = ensure_array(x1)
        if x.dtype == np.bool_:
            x = promote_args_numeric("power", x)[0]
        return lax.integer_pow(x, exponent)
    dtype, weak = dtypes.promotion_type(x1, x2)
    exponent = ensure_array(x2)
    if dtypes.is_inexact(dtype) and dtypes.is_integer(exponent.dtype):
        # An integer exponent stays integer, as lax.pow allows: the result is weak only
        # when both operands are.
        return lax.pow(*promote_shapes("power", convert(x1, dtype, weak), exponent))
    x, y = promote_args_numeric("power", x1, x2)
    if dtypes.is_integer(x.dtype):
        return _integer_power(x, y)
    return lax.pow(x, y)


pow = power  # noqa: A001 (numpy's name)


# ------------------------------------------------------------------------ extrema

def maximum(x1: Any, x2: Any, /) -> Any:
    """Elementwise maximum, propagating NaN (mirrors `jax.numpy.maximum`)."""
    out = fast_path.binary(lax.max_p, x1, x2)
    if out is not None:
        return out
    return lax.max(*promote_args("maximum", x1, x2))


def minimum(x1: Any, x2: Any, /) -> Any:
    """Elementwise minimum, propagating NaN (mirrors `jax.numpy.minimum`)."""
    out = fast_path.binary(lax.min_p, x1, x2)
    if out is not None:
        return out
    return lax.min(*promote_args("minimum", x1, x2))


def _nan_skipping(fun_name: str, x1: Any, x2: Any, prefer_first: Any) -> Any:
    x, y = promote_args(fun_name, x1, x2)
    if not dtypes.is_inexact(x.dtype):
        return lax.max(x, y) if fun_name == "fmax" else lax.min(x, y)
    # x1 wins where it is strictly better or x2 is NaN; ties go to x2, as in JAX.
    y_nan = lax.ne(y, y)
    return lax.select(lax.bitwise_or(_order(prefer_first, x, y), y_nan), x, y)


def fmax(x1: Any, x2: Any) -> Any:
    """Elementwise maximum that ignores NaN where it can (mirrors `jax.numpy.fmax`)."""
    return _nan_skipping("fmax", x1, x2, lax.gt)


def fmin(x1: Any, x2: Any) -> Any:
    """Elementwise minimum that ignores NaN where it can (mirrors `jax.numpy.fmin`)."""
    return _nan_skipping("fmin", x1, x2, lax.lt)


def arctan2(x1: Any, x2: Any, /) -> Any:
    """Elementwise angle of the point (x2, x1), in floating point (`jnp.arctan2`)."""
    return lax.atan2(*promote_args_inexact("arctan2", x1, x2))


atan2 = arctan2


def hypot(x1: Any, x2: Any, /) -> Any:
    """Elementwise `sqrt(x1**2 + x2**2)` without needless overflow (`jnp.hypot`)."""
    x, y = promote_args_inexact("hypot", x1, x2)
    if dtypes.is_complex(x.dtype):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x).")
    x, y = lax.abs(x), lax.abs(y)
    big, small = lax.max(x, y), lax.min(x, y)
    safe = lax.select(lax.eq(big, _zero(big)), lax.full_like(big, 1), big)
    ratio = lax.div(small, safe)
    out = lax.mul(big, lax.sqrt(lax.add(_one(ratio), lax.mul(ratio, ratio))))
    # inf beats nan, as in C's hypot.
    infinite = lax.bitwise_or(lax.eq(x, lax.full_like(x, np.inf)),
                              lax.eq(y, lax.full_like(y, np.inf)))
    out = lax.select(infinite, lax.full_like(out, np.inf), out)
    return weak_only_when_0d(out, x)


# ------------------------------------------------------------------------ comparisons

def equal(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 == x2` as a bool array (mirrors `jax.numpy.equal`)."""
    out = fast_path.binary(lax.eq_p, x1, x2)
    if out is not None:
        return out
    return lax.eq(*promote_args("equal", x1, x2))


def not_equal(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 != x2` as a bool array (mirrors `jax.numpy.not_equal`)."""
    out = fast_path.binary(lax.ne_p, x1, x2)
    if out is not None:
        return out
    return lax.ne(*promote_args("not_equal", x1, x2))


def less(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 < x2` as a bool array (mirrors `jax.numpy.less`).

    Complex numbers compare lexicographically (real part first).
    """
    return _ordering("less", lax.lt, x1, x2)


def less_equal(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 <= x2` as a bool array (mirrors `jax.numpy.less_equal`)."""
    return _ordering("less_equal", lax.le, x1, x2)


def greater(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 > x2` as a bool array (mirrors `jax.numpy.greater`)."""
    return _ordering("greater", lax.gt, x1, x2)


def greater_equal(x1: Any, x2: Any, /) -> Any:
    """Elementwise `x1 >= x2` as a bool array (mirrors `jax.numpy.greater_equal`)."""
    return _ordering("greater_equal", lax.ge, x1, x2)


# ------------------------------------------------------------------------ bitwise

def bitwise_and(x1: Any, x2: Any, /) -> Any:
    """Elementwise bitwise and of integers or bools (mirrors `jax.numpy.bitwise_and`)."""
    return lax.bitwise_and(*promote_args("bitwise_and", x1, x2))


def bitwise_or(x1: Any, x2: Any, /) -> Any:
    """Elementwise bitwise or of integers or bools (mirrors `jax.numpy.bitwise_or`)."""
    return lax.bitwise_or(*promote_args("bitwise_or", x1, x2))


def bitwise_xor(x1: Any, x2: Any, /) -> Any:
    """Elementwise bitwise xor of integers or bools (mirrors `jax.numpy.bitwise_xor`)."""
    return lax.bitwise_xor(*promote_args("bitwise_xor", x1, x2))


def bitwise_not(x: Any, /) -> Any:
    """Elementwise bitwise complement; logical not for bools (`jax.numpy.bitwise_not`)."""
    check_arraylike("bitwise_not", x)
    return lax.bitwise_not(ensure_array(x))


invert = bitwise_invert = bitwise_not


def left_shift(x1: Any, x2: Any, /) -> Any:
    """Shift the bits of `x1` left by `x2`; shifts past the width give 0 (`jnp.left_shift`)."""
    return lax.shift_left(*promote_args_numeric("left_shift", x1, x2))


def right_shift(x1: Any, x2: Any, /) -> Any:
    """Shift right: arithmetic for signed, logical for unsigned (`jnp.right_shift`)."""
    x, y = promote_args_numeric("right_shift", x1, x2)
    if dtypes.is_unsigned(x.dtype):
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


# ------------------------------------------------------------------------ logical

def _truth(x: Any) -> Any:
    x = ensure_array(x)
    return x if x.dtype == np.bool_ else lax.ne(x, _zero(x))


def _logical(fun_name: str, op: Any, x1: Any, x2: Any) -> Any:
    # Promoted together first, as in JAX (a float16 array with 1e-10 compares 0 to 0).
    y1, y2 = promote_args(fun_name, x1, x2)
    return _logical_weak_type(op(_truth(y1), _truth(y2)), x1, x2)


def _logical_weak_type(out: Any, *args: Any) -> Any:
    """`out` with the weak type JAX 0.10.2's logical functions give: weak only for a
    0-d result with a weakly typed operand (checked against JAX for arrays, Python
    scalars and bools, eagerly and under jit)."""
    weak = np.ndim(out) == 0 and any(dtypes.is_weakly_typed(x) for x in args)
    return convert(out, np.bool_, weak)


def logical_and(x1: Any, x2: Any, /) -> Any:
    """Elementwise truth of `x1 and x2` (mirrors `jax.numpy.logical_and`)."""
    return _logical("logical_and", lax.bitwise_and, x1, x2)


def logical_or(x1: Any, x2: Any, /) -> Any:
    """Elementwise truth of `x1 or x2` (mirrors `jax.numpy.logical_or`)."""
    return _logical("logical_or", lax.bitwise_or, x1, x2)


def logical_xor(x1: Any, x2: Any, /) -> Any:
    """Elementwise truth of `x1 != x2` as booleans (mirrors `jax.numpy.logical_xor`)."""
    return _logical("logical_xor", lax.bitwise_xor, x1, x2)


def logical_not(x: Any, /) -> Any:
    """Elementwise truth of `not x` (mirrors `jax.numpy.logical_not`)."""
    check_arraylike("logical_not", x)
    return _logical_weak_type(lax.bitwise_not(_truth(x)), x)


# ------------------------------------------------------------------------ selection

def where(condition: Any, x: Any = None, y: Any = None, /, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """`x` where `condition` holds, else `y`, broadcast together (`jax.numpy.where`).

    `x` and `y` are promoted to a common dtype; a non-bool condition tests `!= 0`. With the
    condition alone, gives the indices of its true entries, as `nonzero` does (pass `size=`
    and optionally `fill_value=` under `jit`).
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("jnp.where: pass both x and y, or neither (the one-argument form).")
    if size is not None or fill_value is not None:
        raise ValueError("jnp.where: size and fill_value apply only to the one-argument form.")
    out = fast_path.select(condition, x, y)
    if out is not None:
        return out
    check_arraylike("where", condition, x, y)
    check_python_ints("where", x, y)
    x, y = promote_dtypes(x, y)
    # Checked first: where raises JAX's ValueError, not an elementwise op's TypeError.
    broadcast_shapes("where", np.shape(condition), np.shape(x), np.shape(y))
    cond, x, y = promote_shapes("where", _truth(condition), x, y)
    return lax.select(cond, x, y)


def clip(arr: Any = None, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """Limit the values of `arr` to [min, max] (mirrors `jax.numpy.clip`).

    Either bound may be None. As in JAX, `clip(x, lo, hi)` is `minimum(hi, maximum(lo, x))`,
    so the bounds take part in type promotion and broadcasting.
    """
    if arr is None:
        raise TypeError("clip() missing the array to clip.")
    check_arraylike("clip", arr)
    if any(np.iscomplexobj(v) for v in (arr, min, max) if v is not None):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped; take the real or imaginary part first (jnp.real/imag).")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return ensure_array(arr)
