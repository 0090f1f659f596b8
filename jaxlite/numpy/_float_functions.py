"""Functions of the floating-point representation and of signs.

Mirrors `jax.numpy`'s `frexp`, `ldexp`, `modf`, `spacing`, `nextafter`, `copysign`,
`signbit`, `heaviside`, `angle` and `float_power`. Integer and bool inputs are computed in
the default floating type, as JAX does. `frexp` and `ldexp` work on the bits of the IEEE
format: the exponent field is read and written directly, so that the results are exact.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (check_arraylike, convert, ensure_array,
                                      promote_args_inexact, promote_shapes)

__all__ = ["frexp", "ldexp", "modf", "spacing", "nextafter", "copysign", "signbit",
           "heaviside", "angle", "float_power"]

_BITS_TYPE = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}


def strong_constant(value: Any, dtype: Any) -> Any:
    """A constant of `dtype` that is not weakly typed (it fixes the result dtype)."""
    return lax._convert_element_type(value, dtype, weak_type=False)


def reject_complex(fun_name: str, x: Any, error: type = TypeError) -> None:
    """Raise `error`, naming `fun_name`, when `x` is complex."""
    if dtypes.is_complex(x.dtype):
        raise error(f"jnp.{fun_name} does not support complex inputs (got "
                    f"{x.dtype.name}); apply it to the real and imaginary parts.")


class _Layout:
    """Where the fields of a float dtype sit: mantissa width, exponent bias, integer type."""

    def __init__(self, dtype: np.dtype) -> None:
        info = dtypes.finfo(dtype)
        self.dtype = np.dtype(dtype)
        self.mantissa_bits = int(info.nmant)
        self.bias = int(info.maxexp) - 1
        self.min_exponent = int(info.minexp)
        self.int_type = _BITS_TYPE[self.dtype.itemsize]
        self.exponent_mask = (1 << (8 * self.dtype.itemsize - 1 - self.mantissa_bits)) - 1

    def int_const(self, value: int) -> Any:
        return strong_constant(value, self.int_type)

    def bits(self, x: Any) -> Any:
        return lax.bitcast_convert_type(x, self.int_type)

    def biased_exponent(self, x: Any) -> Any:
        shifted = lax.shift_right_logical(self.bits(x), self.int_const(self.mantissa_bits))
        return lax.bitwise_and(shifted, self.int_const(self.exponent_mask))

    def power_of_two(self, k: Any) -> Any:
        """2**k as a float, for integer k (of `int_type`) in the normal exponent range."""
        field = lax.shift_left(lax.add(k, self.int_const(self.bias)),
                               self.int_const(self.mantissa_bits))
        return lax.bitcast_convert_type(field, self.dtype)


def frexp(x: Any, /) -> tuple[Any, Any]:
    """Split `x` into mantissa and exponent, `x = m * 2**e` (mirrors `jax.numpy.frexp`).

    Returns (m, e) with 0.5 <= |m| < 1 and e an int32 array; zeros, infinities and NaN
    give (x, 0). Subnormal inputs are split exactly, as numpy does.
    """
    (x,) = promote_args_inexact("frexp", x)
    reject_complex("frexp", x)
    layout = _Layout(x.dtype)
    # Subnormals are first scaled into the normal range, and the scale taken off e later.
    subnormal = lax.lt(lax.abs(x), strong_constant(float(dtypes.finfo(x.dtype).tiny), x.dtype))
    scale = float(2.0 ** layout.mantissa_bits)
    scaled = lax.select(subnormal, lax.mul(x, strong_constant(scale, x.dtype)), x)
    exponent = lax.sub(layout.biased_exponent(scaled), layout.int_const(layout.bias - 1))
    exponent = lax.select(subnormal, lax.sub(exponent, layout.int_const(layout.mantissa_bits)),
                          exponent)
    field_mask = layout.int_const(~(layout.exponent_mask << layout.mantissa_bits))
    half_field = layout.int_const((layout.bias - 1) << layout.mantissa_bits)
    mantissa_bits = lax.bitwise_or(lax.bitwise_and(layout.bits(scaled), field_mask), half_field)
    mantissa = lax.bitcast_convert_type(mantissa_bits, x.dtype)
    special = lax.bitwise_or(lax.eq(x, strong_constant(0, x.dtype)),
                             lax.bitwise_not(lax.is_finite(x)))
    mantissa = lax.select(special, x, mantissa)
    exponent = lax.select(special, lax.full_like(exponent, 0), exponent)
    return mantissa, lax.convert_element_type(exponent, np.int32)


def ldexp(x1: Any, x2: Any, /) -> Any:
    """`x1 * 2**x2` for an integer `x2`, without intermediate overflow (`jnp.ldexp`).

    `x1` is computed in floating point; `x2` must have an integer (or bool) dtype. The
    power of two is applied in four exactly representable steps, so that results in range
    are exact even when 2**x2 itself is not representable.
    """
    check_arraylike("ldexp", x1, x2)
    exponent = ensure_array(x2)
    if not (dtypes.is_integer(exponent.dtype) or exponent.dtype == np.bool_):
        raise ValueError(f"jnp.ldexp: the exponent x2 must have an integer dtype, got "
                         f"{exponent.dtype.name}.")
    (x,) = promote_args_inexact("ldexp", x1)
    reject_complex("ldexp", x, ValueError)
    x, exponent = promote_shapes("ldexp", x, exponent)
    layout = _Layout(x.dtype)
    k = _clamped_exponent(exponent, layout)
    quarter = lax.div(k, layout.int_const(4))
    rest = lax.sub(k, lax.mul(quarter, layout.int_const(3)))
    step = layout.power_of_two(quarter)
    for _ in range(3):
        x = lax.mul(x, step)
    return lax.mul(x, layout.power_of_two(rest))


def _clamped_exponent(exponent: Any, layout: _Layout) -> Any:
    """The exponent clamped (in its own dtype, so nothing wraps) to the range that can
    still change a float of `layout`, then converted to the layout's integer type."""
    limit = layout.bias - layout.min_exponent + layout.mantissa_bits + 2
    if exponent.dtype == np.bool_:
        exponent = lax.convert_element_type(exponent, layout.int_type)
    info = dtypes.iinfo(exponent.dtype)
    low, high = max(-limit, int(info.min)), min(limit, int(info.max))
    exponent = lax.clamp(strong_constant(low, exponent.dtype), exponent,
                         strong_constant(high, exponent.dtype))
    return lax.convert_element_type(exponent, layout.int_type)


