"""Elementwise math: exponentials, logarithms, roots, trigonometric and hyperbolic functions,
square and reciprocal, is_finite, round, and the arithmetic whose derivatives need
comparisons or `select`: max, min, pow, abs.

Mirrors those `jax.lax` functions (XLA's Exp, Log, Sqrt, Rsqrt, Cbrt, Tanh, Logistic, Sin,
Cos, Tan, Atan2, Maximum, Minimum, Power, Abs, RoundNearestAfz/Even, IsFinite, and the
functions XLA's CHLO dialect expands: asin, acos, atan, sinh, cosh, the inverse
hyperbolics). Complex operands are accepted where JAX accepts them.
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import batch_elementwise
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import (ANY, COMPLEX, FLOATING, INEXACT, NUMERIC, SIGNED,
                                  check_dtype_kind, check_same_shapes, elementwise,
                                  upcast_low_precision)
from jaxlite.lax.accuracy import check_accuracy
from jaxlite.lax.arithmetic import (_const, add, complex_abs, conj, div, elementwise_operands,
                                    full_like, integer_pow, keep_weak_type, mul, neg, real, sub)
from jaxlite.lax.comparisons import eq, ge
from jaxlite.lax.complex_trig import (complex_cos, complex_cosh, complex_hyperbolic_lowering,
                                      complex_sin, complex_sinh, complex_trig_lowering)
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.selection import select
from jaxlite.xla.complex_special_values import (complex_arccos, complex_arccosh, complex_arcsin,
                                                complex_arcsinh, complex_arctan,
                                                complex_arctanh,
                                                complex_exp, complex_expm1, complex_log,
                                                complex_power,
                                                complex_log1p, complex_sqrt, complex_tan,
                                                complex_tanh, for_complex)
from jaxlite.xla.cpu_f32_kernels import for_float32, log1p_f32, log_f32, tanh_f32
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__: list[str] = [
    "max", "max_p", "min", "min_p", "pow", "pow_p", "abs", "abs_p", "round", "round_p",
    "RoundingMethod", "is_finite", "is_finite_p",
    "square", "square_p", "reciprocal",
    "exp", "exp_p", "exp2", "exp2_p", "expm1", "expm1_p", "log", "log_p", "log1p", "log1p_p",
    "sqrt", "sqrt_p", "rsqrt", "rsqrt_p", "cbrt", "cbrt_p", "tanh", "tanh_p",
    "logistic", "logistic_p", "sin", "sin_p", "cos", "cos_p", "tan", "tan_p",
    "asin", "asin_p", "acos", "acos_p", "atan", "atan_p", "atan2", "atan2_p",
    "sinh", "sinh_p", "cosh", "cosh_p", "asinh", "asinh_p", "acosh", "acosh_p",
    "atanh", "atanh_p",
]


def _replace_zero(x: Any) -> Any:
    """`x` with its zeros replaced by ones, so that a derivative formula stays finite."""
    return select(eq(x, _const(x, 0)), full_like(x, 1), x)


# ------------------------------------------------------------------------------ max, min

def extremum_reference(x: np.ndarray, y: np.ndarray, *, larger: bool) -> np.ndarray:
    """max(x, y) (or min) on host values, as XLA computes it (the rule of lax.max/min, and
    the combiner of reductions and scatters)."""
    if dtypes.is_complex(x.dtype):
        # Lexicographic order on (real, imag), as XLA compares complex numbers.
        first, second = (x, y) if larger else (y, x)
        x_wins = (first.real > second.real) | ((first.real == second.real)
                                               & (first.imag > second.imag))
        return np.where(x_wins, x, y)
    out = np.maximum(x, y) if larger else np.minimum(x, y)  # both propagate nan, as XLA
    if dtypes.is_floating(x.dtype):
        # Of two zeros XLA's max is -0 only if both are (their sum's sign), its min -0 if
        # either is (minus the sum of the negations).
        out = np.where((x == 0) & (y == 0), x + y if larger else -((-x) + (-y)), out)
    return out


def _balanced_share(x: Any, other: Any, out: Any) -> Any:
    """The part of the tangent of `x` that reaches max(x, other) or min(x, other).

    1 where `x` alone is the result, 1/2 on ties (so that the derivative of max(x, x) is
    1, as in JAX), 0 elsewhere, nan included.
    """
    numerator = select(eq(x, out), full_like(out, 1), full_like(out, 0))
    denominator = select(eq(other, out), full_like(out, 2), full_like(out, 1))
    return div(numerator, denominator)


def _max_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return extremum_reference(x, y, larger=True)


def _min_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return extremum_reference(x, y, larger=False)


max_p = elementwise("max", _max_reference, kinds=ANY, num_args=2)
ad.defjvp(max_p, lambda t, x, y: mul(t, _balanced_share(x, y, max(x, y))),
          lambda t, x, y: mul(t, _balanced_share(y, x, max(x, y))))
min_p = elementwise("min", _min_reference, kinds=ANY, num_args=2)
ad.defjvp(min_p, lambda t, x, y: mul(t, _balanced_share(x, y, min(x, y))),
          lambda t, x, y: mul(t, _balanced_share(y, x, min(x, y))))
max_p.lower = hlo.extremum_rule(larger=True)
min_p.lower = hlo.extremum_rule(larger=False)


def max(x: Any, y: Any) -> Any:  # noqa: A001 (jax.lax.max shadows the builtin too)
    """Elementwise maximum (mirrors `jax.lax.max`).

    nan propagates; max(-0., +0.) is +0.; complex numbers compare lexicographically.
    """
    return max_p.bind(*elementwise_operands("max", x, y))


def min(x: Any, y: Any) -> Any:  # noqa: A001 (jax.lax.min shadows the builtin too)
    """Elementwise minimum (mirrors `jax.lax.min`).

    nan propagates; min(-0., +0.) is -0.; complex numbers compare lexicographically.
    """
    return min_p.bind(*elementwise_operands("min", x, y))


# ----------------------------------------------------------------------------------- pow

_real_power = upcast_low_precision(np.power)


def _pow_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # An integer exponent is first converted to the base's dtype, as XLA's lowering does.
    y = np.asarray(y).astype(x.dtype)
    return complex_power(x, y) if dtypes.is_complex(x.dtype) else _real_power(x, y)


def _pow_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    check_dtype_kind("pow", x.dtype, INEXACT, 0)
    check_dtype_kind("pow", y.dtype, NUMERIC, 1)
    check_same_shapes("pow", (x, y))
    if not dtypes.is_inexact(x.dtype) or (x.dtype != y.dtype
                                          and not dtypes.is_integer(y.dtype)):
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), and "
            "the second argument must have an inexact or integer dtype, and two inexact "
            f"dtypes must match, but got {np.dtype(x.dtype).name} and "
            f"{np.dtype(y.dtype).name} respectively.")
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


def _pow_jvp_base(t: Any, x: Any, y: Any) -> Any:
    exponent = convert_element_type(y, get_aval(x).dtype)
    slope = mul(exponent, pow(x, sub(exponent, _const(exponent, 1))))
    if dtypes.is_integer(get_aval(y).dtype):
        # x**0 is constant, even at x = 0 where 0 * 0**-1 would give nan.
        slope = select(eq(exponent, _const(exponent, 0)), full_like(slope, 0), slope)
    return mul(t, slope)


def _pow_jvp_exponent(t: Any, x: Any, y: Any) -> Any:
    return mul(t, mul(log(_replace_zero(x)), pow(x, y)))


def _pow_lower(ctx: LoweringContext, x: HloInstruction, y: HloInstruction) -> HloInstruction:
    return hlo.binary(ctx, Opcode.POWER, x, hlo.convert(ctx, y, x.shape.dtype))


pow_p = Primitive("pow")
pow_p.abstract_eval = _pow_abstract_eval
pow_p.reference = _pow_reference
ad.defjvp(pow_p, _pow_jvp_base, _pow_jvp_exponent)
pow_p.batch = batch_elementwise(pow_p)
pow_p.lower = _pow_lower


def pow(x: Any, y: Any) -> Any:  # noqa: A001 (jax.lax.pow shadows the builtin too)
    """Elementwise `x ** y` (mirrors `jax.lax.pow`).

    The base is float or complex; the exponent has the base's dtype or any integer dtype.
    A Python int exponent takes the base's dtype.
    """
    return pow_p.bind(*elementwise_operands("pow", x, y))


# ----------------------------------------------------------------------------------- abs

def _abs_reference(x: np.ndarray) -> np.ndarray:
    return complex_abs(x) if dtypes.is_complex(x.dtype) else np.abs(x)


def _abs_jvp(t: Any, out: Any, x: Any) -> Any:
    if dtypes.is_complex(get_aval(x).dtype):
        magnitude = _replace_zero(convert_element_type(out, get_aval(x).dtype))
        return real(mul(t, div(conj(x), magnitude)))
    # The derivative at 0 is taken to be 1, as in JAX.
    return select(ge(x, _const(x, 0)), t, neg(t))


abs_p = elementwise("abs", _abs_reference, kinds=(SIGNED, FLOATING, COMPLEX),
                    result_dtype=dtypes.real_dtype, hlo_opcode=Opcode.ABS)
keep_weak_type(abs_p)
ad.defjvp_with_output(abs_p, _abs_jvp)


def abs(x: Any) -> Any:  # noqa: A001 (jax.lax.abs shadows the builtin too)
    """Elementwise absolute value (mirrors `jax.lax.abs`).

    Complex operands give their real magnitude. The most negative integer stays itself.
    """
    return abs_p.bind(*elementwise_operands("abs", x))
# ---------------------------------------------------------------------------------- round

class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties (mirrors `jax.lax.RoundingMethod`)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round_reference(x: np.ndarray, *, rounding_method: RoundingMethod) -> np.ndarray:
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return np.rint(x)
    # x - trunc(x) is exact, so the tie test never suffers the rounding of x + 0.5.
    whole = np.trunc(x)
    with np.errstate(invalid="ignore"):
        away = np.abs(x - whole) >= 0.5
    return np.where(away, whole + np.sign(x), whole)


def _round_lower(ctx: LoweringContext, x: HloInstruction, *,
                 rounding_method: RoundingMethod) -> HloInstruction:
    even = rounding_method == RoundingMethod.TO_NEAREST_EVEN
    return hlo.unary(ctx, Opcode.ROUND_EVEN if even else Opcode.ROUND_AFZ, x)


round_p = elementwise("round", _round_reference, kinds=(FLOATING,))
ad.defjvp_zero(round_p)
round_p.lower = _round_lower


def round(x: Any,  # noqa: A001 (jax.lax.round shadows the builtin too)
          rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Elementwise rounding to the nearest integer (mirrors `jax.lax.round`).

    Ties go away from zero by default, or to the even neighbour with
    `RoundingMethod.TO_NEAREST_EVEN`.
    """
    method = RoundingMethod(int(rounding_method))
    return round_p.bind(*elementwise_operands("round", x), rounding_method=method)


