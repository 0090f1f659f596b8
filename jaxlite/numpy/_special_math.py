"""Elementwise functions built from several lax operations: logaddexp, sinc, i0, gcd, lcm.

Mirrors `jax.numpy`'s `logaddexp`, `logaddexp2`, `sinc`, `i0`, `gcd`, `lcm` and
`bitwise_count`. Where JAX gives a function a hand-written derivative, these get the same
derivative: `logaddexp` and `logaddexp2` declare JAX's rule (the formula's |x1 - x2| has a
kink where the arguments are equal); `sinc` switches to its Maclaurin series at 0, so
that every derivative there is finite and right; `i0` is `exp(|x|) * i0e(x)`, whose
derivative is I1.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.numpy._float_functions import reject_complex, strong_constant
from jaxlite.numpy._promotion import check_arraylike, convert, ensure_array, promote_args, \
    promote_args_inexact, weak_only_when_0d
from jaxlite.scipy._bessel import i0e as _i0e

__all__ = ["logaddexp", "logaddexp2", "sinc", "i0", "gcd", "lcm", "bitwise_count"]


# ------------------------------------------------------------------------ log-sum of two

def _log_add(x: Any, y: Any, log1p_of_exp: Any) -> Any:
    """max(x, y) + log1p_of_exp(-|x - y|), with equal infinities and NaN handled."""
    larger = lax.max(x, y)
    delta = lax.sub(x, y)
    # delta is NaN for NaN inputs and for equal infinities; x + y is then the answer
    # (NaN, or the common infinity).
    undefined = lax.ne(delta, delta)
    safe_delta = lax.select(undefined, lax.full_like(delta, 0), delta)
    out = lax.add(larger, log1p_of_exp(lax.neg(lax.abs(safe_delta))))
    return lax.select(undefined, lax.add(x, y), out)


def _complex_log_add(x: Any, y: Any, log1p_of_exp: Any, half_period: float) -> Any:
    """max(x, y) + log1p_of_exp(x + y - 2 max(x, y)), the imaginary part wrapped into
    [-half_period, half_period) (the max of complex numbers is lexicographic)."""
    larger = lax.max(x, y)
    two = lax.full_like(larger, 2)
    out = lax.add(larger, log1p_of_exp(lax.sub(lax.add(x, y), lax.mul(larger, two))))
    imag = lax.imag(out)
    period = lax.full_like(imag, 2 * half_period)
    shifted = lax.rem(lax.add(imag, lax.full_like(imag, half_period)), period)
    shifted = lax.select(lax.lt(shifted, lax.full_like(imag, 0)), lax.add(shifted, period),
                         shifted)
    return lax.complex(lax.real(out), lax.sub(shifted, lax.full_like(imag, half_period)))


def _plus_inf_to_zero(x: Any) -> Any:
    """x with +inf (of the real part) replaced by 0, as JAX's logaddexp derivative reads it."""
    real = lax.real(x) if dtypes.is_complex(x.dtype) else x
    return lax.select(lax.eq(real, lax.full_like(real, np.inf)), lax.full_like(x, 0), x)


def _log_add_tangent(x: Any, y: Any, out: Any, tx: Any, ty: Any, exp: Any) -> Any:
    """JAX's hand-written derivative of logaddexp: tx e^(x - out) + ty e^(y - out).

    The function as written (max plus log1p of a negative |x - y|) has a kink at x == y
    (the derivative of |.| at 0), where this rule gives each argument its half."""
    x, y, out = ensure_array(x), ensure_array(y), _plus_inf_to_zero(ensure_array(out))
    return lax.add(lax.mul(tx, exp(lax.sub(_plus_inf_to_zero(x), out))),
                   lax.mul(ty, exp(lax.sub(_plus_inf_to_zero(y), out))))


def _log1p_exp(d: Any) -> Any:
    return lax.log1p(lax.exp(d))


def _log1p_exp2_over_ln2(d: Any) -> Any:
    inv_ln2 = lax.full_like(d, 1 / np.log(2.0))
    return lax.mul(inv_ln2, lax.log1p(lax.exp2(d)))


@custom_jvp
def _logaddexp(x: Any, y: Any) -> Any:
    if dtypes.is_complex(x.dtype):
        return _complex_log_add(x, y, _log1p_exp, np.pi)
    return _log_add(x, y, _log1p_exp)


@_logaddexp.defjvp
def _logaddexp_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x, y), (tx, ty) = primals, tangents
    out = _logaddexp(x, y)
    return out, _log_add_tangent(x, y, out, tx, ty, lax.exp)


@custom_jvp
def _logaddexp2(x: Any, y: Any) -> Any:
    if dtypes.is_complex(x.dtype):
        return _complex_log_add(x, y, _log1p_exp2_over_ln2, np.pi / np.log(2.0))
    return _log_add(x, y, _log1p_exp2_over_ln2)


@_logaddexp2.defjvp
def _logaddexp2_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (x, y), (tx, ty) = primals, tangents
    out = _logaddexp2(x, y)
    return out, _log_add_tangent(x, y, out, tx, ty, lax.exp2)


def logaddexp(x1: Any, x2: Any, /) -> Any:
    """`log(exp(x1) + exp(x2))` without overflow (mirrors `jax.numpy.logaddexp`), with
    JAX's derivative `t1 exp(x1 - out) + t2 exp(x2 - out)`; complex inputs as JAX."""
    x, y = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(x, y)