def modf(x: Any, /, out: None = None) -> tuple[Any, Any]:
    """Fractional and integral parts, both with the sign of `x` (`jax.numpy.modf`).

    As in JAX the fractional part is `x - trunc(x)`, so infinities give NaN (numpy: 0).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    (x,) = promote_args_inexact("modf", x)
    reject_complex("modf", x)
    whole = lax.select(lax.lt(x, strong_constant(0, x.dtype)), lax.ceil(x), lax.floor(x))
    return lax.sub(x, whole), whole


def nextafter(x1: Any, x2: Any, /) -> Any:
    """The next representable float after `x1` toward `x2` (mirrors `jnp.nextafter`)."""
    x, y = promote_args_inexact("nextafter", x1, x2)
    reject_complex("nextafter", x)
    return lax.nextafter(x, y)


def spacing(x: Any, /) -> Any:
    """The distance from `x` to the next float away from zero, signed like `x` (-0.0
    included) (mirrors `jax.numpy.spacing`); infinities and NaN give NaN.

    As JAX, float16 steps toward +inf whatever the sign (spacing(-5.1) is +0.0039), and a
    zero step becomes the smallest subnormal, signed like `x`.
    """
    (x,) = promote_args_inexact("spacing", x)
    reject_complex("spacing", x, ValueError)
    infinity = lax.full_like(x, np.inf)
    if x.dtype == np.float16:
        return convert(lax.sub(lax.nextafter(x, infinity), x), x.dtype)
    step = lax.sub(lax.nextafter(x, copysign(infinity, x)), x)
    tiny = copysign(lax.full_like(x, dtypes.finfo(x.dtype).smallest_subnormal), x)
    # JAX's spacing is strong-typed even for a Python float.
    return convert(lax.select(lax.eq(step, lax.full_like(x, 0)), tiny, step), x.dtype)


def signbit(x: Any, /) -> Any:
    """Elementwise test of the sign bit: True for negatives, -0.0 and -NaN (`jnp.signbit`)."""
    check_arraylike("signbit", x)
    x = ensure_array(x)
    reject_complex("signbit", x, ValueError)
    if x.dtype == np.bool_ or dtypes.is_unsigned(x.dtype):
        return lax.full(x.shape, False)
    if dtypes.is_integer(x.dtype):
        return lax.lt(x, strong_constant(0, x.dtype))
    layout = _Layout(x.dtype)
    return lax.lt(layout.bits(x), layout.int_const(0))


def copysign(x1: Any, x2: Any, /) -> Any:
    """`|x1|` with the sign bit of `x2`, in floating point (mirrors `jax.numpy.copysign`)."""
    x, y = promote_args_inexact("copysign", x1, x2)
    reject_complex("copysign", x)
    magnitude = lax.abs(x)
    return lax.select(signbit(y), lax.neg(magnitude), magnitude)


def heaviside(x1: Any, x2: Any, /) -> Any:
    """The step function: 0 where x1 < 0, `x2` where x1 == 0, 1 where x1 > 0, NaN for NaN
    (mirrors `jax.numpy.heaviside`); computed in floating point."""
    x, y = promote_args_inexact("heaviside", x1, x2)
    reject_complex("heaviside", x)
    zero, one = lax.full_like(x, 0), lax.full_like(x, 1)
    out = lax.select(lax.lt(x, zero), zero, lax.select(lax.gt(x, zero), one, y))
    out = lax.select(lax.ne(x, x), x, out)  # a NaN x1 gives NaN, as in JAX and numpy
    # JAX's result is weak only for a 0-d x1 and weak promoted operands (checked).
    return convert(out, out.dtype, np.ndim(x1) == 0 and dtypes.is_weakly_typed(x))


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of complex `z` (radians, or degrees with `deg`) (`jax.numpy.angle`).

    Real inputs give 0 or pi, in floating point. As in JAX, integer and bool inputs, and
    0-d floating ones, are computed in the default float type (float64 with x64).
    """
    check_arraylike("angle", z)
    dtype = dtypes.dtype(z)
    if not dtypes.is_inexact(dtype) or (dtypes.is_floating(dtype) and np.ndim(z) == 0):
        z = convert(z, dtypes.default_float_dtype())
    (z,) = promote_args_inexact("angle", z)
    if dtypes.is_complex(z.dtype):
        out = lax.atan2(lax.imag(z), lax.real(z))
    else:
        # JAX's angle of a real argument is strong-typed, even for a Python scalar.
        out = convert(lax.atan2(lax.full_like(z, 0), z), z.dtype)
    return lax.mul(out, strong_constant(180 / np.pi, out.dtype)) if deg else out


def float_power(x: Any, y: Any, /) -> Any:
    """`x ** y` computed in floating point, even for integers (`jax.numpy.float_power`)."""
    return lax.pow(*promote_args_inexact("float_power", x, y))