# ------------------------------------------------------------ is_finite, square, reciprocal

is_finite_p = elementwise("is_finite", np.isfinite, kinds=(FLOATING,),
                          result_dtype=lambda dtype: np.dtype(np.bool_),
                          hlo_opcode=Opcode.IS_FINITE)
ad.defjvp_zero(is_finite_p)


def is_finite(x: Any) -> Any:
    """Elementwise test for neither inf nor nan (mirrors `jax.lax.is_finite`).

    Differences from JAX: the boolean result is never weak-typed.
    """
    return is_finite_p.bind(*elementwise_operands("is_finite", x))


def _square_reference(x: np.ndarray) -> np.ndarray:
    if not dtypes.is_complex(x.dtype):
        return np.square(x)
    # XLA's complex square (chlo.square): (a - b)(a + b) + 2ab i, whose real part neither
    # overflows for large parts nor loses a cancelling one: it is 0 where |a| == |b| finite.
    a, b = x.real, x.imag
    with np.errstate(all="ignore"):
        cancels = np.isfinite(a) & ((a == b) | (a == -b))
        out = np.empty_like(x)
        out.real = np.where(cancels, a.dtype.type(0), (a - b) * (a + b))
        out.imag = (a * b) * a.dtype.type(2)
    return out


def _square_lower(ctx: LoweringContext, x: HloInstruction) -> HloInstruction:
    if not dtypes.is_complex(x.shape.dtype):
        return hlo.binary(ctx, Opcode.MULTIPLY, x, x)
    part = dtypes.real_dtype(x.shape.dtype)
    a, b = hlo.unary(ctx, Opcode.REAL, x, part), hlo.unary(ctx, Opcode.IMAG, x, part)
    product = hlo.binary(ctx, Opcode.MULTIPLY, hlo.binary(ctx, Opcode.SUBTRACT, a, b),
                         hlo.binary(ctx, Opcode.ADD, a, b))
    cancels = hlo.logical(ctx, Opcode.AND, hlo.unary(ctx, Opcode.IS_FINITE, a, np.bool_),
                          hlo.logical(ctx, Opcode.OR, hlo.compare(ctx, a, b, "EQ"),
                                      hlo.compare(ctx, a, hlo.unary(ctx, Opcode.NEGATE, b),
                                                  "EQ")))
    re = hlo.select(ctx, cancels, hlo.full_like(ctx, a, 0), product)
    im = hlo.binary(ctx, Opcode.MULTIPLY, hlo.binary(ctx, Opcode.MULTIPLY, a, b),
                    hlo.full_like(ctx, a, 2))
    return hlo.binary(ctx, Opcode.COMPLEX, re, im, x.shape.dtype)