def logaddexp2(x1: Any, x2: Any, /) -> Any:
    """`log2(2**x1 + 2**x2)` without overflow (mirrors `jax.numpy.logaddexp2`), with
    JAX's derivative `t1 2**(x1 - out) + t2 2**(x2 - out)`; complex inputs as JAX."""
    x, y = promote_args_inexact("logaddexp2", x1, x2)
    return weak_only_when_0d(_logaddexp2(x, y), x)


# ------------------------------------------------------------------------ sinc and i0

# Maclaurin coefficients of sin(pi x) / (pi x) in powers of (pi x)**2: 1, -1/3!, 1/5!, ...
_SINC_SERIES = tuple((-1.0) ** k / float(np.prod(np.arange(1, 2 * k + 2))) for k in range(5))


def sinc(x: Any, /) -> Any:
    """The normalized sinc function `sin(pi x) / (pi x)`, 1 at 0 (`jax.numpy.sinc`).

    At x == 0 the value comes from the Maclaurin series, so derivatives of every order
    used in practice are exact there (0, -pi**2 / 3, ...).
    """
    (x,) = promote_args_inexact("sinc", x)
    zero = lax.eq(x, strong_constant(0, x.dtype))
    safe = lax.select(zero, lax.full_like(x, 1), x)
    pi_x = lax.mul(strong_constant(np.pi, x.dtype), safe)
    away = lax.div(lax.sin(pi_x), pi_x)
    square = lax.integer_pow(lax.mul(strong_constant(np.pi, x.dtype), x), 2)
    series = lax.full_like(x, 0)
    for coefficient in reversed(_SINC_SERIES):
        series = lax.add(lax.mul(series, square), strong_constant(coefficient, x.dtype))
    # The constants above are strong; the result keeps the argument's weak type, as JAX's.
    return convert(lax.select(zero, series, away), x.dtype, dtypes.is_weakly_typed(x))


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 0 (`jax.numpy.i0`).

    Real inputs only, in floating point; float16 and bfloat16 are computed in float32.
    Overflows to inf beyond about |x| = 89 in float32, as `exp(|x|)` does.
    """
    (x,) = promote_args_inexact("i0", x)
    reject_complex("i0", x, ValueError)
    narrow = x.dtype.itemsize < 4
    work = lax.convert_element_type(x, np.float32) if narrow else x
    out = lax.mul(lax.exp(lax.abs(work)), _i0e(work))
    return lax._convert_element_type(out, x.dtype, weak_type=x.weak_type)


# ------------------------------------------------------------------------ integers

def _integer_args(fun_name: str, x1: Any, x2: Any) -> tuple[Any, Any]:
    x, y = promote_args(fun_name, x1, x2)
    if not dtypes.is_integer(x.dtype):
        raise ValueError(f"Arguments to jax.numpy.{fun_name} must be integers, got "
                         f"{x.dtype.name}.")
    return x, y


def _magnitude(x: Any) -> Any:
    return x if dtypes.is_unsigned(x.dtype) else lax.abs(x)


def _gcd_of_magnitudes(x: Any, y: Any) -> Any:
    """Euclid's algorithm on |x|, |y|, elementwise, until every remainder is 0."""
    x, y = _magnitude(x), _magnitude(y)
    zero = lax.full_like(y, 0)

    def not_done(state: tuple[Any, Any]) -> Any:
        return lax.reduce_or(lax.ne(state[1], zero), tuple(range(zero.ndim)))

    def step(state: tuple[Any, Any]) -> tuple[Any, Any]:
        a, b = state
        active = lax.ne(b, zero)
        divisor = lax.select(active, b, lax.full_like(b, 1))
        return lax.select(active, b, a), lax.select(active, lax.rem(a, divisor), zero)

    return lax.while_loop(not_done, step, (x, y))[0]


def gcd(x1: Any, x2: Any) -> Any:
    """Greatest common divisor of |x1| and |x2|, elementwise (mirrors `jax.numpy.gcd`).

    Integer inputs only; gcd(0, 0) is 0.
    """
    x, y = _integer_args("gcd", x1, x2)
    # JAX's result is weak only when 0-d (a bool array with a Python int is strong)
    return weak_only_when_0d(_gcd_of_magnitudes(x, y), x)


def lcm(x1: Any, x2: Any) -> Any:
    """Least common multiple of |x1| and |x2|, elementwise (mirrors `jax.numpy.lcm`).

    Integer inputs only; 0 when either is 0; wraps on overflow like integer products.
    """
    x, y = _integer_args("lcm", x1, x2)
    divisor = _gcd_of_magnitudes(x, y)
    zero = lax.eq(divisor, lax.full_like(divisor, 0))
    safe = lax.select(zero, lax.full_like(divisor, 1), divisor)
    out = lax.mul(lax.div(_magnitude(x), safe), _magnitude(y))
    return weak_only_when_0d(lax.select(zero, lax.full_like(out, 0), out), x)


def bitwise_count(x: Any, /) -> Any:
    """The number of 1 bits in |x|, as uint8 (mirrors `jax.numpy.bitwise_count`)."""
    check_arraylike("bitwise_count", x)
    x = ensure_array(x)
    if not (dtypes.is_integer(x.dtype) or x.dtype == np.bool_):
        raise TypeError(f"jnp.bitwise_count requires integer or bool inputs, got "
                        f"{x.dtype.name}.")
    if x.dtype == np.bool_:
        return lax.convert_element_type(x, np.uint8)
    return lax.convert_element_type(lax.population_count(_magnitude(x)), np.uint8)