square_p = elementwise("square", _square_reference, kinds=NUMERIC)
ad.defjvp(square_p, lambda t, x: mul(t, mul(_const(x, 2), x)))
square_p.lower = _square_lower


def square(x: Any) -> Any:
    """Elementwise `x * x` (mirrors `jax.lax.square`)."""
    return square_p.bind(*elementwise_operands("square", x))


def reciprocal(x: Any) -> Any:
    """Elementwise `1 / x` (mirrors `jax.lax.reciprocal`, which is `integer_pow(x, -1)`)."""
    return integer_pow(x, -1)


# ------------------------------------------------------------- exponentials, logarithms

def _exp2_reference(x: np.ndarray) -> np.ndarray:
    if dtypes.is_complex(x.dtype):
        return np.exp(x * np.log(2.0)).astype(x.dtype)
    return np.exp2(x)


# Complex exp, expm1, log, log1p and sqrt give XLA's values at special inputs.
exp_p = elementwise("exp", for_complex(complex_exp, np.exp), kinds=INEXACT,
                    hlo_opcode=Opcode.EXP)
ad.defjvp_with_output(exp_p, lambda t, out, x: mul(t, out))
exp2_p = elementwise("exp2", _exp2_reference, kinds=INEXACT, hlo_opcode=Opcode.EXP2)
ad.defjvp_with_output(exp2_p, lambda t, out, x: mul(t, mul(_const(x, np.log(2.0)), out)))
expm1_p = elementwise("expm1", for_complex(complex_expm1, np.expm1), kinds=INEXACT,
                      hlo_opcode=Opcode.EXPM1)
ad.defjvp_with_output(expm1_p, lambda t, out, x: mul(t, add(out, _const(out, 1))))
# float32 log and log1p compute XLA's CPU kernels bit for bit (JAX's values).
log_p = elementwise("log", for_complex(complex_log, for_float32(log_f32, np.log)),
                    kinds=INEXACT, hlo_opcode=Opcode.LOG)
ad.defjvp(log_p, lambda t, x: div(t, x))
log1p_p = elementwise("log1p", for_complex(complex_log1p, for_float32(log1p_f32, np.log1p)),
                      kinds=INEXACT, hlo_opcode=Opcode.LOG1P)
ad.defjvp(log1p_p, lambda t, x: div(t, add(x, _const(x, 1))))


def exp(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise `e ** x` (mirrors `jax.lax.exp`)."""
    check_accuracy(accuracy)
    return exp_p.bind(*elementwise_operands("exp", x))


def exp2(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise `2 ** x` (mirrors `jax.lax.exp2`)."""
    check_accuracy(accuracy)
    return exp2_p.bind(*elementwise_operands("exp2", x))


def expm1(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise `e ** x - 1`, accurate near 0 (mirrors `jax.lax.expm1`)."""
    check_accuracy(accuracy)
    return expm1_p.bind(*elementwise_operands("expm1", x))


def log(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise natural logarithm (mirrors `jax.lax.log`)."""
    check_accuracy(accuracy)
    return log_p.bind(*elementwise_operands("log", x))


def log1p(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise `log(1 + x)`, accurate near 0 (mirrors `jax.lax.log1p`)."""
    check_accuracy(accuracy)
    return log1p_p.bind(*elementwise_operands("log1p", x))


# --------------------------------------------------------------------------------- roots

sqrt_p = elementwise("sqrt", for_complex(complex_sqrt, np.sqrt), kinds=INEXACT,
                     hlo_opcode=Opcode.SQRT)
ad.defjvp_with_output(sqrt_p, lambda t, out, x: mul(t, div(_const(x, 0.5), out)))
rsqrt_p = elementwise("rsqrt", lambda x: np.reciprocal(np.sqrt(x)), kinds=INEXACT,
                      hlo_opcode=Opcode.RSQRT)
ad.defjvp_with_output(rsqrt_p, lambda t, out, x: mul(t, mul(_const(x, -0.5), div(out, x))))
cbrt_p = elementwise("cbrt", np.cbrt, kinds=(FLOATING,), hlo_opcode=Opcode.CBRT)
ad.defjvp_with_output(cbrt_p,
                      lambda t, out, x: mul(t, mul(_const(x, 1 / 3), integer_pow(out, -2))))


def sqrt(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise square root (mirrors `jax.lax.sqrt`)."""
    check_accuracy(accuracy)
    return sqrt_p.bind(*elementwise_operands("sqrt", x))


def rsqrt(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise `1 / sqrt(x)` (mirrors `jax.lax.rsqrt`)."""
    check_accuracy(accuracy)
    return rsqrt_p.bind(*elementwise_operands("rsqrt", x))


def cbrt(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise real cube root, negative for negative `x` (mirrors `jax.lax.cbrt`)."""
    check_accuracy(accuracy)
    return cbrt_p.bind(*elementwise_operands("cbrt", x))


# ------------------------------------------------------------------ tanh and logistic

def _logistic_reference(x: np.ndarray) -> np.ndarray:
    one = np.ones((), x.dtype)
    return one / (one + np.exp(-x))


def _one_minus(x: Any) -> Any:
    return sub(_const(x, 1), x)


def _tanh_reference(x: np.ndarray) -> np.ndarray:
    # float32 and narrower saturate at |x| = 9 as XLA's kernel (see `tanh_f32`).
    if x.dtype.kind == "c":
        return complex_tanh(x)
    return tanh_f32(x) if x.dtype.kind == "f" and x.dtype.itemsize <= 4 else np.tanh(x)


tanh_p = elementwise("tanh", _tanh_reference, kinds=INEXACT, hlo_opcode=Opcode.TANH)
# (t + t tanh)(1 - tanh), JAX's formula: it keeps the precision that 1 - tanh**2 loses near
# |tanh| = 1, and its residuals (tanh, 1 - tanh) are JAX's.
ad.defjvp_with_output(tanh_p,
                      lambda t, out, x: mul(add(t, mul(t, out)), _one_minus(out)))
logistic_p = elementwise("logistic", _logistic_reference, kinds=INEXACT, hlo_opcode=Opcode.LOGISTIC)
ad.defjvp_with_output(logistic_p, lambda t, out, x: mul(t, mul(out, _one_minus(out))))


def tanh(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise hyperbolic tangent (mirrors `jax.lax.tanh`)."""
    check_accuracy(accuracy)
    return tanh_p.bind(*elementwise_operands("tanh", x))


def logistic(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise logistic sigmoid `1 / (1 + e ** -x)` (mirrors `jax.lax.logistic`)."""
    check_accuracy(accuracy)
    return logistic_p.bind(*elementwise_operands("logistic", x))


# ------------------------------------------------------------------------- trigonometry

def _atan2_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not dtypes.is_complex(x.dtype):
        return np.arctan2(x, y)
    # The complex continuation: -i log((y + i x) / sqrt(x**2 + y**2)).
    dtype = x.dtype
    x, y = x.astype(np.complex128), y.astype(np.complex128)
    return (-1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))).astype(dtype)


def _atan2_partial(t: Any, numerator: Any, x: Any, y: Any) -> Any:
    return mul(t, div(numerator, add(square(x), square(y))))


def _inverse_sine_slope(x: Any) -> Any:
    return rsqrt(_one_minus(square(x)))


# Complex sin and cos: JAX's formula through real operations (lax/complex_trig.py).
sin_p = elementwise("sin", for_complex(complex_sin, np.sin), kinds=INEXACT,
                    hlo_opcode=Opcode.SIN)
sin_p.lower = complex_trig_lowering(sin_p.lower, sine=True)
ad.defjvp(sin_p, lambda t, x: mul(t, cos(x)))
cos_p = elementwise("cos", for_complex(complex_cos, np.cos), kinds=INEXACT,
                    hlo_opcode=Opcode.COS)
cos_p.lower = complex_trig_lowering(cos_p.lower, sine=False)
ad.defjvp(cos_p, lambda t, x: neg(mul(t, sin(x))))
tan_p = elementwise("tan", for_complex(complex_tan, np.tan), kinds=INEXACT,
                    hlo_opcode=Opcode.TAN)
ad.defjvp_with_output(tan_p, lambda t, out, x: mul(t, add(_const(out, 1), square(out))))
asin_p = elementwise("asin", for_complex(complex_arcsin, np.arcsin), kinds=INEXACT, hlo_opcode=Opcode.ASIN)
ad.defjvp(asin_p, lambda t, x: mul(t, _inverse_sine_slope(x)))
acos_p = elementwise("acos", for_complex(complex_arccos, np.arccos), kinds=INEXACT,
                    hlo_opcode=Opcode.ACOS)
ad.defjvp(acos_p, lambda t, x: neg(mul(t, _inverse_sine_slope(x))))
atan_p = elementwise("atan", for_complex(complex_arctan, np.arctan), kinds=INEXACT,
                    hlo_opcode=Opcode.ATAN)
ad.defjvp(atan_p, lambda t, x: div(t, add(_const(x, 1), square(x))))
atan2_p = elementwise("atan2", _atan2_reference, kinds=INEXACT, num_args=2, hlo_opcode=Opcode.ATAN2)
ad.defjvp(atan2_p, lambda t, x, y: _atan2_partial(t, y, x, y),
          lambda t, x, y: _atan2_partial(t, neg(x), x, y))


def sin(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise sine (mirrors `jax.lax.sin`)."""
    check_accuracy(accuracy)
    return sin_p.bind(*elementwise_operands("sin", x))


def cos(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise cosine (mirrors `jax.lax.cos`)."""
    check_accuracy(accuracy)
    return cos_p.bind(*elementwise_operands("cos", x))


def tan(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise tangent (mirrors `jax.lax.tan`)."""
    check_accuracy(accuracy)
    return tan_p.bind(*elementwise_operands("tan", x))


def asin(x: Any) -> Any:
    """Elementwise arcsine (mirrors `jax.lax.asin`)."""
    return asin_p.bind(*elementwise_operands("asin", x))


def acos(x: Any) -> Any:
    """Elementwise arccosine (mirrors `jax.lax.acos`)."""
    return acos_p.bind(*elementwise_operands("acos", x))


def atan(x: Any) -> Any:
    """Elementwise arctangent (mirrors `jax.lax.atan`)."""
    return atan_p.bind(*elementwise_operands("atan", x))


def atan2(x: Any, y: Any) -> Any:
    """Elementwise four-quadrant arctangent of `x / y` (mirrors `jax.lax.atan2`)."""
    return atan2_p.bind(*elementwise_operands("atan2", x, y))


# --------------------------------------------------------------------------- hyperbolic

sinh_p = elementwise("sinh", for_complex(complex_sinh, np.sinh), kinds=INEXACT,
                     hlo_opcode=Opcode.SINH)
sinh_p.lower = complex_hyperbolic_lowering(sinh_p.lower, Opcode.SINH, plus=False)
ad.defjvp(sinh_p, lambda t, x: mul(t, cosh(x)))
cosh_p = elementwise("cosh", for_complex(complex_cosh, np.cosh), kinds=INEXACT,
                     hlo_opcode=Opcode.COSH)
cosh_p.lower = complex_hyperbolic_lowering(cosh_p.lower, Opcode.COSH, plus=True)
ad.defjvp(cosh_p, lambda t, x: mul(t, sinh(x)))
asinh_p = elementwise("asinh", for_complex(complex_arcsinh, np.arcsinh), kinds=INEXACT, hlo_opcode=Opcode.ASINH)
ad.defjvp(asinh_p, lambda t, x: mul(t, rsqrt(add(square(x), _const(x, 1)))))
acosh_p = elementwise("acosh", for_complex(complex_arccosh, np.arccosh), kinds=INEXACT,
                     hlo_opcode=Opcode.ACOSH)
# sqrt(x - 1) * sqrt(x + 1) rather than sqrt(x**2 - 1): the same for real x > 1, and on
# the principal branch for complex x.
ad.defjvp(acosh_p, lambda t, x: div(t, mul(sqrt(sub(x, _const(x, 1))),
                                           sqrt(add(x, _const(x, 1))))))
atanh_p = elementwise("atanh", for_complex(complex_arctanh, np.arctanh), kinds=INEXACT,
                     hlo_opcode=Opcode.ATANH)
ad.defjvp(atanh_p, lambda t, x: div(t, mul(add(_const(x, 1), x), _one_minus(x))))


def sinh(x: Any) -> Any:
    """Elementwise hyperbolic sine (mirrors `jax.lax.sinh`)."""
    return sinh_p.bind(*elementwise_operands("sinh", x))


def cosh(x: Any) -> Any:
    """Elementwise hyperbolic cosine (mirrors `jax.lax.cosh`)."""
    return cosh_p.bind(*elementwise_operands("cosh", x))


def asinh(x: Any) -> Any:
    """Elementwise inverse hyperbolic sine (mirrors `jax.lax.asinh`)."""
    return asinh_p.bind(*elementwise_operands("asinh", x))


def acosh(x: Any) -> Any:
    """Elementwise inverse hyperbolic cosine (mirrors `jax.lax.acosh`)."""
    return acosh_p.bind(*elementwise_operands("acosh", x))


def atanh(x: Any) -> Any:
    """Elementwise inverse hyperbolic tangent (mirrors `jax.lax.atanh`)."""
    return atanh_p.bind(*elementwise_operands("atanh", x))
